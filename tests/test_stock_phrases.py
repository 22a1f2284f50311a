"""Short clauses answers open with are synthesised once (voice/speech/stock_phrases.py)."""

from __future__ import annotations

import threading

import numpy as np

from voice.speech.stock_phrases import MAX_KEPT, StockPhrases, is_stock


class CountingTTS:
    sample_rate = 22050

    def __init__(self) -> None:
        self.said: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.said.append(text)
        return np.full(100, len(self.said), np.int16)


def test_an_opener_is_synthesised_once_and_an_answers_content_every_time() -> None:
    engine = CountingTTS()
    tts = StockPhrases(engine)
    first = tts.synthesize("Sure,")
    first[:] = 0  # the caller's copy: what is kept does not change
    again = tts.synthesize(" Sure,")
    assert engine.said == ["Sure,"] and again[0] == 1 and tts.reused == 1
    tts.synthesize("Order 4567 has shipped,")
    tts.synthesize("Order 4567 has shipped,")  # an answer's own words, with a number: said afresh
    tts.synthesize("Done: $20")
    assert engine.said.count("Order 4567 has shipped,") == 2 and "Done: $20" in engine.said
    assert tts.sample_rate == 22050 and StockPhrases(tts).engine is engine  # wrapping twice keeps one cache


def test_what_counts_as_a_stock_clause_and_how_many_are_kept() -> None:
    assert is_stock("Just to confirm:") and is_stock("You're welcome.") and is_stock("Sorry,")
    assert not is_stock("") and not is_stock("Refund 20?") and not is_stock("I can help with that.")
    engine = CountingTTS()
    tts = StockPhrases(engine)
    words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676)}" for i in range(MAX_KEPT + 1)]
    for w in words:
        tts.synthesize(w)
    tts.synthesize(words[-1])
    tts.synthesize(words[0])  # the oldest went first
    assert engine.said.count(words[-1]) == 1 and engine.said.count(words[0]) == 2


def test_calls_on_worker_threads_share_the_kept_audio() -> None:
    engine = CountingTTS()
    tts = StockPhrases(engine)
    tts.synthesize("Okay,")
    threads = [threading.Thread(target=tts.synthesize, args=("Okay,",)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert engine.said == ["Okay,"] and tts.reused == 8
