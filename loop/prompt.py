"""Assemble: build the prompt from sections under a token budget, stable prefix first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loop.tools import Tool
from loop.types import Message, ModelRequest


def group_history(history: Sequence[Message]) -> list[list[Message]]:
    """Split history into units that must be kept or dropped whole: an assistant message that called
    tools travels with all of its tool results, so trimming can never orphan either side."""
    groups: list[list[Message]] = []
    for msg in history:
        if msg.role == "tool" and groups and (groups[-1][0].tool_calls):
            groups[-1].append(msg)
        else:
            groups.append([msg])
    return groups


@dataclass
class PromptAssembler:
    """The prefix (system text + policy, and the tool schemas) is built once and reused byte for byte."""

    system: str
    tools: Sequence[Tool]
    count_tokens: Callable[[str], int]
    context_tokens: int
    policy_text: str = ""
    scope: str = ""  # the agent's scope sentence, handed to the model with every request
    language: str = "en"  # the agent's language (`loop.locale`), handed on the same way
    related: tuple[tuple[str, ...], ...] = ()  # the agent's words for the same thing (`Agent(related=...)`)

    def __post_init__(self) -> None:
        text = self.system if not self.policy_text else f"{self.system}\n\nPolicy:\n{self.policy_text}"
        self.prefix: list[Message] = [Message("system", text)]
        self.tool_schemas = [t.openai_schema() for t in self.tools]
        self.writes = frozenset(t.name for t in self.tools if t.mutates)
        self.cues = {t.name: tuple(t.cues) for t in self.tools if t.cues}
        self.prefix_tokens = self.count_tokens(text) + sum(
            self.count_tokens(str(s)) for s in self.tool_schemas)

    def message_tokens(self, msg: Message) -> int:
        extra = sum(self.count_tokens(c.signature) for c in msg.tool_calls)
        return self.count_tokens(msg.content) + extra + 4  # role and framing overhead

    def build(self, history: Sequence[Message], turn: int, max_output: int,
              timeout_s: float | None = None) -> tuple[ModelRequest, int]:
        """Returns the request and how many history messages were left out to fit the budget."""
        body = self._select(history, max_output)
        request = ModelRequest(messages=self.prefix + body, tools=self.tool_schemas, max_output_tokens=max_output,
                               turn=turn, stable_prefix=len(self.prefix), timeout_s=timeout_s,
                               writes=self.writes, cues=self.cues, scope=self.scope,
                               language=self.language, related=self.related)
        return request, len(history) - len(body)

    def input_tokens(self, history: Sequence[Message], max_output: int) -> int:
        """What the next request will send: the prefix plus every history message that fits (the run's own
        and any `history=` it was handed). Admission reserves this before anything is built."""
        return self.prefix_tokens + sum(self.message_tokens(m) for m in self._select(history, max_output))

    def _select(self, history: Sequence[Message], max_output: int) -> list[Message]:
        groups = group_history(history)
        room = self.context_tokens - self.prefix_tokens - max_output
        pinned = groups[:1]  # the first user message states the goal; it stays
        room -= sum(self.message_tokens(m) for g in pinned for m in g)
        kept: list[list[Message]] = []
        for group in reversed(groups[1:]):
            cost = sum(self.message_tokens(m) for m in group)
            if cost > room:
                break  # older history beyond this point is dropped in whole groups
            kept.append(group)
            room -= cost
        return [m for g in pinned + kept[::-1] for m in g]
