"""Escalation reaches a person. For the operator (`GET /api/escalations`, the page's panel): every live or
recently ended call one of whose runs ended ESCALATED, with its transcript, the reason and its transfers. On the
phone: `TransferOnEscalation` hands the call to the configured number (`voice/hosting/transfer.py`)."""

from __future__ import annotations

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
    """What a hand-over means on the phone: the call core decides when (its `HandOver` command, once the agent
    has said it is handing over), this has Twilio dial the configured number, once per call. Traced as
    `transport.transfer` (or `transport.transfer_failed`: the call then stays with the agent)."""

    def __init__(self, call: Call, cfg: TransferConfig, call_sid: str,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.call, self.cfg, self.call_sid, self.transport = call, cfg, call_sid, transport
        self.done = False

    async def hand_over(self, reason: str) -> None:
        if self.done or self.call.ended_at is not None:
            return
        self.done = True
        try:
            done = await transfer_call(self.cfg, self.call_sid, self.transport, self.call.session.agent.language)
        except TransferFailed as exc:
            log.error("call %s: transfer to %s failed: %s", self.call.call_id, self.cfg.to, exc)
            self.call.note("transfer_failed", to=self.cfg.to, error=str(exc), reason=reason)
            return
        log.info("call %s transferred to %s (%s)", self.call.call_id, self.cfg.to, done.status)
        self.call.note("transfer", to=self.cfg.to, status=done.status or "transferred", reason=reason)


def transfer_escalations(call: Call, cfg: TransferConfig | None, call_sid: str) -> TransferOnEscalation | None:
    """A phone call's hand-overs go to the configured number (when there is one, and Twilio named the call)."""
    if cfg is None or not call_sid:
        return None
    transfer = TransferOnEscalation(call, cfg, call_sid)
    call.session.on_hand_over(transfer.hand_over)
    return transfer
