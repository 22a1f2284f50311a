"""The agent's side of a call core: what it says, the runs behind it, and the approvals it asks for.

A mixin of `CallCore` (`voice/call/core.py`), split off so each half reads on its own: the core hears the
caller and decides when a turn is over; this half turns runs into speech and cuts them short on barge-in.
Like the core, it only records state and appends commands; it never does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from loop import CANCELLED_BY_CALLER, ApprovalAnswer, Decision, EventKind, Message, RunOutcome, RunResult
from voice.call import events as ce
from voice.call.approval_dialog import ApprovalDialog, Step
from voice.call.events import CallCommand, SpeechKind
from voice.call.reply import Chunker, Reply
from voice.call.state import Barge, ClosedTurn, PendingApproval, SessionConfig, TurnRecord, heard_history
from voice.call.write_truth import WriteOutcomes
from voice.trace import FORWARDED_LOOP_EVENTS, TraceKind, loop_trace_kind

QUESTION_GRACE_S = 0.5  # a yes that overlaps only this much of the question's end still heard all of it
HAND_OVER_WAIT_S = 15.0  # a hand-over line that never ends still gets the caller a person


class AgentSide:
    cfg: SessionConfig
    chunker_cls: Callable[[], Chunker]
    clock: Callable[[], float]
    generation: int
    reply: Reply
    history: list[Message]
    transcript: list[Message]
    turns: list[TurnRecord]
    now: float
    barge: Barge | None
    approval: PendingApproval | None
    run_active: bool
    waiting_turn: tuple[str, dict[str, float], float] | None
    writes: WriteOutcomes  # the run's approved writes and how they ended: what the caller may be told
    decline_line: str  # what the caller hears when the run ends on a declined approval ("" for a change)
    keys: str  # digits keyed in so far, not yet a turn
    keys_at: float  # call time of the last key
    words: ModuleType  # the language's fixed sentences (`loop.locale`)
    hand_over: tuple[str, float] | None  # an escalation's reason and when it was decided, until it is handed over
    history_before: list[Message]  # the history the last turn's run started from (what a withdrawal goes back to)
    went_on: TurnRecord | None  # a withdrawn turn whose run is unwinding (`voice/call/_going_on.py`)
    closed: ClosedTurn | None  # a turn ended by silence whose transcript is still coming
    _out: list[CallCommand]

    def _trace(self, kind: TraceKind, **data: Any) -> None:
        raise NotImplementedError
    # ---- agent speech ------------------------------------------------------------------------------------

    def _say(self, text: str, kind: SpeechKind) -> None:
        if not text.strip():
            return
        if kind is SpeechKind.REPLY:
            self.reply.mark("first_clause", self.clock())
        self.reply.synthesising += 1
        self._out.append(ce.Synthesize(text, kind, self.reply.generation))

    def _on_speech(self, ev: ce.SpeechReady) -> None:
        if ev.generation != self.reply.generation:
            return  # the caller cut this reply off while it was being synthesised
        self.reply.synthesising = max(0, self.reply.synthesising - 1)
        if ev.kind is SpeechKind.REPLY and self.approval is not None:
            return  # the rest of a read's words, superseded by the question the agent went on to ask
        if ev.kind is SpeechKind.REPLY:
            self.reply.mark("first_audio_ready", self.clock())
        self.reply.playout.enqueue(ev.text, ev.audio, ev.kind.value)
        self._trace(TraceKind.AGENT_SAID, part=ev.kind.value, text=ev.text, seconds=round(len(ev.audio) / 16000, 3))
        if ev.kind is SpeechKind.REPLY:
            self.reply.record_latency()

    def _pause(self) -> None:
        self.reply.playout.paused = True
        self._out.append(ce.ClearAudio())
        self.reply.playout.rewind_unheard()

    def _cut_off(self) -> None:
        """Forget the reply in flight (queued clauses included) and flush the transport; keep what was heard."""
        self.reply.playout.clear()
        self._out.append(ce.ClearAudio())
        self.reply.generation = self._new_generation()
        self.reply.chunker, self.reply.synthesising = self.chunker_cls(), 0

    def _new_generation(self) -> int:
        """A new reply supersedes the one before: clauses of older ones still queued are skipped."""
        self.generation += 1
        self._out.append(ce.DropStaleSpeech(self.generation))
        return self.generation

    def _commit_barge(self, barge: Barge, text: str) -> None:
        if self._goes_on(fresh := self._fresh(text), barge.onset_s):
            self._withdraw(barge, fresh)
            return
        barge.committed = True
        heard = self.reply.heard_text()
        self._cut_off()
        if self.turns and self.approval is None:
            rec = self.turns[-1]
            rec.interrupted, rec.heard_text = True, heard
            if self.run_active:  # history is cut when the cancellation lands, with its finished messages
                self._out.append(ce.CancelRun("caller barged in"))
            else:
                self.history = heard_history(self.history, heard)
        self._trace(TraceKind.BARGE_IN, caller_text=text, heard=heard)

    # ---- runs --------------------------------------------------------------------------------------------

    def _start_run(self, text: str, latency: dict[str, float], speech_end: float) -> None:
        if self.run_active:  # the run the caller cut off is still unwinding: its messages come first
            self.waiting_turn = (text, latency, speech_end)
            return
        rec = TurnRecord(user_text=text, started_s=self.now, latency_ms=latency, speech_end_s=speech_end)
        self.history_before = list(self.history)
        self.turns.append(rec)
        self.reply = Reply.start(self._new_generation(), self.chunker_cls, rec, self.clock())
        self.run_active, self.transcript, self.writes = True, [], WriteOutcomes(words=self.words)
        self._out.append(ce.StartRun(text, list(self.history), self.transcript))

    def _on_run_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == EventKind.MODEL_DELTA and payload.get("type") == "text":
            self.reply.mark("first_token", self.clock())
            for clause in [] if self.writes.override else self.reply.chunker.push(payload["text"]):
                self._say(clause, SpeechKind.REPLY)
        elif kind == EventKind.MODEL_RESPONSE:
            truth = self.writes.override  # an approved write failed: the caller hears that, not the model
            for clause in self.reply.chunker.push(truth) + self.reply.chunker.flush() if truth \
                    else self.reply.chunker.flush():
                self._say(clause, SpeechKind.REPLY)
        elif kind == EventKind.TOOL_ANSWER:  # a tool's result is the reply as it stands (loop.Tool.answers)
            self.reply.mark("first_token", self.clock())
            for clause in [*self.reply.chunker.push(payload["text"]), *self.reply.chunker.flush()]:
                self._say(clause, SpeechKind.REPLY)
        elif kind in FORWARDED_LOOP_EVENTS:
            self._trace(loop_trace_kind(kind), **{k: v for k, v in payload.items() if k != "content"})
            if kind == EventKind.TOOL_RESULT:
                self.writes.observe(payload)
            if kind == EventKind.TOOL_RESULT and self.reply.record is not None:
                self.reply.record.tool_calls.append({**payload["call"], "status": payload["status"],
                                                     "executed": payload["executed"]})

    def _on_run_ended(self, ev: ce.RunEnded) -> None:
        self.run_active, self.approval = False, None
        rec = self.reply.record
        if rec is not None and rec is self.went_on:  # withdrawn: the caller had only paused; its turn is answered whole
            self.went_on = None
            self.turns.remove(rec)
        elif rec is not None and ev.result is None:
            self.history = heard_history(self.transcript, rec.heard_text)
            rec.outcome, rec.reason = CANCELLED_BY_CALLER, "cut short by the caller"
            if ev.error:  # the run crashed rather than being withdrawn
                rec.outcome, rec.reason = RunOutcome.ERROR.value, ev.error
                self._say(self.words.COULD_NOT_FINISH, SpeechKind.REPLY)
        elif rec is not None and ev.result is not None:
            self._record_result(rec, ev.result)
        if self.waiting_turn is not None:
            waiting, self.waiting_turn = self.waiting_turn, None
            self._start_run(*waiting)

    def _record_result(self, rec: TurnRecord, result: RunResult) -> None:
        self.history = result.messages
        rec.outcome, rec.reason, rec.agent_text = result.outcome.value, result.reason, result.answer
        if (truth := self.writes.override) and result.outcome is RunOutcome.COMPLETED:
            rec.agent_text = truth  # what the caller heard; the model's claim is not kept as the agent's words
            last = next((m for m in reversed(self.history) if m.role == "assistant"), None)
            if last is not None:
                last.content = truth
        if result.outcome is RunOutcome.ESCALATED:
            self._say_clauses(self.words.HAND_OVER)
            self.hand_over = (result.reason, self.now)  # once it has been heard: `_check_hand_over`
        elif result.outcome is RunOutcome.APPROVAL_DENIED and not self.writes.override:
            self._say_declined(rec)
        elif result.outcome is not RunOutcome.COMPLETED:
            self._say_clauses(self.writes.override or self.writes.after_failure())

    def _say_declined(self, rec: TurnRecord) -> None:
        """The run ended on a declined approval: say what became of it, in the session's words, never the
        model's ("I haven't done that: I didn't hear a yes."). A change says nothing: the new turn answers."""
        line, self.decline_line = self.decline_line, ""
        if line and self.writes.made:
            line = f"I did {' and '.join(self.writes.made)}. {line}"
        if line:
            rec.agent_text = line
            self.history = [*self.history, Message("assistant", line)]
            self._say_clauses(line)

    def _say_clauses(self, text: str) -> None:
        """A fixed line a clause at a time, like a model's reply: its first clause is heard sooner."""
        self.reply.mark("first_token", self.clock())  # the session's own words: nothing to wait for
        for clause in [*self.reply.chunker.push(text), *self.reply.chunker.flush()]:
            self._say(clause, SpeechKind.REPLY)

    def _check_hand_over(self) -> None:
        """The escalation's words have been heard (nothing left to synthesise or play): hand the call over."""
        if self.hand_over is None:
            return
        reason, since = self.hand_over
        if (not self.reply.busy and not self.run_active) or self.now - since > HAND_OVER_WAIT_S:
            self.hand_over = None
            self._trace(TraceKind.HAND_OVER, reason=reason)
            self._out.append(ce.HandOver(reason))

    def _may_speculate(self) -> bool:
        """Nothing in the way of work ahead of the turn's end (`SessionConfig.speculate` and `preempt` say which)."""
        return not self.approval and not self.run_active and not self.barge

    def _hangup(self, reason: str) -> None:
        """The call is ending: a run in flight is withdrawn (the driver traces `call_ended` once it has landed)."""
        self._out.extend([ce.CancelRun(reason)] if self.run_active else [])

    # ---- approval ----------------------------------------------------------------------------------------

    def _on_approval_requested(self, ev: ce.ApprovalRequested) -> None:
        if ev.verdict.decision is not Decision.ASK:
            self._out.append(ce.SettleApproval(ApprovalAnswer(False, f"not an ASK verdict ({ev.verdict.rule})")))
            return
        # The model went on to act after a read whose words were being said: the caller asked for this, not the
        # read, so the question follows the clause playing now instead of the rest of the read
        self.reply.playout.drop_unsent(SpeechKind.REPLY.value)
        dialog = ApprovalDialog(ev.call, ev.tool, keypad=self.cfg.keypad, other_tools=ev.other_tools,
                                words=self.words)
        self._ask(dialog.question)
        self._ask(dialog.hint, SpeechKind.HINT)  # not part of the question: a yes over it still heard it all
        self.writes.ask(ev.call, ev.tool)
        self.approval = PendingApproval(ev.call, self.now, dialog)
        self._trace(TraceKind.APPROVAL_ASKED, call=ev.call.name, arguments=ev.call.arguments, rule=ev.verdict.rule)

    def _ask(self, line: str, kind: SpeechKind = SpeechKind.PROMPT) -> None:
        """A line of the approval dialog, a clause at a time ("Just to confirm:" is heard while the rest is
        synthesised)."""
        chunker = self.chunker_cls()
        for clause in [*chunker.push(line), *chunker.flush()]:
            self._say(clause, kind)

    def _question_unheard(self) -> bool:
        """Part of the approval question has not reached the caller's ear yet (a grace for the last syllable)."""
        pending = sum(len(s.audio) - s.heard for s in self.reply.playout.queue if s.kind == SpeechKind.PROMPT.value)
        return self.reply.synthesising > 0 or pending > QUESTION_GRACE_S * 16000

    def _approval_reply(self, text: str, turn: tuple[dict[str, float], float] | None = None) -> Step:
        """The caller's whole turn while the approval waits; `turn` is its latency parts and speech end."""
        assert self.approval is not None
        pending = self.approval
        step = pending.dialog.hear(text, over_question=pending.over_question)
        pending.over_question, pending.held = False, None
        reading = step.reading
        self._trace(TraceKind.APPROVAL_REPLY, text=text, answer=reading.answer.value if reading else "",
                    why=reading.why if reading else "")
        if step.resume:  # a backchannel over the question: it plays on (or again, if it was cut off meanwhile)
            self.reply.playout.paused = False
            if not any(s.kind == SpeechKind.PROMPT.value for s in self.reply.playout.queue):
                self._ask(pending.dialog.question)
            return step
        self._cut_off()
        self._apply(step, turn)
        return step

    def _apply(self, step: Step, turn: tuple[dict[str, float], float] | None = None) -> None:
        if step.hold and step.settle is not None and self.approval is not None and self.cfg.approval_hold_s > 0:
            self.approval.held = (self.now, step.settle)  # committed once the caller stays quiet (`_check_held`)
            self._trace(TraceKind.APPROVAL_HELD, hold_s=self.cfg.approval_hold_s)
            return
        if step.settle is None:
            if step.say and self.approval is not None:
                self._ask(step.say)
                self.approval.asked_s = self.now  # a question asked again gets its own time to be answered
            return
        self.decline_line = "" if step.settle.approved else step.say
        if step.rerun:  # a change: the caller's words are their next turn, once the declined run has ended
            self.waiting_turn = (step.rerun, *(turn or ({}, self.now)))
        self._settle_approval(step.settle)

    def _check_approval_timeout(self) -> None:
        if self.approval is not None and self.approval.held is not None:
            self._check_held(*self.approval.held)
            return
        if self.approval and self.reply.speaking:  # the time to answer starts when the question has been said
            self.approval.asked_s = self.now
        # never while the caller speaks, nor while a turn they ended is still being transcribed: that is the answer
        if self.approval and not self._caller_speaking() and self.closed is None and \
                self.now - self.approval.asked_s > self.cfg.approval_timeout_s:
            self._trace(TraceKind.APPROVAL_TIMEOUT, call=self.approval.call.name)
            self._apply(self.approval.dialog.timed_out())

    def _check_held(self, since: float, answer: ApprovalAnswer) -> None:
        """A held yes is committed after `approval_hold_s` of quiet; while the caller speaks again, or their words
        are being transcribed, it waits: their next turn is read together with it (`ApprovalDialog.hear`)."""
        if self._caller_speaking() or self.closed is not None:
            return
        if self.now - since >= self.cfg.approval_hold_s:
            self._settle_approval(answer)

    def _operator_decision(self, approved: bool) -> None:
        if self.approval is not None:
            self._cut_off()
            self._apply(self.approval.dialog.decided(approved))

    def _caller_speaking(self) -> bool:
        raise NotImplementedError

    # ---- the phone's keypad ------------------------------------------------------------------------------

    def _on_key(self, digit: str) -> None:
        """A key: one the approval question offered settles it; digits gather until '#' or a pause."""
        self._trace(TraceKind.CALLER_KEY, digit=digit)
        if self.approval is not None and not self.keys and (step := self.approval.dialog.key(digit)) is not None:
            self._cut_off()
            self._apply(step)
        elif digit == "*":
            self.keys = ""
        elif digit == "#":
            self._keys_done()
        elif digit.isdigit():
            self.keys, self.keys_at = self.keys + digit, self.now

    def _check_keys(self) -> None:
        if self.keys and self.now - self.keys_at >= self.cfg.keys_gap_s:
            self._keys_done()

    def _keys_done(self) -> None:
        """The digits keyed in are the caller's turn ("4567" for "Could you tell me the order number?")."""
        digits, self.keys = self.keys, ""
        if not digits:
            return
        self._trace(TraceKind.CALLER_KEYED, digits=digits)
        if self.approval is not None:
            self._approval_reply(digits)
        else:
            self._start_run(digits, {}, self.now)

    def _settle_approval(self, answer: ApprovalAnswer) -> None:
        if self.approval is None:
            return
        self.approval = None
        self.reply.restart(self.chunker_cls(), self.clock())
        self._out.append(ce.SettleApproval(answer))
