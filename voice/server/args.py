"""The options of `voiceloop serve` and the ServerConfig they make (the command itself: voice/server/app.py)."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
from typing import Any

from voice.call.state import SPECULATION
from voice.hosting.config import ServerConfig, _at_least_one, add_capacity_options
from voice.server.auth import SecretError, read_secret

log = logging.getLogger("voiceloop.server")


def add_speculation_option(p: argparse.ArgumentParser) -> None:
    """`--speculate speech|pause|off` (`voice.call.state.SPECULATION`), and the older `--no-speculate` (off)."""
    p.add_argument("--speculate", choices=list(SPECULATION), default=None,
                   help="what starts before the caller's turn ends: speech (reads on their words so far, and the "
                        "decision in their pause), pause (only that decision, one model call per pause; the "
                        "default) or off")
    p.add_argument("--no-speculate", action="store_const", const="off", dest="speculate", help=argparse.SUPPRESS)


def speculation_of(args: argparse.Namespace) -> dict[str, bool]:
    """The `SessionConfig` settings `--speculate` chose ({} for the session's default)."""
    mode = getattr(args, "speculate", None)
    return dict(SPECULATION[mode]) if mode else {}


def add_serve_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """The `serve` subcommand and its options (the caller sets what it runs)."""
    from loop.run.tenancy import add_storage_options
    from voice.agents.source import add_agent_option  # imported when the command line is built, as cli.py does
    from voice.call.turns import max_turn_seconds
    from voice.speech.engines import add_engine_options

    p = subparsers.add_parser("serve", help="browser page, Twilio Media Streams and the operator API on one port")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", help="caller access token: opens browser calls, no operator rights (visible in `ps`: "
                                   "prefer --token-file or $VOICELOOP_TOKEN; default: generated and printed)")
    p.add_argument("--token-file", help="read the caller access token from this file")
    p.add_argument("--operator-token", help="operator API token (prefer --operator-token-file or "
                                            "$VOICELOOP_OPERATOR_TOKEN; default: generated and printed)")
    p.add_argument("--operator-token-file", help="read the operator API token from this file")
    add_engine_options(p, script=True)  # --stt, --tts, --script | --llm: the same choices as every command
    add_agent_option(p)
    p.add_argument("--max-calls", type=int, default=20)
    p.add_argument("--max-calls-per-source", type=int, default=4,
                   help="live calls from one client address (browser; Twilio when the webhook is unsigned)")
    p.add_argument("--data-dir", default=os.environ.get("VOICELOOP_DATA", "voiceloop-data"),
                   help="journal.db and the agent's own files (the demo's orders.db) live here")
    add_storage_options(p)  # --db, --tenant, --tenant-budget
    p.add_argument("--greeting", default=None, help="said when a call starts (default: the agent's greeting)")
    p.add_argument("--trace-dir", default=None, metavar="DIR",
                   help="write each ended call's whole trace to DIR/<call id>.jsonl (one event a line)")
    add_speculation_option(p)
    add_capacity_options(p)
    p.add_argument("--max-turn-s", type=max_turn_seconds, default=30.0,
                   help="a caller turn is closed and answered after this many seconds of speech (default 30)")
    p.add_argument("--allow-origin", action="append", default=[], help="extra browser origin to accept")
    p.add_argument("--public-host", default="", help="host Twilio reaches us at (TwiML and signatures)")
    p.add_argument("--no-twilio-key", action="store_true",
                   help="accept Twilio streams without the key parameter our TwiML adds (for your own TwiML)")
    p.add_argument("--transfer-to", default=None, metavar="+1...",
                   help="phone calls a run escalates are transferred to this number through Twilio's REST API "
                        "(default: $VOICELOOP_TRANSFER_TO; needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN)")
    p.add_argument("--allow-unsigned-twilio", action="store_true",
                   help="without TWILIO_AUTH_TOKEN, still answer the webhook (anyone can then get the stream key)")
    add_timeout_options(p)
    add_remote_speech_options(p)
    add_fleet_options(p)
    return p


def add_timeout_options(p: argparse.ArgumentParser) -> None:
    defaults = ServerConfig()
    for flag, attr, what in [
            ("--start-timeout", "start_timeout_s", "close a socket that has not started its call"),
            ("--media-timeout", "media_timeout_s", "close a call whose client sends no audio"),
            ("--idle-timeout", "idle_timeout_s", "close a call with no caller speech and nothing going on"),
            ("--max-call-seconds", "max_call_s", "close any call this old (0: no limit)")]:
        p.add_argument(flag, dest=attr, type=float, default=getattr(defaults, attr), metavar="S",
                       help=f"{what} after S seconds (default {getattr(defaults, attr):g})")
    p.add_argument("--header-timeout", dest="header_timeout_s", type=positive_seconds,
                   default=defaults.header_timeout_s, metavar="S",
                   help="close an HTTP connection that has not sent a whole request S seconds after connecting "
                        f"(or after its previous response), however slowly it sends it (default "
                        f"{defaults.header_timeout_s:g})")
    p.add_argument("--max-connections", type=_at_least_one, default=defaults.max_connections, metavar="N",
                   help="open client connections, HTTP and WebSocket; past N a new one closes the oldest still "
                        f"sending its request, else gets 503 (default {defaults.max_connections}; lowered to fit "
                        "the open-file limit)")
    p.add_argument("--max-pending-per-source", type=int, default=defaults.max_pending_per_source,
                   help="sockets from one address that have not started a call yet (server-wide "
                        f"{defaults.max_pending_sockets}: past that a new socket closes the oldest of the address "
                        "holding the most)")
    p.add_argument("--max-messages-per-second", type=float, default=defaults.max_messages_per_s,
                   help="messages a client may send per second (bursts of twice that); echoes of ours not counted")


def add_remote_speech_options(p: argparse.ArgumentParser) -> None:
    """Deadlines of `--stt openai` / `--tts openai` (voice/speech/remote.py); unset: the environment, else defaults."""
    from voice.speech.remote import STT_DEADLINE_S, TTS_DEADLINE_S

    p.add_argument("--remote-stt-deadline", type=positive_seconds, default=None, metavar="S",
                   help="--stt openai: a transcription not answered in full within S seconds, retries included, "
                        "fails and the caller is asked to say it again (default $VOICELOOP_STT_DEADLINE or "
                        f"{STT_DEADLINE_S:g}; a timed-out read is not retried)")
    p.add_argument("--remote-tts-deadline", type=positive_seconds, default=None, metavar="S",
                   help="--tts openai: a clause not answered in full within S seconds is said by the local voice "
                        f"instead, with a log line (default $VOICELOOP_TTS_DEADLINE or {TTS_DEADLINE_S:g})")


def add_fleet_options(p: argparse.ArgumentParser) -> None:
    """Running behind a load balancer, beside other servers (README: "Running more than one server")."""
    defaults = ServerConfig()
    p.add_argument("--drain-timeout", dest="drain_timeout_s", type=non_negative_seconds,
                   default=defaults.drain_timeout_s, metavar="S",
                   help="on SIGTERM: refuse new calls, answer /healthz with 503, and give live calls up to S seconds "
                        f"to end before ending them (default {defaults.drain_timeout_s:g}; a second signal: at once)")
    p.add_argument("--settle-interval", dest="settle_interval_s", type=non_negative_seconds,
                   default=defaults.settle_interval_s, metavar="S",
                   help="with a postgresql:// --db several servers share: every S seconds, settle the runs of "
                        f"servers that stopped (killed mid-call); 0: never (default {defaults.settle_interval_s:g})")
    p.add_argument("--forwarded-allow-ips", default=defaults.forwarded_allow_ips, metavar="IPS",
                   help="proxies (comma-separated addresses, or *) whose X-Forwarded-For/-Proto are trusted for "
                        "the client's address, which the per-source caps count "
                        f"(default {defaults.forwarded_allow_ips})")


def positive_seconds(text: str) -> float:
    value = non_negative_seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds, 0 or more")
    return value


def server_config(args: argparse.Namespace) -> tuple[ServerConfig, list[str]]:
    """The config from the command line, and the tokens generated here (to print once)."""
    token = read_secret(args.token, args.token_file, "VOICELOOP_TOKEN")
    operator = read_secret(args.operator_token, args.operator_token_file, "VOICELOOP_OPERATOR_TOKEN")
    if token and token == operator:
        raise SecretError("the operator token must differ from the caller access token (--token)")
    if args.token or args.operator_token:
        log.warning("a token given on the command line is visible in the process list: use --token-file / "
                    "--operator-token-file or $VOICELOOP_TOKEN / $VOICELOOP_OPERATOR_TOKEN")
    generated = [name for name, given in (("token", token), ("operator", operator)) if not given]
    config = ServerConfig(host=args.host, port=args.port, token=token or secrets.token_urlsafe(24),
                          operator_token=operator or secrets.token_urlsafe(24), max_calls=args.max_calls,
                          max_calls_per_source=args.max_calls_per_source,
                          twilio_auth_token=os.environ.get("TWILIO_AUTH_TOKEN", ""),
                          allowed_origins=tuple(args.allow_origin), public_host=args.public_host,
                          twilio_key_required=not args.no_twilio_key, allow_unsigned_twilio=args.allow_unsigned_twilio,
                          start_timeout_s=args.start_timeout_s, media_timeout_s=args.media_timeout_s,
                          idle_timeout_s=args.idle_timeout_s, max_call_s=args.max_call_s,
                          max_pending_per_source=args.max_pending_per_source,
                          header_timeout_s=args.header_timeout_s, max_connections=args.max_connections,
                          max_messages_per_s=args.max_messages_per_second, drain_timeout_s=args.drain_timeout_s,
                          settle_interval_s=args.settle_interval_s,
                          forwarded_allow_ips=args.forwarded_allow_ips)
    return config, generated
