"""Small pure parts of the run loop (`loop.agent`): the vocabulary an agent is given, the usage recorded for words
a model began after the tools' own words were the answer, and how a refusal is told."""

from __future__ import annotations

from collections.abc import Iterable

from loop.types import Model, ModelRequest, ModelResponse, Usage


def vocabulary(words: Iterable[str]) -> tuple[str, ...]:
    if isinstance(words, str):
        raise TypeError("vocabulary is a list of words or phrases, not one string: vocabulary=(\"Margherita\",)")
    words = tuple(words)
    if bad := [w for w in words if not isinstance(w, str)]:
        raise TypeError(f"vocabulary holds strings only, not {bad[0]!r}")
    return tuple(w.strip() for w in words if w.strip())


def related(groups: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    """The agent's groups of words its callers use for the same thing, lower case, each of two words or more."""
    listed = [] if isinstance(groups, str) else list(groups)
    if isinstance(groups, str) or any(isinstance(g, str) for g in listed):
        raise TypeError('related is a list of word groups: related=[("repair", "fix", "garage")]')
    checked = [vocabulary(group) for group in listed]
    if short := [g for g in checked if len(g) < 2]:
        raise TypeError(f"a related group names two words or more, not {list(short[0])!r}")
    return tuple(tuple(w.lower() for w in g) for g in checked)


def words_after_answer(request: ModelRequest, model: Model) -> ModelResponse:
    """The response recorded when a model starts to talk after the tools' words were the answer: no text (it is
    never said), the prompt's tokens as usage."""
    tokens = sum(model.count_tokens(m.content) for m in request.messages)
    return ModelResponse(text="", usage=Usage(input_tokens=tokens, output_tokens=1), finish_reason="stop",
                         model=model.name)


def refusal_reason(model: str, response: ModelResponse) -> str:
    if response.refusal:
        return f"model {model} refused: {response.refusal}"
    if response.finish_reason == "refusal":
        return f"model {model} refused to answer (finish_reason=refusal)"
    return f"model {model}'s reply was stopped by its provider's content filter (finish_reason=content_filter)"
