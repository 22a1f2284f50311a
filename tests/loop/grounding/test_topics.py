"""What a caller's words are about, what a reply may not say and what a tool's words say of its arguments, in each
language: the words each reader takes from the call's pack (tests/data/topics.tsv), so a Spanish call reads
"gracias", "cualquier otra cosa" and `numero_reserva` as an English one reads "thanks", "anything else" and
`booking_number`."""

from __future__ import annotations

from types import ModuleType

import pytest

from loop import locale
from loop.grounding._arg_kinds import arg_kind
from loop.grounding._facts import FactCheck
from loop.grounding._listed import counted_spans
from loop.grounding._scope import _prompt_topics, _stems, out_of_scope, scope_sentence
from loop.grounding.speakable import leaks
from loop.grounding.tool_choice import _stems as tool_stems
from loop.types import Message, ModelRequest
from tests.helpers import labelled
from voice.call.approval import derived_phrase, verb_phrase

ROWS = [(language, *rest.split("\t")) for language, rest in labelled("topics.tsv")]
PROMPT = {"en": "You take orders for pizzas and say where an order is.",
          "es": "Toma pedidos de pizzas y dice dónde está un pedido."}
TOOL = {"en": ("lookup_order", "Looks up where an order is"), "es": ("consultar_pedido", "Dice dónde está un pedido")}


def _request(language: str, said: str, system: str = "", earlier: tuple[Message, ...] = ()) -> ModelRequest:
    name, description = TOOL[language]
    tool = {"type": "function", "function": {"name": name, "description": description, "parameters": {}}}
    messages = [Message("system", system or PROMPT[language]), *earlier, Message("user", said)]
    return ModelRequest(messages, [tool], 100, language=language)


def _read(reader: str, said: str, argument: str, language: str, words: ModuleType) -> str:
    if reader == "out_of_scope":
        return "yes" if out_of_scope(_request(language, said)) else "no"
    if reader == "else_item":  # the prompt lists `argument` as not the agent's: is `said` out of scope?
        return "yes" if out_of_scope(_request(language, said, system=f"{PROMPT[language]}\n{argument}")) else "no"
    if reader == "prompt_topic":
        return "kept" if _prompt_topics(said, words) else "dropped"
    if reader == "else_listed":
        return scope_sentence(_request(language, "?", system=said))
    if reader in ("echo", "speaks_as_caller"):  # the caller said `said`; does the reply `argument` repeat them?
        check = FactCheck(_request(language, said))
        found = check.echoes(argument) if reader == "echo" else check.unknown(argument) or ""
        return "yes" if found and (reader == "echo" or found.startswith("echo")) else "no"
    if reader == "meta_talk":
        return "yes" if any(p.startswith("talks about the conversation") for p in leaks(said, pack=words)) else "no"
    if reader == "money":  # a write's description, its amount argument said in it
        return derived_phrase(verb_phrase(said, "x", words), {"amount": argument}, None, words)
    if reader == "kind":  # an argument `name:type` of a tool described by `said`
        name, kind = argument.split(":")
        found = arg_kind(name, {"type": kind}, said, words)
        return found.kind if found is not None else ""
    if reader == "counted":
        props = {argument: {"type": "integer"}}
        return " ".join(str(n) for n in counted_spans(props, said, words=words).get(argument, []))
    readers = {"topic": lambda: _stems(said, words), "tool_words": lambda: tool_stems(said, words)}
    return " ".join(sorted(readers[reader]()))


@pytest.mark.parametrize(("language", "reader", "said", "argument", "read"), ROWS)
def test_a_topic_is_read_in_the_calls_language(language: str, reader: str, said: str, argument: str,
                                               read: str) -> None:
    assert _read(reader, said, argument, language, locale.get(language)) == read


def test_every_language_has_examples_of_every_reader() -> None:
    readers = {(language, reader) for language, reader, *_ in ROWS}
    assert {reader for _, reader in readers} == {reader for language, reader in readers if language == "es"}
