"""Per-call caller tokens: a browser caller's credential is minted for one call, opens that call only, and
then reaches only that call's own events and approval — never the list of calls or anyone else's.

A token is minted unbound (`mint`, from the caller access token), must open its call within its time to
live (`redeem` on the socket, `bind` once the call id exists), and stays valid while its call lives and
`ttl_s` after it ended (to read the last events). Random tokens in a bounded table; an injectable clock.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass


class TokenLimit(RuntimeError):
    """Too many minted tokens are waiting to be used (server-wide or from one address)."""


@dataclass
class _Grant:
    source: str
    expires: float  # unbound: must be redeemed by then; bound: set when the call ends
    call_id: str | None = None  # bound to this call
    redeemed: bool = False


class CallTokens:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.grants: dict[str, _Grant] = {}

    def mint(self, source: str, ttl_s: float, max_unbound: int, max_per_source: int) -> str:
        self._prune()
        waiting = [g for g in self.grants.values() if not g.redeemed]
        if len(waiting) >= max_unbound:
            raise TokenLimit("too many call tokens waiting to be used; try again later")
        if sum(g.source == source for g in waiting) >= max_per_source:
            raise TokenLimit("too many call tokens waiting from your address; open a call with one first")
        token = "ct_" + secrets.token_urlsafe(24)
        self.grants[token] = _Grant(source, self.clock() + ttl_s)
        return token

    def redeem(self, token: str) -> bool:
        """A socket presents an unused, unexpired token: it is used up now (one call per token)."""
        grant = self._find(token)
        if grant is None or grant.redeemed or grant.expires < self.clock():
            return False
        grant.redeemed, grant.expires = True, float("inf")
        return True

    def bind(self, token: str | None, call_id: str, source: str) -> str:
        """The redeemed token now scopes `call_id`; without one (opened with the access token), a new token."""
        self._prune()  # every call passes here: the table never holds more than the live and recent calls
        if token is None or token not in self.grants:
            token = "ct_" + secrets.token_urlsafe(24)
            self.grants[token] = _Grant(source, float("inf"), redeemed=True)
        self.grants[token].call_id = call_id
        return token

    def release(self, token: str | None) -> None:
        """The socket that redeemed it never opened a call."""
        if token is not None and token in self.grants and self.grants[token].call_id is None:
            del self.grants[token]

    def ended(self, call_id: str, ttl_s: float) -> None:
        for grant in self.grants.values():
            if grant.call_id == call_id:
                grant.expires = min(grant.expires, self.clock() + ttl_s)

    def scope(self, token: str) -> str | None:
        """The call a bound, live token reaches (None: not a call token, unused, or expired)."""
        grant = self._find(token)
        if grant is None or grant.call_id is None or grant.expires < self.clock():
            return None
        return grant.call_id

    def _find(self, token: str) -> _Grant | None:
        return self.grants.get(token) if token.startswith("ct_") else None  # 192 random bits: not guessable

    def _prune(self) -> None:
        now = self.clock()
        for token in [t for t, g in self.grants.items() if g.expires < now]:
            del self.grants[token]
