"""One agreement between a slow write and the loop's deadline: the write commits, or it was abandoned — never both.

A sync tool that declares a `commit_gate` parameter gets a `CommitGate`. It does its work inside a transaction
and asks `gate.may_commit()` right before committing; when the tool timeout fires, the loop calls
`gate.abandon()`. Whichever comes first wins, under one lock:

- the loop abandoned first: `may_commit()` is False, the tool rolls back, and the loop reports that nothing
  changed (status `timeout`, `executed=False`);
- the tool reached its commit first: `abandon()` is False, and the loop waits for the commit to finish and
  journals the write's real result instead of a timeout.

So a refund whose database write outlives the tool timeout is either journaled as not made and never lands,
or journaled as made — the journal always says what the database holds.
"""

from __future__ import annotations

import threading
from enum import StrEnum


class GateState(StrEnum):
    OPEN = "open"  # the write is still working
    COMMITTING = "committing"  # the write passed the gate: it will commit, whatever the clock says
    ABANDONED = "abandoned"  # the deadline passed first: the write must roll back


class WriteAbandoned(RuntimeError):
    """Raised by a tool that rolled back because the loop gave up on it at its deadline."""


class CommitGate:
    """Decides exactly once whether a write may commit (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state = GateState.OPEN

    def may_commit(self) -> bool:
        """The tool, right before COMMIT: True means commit now; False means roll back (the loop gave up)."""
        with self._lock:
            if self.state is GateState.OPEN:
                self.state = GateState.COMMITTING
            return self.state is GateState.COMMITTING

    def abandon(self) -> bool:
        """The loop, at the deadline: True means the write will not commit; False means it is committing."""
        with self._lock:
            if self.state is GateState.OPEN:
                self.state = GateState.ABANDONED
            return self.state is GateState.ABANDONED
