"""Turn taking: when the caller started, when they finished, and whether speech over the agent is a
real interruption or a cough/backchannel. Pure logic over VAD probabilities and transcripts."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loop.locale import DEFAULT_WORDS, unaccented

HYSTERESIS = 0.15  # Silero's get_speech_timestamps: speech ends below threshold - 0.15


class TurnConfig(BaseModel):
    """Endpointing and barge-in thresholds."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    threshold: float = Field(0.5, gt=0.0, lt=1.0)
    """VAD probability at or above which a 32 ms frame starts the caller's speech (`start_frames` in a row)."""
    stop_threshold: float | None = Field(None, gt=0.0, lt=1.0)
    """Once the caller speaks, a frame still counts as speech down to this probability (hysteresis, as in Silero's
    own segmenter); None: `threshold` - 0.15. Quiet or band-limited words, which Silero scores 0.3-0.5, stay in
    the turn instead of counting as silence that ends it. Equal to `threshold`: no hysteresis."""
    start_frames: int = Field(2, ge=1)
    """Consecutive speech frames that start speech: one VAD window plus one frame."""
    preroll_s: float = Field(0.1, ge=0.0, le=2.0)
    """Caller audio from before the detected onset that the turn keeps (whole frames, rounded up): Silero rises a
    few frames into a quiet first word, and Whisper needs that word's start. More than 0.1 s made Whisper tiny.en
    repeat short utterances ("ten of clubs ten of clubs") more often (`scripts/measure_vad.py`)."""
    endpoint_silence_s: float = 0.42
    """Silence after speech that ends the caller's turn when their words look finished (Smart Turn not asked, not
    back, or unsure): 14 frames of 32 ms, 0.448 s; 0.45 took 15, 0.48 s. The recordings of
    `scripts/measure_end_of_turn.py`, paused for 0.4, 0.45 or 0.5 s mid-sentence, are cut no more often at 0.42."""
    answer_silence_s: float = 0.45
    """Silence that ends a whole yes or no to the agent's confirmation question (`needed_silence(answered=True)`):
    never less than this, whatever the other waits are set to, since a "yes" cut from its "but ..." would approve."""
    semantic_silence_s: float | None = 0.2
    """Silence that ends a turn whose words look finished when the end-of-turn model (Smart Turn, from the audio)
    also calls it complete; None: the transcript rules alone. The model is asked at `score_turn_s`."""
    semantic_threshold: float = Field(0.5, gt=0.0, lt=1.0)
    """The end-of-turn model's probability at or above which it calls a turn complete."""
    early_stt_s: float = 0.09
    """Real time: silence after which transcription starts, so it is ready when the turn ends (three 32 ms frames).
    Everything after it waits on the text (the turn's end, the decision started in the pause), so it starts as soon
    as a pause is a pause: in the recordings and caller lines (`scripts/measure_end_of_turn.py`) a caller goes on
    after 94 pauses of 3 frames and 87 of 5, so starting at 3 frames instead of 5 costs few wasted transcriptions."""
    busy_stt_s: float = 0.15
    """Silence after which transcription starts instead of `early_stt_s` while the Whisper a server shares is busy
    with other calls: the early start buys latency on an idle machine, but each pause a caller goes on from is a
    transcription another call's turn waits behind (`bench load`, every model on the box, 12 calls: p95 ~1.6-3.0 s
    starting at 0.096 s against ~1.5 s at 0.15)."""
    decide_lead_s: float = Field(0.7, ge=0.0)
    """The decision in the caller's pause (`SessionConfig.preempt`) starts this long before the silence that would
    end the turn (`needed_silence`), and no sooner: after a finished sentence or an open request at once, after
    words that trail off ("I'd like to book a", "um"), which callers mostly go on from, once the pause has lasted
    0.5 s. Fewer decisions thrown away (`bench voice --llm local`, all agents: 2.05 -> 1.93 model calls per reply),
    still long enough for the decision, a read and its answer to be ready when the turn ends; 0.45 also waited on
    open requests, which Smart Turn often ends at 0.2 s, and cost ~40 ms at p50."""
    score_turn_s: float = 0.15
    """Silence after which the end-of-turn model is asked (at most once per pause). Smart Turn calls a finished
    sentence complete more often when it hears more of the pause after it."""
    hold_silence_s: float = 1.2
    """Silence needed when the words so far trail off: a comma, "and", "the", "I want", "um" (see `trails_off`)."""
    lead_in_words: int = 3
    """After the agent asked for a number, words with no digit yet wait `hold_silence_s` for it when they are this
    few ("Sure, it's.", "Yes please.": the number comes after the pause); a finished sentence of more words with no
    digit ("Five o'clock, I think.", "No, I've just found it.") answered something else and ends as any other."""
    open_silence_s: float = 0.75
    """Silence needed when the words have no closing punctuation but end on something a request can end on ("my
    order number is 4567", "order 7788 been delivered"): Whisper often leaves a short request unpunctuated."""
    answer_gap_s: float = Field(0.35, ge=0.0)
    """The answer to a turn never starts sooner than this after the caller's last speech, however quickly it is
    ready: a caller who only paused and goes on within it is heard whole (the answer withdrawn unheard) instead of
    being talked over. Below what the speech-to-text, the model and the voice take together on the wall clock,
    so there it costs nothing; on the virtual clock, where they take no time, it is the answer's latency."""
    continue_within_s: float = Field(0.3, ge=0.0)
    """A caller who speaks again having heard at most this much of the answer to their turn has not reacted to it:
    they are going on with that turn (they had only paused), so the answer is withdrawn and the whole turn is
    answered once. 0: only when none of the answer was heard."""
    min_interrupt_s: float = 0.45
    """Speech over the agent shorter than this never interrupts (coughs, clicks)."""
    min_interrupt_words: int = 2
    """An interruption needs at least this many words that are not backchannels ("uh-huh", "yeah")."""
    barge_check_every_s: float = 0.2
    """While the caller talks over the agent, how often the words so far are checked for a real interruption."""
    speculate_every_s: float = 0.6
    """How often a partial transcript is offered for speculative reads while the caller speaks."""
    max_turn_s: float = Field(30.0, gt=1.0)
    """A caller turn is closed and answered after this much speech; what they say after it is the next turn."""
    keep_sentences_after_s: float | None = 0.25
    """A caller who goes on after a finished sentence and a pause at least this long, which the end-of-turn model
    heard as an end (or which ended the turn before), has that sentence transcribed once: from then on only what
    follows the pause is transcribed again (`voice.speech.incremental_stt`), so the text of a turn of several
    sentences is back in the time the last one takes. Shorter pauses are breaths inside a sentence more often
    than between two. None: the whole turn is transcribed every time."""
    stt_window_s: float = Field(10.0, ge=2.0)
    """A turn is transcribed in windows of at most this much audio; only the newest window is transcribed
    again for a partial (`voice/speech/incremental_stt.py`), so the cost per second of speech stays flat."""

    @model_validator(mode="after")
    def _stop_at_or_below_start(self) -> TurnConfig:
        if self.stop_threshold is not None and self.stop_threshold > self.threshold:
            raise ValueError(f"stop_threshold ({self.stop_threshold}) must not be above threshold ({self.threshold}):"
                             " speech would end on frames that are still loud enough to start it")
        return self

    @property
    def speech_stop(self) -> float:
        """The probability below which a frame of ongoing speech counts as silence."""
        if self.stop_threshold is not None:
            return self.stop_threshold
        return max(self.threshold - HYSTERESIS, self.threshold / 2)


def max_turn_seconds(text: str) -> float:
    """`--max-turn-s` as argparse reads it: a number of seconds above 1, else a clear usage error."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 1.0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"a turn must be allowed more than 1 s (got {text})")
    return seconds


def looks_finished(text: str) -> bool:
    """Whisper closes finished sentences with . ? or !; a comma or nothing means the caller paused mid-thought."""
    return bool(re.search(r"[.?!][\"')\]]*$", text.strip()))


_TRAILING_MARK = re.compile(r"(,|-|\.\.\.|…)[\"')\]]*$")  # a comma, dash or ellipsis at the end


def _words(text: str) -> list[str]:
    """The words and numbers in `text`, lower case and without accents ("Número" -> "numero")."""
    return re.findall(r"(?:[^\W\d_]|')+|\d+", unaccented(text.lower()))


def _last_word(text: str) -> str:
    words = _words(text)
    return words[-1] if words else ""


def trails_off(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """Words that stop mid-thought: a trailing comma, dash or ellipsis, or a last word in the language's
    `TRAILING` (`words`: its pack, `loop.locale`)."""
    text = text.strip()
    if not text or _TRAILING_MARK.search(text):
        return True
    last = _last_word(text)
    return not last or last in words.TRAILING


_DIGIT_RUN = re.compile(r"(?<![\d.,])\d(?:[\s,]*\d)*[.,]?$")  # "720", "7 2 0", "7, 2 0.": digits, spaced or not
_NUMBER_END = re.compile(r"(?<![\d.,])\d{3,}$")  # "the reference is 3091": an id-like number ends the words
_DIGIT_END = re.compile(r"\d[\"')\]]*[.,?!]*$")  # "... is 7," "... is 41.": a number so far, dictated on


def announces_a_number(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """A statement ending on what names a number, with no number after it ("I'm calling about job number."): the
    caller is about to say it (a question, "What's my booking reference?", is finished)."""
    return _last_word(text) in words.NUMBER_NAMES and not text.strip().endswith("?")


def asked_for_a_number(messages: list, words: ModuleType = DEFAULT_WORDS) -> bool:
    """The agent's last words were a question for a number ("Could you tell me the job number?", "¿Me puede decir
    el número de reserva?"): its digits are what the caller's next words are for."""
    said = next((m.content.strip() for m in reversed(messages) if m.role == "assistant" and m.content.strip()), "")
    uncounted = re.sub(words.DIGITS_COUNTED, " ", unaccented(said.lower()))  # "el número de ..., de cinco cifras?"
    last = [w for text in (said, uncounted) for w in [w for w in _words(text) if not w.isdigit()][-4:]]
    return said.endswith("?") and any(w.removesuffix("s") in words.NUMBER_NAMES for w in last)


def digits_asked(messages: list, words: ModuleType = DEFAULT_WORDS) -> int:
    """How many digits the agent's question asked for ("Could you tell me the eight-digit card number?" -> 8,
    "... de cinco cifras?" -> 5: the pack's `DIGITS_COUNTED`); 0 when it named no count (or asked no number)."""
    if not asked_for_a_number(messages, words):
        return 0
    said = next((m.content for m in reversed(messages) if m.role == "assistant" and m.content.strip()), "")
    m = re.search(words.DIGITS_COUNTED, unaccented(said.lower()))
    count = m.group(1) if m else ""
    return int(count) if count.isdigit() else words.ONES.index(count) if count in words.ONES else 0


def ends_on_number(text: str) -> bool:
    """The words end on a number of three or more digits, unpunctuated ("my job number is 4712")."""
    return bool(_NUMBER_END.search(text.strip()))


def short_of_an_id(text: str, id_lengths: Sequence[int]) -> bool:
    """The words end on a number of three or more digits, written whole or in pieces ("720", "7 2 0"), yet shorter
    than every identifier the agent has (`id_lengths`, its declared lengths): an id being dictated, its next digits
    after the pause ("Me puede cancelar la reserva ... siete ... dos ... cero ..." for a five-digit reservation)."""
    run = _DIGIT_RUN.search(text.strip())
    heard = sum(c.isdigit() for c in run.group()) if run else 0
    return bool(id_lengths) and 3 <= heard < min(id_lengths)


def ends_on_digits(text: str) -> bool:
    """The words end on digits, whatever follows them ("is 7,", "for 41."): a number was being said."""
    return bool(_DIGIT_END.search(text.strip()))


def sentence_done(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """Words that end a finished sentence, with nothing in them that goes on past it: not a number being dictated
    ("is 7.", "Four, one."), not one announced ("my job number is.", "The references."), not a trailing word
    ("I'd like the.")."""
    asked = re.search(r"[?!][\"')\]]*$", text.strip()) is not None  # "... at 9 am?": its last word ends nothing
    last = _last_word(text)
    return looks_finished(text) and (asked or not trails_off(text, words)) and not ends_on_digits(text) \
        and last not in words.DIGIT_WORDS and last.removesuffix("s") not in words.NUMBER_NAMES


def needed_silence(text: str, cfg: TurnConfig, complete: float | None = None, number_whole: bool = False,
                   answered: bool = False, awaiting_digits: bool = False, digits_wanted: int = 0,
                   words: ModuleType = DEFAULT_WORDS, id_lengths: Sequence[int] = ()) -> float:
    """How long a silence ends the turn after these words; `complete`: the end-of-turn model's verdict on the
    audio (None: not asked, or not back yet). The model only ever shortens the wait for words that look finished:
    on its own it was wrong both ways on synthetic speech, and the words keep a half-said request open.
    `number_whole`: the words end on a number said in one go (no earlier pause of the turn ended on digits); Whisper
    leaves such a request unpunctuated, so it counts as finished when the model agrees. A number dictated in
    pieces ("seven ... two ... nine") keeps the longer wait: the model calls a pause between digits complete.
    `answered`: the words are a whole answer to the agent's confirmation question, a clear yes or no (read by
    `voice.call.answers`), which is as finished as a sentence Whisper closed: "Yes, please" has no full stop more
    often than "Yes, go ahead." has. It waits `answer_silence_s` (at least `endpoint_silence_s`), never the
    model's word. `awaiting_digits`: the agent has just asked for a number (`asked_for_a_number`) and these words
    hold no digit yet and are a lead-in to them ("Sure, it's ...", `TurnConfig.lead_in_words`): the digits come
    next, after the pause. `digits_wanted`: how many digits it asked for ("the eight-digit card number"); fewer
    heard so far ("Sure, it's 6821 ...") wait the same, as do words that end on fewer digits than any of the
    agent's identifiers has (`id_lengths`, `short_of_an_id`), asked for or not.
    `words`: the call's language pack (`loop.locale`), whose words trail off, greet and name a number."""
    quick = None  # the silence that ends a turn the model calls complete
    if complete is not None and cfg.semantic_silence_s is not None and complete >= cfg.semantic_threshold:
        quick = min(cfg.semantic_silence_s, cfg.endpoint_silence_s)
    short = digits_wanted and 0 < sum(c.isdigit() for c in text) < digits_wanted  # none yet: `lead_in` says
    if only_greets(text, words):
        return cfg.hold_silence_s  # "Hi." and a pause: why they called comes next
    lead_in = not re.search(r"\d", text) and (len(_words(text)) <= cfg.lead_in_words or not looks_finished(text))
    if announces_a_number(text, words) or (awaiting_digits and (short or lead_in)) or short_of_an_id(text, id_lengths):
        return cfg.hold_silence_s  # "... job number." and a pause: the digits come next
    if answered and not trails_off(text, words):
        return max(cfg.endpoint_silence_s, cfg.answer_silence_s)
    if looks_finished(text) and not _TRAILING_MARK.search(text.strip()):  # "I'd like the..." is not finished
        return cfg.endpoint_silence_s if quick is None else quick
    if quick is not None and number_whole and ends_on_number(text):
        return quick
    return cfg.hold_silence_s if trails_off(text, words) else max(cfg.open_silence_s, cfg.endpoint_silence_s)


def only_greets(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """The words are a greeting and nothing else ("Hi.", "Hello there?", "Oh, hi.", "Hola, buenas."): callers go
    on to say why they called after it, so it is no turn yet (a caller who only checks the line hears the agent
    after the longer wait)."""
    said = set(_words(text))
    return bool(said) and said <= words.GREETING_WORDS and bool(said & words.GREETINGS)


def content_words(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The words that say something: not backchannels. Digits are words ("681." over the agent's reply is a number
    being given, never a noise to resume over)."""
    said = re.sub(r"[^\w' -]+", " ", unaccented(text.lower())).replace("_", " ").split()
    return [w for w in said if w.strip("-'") and w.strip("'") not in words.BACKCHANNELS]


def is_interruption(text: str, duration_s: float, cfg: TurnConfig, words: ModuleType = DEFAULT_WORDS) -> bool:
    said = content_words(text, words)
    number = any(sum(c.isdigit() for c in w) >= 2 for w in said)  # "681." alone is a number given, not a cough
    return duration_s >= cfg.min_interrupt_s and (len(said) >= cfg.min_interrupt_words or number)


@dataclass
class TurnDetector:
    """Tracks speech onset and trailing silence frame by frame, with hysteresis: speech starts on `start_frames`
    frames at or above `threshold` and goes on through frames at or above the lower `speech_stop`."""

    cfg: TurnConfig
    in_turn: bool = False
    run: int = 0
    onset_s: float = 0.0  # first frame of the speech run that started the turn
    last_speech_s: float = 0.0  # end of the last speech frame
    candidate_s: float = 0.0  # where the current run of speech frames began

    def update(self, prob: float, t: float, frame_s: float) -> bool:
        """Feed one frame starting at `t`; True exactly when the caller's speech starts."""
        if self.in_turn:
            if prob >= self.cfg.speech_stop:
                self.last_speech_s = t + frame_s
            return False
        if prob < self.cfg.threshold:
            self.run = 0
            return False
        if self.run == 0:
            self.candidate_s = t
        self.run += 1
        if self.run >= self.cfg.start_frames:
            self.in_turn, self.onset_s, self.last_speech_s = True, self.candidate_s, t + frame_s
            return True
        return False

    def silence_s(self, t: float) -> float:
        return max(0.0, t - self.last_speech_s) if self.in_turn else 0.0

    def speech_s(self) -> float:
        return self.last_speech_s - self.onset_s if self.in_turn else 0.0

    def end_turn(self) -> None:
        self.in_turn, self.run = False, 0
