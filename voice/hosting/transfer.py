"""Hand a phone call to a person: Twilio's REST API updates the live call with TwiML `<Dial>` to a configured
number (POST {api}/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json, form field `Twiml`, HTTP basic auth
with the account SID and auth token). The media stream ends there and Twilio rings the number.

Configured with `voiceloop serve --transfer-to +15551234567` or `VOICELOOP_TRANSFER_TO`, plus
`TWILIO_ACCOUNT_SID` and `TWILIO_AUTH_TOKEN`; `VOICELOOP_TWILIO_API` points the client at another base URL (a
test's local server, a regional edge). `voice/hosting/escalations.py` starts the transfer when a run ends ESCALATED.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

import httpx

from loop import locale

TWILIO_API = "https://api.twilio.com"
_E164 = re.compile(r"^\+[1-9]\d{6,14}$")
_SID = re.compile(r"^AC[0-9a-fA-F]{32}$")
_CALL_SID = re.compile(r"^[A-Za-z0-9]{2,64}$")  # Twilio's are CA + 32 hex; nothing that could change the path


class TransferConfigError(ValueError):
    """The transfer cannot be set up as given (a bad number, a missing account)."""


class TransferFailed(RuntimeError):
    """Twilio refused or could not be reached; the call stays with the agent."""


@dataclass(frozen=True)
class TransferConfig:
    to: str
    """The number a person answers, E.164 (`+15551234567`)."""
    account_sid: str
    auth_token: str = field(repr=False)
    api_base: str = TWILIO_API
    timeout_s: float = 10.0
    """How long the REST request may take."""
    ring_s: int = 30
    """How long `<Dial>` rings before giving up (then `unanswered` is said)."""
    unanswered: str = ""
    """Said when nobody answers; "" (the default): the call's language's sentence (`twiml(language)`)."""

    def __post_init__(self) -> None:
        if not _E164.match(self.to):
            raise TransferConfigError(f"--transfer-to {self.to!r} is not an E.164 number such as +15551234567")
        if not _SID.match(self.account_sid):
            raise TransferConfigError("TWILIO_ACCOUNT_SID must be set to your account SID (AC + 32 hex digits) "
                                      "to transfer calls")
        if not self.auth_token:
            raise TransferConfigError("TWILIO_AUTH_TOKEN must be set to transfer calls")
        if not self.api_base.startswith(("https://", "http://")):
            raise TransferConfigError(f"the Twilio API base {self.api_base!r} must be an http(s) URL")

    @classmethod
    def from_env(cls, to: str | None = None) -> TransferConfig | None:
        """From `to` (else VOICELOOP_TRANSFER_TO) and the Twilio variables; None when no number is set."""
        number = to or os.environ.get("VOICELOOP_TRANSFER_TO", "")
        if not number:
            return None
        return cls(number, os.environ.get("TWILIO_ACCOUNT_SID", ""), os.environ.get("TWILIO_AUTH_TOKEN", ""),
                   os.environ.get("VOICELOOP_TWILIO_API", TWILIO_API).rstrip("/"))

    def twiml(self, language: str = locale.DEFAULT) -> str:
        unanswered = self.unanswered or str(locale.get(language).NOBODY_ANSWERED)
        return (f'<?xml version="1.0" encoding="UTF-8"?><Response><Dial timeout={quoteattr(str(self.ring_s))}>'
                f"<Number>{escape(self.to)}</Number></Dial><Say>{escape(unanswered)}</Say></Response>")


@dataclass(frozen=True)
class TransferResult:
    call_sid: str
    to: str
    status: str  # Twilio's call status after the update (`in-progress`...)
    http_status: int


async def transfer_call(cfg: TransferConfig, call_sid: str, transport: httpx.AsyncBaseTransport | None = None,
                        language: str = locale.DEFAULT) -> TransferResult:
    """Update the live call `call_sid` so Twilio dials `cfg.to` (saying, if nobody answers, the `language`'s
    sentence). Raises TransferFailed with Twilio's message."""
    if not _CALL_SID.match(call_sid):
        raise TransferFailed(f"not a Twilio call SID: {call_sid!r}")
    url = f"{cfg.api_base}/2010-04-01/Accounts/{cfg.account_sid}/Calls/{call_sid}.json"
    try:
        async with httpx.AsyncClient(timeout=cfg.timeout_s, transport=transport) as client:
            res = await client.post(url, data={"Twiml": cfg.twiml(language)}, auth=(cfg.account_sid, cfg.auth_token))
    except httpx.HTTPError as exc:
        raise TransferFailed(f"Twilio could not be reached: {type(exc).__name__}: {exc}") from exc
    body = _json(res)
    if res.status_code >= 300:
        raise TransferFailed(f"Twilio answered {res.status_code}: {body.get('message') or res.text[:200]}")
    return TransferResult(call_sid, cfg.to, str(body.get("status", "")), res.status_code)


def _json(res: httpx.Response) -> dict:
    try:
        data = res.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
