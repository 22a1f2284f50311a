"""One language seam (loop/locale/): every word list a caller's meaning is read from and every fixed sentence the
agent says lives in one package per language, chosen by the agent's `language` (default `en`); English number
words are defined once; a language voiceloop does not speak is a clear error."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from loop import Agent, ScriptedModel, locale
from loop.locale import en
from tests.helpers import labelled
from tests.paths import ROOT
from tests.voice.call.test_call_core import Harness, run_started
from voice.agents.spec import AgentConfigError, AgentSpec
from voice.call.events import RunEnded, Synthesize

# what a language pack does besides its words
FUNCTIONS = ("numbers_in_digits", "label", "the", "as_asked", "cardinal", "ordinal", "word_root", "verb_keys")


def test_english_number_words_are_defined_once() -> None:
    """Outside loop/locale/, no module spells out the number words (a list of them, a regex of them)."""
    spelled = re.compile(r'"seventeen"|\bseventeen\|eighteen\b')
    offenders = [str(p.relative_to(ROOT)) for p in [*ROOT.glob("voice/**/*.py"), *ROOT.glob("loop/**/*.py")]
                 if "locale" not in p.parts and spelled.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
    assert en.ONES[17] == "seventeen" and en.DIGIT_WORDS["oh"] == "0" and en.TENS[9] == "ninety"


@pytest.mark.parametrize(("language", "unit", "ten", "ninety_nine", "scales", "zeros"), [
    ("en", "nineteen", "ninety", "ninety nine", ("hundred", "thousand"), {"zero", "oh"}),
    ("es", "diecinueve", "noventa", "noventa y nueve", ("cien", "mil"), {"cero"}),
])
def test_every_reader_of_number_words_takes_them_from_one_place(language: str, unit: str, ten: str,
                                                                 ninety_nine: str, scales: tuple[str, str],
                                                                 zeros: set[str]) -> None:
    """`locale.number_words`: the value readers (`loop.grounding._heard`), the dictated-digit reader and the tests'
    transcript matching read the pack's number words from here, worked out once per pack."""
    from loop.grounding._heard import spoken

    pack = locale.get(language)
    said = locale.number_words(pack)
    assert said is locale.number_words(pack)
    assert (said.units[unit], said.tens[ten], said.said[ninety_nine], said.scales) == (19, 90, 99, scales)
    assert {w for w, digit in said.digits.items() if digit == "0"} == zeros
    assert (spoken(pack).units, spoken(pack).tens, spoken(pack).numbers) == (said.units, said.tens, said.said)


def test_a_language_voiceloop_does_not_speak_is_named_with_the_ones_it_does(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no language 'fr': voiceloop speaks en"):
        locale.get("fr")
    with pytest.raises(ValueError, match="no language 'fr'"):
        Agent(ScriptedModel(["Bonjour."]), language="fr")
    spec = tmp_path / "agent.yaml"
    spec.write_text("name: shop\nlanguage: fr\n")
    with pytest.raises(AgentConfigError, match="no language 'fr'"):
        AgentSpec.load(spec)


def test_a_new_language_is_one_module_with_the_names_english_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the call core says in its own words comes from the call's language: a test language, one module."""
    test_language = types.ModuleType("loop.locale.xx")
    test_language.__dict__.update({k: v for k, v in vars(en).items() if k.isupper() or k in FUNCTIONS})
    test_language.HAND_OVER = "Un momento, le paso con una persona."
    monkeypatch.setitem(sys.modules, "loop.locale.xx", test_language)
    monkeypatch.setattr(locale, "LANGUAGES", (*locale.LANGUAGES, "xx"))
    from loop import RunOutcome, RunResult

    h = Harness(language="xx")
    run_started(h, "Can I speak to a person?")
    h.feed(RunEnded(RunResult("r", RunOutcome.ESCALATED, "asked for a person", "", [], {}, [])))
    said = " ".join(c.text for c in h.log if isinstance(c, Synthesize))
    assert said.startswith("Un momento") and "Let me get a person" not in said
    assert Agent(ScriptedModel(["Hola."]), language="xx").assembler.build([], 0, 10)[0].language == "xx"


def test_every_language_has_every_name_english_has() -> None:
    names = {k for k in vars(en) if k.isupper()} | set(FUNCTIONS)
    for language in locale.LANGUAGES:
        missing = names - set(vars(locale.get(language)))
        assert not missing, f"loop/locale/{language}.py lacks {sorted(missing)}"


# ---- Spanish (loop/locale/es/) -------------------------------------------------------------------------


@pytest.mark.parametrize(("said", "written"), [
    ("trescientos ochenta y cinco pesos", "385 pesos"),
    ("veinte dólares", "20 dólares"),
    ("cuatro cinco seis siete", "4 5 6 7"),  # dictated: a unit after a unit starts the next number
    ("dos mil veintiséis", "2026"),
    ("treinta y dos, cuarenta", "32, 40"),
    ("una mesa para seis", "una mesa para 6"),  # "una" is an article
    ("cuarenta y", "40 y"),
    ("ciento cincuenta mil", "150000"),
    ("veintiún euros", "21 euros"),  # "veintiuno" before a noun
    ("veintiuna cajas", "21 cajas"),
    ("un millón de euros", "1000000 de euros"),
    ("dos millones trescientos mil", "2300000"),
    ("dos mil millones", "2000000000"),
    ("millones de personas", "millones de personas"),  # no number said before it
])
def test_spanish_numbers_said_in_words_are_written_in_digits(said: str, written: str) -> None:
    assert locale.get("es").numbers_in_digits(said) == written


WRITTEN_ES = [(written, *rest.split("\t")) for written, rest in labelled("numbers_written_es.tsv")]


@pytest.mark.parametrize(("written", "half", "expected"), [r for r in WRITTEN_ES if r[1] == "dev"])
def test_a_spanish_ten_and_unit_written_in_digits_is_one_number(written: str, half: str, expected: str) -> None:
    """tests/data/numbers_written_es.tsv: Whisper's "50 y 8" for "cincuenta y ocho" is 58."""
    assert locale.get("es").numbers_in_digits(written) == expected


def test_the_held_out_spanish_numbers_as_written() -> None:
    """The rows written before the rule was tried (read once at its end; see the commit for its figure)."""
    rows = [r for r in WRITTEN_ES if r[1] == "test"]
    right = sum(locale.get("es").numbers_in_digits(written) == expected for written, _, expected in rows)
    assert right >= len(rows) * 0.8, f"{right}/{len(rows)}"


def test_a_spanish_call_asks_and_reads_its_answers_in_spanish() -> None:
    from loop import Tool, ToolCall
    from voice.call.approval_dialog import ApprovalDialog

    es = locale.get("es")
    tool = Tool(lambda **_: "ok", name="reembolsar", description="reembolsar un pedido", mutates=True,
                confirm="reembolsar {importe} euros del pedido {pedido}",
                args={"type": "object", "properties": {"importe": {}, "pedido": {}}})

    def dialog() -> ApprovalDialog:
        return ApprovalDialog(ToolCall("reembolsar", {"importe": 20, "pedido": "4567"}), tool, words=es)

    assert dialog().question == "Solo para confirmar: ¿reembolsar 20 euros del pedido 4567?"
    assert dialog().hear("Sí, por favor.").settle.approved
    assert dialog().hear("si, reembólsalos").settle.approved  # the action's verb with its object written on
    assert dialog().hear("Sí, reembolsa los veinte euros del pedido 4567.").settle.approved
    assert not dialog().hear("Sí, pero que sean treinta.").settle.approved  # a change, said in words
    assert dialog().hear("Sí, pero que sean treinta.").rerun
    assert not dialog().hear("No, espere.").settle.approved
    unclear = dialog().hear("Sí, creo.")  # a hedge: asked again, narrower, in Spanish
    assert unclear.settle is None and unclear.say.startswith("Perdone, necesito una respuesta clara")
    assert not dialog().hear("Sí, el pedido de mi señora.").settle  # "mi señora" is no form of address


def test_a_spanish_agent_asks_for_what_a_tool_lacks_in_spanish() -> None:
    from loop.grounding.tool_choice import ask_for

    tool = {"type": "function", "function": {"name": "reservar", "parameters": {"type": "object", "properties": {
        "cajas": {"type": "integer", "minimum": 1, "maximum": 10}, "nombre": {"type": "string"}}}}}
    question = ask_for(["cajas", "nombre"], tool, locale.get("es"))
    assert question == "Claro, le ayudo con eso. ¿Me puede decir el número de cajas y el nombre?"
    assert "number" not in ask_for(["cajas"], tool, locale.get("es"))


def test_a_spanish_callers_numbers_reach_the_agent_in_digits() -> None:
    """The transcript's number words become digits for everything that reads the turn, as English ids are joined."""
    h = Harness(language="es")
    start = run_started(h, "Quería reservar dos cajas, la reserva es cuatro cinco uno dos siete.")
    assert "2 cajas" in start.text and "45127" in start.text


@pytest.mark.parametrize(("name", "with_article"), labelled("articles_es.tsv"))
def test_a_spanish_question_puts_the_nouns_own_article_before_it(name: str, with_article: str) -> None:
    """"¿Me puede decir el servicio, el día y el nombre?", not "servicio, dia y nombre"."""
    from loop.locale import es

    assert es.the(name) == with_article


@pytest.mark.parametrize(("said", "asks_something"), [
    ("cuánto cuesta el ibuprofeno", True), ("Oiga, una pregunta, dónde están", True), ("¿Tienen omeprazol?", True),
    ("Sí, es el 40218.", False), ("A nombre de Sofía Morales.", False), ("Vale, perfecto.", False)])
def test_a_spanish_question_is_told_from_an_answer(said: str, asks_something: bool) -> None:
    """Whisper may leave a Spanish question unpunctuated: its first word, after a lead-in, tells."""
    from loop import locale
    from loop.grounding._facts import asks

    assert asks(said, locale.get("es")) is asks_something


def test_a_spanish_reply_cut_after_its_courtesy_still_says_its_fallback() -> None:
    """"Claro, le ayudo con eso." says nothing on its own, in Spanish as "Sure, I can help with that." does in
    English: a reply cut after it still says what it fell back to."""
    from loop import locale
    from loop.grounding.speakable import ReplyGuard, says_nothing

    es = locale.get("es")
    assert says_nothing("Claro, le ayudo con eso.", es) and says_nothing("Por supuesto.", es)
    assert not says_nothing("Claro, quedan doce cajas.", es)
    guard = ReplyGuard(["reservar_medicamento"], fallback="¿Me puede decir el nombre?", words=es)
    said = guard.feed("Claro, le ayudo con eso. ") + guard.feed("Use reservar_medicamento ") + guard.finish()
    assert said.strip().endswith("¿Me puede decir el nombre?")


def test_a_spanish_reply_that_repeats_its_prompt_is_caught_with_its_accents() -> None:
    """The prompt check reads "número" as one word (it had read "n" and "mero"), written with its accent or not."""
    from loop.grounding.speakable import leaks, prompt_ngrams

    grams = prompt_ngrams("Nunca invente un número de reserva ni un precio.")
    assert leaks("Claro, el número de reserva es 61204.", prompt=grams) == []  # a few of its words: no leak
    assert leaks("Recuerde: nunca invente un numero de reserva ni un precio.", prompt=grams)


def test_a_spanish_calls_first_clause_is_cut_before_a_spanish_phrase() -> None:
    """The caller hears a long first sentence's first words sooner: cut before "para" in Spanish, as before "for"
    in English (the call core gives its chunkers the call's PHRASE_STARTS)."""
    from voice.call.core import CallCore
    from voice.call.state import SessionConfig
    from voice.speech.tts import ClauseChunker

    line = "Le he reservado dos cajas de ibuprofeno para el lunes porque mañana no nos quedan existencias. "
    spanish = CallCore(SessionConfig(language="es"), ClauseChunker).chunker_cls()
    spanish.push(line)
    assert spanish.flush()[0] == "Le he reservado dos cajas de ibuprofeno"
    english = CallCore(SessionConfig(), ClauseChunker).chunker_cls()
    english.push("I have booked two boxes of ibuprofen for Monday because we have none left today. ")
    assert english.flush()[0] == "I have booked two boxes of ibuprofen"


def test_bench_brain_reads_a_spanish_agents_cases_as_its_calls_would() -> None:
    """`bench brain` builds each case's request in the agent's language, with its scope, and the caller's numbers
    written as a Spanish call writes them ("cuatro cinco uno dos siete" -> "4 5 1 2 7")."""
    from loop import Tool
    from loop.bench.brain import BrainSetup, case_request

    def consultar_reserva(numero_reserva: str) -> str:
        """Una reserva por su número de cinco cifras"""

    setup = BrainSetup("Eres la farmacia.", [Tool(consultar_reserva)], scope="Solo puedo consultar reservas.",
                       language="es")
    request = case_request(setup.assembler(len), {"say": "Mi reserva es la cuatro cinco uno dos siete."})
    assert request.language == "es" and request.messages[-1].content == "Mi reserva es la 4 5 1 2 7."
    assert "Solo puedo consultar reservas." in setup.assembler(len).scope


# ---- labelled sets read by every pack ---------------------------------------------------------------------


@pytest.mark.parametrize(("language", "name", "kind", "described", "asked"), [
    (row[0], *row[1].split("\t")) for row in labelled("labels.tsv")])
def test_an_argument_is_asked_for_in_its_languages_words(language: str, name: str, kind: str, described: str,
                                                         asked: str) -> None:
    """tests/data/labels.tsv: "booking reference" for `booking_ref`, "el número de cajas" for `cajas`."""
    from loop.grounding._arg_kinds import label

    assert label(name, {"type": kind}, described, "", locale.get(language)) == asked


@pytest.mark.parametrize(("language", "number", "said"), [(row[0], *row[1].split("\t")) for row in labelled(
    "said_numbers.tsv")])
def test_a_number_is_said_as_its_language_composes_it(language: str, number: str, said: str) -> None:
    """tests/data/said_numbers.tsv: "forty two", "cuarenta y dos", "veintiuno"; what the readers of number words
    read back (a count said before its noun, a time said in words)."""
    from loop.grounding._clock import clock_times
    from loop.grounding._listed import counted_spans

    words = locale.get(language)
    assert locale.said_numbers(words)[said] == int(number)
    assert words.numbers_in_digits(said) in (said, number)  # English reads its words where they are used
    if int(number) > 0:
        spans = counted_spans({"boxes": {"type": "integer"}}, f"{said} boxes", words=words)
        assert spans == {"boxes": [f"{said} boxes"]}
    if 10 <= int(number) < 60:
        assert clock_times(f"{words.cardinal(7)} {said}", words) == [(7, int(number), "")]


@pytest.mark.parametrize(("language", "said", "asks_something"), [
    (row[0], *row[1].split("\t")) for row in labelled("questions.tsv")])
def test_a_question_is_told_from_an_answer_after_its_lead_in(language: str, said: str, asks_something: str) -> None:
    """tests/data/questions.tsv: a question's first word after the pack's QUESTION_LEAD_IN words tells."""
    from loop.grounding._facts import asks

    assert asks(said, locale.get(language)) is (asks_something == "yes")


def test_every_question_lead_in_word_has_an_example_that_needs_it() -> None:
    for language in locale.LANGUAGES:
        words = locale.get(language)
        first = {locale.unaccented(s.split()[0].lower().strip(",.?¿")) for lang, row in labelled("questions.tsv")
                 if lang == language for s in [row.split("\t")[0]]}
        assert words.QUESTION_LEAD_IN - first - {"una", "pregunta"} <= set(), language  # "una pregunta": two words


@pytest.mark.parametrize(("language", "reply", "nothing"), [
    (row[0], *row[1].split("\t")) for row in labelled("reply_openers.tsv")])
def test_a_reply_that_only_opens_says_nothing(language: str, reply: str, nothing: str) -> None:
    """tests/data/reply_openers.tsv: the pack's REPLY_OPENERS, ASK_OPENER and COURTESY_WORDS answer nothing."""
    from loop.grounding.speakable import says_nothing

    assert says_nothing(reply, locale.get(language)) is (nothing == "yes")


@pytest.mark.parametrize(("language", "agent_word", "caller_word", "same"), [
    (row[0], *row[1].split("\t")) for row in labelled("related.tsv")])
def test_the_words_every_agent_shares_are_few_and_domain_words_are_the_agents(
        language: str, agent_word: str, caller_word: str, same: str) -> None:
    """tests/data/related.tsv: asking when and asking how much are the language's; "fix" for a repair is not."""
    from loop.grounding._heard import word_stem
    from loop.grounding._scope import related_groups

    pack = locale.get(language)  # a word's stem in its language, as the groups are stemmed
    linked = any({word_stem(agent_word, pack), word_stem(caller_word, pack)} <= group
                 for group in related_groups(language))
    assert linked is (same == "yes")



@pytest.mark.parametrize(("word", "expected"), labelled("plural_stems.tsv"))
def test_a_plural_stems_as_its_singular(word: str, expected: str) -> None:
    """tests/data/plural_stems.tsv: "fines" is "fine" (it was "fin", so "Parking fines ..." never met "the fine"),
    "boxes" is "box"."""
    from loop.grounding._heard import stem

    assert stem(word) == expected

def test_an_agent_declares_its_own_words_for_the_same_thing() -> None:
    """`Agent(related=...)` (an agent file's `related:`): "my lights went out" is about a power cut at an outage
    line that says so, and out of scope at one that does not."""
    from loop import Message, Tool
    from loop.grounding._scope import out_of_scope

    def report_outage(postcode: str) -> str:
        """Report a power cut at a postcode"""
        return "reported"

    def asked(**extra: object) -> bool:
        agent = Agent(ScriptedModel(["ok"]), tools=[Tool(report_outage)], system_prompt="You answer a power line.",
                      **extra)  # type: ignore[arg-type]
        return out_of_scope(agent.assembler.build([Message("user", "My lights went out")], 0, 96)[0])

    assert asked() and not asked(related=[("power", "outage", "light")])
    # an entry of several words is read as a caller's words are: "drop off" as one word, "not working" as "working"
    # (set 6 dev: "Can I drop off ..." at a tip whose related words said "drop off" was told the scope sentence)
    def take_item(item: str) -> str:
        """Whether the tip takes an item"""
        return "yes"

    def dropped(**extra: object) -> bool:
        agent = Agent(ScriptedModel(["ok"]), tools=[Tool(take_item)], system_prompt="You answer a tip.", **extra)
        request = agent.assembler.build([Message("user", "Can I drop off an old fridge?")], 0, 96)[0]
        return out_of_scope(request)

    assert dropped() and not dropped(related=[("tip", "drop off")])
    with pytest.raises(TypeError, match="list of word groups"):
        Agent(ScriptedModel(["ok"]), related="power light")  # type: ignore[arg-type]


@pytest.mark.parametrize(("language", "number", "cardinal", "ordinal"), [
    (row[0], *row[1].split("\t")) for row in labelled("numbers_spelt.tsv")])
def test_a_pack_writes_a_number_in_its_words(language: str, number: str, cardinal: str, ordinal: str) -> None:
    """tests/data/numbers_spelt.tsv: the pack's `cardinal` and `ordinal` (the spoken form, word error rates)."""
    words = locale.get(language)
    assert (words.cardinal(int(number)), words.ordinal(int(number))) == (cardinal, ordinal)
