"""`voiceloop serve` settles the runs a killed server left open before it takes a call (see `loop.settle`).

A voice run cannot be resumed: its caller went with the killed process, and the call so far (the run's
`history=`) is not in the journal. So each open run is closed with `run_interrupted`, after its cut-off writes
are reconciled against the orders database through the call id they were keyed by. The journal then says what
each refund or address change really did, and `voiceloop report` lists how each run ended.
"""

from __future__ import annotations

import asyncio
import logging

from loop.settle import Settlement, settle_unfinished
from voice.calls import CallFactory

log = logging.getLogger(__name__)

REASON = "server restarted"


def settle_on_start(factory: CallFactory) -> list[Settlement]:
    """Close every run left open in the server's journal, reconciling writes with the server's own tools."""
    tools = factory.make_agent("settle-on-start").tools  # the same tools (and database) every call uses
    settled = asyncio.run(settle_unfinished(factory.journal, tools, reason=REASON))
    for s in settled:
        log.warning("run %s was left open by a killed server; %s as %s: %s", s.run_id, s.how, s.outcome, s.reason)
    return settled
