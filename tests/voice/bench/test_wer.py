"""voice.bench.wer: normalisation and word error counting."""

from __future__ import annotations

import pytest

from voice.bench.wer import WordErrors, corpus_wer, normalize_words, spell_number, wer, word_errors


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello, World!", ["hello", "world"]),
        (
            "Author of the danger trail, Philip Steels, etc.",
            ["author", "of", "the", "danger", "trail", "philip", "steels", "etc"],
        ),
        ("cold-hearted and ill\u2011disposed \u2014 really", ["cold", "hearted", "and", "ill", "disposed", "really"]),
        ("I'm glad, God bless 'em", ["i'm", "glad", "god", "bless", "'em"]),
        ("It\u2019s fine", ["it's", "fine"]),
        ('"Quoted" (words) [here]; yes: no?', ["quoted", "words", "here", "yes", "no"]),
        ("  ", []),
        ("' lone ' quotes", ["lone", "quotes"]),
    ],
)
def test_normalize_words(text: str, words: list[str]) -> None:
    assert normalize_words(text) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Go forward 10 meters.", "go forward ten meters"),
        ("1, 2, 3.", "one two three"),
        ("for the 20th time", "for the twentieth time"),
        ("21st 2nd 3rd 12th 100th", "twenty first second third twelfth one hundredth"),
        ("order 4567", "order four thousand five hundred sixty seven"),
        ("1,000 people", "one thousand people"),
        ("$4.50", "four fifty"),
    ],
)
def test_numbers_are_spelled_out(text: str, words: str) -> None:
    assert normalize_words(text) == words.split()
    assert normalize_words("go 10", spell_numbers=False) == ["go", "10"]


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "zero"),
        (13, "thirteen"),
        (40, "forty"),
        (99, "ninety nine"),
        (101, "one hundred one"),
        (1000, "one thousand"),
        (999999, "nine hundred ninety nine thousand nine hundred ninety nine"),
    ],
)
def test_spell_number(number: int, words: str) -> None:
    assert spell_number(number) == words


def test_identical_after_normalisation_is_zero() -> None:
    assert wer("And so, my fellow Americans.", "and so my fellow americans") == 0.0


def test_counts_substitutions_deletions_and_insertions() -> None:
    assert word_errors("a b c d", "a x c d") == WordErrors(1, 0, 0, 4)
    assert word_errors("a b c d", "a c d") == WordErrors(0, 1, 0, 4)
    assert word_errors("a b c d", "a b c d e f") == WordErrors(0, 0, 2, 4)
    assert word_errors("a b c", "") == WordErrors(0, 3, 0, 3)
    assert word_errors("the cat sat", "cat sat down") == WordErrors(0, 1, 1, 3)
    assert wer("a b c d", "a x c d e") == pytest.approx(0.5)


def test_wer_can_exceed_one_with_insertions() -> None:
    assert wer("yes", "yes yes yes no") == pytest.approx(3.0)


def test_empty_reference() -> None:
    assert wer("", "") == 0.0
    assert wer("", "hallucinated words") == 1.0
    assert wer("?! ...", "") == 0.0  # punctuation-only references normalise to nothing


def test_corpus_wer_pools_words_not_rates() -> None:
    pairs = [("one two three four five six seven eight nine ten", "one two three four five six seven eight nine ten")]
    pairs.append(("yes", "no"))
    assert corpus_wer(pairs) == pytest.approx(1 / 11)
    assert (word_errors("a b", "a") + word_errors("c", "d")).wer == pytest.approx(2 / 3)


def test_a_spanish_bench_spells_numbers_in_spanish() -> None:
    """`words`: the language's pack writes the numbers out, and its ordinal endings ("1º") mark an ordinal."""
    from loop import locale

    es = locale.get("es")
    spelt = ["pedido", "trescientos", "ochenta", "y", "cinco", "el", "primero"]
    assert normalize_words("Pedido 385, el 1º", words=es) == spelt
    assert word_errors("veintitrés euros", "23 euros", es) == WordErrors(0, 0, 0, 2)
    assert spell_number(23, es) == "veintitrés" and spell_number(23) == "twenty three"
