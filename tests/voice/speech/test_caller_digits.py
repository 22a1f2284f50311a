"""Numbers dictated in pieces are joined before the model reads them; amounts, times and prose are left alone."""

from __future__ import annotations

import pytest

from tests.helpers import labelled
from voice.speech.caller_digits import join_spoken_digits


@pytest.mark.parametrize(("heard", "joined"), [
    ("Where is my order 4 5 6 7?", "Where is my order 4567?"),
    ("It's 4 5 6 7", "It's 4567"),
    ("Can you check 12, 34 for me?", "Can you check 1234 for me?"),  # tiny.en on "one two three four"
    ("order 45-67 please", "order 4567 please"),
    ("It is 7 7 8 8.", "It is 7788."),
    ("order 20 20", "order 2020"),
    ("four five six seven", "4567"),
    ("my order is seven seven eight eight", "my order is 7788"),
    ("I want $20 for order 4567.", "I want $20 for order 4567."),
    ("refund 20 30 dollars", "refund 20 30 dollars"),
    ("Order 2020, 10 dollars", "Order 2020, 10 dollars"),
    ("at 3 30 pm", "at 3 30 pm"),
    ("I have 2 kids", "I have 2 kids"),
    ("one two", "one two"),
    ("version 1.2.3", "version 1.2.3"),
    ("I was born in 1980, 12 years ago", "I was born in 1980, 12 years ago"),
    ("Order 4567. 3 more", "Order 4567. 3 more"),
    # digits Whisper wrote as the words they sound like, inside a dictated run
    ("Why is my order to 0 to 0 running late?", "Why is my order 2020 running late?"),
    ("Why is my order to zero to zero running late?", "Why is my order 2020 running late?"),
    ("order for 5 6 7", "order 4567"),
    ("send it to 1 2 3 4 please", "send it to 1234 please"),  # four real digits: "to" is a word
    ("order 4 5 6 7 to London", "order 4567 to London"),
    ("from 9 to 5 every day", "from 9 to 5 every day"),
    ("I want 2 to 3 for now", "I want 2 to 3 for now"),  # it ends on one: no dictation
    ("two for one", "two for one"),
    # "four four" heard as "for for": one digit said twice, right after the number is named
    ("The references for for one eight.", "The references 4418."),
    ("my account number is to to 5 1", "my account number is 2251"),
    ("I want to to 1 2", "I want to to 1 2"),
    ("Tell me for for 1 2", "Tell me for for 1 2"),
    # digits and digit words in one dictated run (Whisper writes some of each)
    ("6, 6, oh, oh.", "6600."),
    ("It's 3 0 5 one, eight.", "It's 30518."),
    ("2 and 3 and one", "2 and 3 and one"),
    ("1 2 3 4 dollars", "1 2 3 4 dollars"),
    # a reference spelt as capitals then digits is one
    ("The file reference is LIS 48213.", "The file reference is LIS48213."),
    ("It's K X 4 7 2 9", "It's KX4729"),
    ("share its KX for 729.", "share its KX4729."),
    ("booking BT-1186 please", "booking BT1186 please"),
    ("Yes, it's JFK, 33460", "Yes, it's JFK33460"),  # a pause after the letters
    ("I flew BA, 3 times", "I flew BA, 3 times"),
    ("my ID 4821", "my ID 4821"),
    ("at 10 AM 2 people", "at 10 AM 2 people"),
    ("I am 34", "I am 34"),
    # three decimals is no amount: a dictated id
    ("It's member 418.005", "It's member 418005"),
    ("It costs $12.50", "It costs $12.50"),
    ("pi is 3.14", "pi is 3.14"),
    # a digit said twice or three times, beside the run's other digits
    ("It's 7 double 8 1.", "It's 7881."),
    ("seven double eight one", "7881"),
    ("double 7 8 8 please", "7788 please"),
    ("triple 3 4 5", "33345"),
    ("a double room for 2 nights", "a double room for 2 nights"),
    ("double 3", "double 3"),
])
def test_join_spoken_digits(heard: str, joined: str) -> None:
    assert join_spoken_digits(heard) == joined


@pytest.mark.parametrize(("heard", "joined"), [
    ("48 to 1", "4821"),
    ("It's 48 to 1.", "It's 4821."),
    ("my card ends 57 for 2", "my card ends 5742"),
    ("It's for 4567.", "It's for 4567."),  # never at either end of the run
    ("4567 for the refund", "4567 for the refund"),
    ("from 9 to 5", "from 9 to 5"),  # two real digits: a span, not a number
    ("20 to 30 dollars", "20 to 30 dollars"),
    ("I have 2 kids", "I have 2 kids"),
])
def test_an_answer_to_a_question_for_a_number_reads_sound_alikes_between_digits(heard: str, joined: str) -> None:
    assert join_spoken_digits(heard, asked_for_a_number=True) == joined
    if heard != joined:
        assert join_spoken_digits(heard) == heard  # only where a number was asked for


@pytest.mark.parametrize(("said", "joined"), labelled("numbers_in_pairs.tsv"))
def test_an_id_said_in_pairs_of_number_words_or_with_pauses_is_joined(said: str, joined: str) -> None:
    assert join_spoken_digits(said) == joined


@pytest.mark.parametrize(("said", "written"), labelled("house_numbers.tsv"))
def test_a_house_number_said_in_words_is_written_in_digits(said: str, written: str) -> None:
    assert join_spoken_digits(said) == written


# ---- the call's language (its pack: loop.locale) ----------------------------------------------------------


@pytest.mark.parametrize(("heard", "joined"), [
    ("Mi pedido es cuatro cinco seis siete.", "Mi pedido es 4567."),  # Spanish digit words
    ("El localizador es 4 doble 7 1.", "El localizador es 4771."),  # "doble siete": two sevens
    ("Mi DNI 4 5 6 7", "Mi DNI 4567"),  # "DNI" is a word Whisper writes in capitals, no letters of an id
    ("Son 2 to 0 to 0", "Son 2 to 0 to 0"),  # English's homophones of a digit are no Spanish digits
    ("para 4 5 6 7", "para 4567"),  # nor is "para" "for"
])
def test_a_spanish_call_joins_its_own_digit_words(heard: str, joined: str) -> None:
    from loop import locale

    assert join_spoken_digits(heard, words=locale.get("es")) == joined


def test_english_reads_a_spanish_capital_word_as_letters_of_an_id() -> None:
    """What the language changes: English's CAPITAL_WORDS lack "DNI", its DIGIT_HOMOPHONES read "to" as 2."""
    assert join_spoken_digits("Mi DNI 4 5 6 7") == "Mi DNI4567"
    assert join_spoken_digits("order to 0 to 0") == "order 2020"


@pytest.mark.parametrize(("language", "word", "number"), [
    (row[0], *row[1].split("\t")) for row in labelled("number_words.tsv")])
def test_a_number_word_of_a_dictated_id_is_the_packs(language: str, word: str, number: str) -> None:
    """tests/data/number_words.tsv: the pack's NUMBER_WORD, as the reader of dictated digits matches it."""
    from loop import locale
    from voice.speech._dictated_digits import number_words

    assert bool(number_words(locale.get(language)).digitlike.fullmatch(word)) is (number == "yes")
