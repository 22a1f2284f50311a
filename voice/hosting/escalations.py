"""Escalation reaches a person. For the operator (`GET /api/escalations`, the page's panel): every live or
recently ended call one of whose runs ended ESCALATED, with its transcript, the reason and its transfers. On the
phone: `TransferOnEscalation` hands the call to the configured number (`voice/hosting/transfer.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx

from loop import RunOutcome
from voice.hosting.registry import Call, CallRegistry
from voice.hosting.transfer import TransferConfig, TransferFailed, transfer_call
from voice.trace import TraceKind

log = logging.getLogger("voiceloop.escalations")


def _transcript(call: Call) -> list[dict[str, str]]:
    lines = []
    for turn in call.session.turns:
        lines.append({"who": "caller", "text": turn.user_text})
        said = turn.heard_text if turn.interrupted else turn.agent_text
        if said:
            lines.append({"who": "agent", "text": said})
    return lines


def _transfers(call: Call) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("kind", "seq")} for e in call.events
            if e["kind"] in (TraceKind.TRANSPORT_TRANSFER, TraceKind.TRANSPORT_TRANSFER_FAILED)]


def escalation(call: Call) -> dict[str, Any] | None:
    """The operator's view of one call, or None if no run of it escalated."""
    escalated = [t for t in call.session.turns if t.outcome == RunOutcome.ESCALATED.value]
    if not escalated:
        return None
    return {"id": call.call_id, "transport": call.transport, "live": call.ended_at is None,
            "started_at": call.started_at, "ended_at": call.ended_at, "meta": call.meta,
            "reason": escalated[-1].reason, "caller_text": escalated[-1].user_text,
            "transcript": _transcript(call), "transfers": _transfers(call)}


def escalated_calls(registry: CallRegistry) -> list[dict[str, Any]]:
    """Newest first: live calls, then the ended ones the registry still keeps."""
    calls = [*registry.live(), *reversed(registry.ended)]
    found = [e for c in calls if (e := escalation(c)) is not None]
    return sorted(found, key=lambda e: e["started_at"], reverse=True)


class TransferOnEscalation:
    """A phone call's trace observer: when a run ends ESCALATED, let the agent finish saying it is handing over,
    then have Twilio dial the configured number. Traced as `transport.transfer` (or `transport.transfer_failed`:
    the call then stays with the agent)."""

    def __init__(self, call: Call, cfg: TransferConfig, call_sid: str, wait_s: float = 15.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.call, self.cfg, self.call_sid, self.wait_s, self.transport = call, cfg, call_sid, wait_s, transport
        self.task: asyncio.Task | None = None

    def observe(self, entry: dict[str, Any]) -> None:
        if entry["kind"] == TraceKind.LOOP_RUN_FINISHED and entry.get("outcome") == RunOutcome.ESCALATED.value \
                and self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._transfer(str(entry.get("reason", ""))))

    async def _transfer(self, reason: str) -> None:
        session = self.call.session
        with contextlib.suppress(TimeoutError):  # a hold message that never ends still gets the caller a person
            async with asyncio.timeout(self.wait_s):
                while session.run_active or session.core.reply.busy:  # the run lands, then its words are heard
                    await asyncio.sleep(0.05)
        if self.call.ended_at is not None:
            return
        try:
            done = await transfer_call(self.cfg, self.call_sid, self.transport)
        except TransferFailed as exc:
            log.error("call %s: transfer to %s failed: %s", self.call.call_id, self.cfg.to, exc)
            self.call.note("transfer_failed", to=self.cfg.to, error=str(exc), reason=reason)
            return
        log.info("call %s transferred to %s (%s)", self.call.call_id, self.cfg.to, done.status)
        self.call.note("transfer", to=self.cfg.to, status=done.status or "transferred", reason=reason)


def transfer_escalations(call: Call, cfg: TransferConfig | None, call_sid: str) -> TransferOnEscalation | None:
    """Watch a phone call for escalations when a transfer number is configured (and Twilio named the call)."""
    if cfg is None or not call_sid:
        return None
    watcher = TransferOnEscalation(call, cfg, call_sid)
    call.session.observers.append(watcher.observe)
    return watcher
