"""What `voiceloop serve` was started with, and every limit its transports honour: one place, typed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from voice.transfer import TransferConfig

WEB_DIR = Path(__file__).resolve().parent / "web"


@dataclass
class ServerConfig:
    """Server settings and per-connection limits. Secrets are kept out of repr() so they never reach a log."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str = field(default="", repr=False)
    """Bearer token for the browser WebSocket and the operator API."""
    twilio_auth_token: str = field(default="", repr=False)
    """TWILIO_AUTH_TOKEN: when set, the webhook's X-Twilio-Signature must verify."""
    allowed_origins: tuple[str, ...] = ()
    """Origins allowed on the browser WebSocket besides the server's own."""
    public_host: str = ""
    """Host name Twilio reaches us at (for the TwiML stream URL and signatures); default: the Host header."""
    max_calls: int = 20
    max_message_bytes: int = 64 * 1024
    """Largest WebSocket message accepted; a bigger one closes the connection with 1009."""
    max_body_bytes: int = 16 * 1024
    """Largest HTTP request body (webhook form, approval JSON); a bigger one gets 413."""
    max_messages_per_s: float = 200.0
    """Messages a client may send per second, sustained (bursts of twice that); past it: close 1008."""
    send_timeout_s: float = 10.0
    """A send stalled this long means the client stopped reading: the connection is dropped."""
    socket_send_buffer: int = 64 * 1024
    """SO_SNDBUF per connection: kernel buffering stays bounded (seconds of audio, not minutes), so a client
    that stops reading is noticed by `send_timeout_s` instead of hiding behind megabytes of autotuned buffer."""
    max_outbox: int = 6000
    """Outgoing messages queued for one connection (6000 = a minute of 20 ms audio with marks)."""
    max_queued_audio_s: float = 120.0
    """Agent audio queued for one connection (a bug guard: replies are short)."""
    playout_lead_ms: int = 400
    """Paced transports (browser): agent audio in flight beyond what the client acknowledged as played."""
    stall_s: float = 15.0
    """Paced transports: no playout ack for this long while audio waits means the client stopped playing."""
    max_backlog_s: float = 30.0
    """Caller audio waiting for a busy session before it is shed (Twilio) or the call refused (browser)."""
    realtime_slack_s: float = 3.0
    """Browser: caller audio may run this far ahead of the wall clock (the page keeps a 1 s backlog)."""
    max_bad_messages: int = 20
    """Browser: rejected messages (answered with an error) before the connection is closed with 1008."""
    max_unknown_events: int = 100
    """Twilio: unknown events (ignored and counted) before the connection is closed with 1008."""
    twilio_key_required: bool = True
    """The Twilio stream must carry the `key` parameter our TwiML gives it (see `twilio_stream_key`)."""
    web_dir: Path = WEB_DIR
    transfer: TransferConfig | None = None
    """Phone calls a run escalates are transferred to this number through Twilio's REST API (voice/transfer.py)."""


class RateLimit:
    """Token bucket: `rate` messages per second sustained, `burst` at once."""

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate, self.burst = rate, burst if burst is not None else 2 * rate
        self.tokens, self.at = self.burst, time.monotonic()

    def allow(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
