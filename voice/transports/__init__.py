"""Transports: move caller audio into a call and agent audio out, and report what the caller has heard.

Each transport is a folder: a pure wire codec (`twilio/codec.py`, `browser/codec.py`: messages in and out, no
sockets, no asyncio) plus a small endpoint (`twilio/endpoint.py`, `browser/endpoint.py`) that the one shared socket
driver (`connection.py`: ordered outbox, rate limit, caller audio queue, close handling) runs on an accepted
WebSocket. Every close code comes from `CloseCode`.
"""

from __future__ import annotations

from enum import IntEnum


class CloseCode(IntEnum):
    """WebSocket close codes (RFC 6455 section 7.4.1, plus the IANA-registered 1012/1013)."""

    NORMAL = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003
    NO_STATUS = 1005
    ABNORMAL = 1006
    INVALID_PAYLOAD = 1007
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    TRY_AGAIN_LATER = 1013


class Drop(Exception):
    """End the connection with this close code and reason (the reason is also noted in the call's trace)."""

    def __init__(self, code: CloseCode, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


TOO_MANY_CALLS = "too many calls; try again later"
