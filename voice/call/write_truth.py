"""What the caller hears about a change they approved is what happened to it, whatever the model says.

A model (scripted, or a small LLM copying the pattern of earlier turns) can answer "Done, I refunded $20" after
the refund timed out and was rolled back. The session knows better: it asked the caller about each write and it
sees each write's one observation. When an approved write did not take effect (or its effect is unknown), the
model's text for the rest of the run is not spoken; this sentence is, and it replaces the model's words in the
call's history. When a write did take effect but the run then failed, the caller hears that the change was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from loop import ToolCall
from loop.events import ObservationStatus as Status
from loop.locale import DEFAULT_WORDS
from loop.tools import Tool
from voice.call.approval import action_phrase


@dataclass
class WriteOutcomes:
    """The writes of the run in flight that the caller was asked about, and how each one ended."""

    asked: dict[str, tuple[ToolCall, Tool | None]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # what to say instead of the model's reply
    made: list[str] = field(default_factory=list)  # action phrases of writes that took effect
    told: bool = False  # the override has been said (once per run)
    words: ModuleType = DEFAULT_WORDS  # the language's sentences (`loop.locale`)

    def ask(self, call: ToolCall, tool: Tool | None) -> None:
        self.asked[call.id] = (call, tool)

    def observe(self, payload: dict[str, Any]) -> None:
        """One `tool_result` of the run: remember how an asked-about write ended."""
        asked = self.asked.get(payload["call"]["id"])
        if asked is None:
            return
        action = action_phrase(*asked, self.words)
        status, executed, content = payload["status"], payload["executed"], payload.get("content", "")
        if status == Status.OK:
            self.made.append(action)
        elif status not in (Status.TIMEOUT, Status.ERROR, Status.INTERRUPTED):
            return  # never run (declined, denied, ...): the model was told so, and says so
        elif not executed or "nothing was changed" in content:
            self.failed.append(self.words.WRITE_FAILED.format(action=action))
        else:  # a timeout or crash whose effect nobody knows yet
            self.failed.append(self.words.WRITE_UNKNOWN.format(action=action))

    @property
    def override(self) -> str:
        """The truth to speak instead of the model's reply, or "" when the model may speak for itself."""
        return " ".join(self.failed)

    def after_failure(self) -> str:
        """What to say when the run failed after writes took effect (never deny a change that was made)."""
        if not self.made:
            return self.words.COULD_NOT_FINISH
        return self.words.DID_BUT_NOT_THE_REST.format(made=self.words.AND.join(self.made))
