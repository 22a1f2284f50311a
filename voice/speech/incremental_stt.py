"""Transcribe a growing caller turn window by window, so the cost per second of speech stays flat.

While the caller speaks, the session asks for partial transcripts of the turn so far (to weigh an interruption,
to speculate, to have the text ready when they pause). Sending the whole turn each time costs O(turn length) per
request, O(length²) per turn. A `TurnTranscriber` cuts the turn into windows of at most `window_s`, each ending
at the quietest 100 ms of its last seconds so a word is not split. A cut depends only on the audio before it, so
as the turn grows its earlier windows never change: their text is kept ("committed"), and each request
transcribes only the open window at the end — at most `window_s` of audio, however long the caller talks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from voice.audio import SAMPLE_RATE
from voice.speech.engines import QUICK_PASS, STT, transcribe_with

HEAD_WORDS = 4  # a sentence kept as the turn's head has this many words at least: "Can you check?" may be a stub
SEARCH_S = 5.0  # where a cut may go: the quietest 100 ms in this much audio before the window's end


def quiet_cuts(samples: np.ndarray, max_window_s: float, search_s: float = SEARCH_S) -> list[tuple[int, int]]:
    """Spans of at most `max_window_s` covering `samples`, each cut at the quietest 100 ms of its last
    `search_s` (a cut depends only on the audio before it: a growing buffer keeps its earlier spans)."""
    limit, block = int(max_window_s * SAMPLE_RATE), SAMPLE_RATE // 10
    search = min(int(search_s * SAMPLE_RATE), limit) // block * block
    spans, start = [], 0
    while len(samples) - start > limit:
        region = samples[start + limit - search: start + limit].astype(np.float64)
        energies = np.square(region).reshape(-1, block).sum(axis=1)
        cut = start + limit - search + (int(np.argmin(energies)) + 1) * block
        spans.append((start, cut))
        start = cut
    if start < len(samples):
        spans.append((start, len(samples)))
    return spans


@dataclass
class TurnTranscriber:
    """One caller turn's transcript, built window by window (see the module docstring). Safe to share between
    the transcription of a partial and the turn's final one (a window is at worst transcribed twice).

    `finished` says whether words are a finished sentence. When the caller goes on after a long pause
    (`went_on`) and the transcription taken in that pause (`pause_key`) ends a finished sentence, its audio becomes
    the turn's head: only what follows the pause is transcribed again ("Can I collect my car on Saturday at 9am?"
    kept, "It's job 4712." transcribed), so a turn of several sentences costs the last one's transcription, not
    all of them again. The cut lies in a pause, so no word is split. A sentence of fewer than `HEAD_WORDS` words
    is kept only when the call says so (`went_on`: after a pause of `TurnConfig.keep_sentences_after_s` that the
    end-of-turn model heard as an end, or the end of the turn before): Whisper closes a fragment heard up to a
    reader's pause ("John Dashwood had them.", "... to consider how.") as readily as a sentence, and the words
    after it, heard alone, come out worse (the recordings of `scripts/measure_end_of_turn.py`: 13.0 -> 15.3 %
    WER when every pause after such words made a head, 14.6 % after pauses of 0.25 s, 13.0 % as now)."""

    window_s: float = 10.0
    finished: Callable[[str], bool] | None = None
    committed: dict[tuple[int, int], str] = field(default_factory=dict)  # finished windows' text
    head: tuple[int, str] | None = None  # (samples, text): the turn's words up to a pause after a finished sentence
    paused: dict[float, tuple[int, str]] = field(default_factory=dict)  # pause -> (samples, text) transcribed in it
    calls: int = 0  # speech-to-text calls made for this turn
    audio_s: float = 0.0  # seconds of audio sent to speech-to-text for this turn
    _gone_on: set[float] = field(default_factory=set, repr=False)  # long pauses gone on from, transcript not back
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def transcribe(self, stt: STT, audio: np.ndarray, vocabulary: Sequence[str] = (),
                   pause_key: float | None = None, id_digits: Sequence[int] = ()) -> str:
        """The text of `audio` (this turn from its start): its head and earlier windows from memory, the rest
        transcribed (biased towards the call's `vocabulary`, which is the same for the whole turn; its identifiers
        checked against `id_digits`). `pause_key`:
        the audio ends in this pause of the caller's (for `went_on`)."""
        with self._lock:
            head = self.head if self.head is not None and self.head[0] < len(audio) else None
        start, texts = (head[0], [head[1]]) if head else (0, [])
        spans = [(start + a, start + b) for a, b in quiet_cuts(audio[start:], self.window_s)]
        for i, span in enumerate(spans):
            with self._lock:
                known = self.committed.get(span)
            if known is None:
                known = transcribe_with(stt, audio[span[0]: span[1]], vocabulary, id_digits).strip()
                with self._lock:
                    self.calls += 1
                    self.audio_s += (span[1] - span[0]) / SAMPLE_RATE
                    if i < len(spans) - 1 and not QUICK_PASS.get():  # a finished window never changes
                        self.committed[span] = known
            texts.append(known)
        text = " ".join(t for t in texts if t)
        if pause_key is not None and not QUICK_PASS.get():
            with self._lock:
                self.paused[pause_key] = (len(audio), text)
                gone_on = pause_key in self._gone_on
            if gone_on:  # the caller went on before this was back
                self.went_on(pause_key)
        return text

    def went_on(self, pause_key: float) -> None:
        """The caller went on after a long pause: what was transcribed in it (now, or when it is back) may become
        the head (`offer_head`)."""
        with self._lock:
            heard = self.paused.pop(pause_key, None)
            if heard is None:
                self._gone_on.add(pause_key)
        if heard is not None:
            self.offer_head(*heard)

    def offer_head(self, samples: int, text: str) -> None:
        """The turn's first `samples` of audio, ending in a pause, say `text`: its head from now on if `text` ends
        a finished sentence of `HEAD_WORDS` words or more past the head so far."""
        if self.finished is None or not self.finished(text):
            return
        with self._lock:
            before = self.head[1].split() if self.head is not None else []
            if (self.head is None or self.head[0] < samples) and len(text.split()) - len(before) >= HEAD_WORDS:
                self.head = (samples, text)
