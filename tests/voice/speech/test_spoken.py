"""voice.speech.spoken: written replies rewritten for the ear before TTS (English's spoken form, in its pack:
loop/locale/en/_spoken.py), table-driven."""

from __future__ import annotations

import random
import shutil
import time

import numpy as np
import pytest

from loop import locale
from loop.locale.en._spoken_numbers import cardinal, clock, digits, ordinal, year
from voice.speech.spoken import SpokenForm, SpokenTTS, language_of, strip_markup

SPEAK = SpokenForm("en").speak

IDS_AND_PHONES = [
    ("order 4567", "order four five six seven"),
    ("Order 4567 has shipped.", "Order four five six seven has shipped."),
    ("Your order number is 4567.", "Your order number is four five six seven."),
    ("order #4567", "order number four five six seven"),
    ("#4567", "number four five six seven"),
    ("No. 5", "number five"),
    ("order no. 12", "order number one two"),
    ("ID 42", "I D four two"),
    ("ID: 4567", "I D: four five six seven"),
    ("ticket 12", "ticket one two"),
    ("ticket A-123", "ticket eh, one two three"),
    ("tracking 1Z99", "tracking one Z nine nine"),
    ("order 2020", "order two zero two zero"),  # an id, though it looks like a year
    ("orders 4567 and 1234", "orders four five six seven and one two three four"),
    ("I found 4567.", "I found four five six seven."),  # 4+ digits, not a year or amount: an id
    ("98765", "nine eight seven six five"),
    ("555-0134", "five five five, zero one three four"),
    ("Call 555-0134 today", "Call five five five, zero one three four today"),
    ("(555) 123-4567", "five five five, one two three, four five six seven"),
    ("555-123-4567", "five five five, one two three, four five six seven"),
    ("+1 555-123-4567", "plus one, five five five, one two three, four five six seven"),
    ("1-800-555-0134", "one, eight zero zero, five five five, zero one three four"),
]

MONEY = [
    ("$20.00", "twenty dollars"),
    ("$20", "twenty dollars"),
    ("$19.99", "nineteen dollars and ninety-nine cents"),
    ("$1,250", "one thousand two hundred fifty dollars"),
    ("$0.50", "fifty cents"),
    ("$0.01", "one cent"),
    ("$1.00", "one dollar"),
    ("$1.01", "one dollar and one cent"),
    ("$0", "zero dollars"),
    ("$59.90", "fifty-nine dollars and ninety cents"),
    ("$20.5", "twenty dollars and fifty cents"),
    ("-$5.00", "minus five dollars"),
    ("$1.5 million", "one point five million dollars"),
    ("$2k", "two thousand dollars"),
    ("$0.125", "zero point one two five dollars"),
    ("€5.50", "five euros and fifty cents"),
    ("£3", "three pounds"),
    ("Refunded $20.00 for order 4567.", "Refunded twenty dollars for order four five six seven."),
    ("a total of $1,234,567.89", "a total of one million two hundred thirty-four thousand five hundred sixty-seven "
                                 "dollars and eighty-nine cents"),
]

TIMES_AND_DATES = [
    ("3:30 pm", "three thirty p.m."),
    ("3:30 PM", "three thirty p.m."),
    ("at 3:30 p.m.", "at three thirty p.m."),
    ("10:05", "ten oh five"),
    ("10:00", "ten o'clock"),
    ("15:45", "fifteen forty-five"),
    ("18:00", "eighteen hundred"),
    ("9am", "nine a.m."),
    ("9 a.m. tomorrow", "nine a.m. tomorrow"),
    ("3:00 pm.", "three p.m."),
    ("2026-12-01", "December first, twenty twenty-six"),
    ("Dec 1", "December first"),
    ("12/01/2026", "December first, twenty twenty-six"),
    ("Dec 1, 2026", "December first, twenty twenty-six"),
    ("December 22nd", "December twenty-second"),
    ("Sept 5", "September fifth"),
    ("1 December 2026", "December first, twenty twenty-six"),
    ("the 2nd of May", "the May second"),
    ("12/1/26", "December first, twenty twenty-six"),
    ("13/45/2026", "thirteen slash forty-five slash twenty twenty-six"),  # not a date: left to the number rules
    ("in 2026", "in twenty twenty-six"),
    ("in 1999", "in nineteen ninety-nine"),
    ("since 2005", "since two thousand five"),
    ("the 1990s", "the nineteen nineties"),
]

NUMBERS = [
    ("1st", "first"),
    ("22nd", "twenty-second"),
    ("3rd", "third"),
    ("the 100th caller", "the one hundredth caller"),
    ("15%", "fifteen percent"),
    ("2.5%", "two point five percent"),
    ("-3%", "minus three percent"),
    ("100 %", "one hundred percent"),
    ("3 items", "three items"),
    ("1 item", "one item"),
    ("0 items", "zero items"),
    ("-5 degrees", "minus five degrees"),
    ("-3.5", "minus three point five"),
    ("2.50", "two point five zero"),
    ("0.75", "zero point seven five"),
    ("1,250 points", "one thousand two hundred fifty points"),
    ("2000 items", "two thousand items"),
    ("12000", "twelve thousand"),
    ("2-3 days", "two to three days"),
    ("3–5 business days", "three to five business days"),
    ("~5 minutes", "about five minutes"),
    ("5 kg", "five kilograms"),
    ("1 lb", "one pound"),
    ("10 mins", "ten minutes"),
    ("72°F", "seventy-two degrees Fahrenheit"),
    ("COVID-19", "COVID-nineteen"),
    ("MP3", "MP three"),
    ("version 1.2.3", "version one point two point three"),
    ("24/7", "twenty-four seven"),
    ("19", "nineteen"),
    ("999", "nine hundred ninety-nine"),
]

ABBREVIATIONS = [
    ("St. Louis", "Saint Louis"),
    ("12 Main St.", "twelve Main Street."),
    ("We ship from Main St. daily", "We ship from Main Street daily"),
    ("Dr. Lee will call", "Doctor Lee will call"),
    ("Call Dr. Lee", "Call Doctor Lee"),
    ("4 Elm Dr.", "four Elm Drive."),
    ("approx. 5 days", "approximately five days"),
    ("e.g. shoes", "for example shoes"),
    ("i.e. today", "that is today"),
    ("shoes, bags, etc.", "shoes, bags, et cetera."),
    ("etc. and more", "et cetera and more"),
    ("your ID", "your I D"),
    ("the ETA is noon", "the E T eh is noon"),
    ("two IDs", "two I D's"),
    ("via UPS or USPS", "via U P S or U S P S"),
    ("Mr. Ruiz", "Mister Ruiz"),
    ("Apt. 4", "Apartment four"),
    ("ASAP", "as soon as possible"),
    ("w/ tax", "with tax"),
    ("yes/no", "yes or no"),
    ("and/or", "and or"),
    ("Tom & Jerry", "Tom and Jerry"),
    ("Approx. 10% of orders", "Approximately ten percent of orders"),
    ("E.g. shoes", "For example shoes"),
    ("Call 911", "Call nine one one"),
    ("open Mon-Fri", "open Monday to Friday"),
    ("on Tue, Dec 3rd", "on Tuesday, December third"),
    ("on Thu 12/03/2026", "on Thursday December third, twenty twenty-six"),
]

MARKUP_AND_SYMBOLS = [
    ("**Order 4567** has *shipped*.", "Order four five six seven has shipped."),
    ("Use `lookup_order` now", "Use lookup order now"),
    ("## Status\nshipped", "Status shipped"),
    ("- first\n- second", "first second"),
    ('{"status": "shipped"}', '"status": "shipped"'),
    ("Your order shipped! 🎉📦", "Your order shipped!"),
    ("Done ✅", "Done"),
    ("[the help page](https://shop.com/help)", "the help page"),
    ("Visit https://www.shop.com/help?x=1 now", "Visit shop dot com slash help now"),
    ("see shop.com.", "see shop dot com."),
    ("Write to help@shop.com.", "Write to help at shop dot com."),
    ("<b>Shipped</b>", "Shipped"),
    ("Shipped — arriving soon", "Shipped, arriving soon"),
    ("a | b", "a, b"),
    ("#sale today", "sale today"),
    ("", ""),
]

ALREADY_SPOKEN = [
    "Your refund of twenty dollars is on its way.",
    "Order four five six seven shipped on December first, twenty twenty-six.",
    "Just to confirm: refund twenty dollars on order four five six seven?",
    "Sorry, I can only help with your orders.",
    "Hi, how can I help?",
    "No. I can't do that.",
    "Is that a yes or a no?",
    "It arrives at three thirty p.m. today.",
    "I D four five six seven, E T eh noon.",
]


@pytest.mark.parametrize(("written", "spoken"),
                         IDS_AND_PHONES + MONEY + TIMES_AND_DATES + NUMBERS + ABBREVIATIONS + MARKUP_AND_SYMBOLS)
def test_written_form_becomes_what_a_person_says(written: str, spoken: str) -> None:
    assert SPEAK(written) == spoken


@pytest.mark.parametrize("text", ALREADY_SPOKEN)
def test_already_spoken_text_is_unchanged(text: str) -> None:
    assert SPEAK(text) == text


@pytest.mark.parametrize("written", [w for w, _ in IDS_AND_PHONES + MONEY + TIMES_AND_DATES + NUMBERS
                                     + ABBREVIATIONS + MARKUP_AND_SYMBOLS])
def test_speaking_twice_changes_nothing_more(written: str) -> None:
    once = SPEAK(written)
    assert SPEAK(once) == once
    assert not any(ch.isdigit() for ch in once)  # no digit ever reaches the phonemizer


def test_a_whole_reply_from_the_order_desk() -> None:
    written = ("Order 4567 for Ana Ruiz to Lisbon: shipped, total $59.90, already refunded $20.00. "
               "It should arrive by Dec 1, around 3:30 pm; call 555-0134 with your ticket #88 if not.")
    assert SPEAK(written) == (
        "Order four five six seven for Ana Ruiz to Lisbon: shipped, total fifty-nine dollars and ninety cents, "
        "already refunded twenty dollars. It should arrive by December first, around three thirty p.m.; call "
        "five five five, zero one three four with your ticket number eight eight if not.")


NUMBER_WORDS = [
    (cardinal, 0, "zero"), (cardinal, 7, "seven"), (cardinal, 13, "thirteen"), (cardinal, 40, "forty"),
    (cardinal, 99, "ninety-nine"), (cardinal, 105, "one hundred five"), (cardinal, 1000, "one thousand"),
    (cardinal, 1001, "one thousand one"), (cardinal, 4567, "four thousand five hundred sixty-seven"),
    (cardinal, 1_000_000, "one million"), (cardinal, 2_000_000_017, "two billion seventeen"),
    (cardinal, -42, "minus forty-two"), (cardinal, 10**15, "one zero zero zero zero zero zero zero zero zero zero "
                                                            "zero zero zero zero zero"),
    (ordinal, 1, "first"), (ordinal, 2, "second"), (ordinal, 3, "third"), (ordinal, 5, "fifth"),
    (ordinal, 8, "eighth"), (ordinal, 9, "ninth"), (ordinal, 12, "twelfth"), (ordinal, 20, "twentieth"),
    (ordinal, 21, "twenty-first"), (ordinal, 101, "one hundred first"), (ordinal, 1000, "one thousandth"),
    (year, 2026, "twenty twenty-six"), (year, 2000, "two thousand"), (year, 2009, "two thousand nine"),
    (year, 2010, "twenty ten"), (year, 1905, "nineteen oh five"), (year, 1900, "nineteen hundred"),
    (year, 999, "nine hundred ninety-nine"),
]


@pytest.mark.parametrize(("fn", "n", "words"), NUMBER_WORDS)
def test_number_words(fn, n: int, words: str) -> None:
    assert fn(n) == words


def test_digits_and_clock() -> None:
    assert digits("0134") == "zero one three four"
    assert clock(10, 5, has_meridiem=False) == "ten oh five"
    assert clock(3, 0, has_meridiem=True) == "three"
    assert clock(0, 30, has_meridiem=False) == "zero thirty"


def test_markup_is_dropped_the_same_for_every_language() -> None:
    assert strip_markup("**bold** _it_ `x` {y} 😀") == "bold it x y"
    assert strip_markup("snake_case_name") == "snake case name"


def test_a_locale_is_read_as_its_language_and_an_unknown_one_says_which_there_are() -> None:
    assert language_of("en-US") == language_of("en_us") == language_of("en-GB") == language_of("en") == "en"
    assert SpokenForm("en-GB").language == "en" and SpokenForm("es-ES").language == "es"
    with pytest.raises(ValueError, match="voiceloop speaks en, es"):
        SpokenForm("fr-FR")


def test_a_languages_spoken_form_is_its_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack is the one place a language's spoken form is found (`spoken_form()`): no registry of its own."""
    class Shouting:
        def speak(self, text: str) -> str:
            return text.upper()

    monkeypatch.setattr(locale.get("es"), "spoken_form", Shouting)
    assert SpokenForm("es").speak("**hola** a todos") == "HOLA A TODOS"


class RecordingTTS:
    sample_rate = 16000

    def __init__(self) -> None:
        self.heard: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.heard.append(text)
        return np.zeros(160, dtype=np.int16)


def test_the_tts_wrapper_hears_the_spoken_form_and_passes_everything_else_through() -> None:
    engine = RecordingTTS()
    tts = SpokenTTS(SpokenTTS(engine))  # wrapping twice does not normalise twice
    audio = tts.synthesize("Refund $20 on order 4567?")
    assert engine.heard == ["Refund twenty dollars on order four five six seven?"]
    assert tts.sample_rate == 16000 and audio.dtype == np.int16
    assert tts.engine is engine


def test_a_normaliser_failure_speaks_the_written_text_instead_of_silencing_the_call() -> None:
    class Broken:
        def speak(self, text: str) -> str:
            raise RuntimeError("bug")

    form = SpokenForm()
    form.rules = Broken()
    engine = RecordingTTS()
    SpokenTTS(engine, form).synthesize("Order 4567 is on its way.")
    assert engine.heard == ["Order 4567 is on its way."]


_PIECES = ["4567", "$", "20", ".", "00", ",", "250", "-", "0134", "555", ":", "30", " pm", "%", "#", "order ",
           "ID ", "No. ", "1st", "/", "2026", "Dec ", "St. ", "e.g. ", "etc.", " ", "*", "`", "{", "😀", "—", "–",
           "+1 ", "(555) ", "A", "kg", "°", "~", "&", "@", "www.", ".com", "http://", "1,000", "0.5", "'", "\n",
           "1" * 5000]


def test_any_mix_of_digits_and_symbols_is_spoken_without_a_digit_or_an_error() -> None:
    rng = random.Random(7)
    for _ in range(600):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 8)))
        spoken = SPEAK(text)
        assert not any(ch.isdigit() for ch in spoken), (text, spoken)


def test_normalising_a_sentence_costs_well_under_a_millisecond() -> None:
    sentences = [w for w, _ in IDS_AND_PHONES + MONEY + TIMES_AND_DATES + NUMBERS + ABBREVIATIONS]
    SPEAK(sentences[0])
    start = time.perf_counter()
    for _ in range(5):
        for sentence in sentences:
            SPEAK(sentence)
    per_sentence = (time.perf_counter() - start) / (5 * len(sentences))
    assert per_sentence < 0.001, f"{per_sentence * 1e6:.0f} µs per sentence"


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_the_real_espeak_engine_speaks_the_spoken_form() -> None:
    from voice.speech.tts import EspeakTTS

    engine = EspeakTTS()
    audio = SpokenTTS(engine).synthesize("Refund $20 on order 4567?")
    assert audio.dtype == np.int16 and len(audio) > 16000 * 0.5  # it ran; the words are checked above
