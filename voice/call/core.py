"""The call core: one call's state machine, with no I/O and no threads.

`handle(input) -> [command]` is the whole interface (plus `next_frame` when the transport wants audio).
It never waits: a transcript, a synthesis or a run is asked for with a command, and its result comes back
later as another input. So taking in caller audio can never wait behind speech-to-text, the model or
speculation, and the same core runs on the virtual clock (fixtures) and on the wall clock (transports) —
the difference lives in the two drivers (`voice/runtime/drivers.py`).

Times: `t` on inputs is call time (seconds of caller audio since the call began, the transport's clock);
`clock()` is only for measuring compute (latency marks) and is injectable.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from loop import Message, locale
from voice.audio import FRAME_S
from voice.call import events as ce
from voice.call._agent_side import AgentSide
from voice.call._going_on import GoingOn
from voice.call._parts import AgentRun, CallerTurn, Conversation, Hearing, Keypad
from voice.call.events import CallCommand, CallInput, CallState, SpeechKind
from voice.call.reply import Chunker, Reply, chunkers_in
from voice.call.state import Barge, ClosedTurn, SessionConfig, fresh_words
from voice.call.turns import (
    TurnDetector,
    asked_for_a_number,
    digits_asked,
    ends_on_digits,
    is_interruption,
    needed_silence,
)
from voice.call.write_truth import WriteOutcomes
from voice.speech.caller_digits import join_spoken_digits
from voice.trace import TraceKind


class CallCore(AgentSide, GoingOn):
    """One call. Its state is in a few parts (`voice/call/_parts.py`): the caller's turn being heard (`turn`), what
    is kept of the caller across turns (`hearing`), the agent's reply and run (`run`), what has been said (`talk`)
    and the keypad's digits (`keypad`)."""

    def __init__(self, config: SessionConfig, chunker_cls: Callable[[], Chunker],
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.words = locale.get(config.language)  # what the agent says in its own words, in the call's language
        self.cfg, self.chunker_cls, self.clock = config, chunkers_in(chunker_cls, self.words), clock
        self.detector = TurnDetector(config.turns)
        self.turn = CallerTurn(self._new_transcriber())  # the next one is made when this one ends (`_forget_turn`)
        # the language's pre-roll when it needs more (a Spanish turn opening on "Sí" lost its /s/ to Whisper base)
        self.hearing = Hearing.for_turns(config.turns, max(config.turns.preroll_s, self.words.ONSET_PREROLL_S))
        self.run = AgentRun(Reply(0, chunker_cls()), WriteOutcomes(words=self.words))
        self.talk = Conversation()
        self.keypad = Keypad()
        self.trace: list[dict[str, Any]] = []
        self.now = 0.0
        self.stt_busy = False  # as the newest frame said
        self.shown_state: CallState | None = None  # the state last traced (`call_state`)
        self._out: list[CallCommand] = []
        self._late: list[CallCommand] = []  # trace entries made outside `handle`

    # ---- the interface ---------------------------------------------------------------------------------

    def handle(self, event: CallInput) -> list[CallCommand]:
        """Take one input; return what the driver must do, in order."""
        self._out, self._late = self._late, []
        self._dispatch(event)
        return self._flush()

    def _dispatch(self, event: CallInput) -> None:
        match event:
            case ce.CallerFrame():
                self._on_frame(event)
            case ce.TranscriptReady():
                if self.cfg.join_digits:  # "4 5 6 7" -> "4567" for everything that reads the words ("dos" -> "2"
                    heard = self.words.numbers_in_digits(event.text)  # where the language's readers need digits)
                    event = replace(event, text=join_spoken_digits(heard, self.awaiting_digits, self.words))
                self._on_transcript(event)
            case ce.TurnEndScored():
                self._on_turn_scored(event)
            case ce.SpeechReady():
                self._on_speech(event)
            case ce.AudioPlayed(samples=samples):
                self.run.reply.playout.advance(samples)
                self._check_hand_over()
            case ce.RunEvent(event=ev):
                self._on_run_event(ev.kind, ev.payload)
            case ce.RunEnded():
                self._on_run_ended(event)
            case ce.ApprovalRequested():
                self._on_approval_requested(event)
            case ce.OperatorDecision(approved=approved):
                self._trace(TraceKind.OPERATOR_DECISION, approved=approved)
                self._operator_decision(approved)
            case ce.ClockTick(t=t):
                self.now = max(self.now, t)
                self._check_approval_timeout()
                self._check_keys()
                self._check_hand_over()
            case ce.KeyPressed(digit=digit):
                self._on_key(digit)
            case ce.Note(kind=kind, data=data):
                self._trace(kind, **data)
            case ce.Hangup(reason=reason):
                self._hangup(reason)

    def _flush(self) -> list[CallCommand]:
        if (state := self.state) != self.shown_state:  # every input may change it; traced once per change
            self.shown_state = state
            self._trace(TraceKind.CALL_STATE, state=str(state))
        out, self._out = self._out, []
        return out

    def next_frame(self, t: float) -> np.ndarray | None:
        """The next 32 ms of agent audio for the transport at call time `t`, or None."""
        rec = self.run.reply.record
        if rec is not None and rec.first_audio_s is None and t < rec.speech_end_s + self.cfg.turns.answer_gap_s:
            return None  # the caller may only have paused (`TurnConfig.answer_gap_s`)
        chunk = self.run.reply.playout.next_frame()
        if chunk is not None and rec is not None and rec.first_audio_s is None:
            rec.audio_started(t)
            self._emit_trace(TraceKind.AGENT_AUDIO_STARTED, turn=len(self.talk.turns) - 1, latency_ms=rec.latency_ms)
        return chunk

    def greet(self, prefix_chars: int) -> list[CallCommand]:
        self._out = []
        self._trace(TraceKind.PREFIX_WARMED, chars=prefix_chars)
        if self.cfg.greeting:
            self._say(self.cfg.greeting, SpeechKind.GREETING)
        return self._flush()

    @property
    def state(self) -> CallState:
        if self.run.approval is not None:
            return CallState.AWAITING_APPROVAL
        if self.detector.in_turn:
            return CallState.CALLER_SPEAKING
        if self.run.reply.speaking:
            return CallState.SPEAKING
        # a reply whose voice is still being synthesised is thinking too, not listening again
        busy = self.run.active or self.hearing.closed is not None or self.run.reply.synthesising > 0
        return CallState.THINKING if busy else CallState.LISTENING

    @property
    def awaiting_digits(self) -> bool:
        """The agent's last words asked for a number, and no confirmation question is open."""
        return self.run.approval is None and asked_for_a_number(self.talk.history, self.words)

    @property
    def busy(self) -> bool:
        """Something is still going on that a file call should wait for before it ends."""
        return (self.run.reply.busy or self.run.approval is not None or self.detector.in_turn or self.run.active
                or self.hearing.closed is not None)

    # ---- caller audio ------------------------------------------------------------------------------------

    def _on_frame(self, frame: ce.CallerFrame) -> None:
        self.now, self.stt_busy = frame.t, frame.stt_busy
        self.hearing.arrivals.append((frame.t, frame.wall))
        self._check_approval_timeout()
        self._check_keys()
        pause_key = self.detector.last_speech_s  # the caller's pause, if this frame ends one
        if self.detector.update(frame.prob, frame.t, FRAME_S):
            self.turn.audio = [*self.hearing.recent, frame.pcm]  # a fresh part, made when the last turn ended
            self._join_last_turn()
            self._on_speech_start(frame.t)
        elif self.detector.in_turn:
            self.turn.audio.append(frame.pcm)
            self._going_on_in_turn(pause_key, frame.t)
        self.hearing.recent.append(frame.pcm)
        if self.detector.in_turn:
            self._during_speech(frame.t)

    def _on_speech_start(self, t: float) -> None:
        onset = self.detector.onset_s
        self._trace(TraceKind.CALLER_SPEECH_STARTED, onset_s=round(onset, 3))
        if self.run.approval is not None:  # an answer begun over the question never approves (it is asked again)
            self.run.approval.over_question = self._question_unheard()
        thinking = self.run.active and self.run.approval is None
        # an answer whose voice is still being synthesised counts too: it must not start over the caller
        if (self.run.reply.busy or thinking) and self.turn.barge is None:
            self._pause()  # stop at once; decide later whether it was a real interruption
            self.turn.barge = Barge(onset)
            arrived = next((w for ft, w in reversed(self.hearing.arrivals) if ft <= onset + 1e-9), None)
            wall = {} if arrived is None else {"stop_latency_wall_ms": round((self.clock() - arrived) * 1000, 1)}
            self._trace(TraceKind.AGENT_PAUSED, stop_latency_ms=round((t + FRAME_S - onset) * 1000, 1), **wall)
        elif not (self.run.active or self.run.reply.busy or self.turn.prefix) and self.talk.history:
            # a new turn: read the call so far meanwhile; the decision then only reads the new words
            self._out.append(ce.WarmModel(list(self.talk.history)))

    def _during_speech(self, t: float) -> None:
        turns, key = self.cfg.turns, self.detector.last_speech_s
        barge = self.turn.barge
        if barge and not barge.committed and self.detector.speech_s() >= turns.min_interrupt_s \
                and t >= self.hearing.next_barge_check:
            self.hearing.next_barge_check = t + turns.barge_check_every_s
            self._want_transcript()
        silence = self.detector.silence_s(t + FRAME_S)
        if t + FRAME_S - self.detector.onset_s >= turns.max_turn_s and self.hearing.closed is None:
            self._trace(TraceKind.CALLER_TURN_CAPPED, speech_s=round(self.detector.speech_s(), 3))
            self._close_by_silence(capped=True)  # a bounded turn: answer this much; more speech is a new turn
            return
        if silence >= turns.hold_silence_s and key not in self.turn.partials:
            self._close_by_silence()  # long enough whatever the words: the turn is over, its text still coming
            return
        if silence >= turns.score_turn_s:
            self._want_turn_score()
        # transcribe in the pause, so the text is ready when the turn ends; later while Whisper serves other calls
        if silence >= (max(turns.early_stt_s, turns.busy_stt_s) if self.stt_busy else turns.early_stt_s):
            if key != self.hearing.paused_at and self.cfg.preempt:
                self.hearing.paused_at = key
                self._out.append(ce.StopSpeculating())
            self._want_transcript()
        elif silence == 0 and t >= self.hearing.next_speculation and self.cfg.speculate and self._may_speculate():
            self.hearing.next_speculation = t + turns.speculate_every_s
            if self.turn.speculation_key is None:
                self.turn.speculation_key = key
            self._want_transcript(optional=True)
        self._decide()

    def _want_transcript(self, optional: bool = False) -> None:
        key = self.detector.last_speech_s
        if key in self.turn.partials or key in self.turn.asked:
            return
        if optional and self.stt_busy:  # a shared Whisper busy with other calls: speculation waits for it
            self._trace(TraceKind.SPECULATION_SKIPPED, why="speech-to-text busy")
            return
        if self.turn.asked:  # one transcription at a time (Whisper is shared): ask again when this one is back
            self.turn.wanted = False if not optional else (self.turn.wanted is not False)
            return
        self.turn.asked[key] = self.now
        pause = self.detector.silence_s(self.now + FRAME_S) >= self.cfg.turns.early_stt_s  # not mid-word
        self._out.append(ce.Transcribe(key, np.concatenate(self.turn.audio), optional, self.turn.heard, pause))

    def _want_turn_score(self) -> None:
        key = self.detector.last_speech_s
        # an answer to an approval question ends by the words alone (`_decide`): no verdict to wait for
        if self.cfg.turns.semantic_silence_s is not None and key not in self.turn.scores \
                and self.run.approval is None:
            self.turn.scores[key] = (None, self.now)
            self._out.append(ce.ScoreTurnEnd(key, np.concatenate(self.turn.audio)))

    def _on_turn_scored(self, ev: ce.TurnEndScored) -> None:
        if ev.key not in self.turn.scores or not self.detector.in_turn:
            return  # the turn, or the pause, it was asked for is over
        self.turn.scores[ev.key] = (ev.complete, self.turn.scores[ev.key][1] + ev.took_ms / 1000)
        self._trace(TraceKind.TURN_END_SCORED, complete=round(ev.complete, 3), took_ms=round(ev.took_ms, 1))
        self._decide()

    def _on_transcript(self, ev: ce.TranscriptReady) -> None:
        if self.hearing.closed is not None and ev.key == self.hearing.closed.speech_end:
            self._finish_closed(ev)
            return
        asked = self.turn.asked.pop(ev.key, None)
        if asked is None or not self.detector.in_turn:
            return  # the turn it belonged to is over
        self.turn.partials[ev.key] = (ev.text, asked + ev.took_ms / 1000, ev.failed)
        self._trace(TraceKind.CALLER_PARTIAL, text=ev.text)
        self._decide()
        self._ask_again()

    def _ask_again(self) -> None:
        """A transcript was wanted while another was in flight: ask for the audio up to now."""
        wanted, self.turn.wanted = self.turn.wanted, None
        if wanted is not None and self.detector.in_turn:
            self._want_transcript(optional=wanted)

    def _decide(self) -> None:
        """With the transcripts at hand: a real interruption? something to speculate on? the end of the turn?"""
        turns, key = self.cfg.turns, self.detector.last_speech_s
        fresh = max(self.turn.partials, default=None)
        barge = self.turn.barge
        if barge and not barge.committed and fresh is not None and fresh > self.turn.barge_seen:
            self.turn.barge_seen = fresh  # every new transcript of speech over the agent is weighed once
            text = self.turn.partials[fresh][0]
            fresh_text = self._fresh(text)
            if is_interruption(fresh_text, self.detector.speech_s(), turns, self.words) \
                    or self._goes_on(fresh_text, barge.onset_s):
                self._commit_barge(barge, text)
        if self.turn.speculation_key is not None and fresh is not None and fresh >= self.turn.speculation_key:
            self.turn.speculation_key = None
            if self.turn.partials[fresh][0] and self.cfg.speculate and self._may_speculate():
                self._out.append(ce.Speculate(self.turn.partials[fresh][0], list(self.talk.history)))
        if key not in self.turn.partials:
            return
        text, ready_at, failed = self.turn.partials[key]
        # an answer to an approval question ends by the words alone: a "yes" cut from its "but ..." would approve
        complete, scored_at = self.turn.scores.get(key, (None, 0.0)) if self.run.approval is None else (None, 0.0)
        whole = not any(ends_on_digits(t) for k, (t, _, _) in self.turn.partials.items() if k < key)
        answered = self.run.approval is not None and self.run.approval.dialog.settled_by(text)
        needed = needed_silence(text, turns, complete, number_whole=whole, answered=answered,
                                awaiting_digits=self.awaiting_digits, id_lengths=self.cfg.id_digits,
                                digits_wanted=digits_asked(self.talk.history, self.words), words=self.words)
        silence = self.detector.silence_s(self.now + FRAME_S)
        if silence >= needed:
            # the turn ended on the model's word: it waited for that too
            if needed < needed_silence(text, turns, answered=answered, words=self.words):
                ready_at = max(ready_at, scored_at)
            self._end_of_turn(text, needed, ready_at, failed)
        elif silence >= max(turns.early_stt_s, needed - turns.decide_lead_s) and self.cfg.preempt and text \
                and key != self.hearing.preempted and self._may_speculate():
            # the caller paused: start the decision now, kept if these are their last words
            self.hearing.preempted = key
            self._out.append(ce.Speculate(text, list(self.talk.history), in_pause=True))

    def _end_of_turn(self, text: str, needed: float, ready_at: float, failed: bool) -> None:
        ending = self.turn
        turn = ClosedTurn(self.detector.last_speech_s, self.detector.speech_s(), ending.barge, prefix=ending.prefix)
        self.hearing.last_turn = (turn.speech_end, np.concatenate(ending.audio))
        self._forget_turn()
        self._turn_over(turn, text, needed, ready_at, failed)

    def _forget_turn(self) -> None:
        self.detector.end_turn()
        self.hearing.recent.clear()  # a turn capped mid-speech: the next one must not start with this one's last words
        self.turn = CallerTurn(self._new_transcriber())  # nothing of this turn is the next one's

    def _close_by_silence(self, capped: bool = False) -> None:
        """Silence alone (or the turn's length) has ended the turn, but its transcript is not back (a busy
        Whisper): take new speech as a new turn from here, and act on this one when its text arrives."""
        ending = self.turn
        turn = ClosedTurn(self.detector.last_speech_s, self.detector.speech_s(), ending.barge, capped, ending.prefix)
        asked, audio = ending.asked.get(turn.speech_end), np.concatenate(ending.audio)
        self.hearing.last_turn = None if capped else (turn.speech_end, audio)  # a capped one's next turn is its own
        self._forget_turn()
        self.hearing.closed = turn
        # its transcription stays in flight in the next turn's part: one at a time (`_want_transcript`)
        self.turn.asked[turn.speech_end] = self.now if asked is None else asked
        if asked is None:
            self._out.append(ce.Transcribe(turn.speech_end, audio, turn=ending.heard))

    def _finish_closed(self, ev: ce.TranscriptReady) -> None:
        turn, self.hearing.closed = self.hearing.closed, None
        assert turn is not None
        asked = self.turn.asked.pop(ev.key, self.now)
        waited = 0.0 if turn.capped else self.cfg.turns.hold_silence_s  # a capped turn waited for no silence
        self._turn_over(turn, ev.text, waited, asked + ev.took_ms / 1000, ev.failed)
        if self.detector.in_turn and self.turn.barge is None and self.run.active:
            self.turn.barge = Barge(self.detector.onset_s)  # the caller is already talking over the thinking agent

    def _turn_over(self, turn: ClosedTurn, text: str, needed: float, ready_at: float, failed: bool = False) -> None:
        """`failed`: the turn's transcript failed (not silence): heard as nothing, it is asked again."""
        speech_end, duration = turn.speech_end, turn.duration
        silent_enough = math.ceil((speech_end + needed) / FRAME_S - 1e-6) * FRAME_S  # on the frame grid
        latency = {"endpointing": round((silent_enough - speech_end) * 1000, 1),
                   "stt": round(max(0.0, ready_at - silent_enough) * 1000, 1)}  # what the decision waited for text
        barge = turn.barge
        if barge and not barge.committed and self._goes_on(fresh_words(turn.prefix, text), barge.onset_s):
            self._withdraw(barge, fresh_words(turn.prefix, text))  # traced before this turn's end: it went on
        if barge and barge.went_on:  # one turn with a pause in it, answered whole
            text = text if turn.prefix else f"{barge.went_on} {text}".strip()
        elif turn.prefix:
            text = fresh_words(turn.prefix, text)  # not going on after all: only its own words are a turn
        self._trace(TraceKind.CALLER_TURN_ENDED, text=text, speech_s=round(duration, 3),
                    speech_end_s=round(speech_end, 3), latency_ms=dict(latency))
        # during a confirmation even speech with no words heard is an answer: not heard, it is asked again (twice
        # at most, as any unclear answer) rather than left to the timeout's dead air
        if self.run.approval is not None and (text or not barge):
            step = self._approval_reply(text, (latency, speech_end))
            if step.resume:
                self._trace(TraceKind.FALSE_INTERRUPTION_RESUMED, text=text)
            elif not step.rerun and self.talk.turns:
                rec = self.talk.turns[-1]  # the reply the caller now waits for follows this answer, not the question
                rec.latency_ms, rec.speech_end_s, rec.first_audio_s = latency, speech_end, None
            return
        if barge and not barge.committed:
            if not is_interruption(text, duration, self.cfg.turns, self.words):
                self.run.reply.playout.paused = False
                self._trace(TraceKind.FALSE_INTERRUPTION_RESUMED, text=text)
                return
            self._commit_barge(barge, text)
        if not text and failed:  # the words were lost, not absent: say so rather than go quiet
            self.talk.history = [*self.talk.history, Message("assistant", self.words.REPEAT_PLEASE)]
            self._say(self.words.REPEAT_PLEASE, SpeechKind.REPLY)
        elif not text:
            self._trace(TraceKind.IGNORED_NOISE)
        else:
            self._start_run(text, latency, speech_end)

    def _caller_speaking(self) -> bool:
        return self.detector.in_turn

    # ---- trace -------------------------------------------------------------------------------------------

    def _trace(self, kind: TraceKind, **data: Any) -> None:
        entry = {"t": round(self.now, 3), "kind": kind, **data}
        self.trace.append(entry)
        self._out.append(ce.Traced(entry))

    def _emit_trace(self, kind: TraceKind, **data: Any) -> None:
        """A trace entry outside `handle` (audio pulled by the transport): observers see it at the next input."""
        entry = {"t": round(self.now, 3), "kind": kind, **data}
        self.trace.append(entry)
        self._late.append(ce.Traced(entry))
