"""What `voiceloop serve` was started with, and every limit its transports honour: one place, typed."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

from voice.hosting.transfer import TransferConfig

WEB_DIR = Path(__file__).resolve().parents[1] / "web"


@dataclass
class ServerConfig:
    """Server settings and per-connection limits. Secrets are kept out of repr() so they never reach a log."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str = field(default="", repr=False)
    """Caller access: opens browser calls (`WS /ws?token=`) and mints per-call tokens (`POST /call-token`).
    It gives no operator rights."""
    operator_token: str = field(default="", repr=False)
    """The operator API (`/api/*`: every call, any approval); empty = only per-call tokens reach `/api`."""
    call_token_ttl_s: float = 60.0
    """A minted call token must open its call within this long; once bound to a call, it lasts as long as the
    call (and this long after, to read the call's last events)."""
    max_unbound_call_tokens: int = 1000
    """Minted call tokens not yet used, server-wide (past it: 503 on `POST /call-token`)."""
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
    allow_unsigned_twilio: bool = False
    """Without `twilio_auth_token` the webhook cannot tell Twilio from anyone: it refuses (403) to hand out
    the stream key unless the operator opts in here (`--allow-unsigned-twilio`)."""
    max_twilio_message_bytes: int = 8 * 1024
    """Largest Media Streams message (Twilio sends 20 ms = ~0.4 KB); a bigger one closes with 1009 unread."""
    twilio_realtime_slack_s: float = 10.0
    """Twilio: caller audio (with lost-packet fill) may run this far ahead of the wall clock; the rest is shed
    unread, so one flooding stream cannot spend the CPU the other calls need."""
    # ---- no lock-out: slots that a stalled or idle client cannot keep -----------------------------------
    start_timeout_s: float = 10.0
    """A socket that has not opened its call this long after connecting (Twilio: no `start`) is closed 1008."""
    media_timeout_s: float = 15.0
    """A call whose client sent no audio message at all for this long is closed 1008 (a stalled stream)."""
    idle_timeout_s: float = 120.0
    """A call with no caller speech and nothing going on (no turn, run, approval or agent audio) for this long
    is closed 1000 (the caller walked away, or a client holds the slot with silence)."""
    max_call_s: float = 3600.0
    """Longest call, whatever it does (0: no limit)."""
    drain_timeout_s: float = 30.0
    """On SIGTERM the server drains: no new calls, `/healthz` 503, live calls go on this long at most, then
    they are ended (voice/server/drain.py)."""
    settle_interval_s: float = 5.0
    """On a PostgreSQL journal several servers share: how often this server settles the runs of servers that
    stopped (voice/server/settle_on_start.py; 0: never, leave it to the others or to a restart)."""
    forwarded_allow_ips: str = "127.0.0.1"
    """Proxies whose X-Forwarded-For / X-Forwarded-Proto uvicorn trusts for the client's address (what the
    per-source caps count): a load balancer on another machine must be listed, or every call is its address."""
    max_pending_sockets: int = 128
    """Sockets open but not yet in a call, server-wide; past it a new one closes (1013) the oldest such socket of
    the address holding the most (voice/hosting/admission.py), so a caller who starts at once always gets in."""
    max_pending_per_source: int = 32
    """... from one client address."""
    max_calls_per_source: int = 4
    """Live calls from one client address (browser calls, and Twilio streams when the webhook is not signed:
    Twilio's own media servers carry many calls each)."""
    header_timeout_s: float = 10.0
    """An HTTP connection must send a whole request (headers and body) within this long of connecting or of its
    previous response, or it is closed (voice/server/_guard.py): a client trickling its headers holds no socket."""
    max_connections: int = 1000
    """Open client connections (HTTP and WebSocket); past it a new one closes the oldest connection still sending
    its request (else gets 503). Kept under the open-file limit, which `serve` raises to fit it where it can."""
    web_dir: Path = WEB_DIR
    transfer: TransferConfig | None = None
    """Phone calls a run escalates are transferred to this number through Twilio's REST API
    (voice/hosting/transfer.py)."""


    @property
    def stream_key_secret(self) -> str:
        """What the Twilio stream key is derived from: the operator's secret, never the callers' access token."""
        return self.operator_token or self.token


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


def worker_threads(max_calls: int) -> int:
    """Threads for blocking speech work: each live call may wait on a transcription and a synthesis at once
    (they queue for the shared models inside, not for a thread)."""
    return 2 * max_calls + 4


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


def add_capacity_options(p: argparse.ArgumentParser) -> None:
    """`voiceloop serve`'s options for many calls on one machine (measured with `voiceloop bench load`)."""
    p.add_argument("--stt-batch", type=_at_least_one, default=8, metavar="N",
                   help="transcriptions that different calls ask for at once run as one Whisper batch of up to N "
                        "windows (default 8; 1: one at a time)")
    p.add_argument("--tts-voices", type=_at_least_one, default=2, metavar="N",
                   help="copies of the voice that synthesise at once, one thread each, earliest deadline first "
                        "(default 2, one per core of the machines this is tuned for)")
