"""Twilio's HTTP side: the TwiML that points a call at our Media Streams endpoint, the request signature
check for the voice webhook, and the stream key that ties a stream to our TwiML."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from urllib.parse import urlsplit
from xml.sax.saxutils import quoteattr


def twilio_stream_key(secret: str) -> str:
    """The `key` stream parameter our TwiML hands Twilio; derived, so the server token itself never leaves."""
    return hmac.new(secret.encode(), b"voiceloop twilio stream", hashlib.sha256).hexdigest()[:32]



def twiml_connect(stream_url: str, parameters: dict[str, str] | None = None) -> str:
    """TwiML that connects the call to our Media Streams endpoint (bidirectional)."""
    params = "".join(f"<Parameter name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in (parameters or {}).items())
    stream = f"<Stream url={quoteattr(stream_url)}>{params}</Stream>" if params else \
        f"<Stream url={quoteattr(stream_url)}/>"
    return f'<?xml version="1.0" encoding="UTF-8"?><Response><Connect>{stream}</Connect></Response>'


def twilio_signature(auth_token: str, url: str, params: Sequence[tuple[str, str]]) -> str:
    """X-Twilio-Signature: base64 HMAC-SHA1 of the full URL followed by each distinct POST (name, value),
    sorted by name then value (as twilio-python's RequestValidator computes it)."""
    data = url + "".join(k + v for k, v in sorted(set(params)))
    return base64.b64encode(hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()).decode()


def signature_valid(auth_token: str, url: str, params: Sequence[tuple[str, str]], signature: str | None) -> bool:
    """Constant-time check against the URL with and without its default port (Twilio signs either)."""
    if not signature:
        return False
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    ports = (host, f"{host}:{parts.port or default}")
    variants = {url, *(parts._replace(netloc=netloc).geturl() for netloc in ports)}
    checks = [hmac.compare_digest(twilio_signature(auth_token, u, params).encode(), signature.encode())
              for u in sorted(variants)]  # all of them, so timing does not say which variant matched
    return any(checks)

