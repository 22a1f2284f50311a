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
from voice.call._parts import AgentRun, CallerTurn, Conversation, Hearing, Keypad
from voice.call.approval_dialog import ApprovalDialog, Step
from voice.call.events import CallCommand, SpeechKind
from voice.call.reply import Chunker, Reply
from voice.call.state import Barge, PendingApproval, SessionConfig, TurnRecord, heard_history
from voice.call.write_truth import WriteOutcomes
from voice.trace import FORWARDED_LOOP_EVENTS, TraceKind, loop_trace_kind

QUESTION_GRACE_S = 0.5  # a yes that overlaps only this much of the question's end still heard all of it
HAND_OVER_WAIT_S = 15.0  # a hand-over line that never ends still gets the caller a person


class AgentSide:
    cfg: SessionConfig
    chunker_cls: Callable[[], Chunker]
    clock: Callable[[], float]
    words: ModuleType  # the language's fixed sentences (`loop.locale`)
    now: float
    run: AgentRun  # this half's own part: the reply, the run behind it, the approval it waits on
    talk: Conversation
    turn: CallerTurn  # for speech over the agent (`barge`)
    hearing: Hearing  # for a turn ended by silence whose transcript is still coming (`closed`)
    keypad: Keypad
    _out: list[CallCommand]

    def _trace(self, kind: TraceKind, **data: Any) -> None:
        raise NotImplementedError
    # ---- agent speech ------------------------------------------------------------------------------------

    def _say(self, text: str, kind: SpeechKind) -> None:
        if not text.strip():
            return
        if kind is SpeechKind.REPLY:
            self.run.reply.mark("first_clause", self.clock())
        self.run.reply.synthesising += 1
        self._out.append(ce.Synthesize(text, kind, self.run.reply.generation))

    def _on_speech(self, ev: ce.SpeechReady) -> None:
        if ev.generation != self.run.reply.generation:
            return  # the caller cut this reply off while it was being synthesised
        self.run.reply.synthesising = max(0, self.run.reply.synthesising - 1)
        if ev.kind is SpeechKind.REPLY and self.run.approval is not None:
            return  # the rest of a read's words, superseded by the question the agent went on to ask
        if ev.kind is SpeechKind.REPLY:
            self.run.reply.mark("first_audio_ready", self.clock())
        self.run.reply.playout.enqueue(ev.text, ev.audio, ev.kind.value)
        self._trace(TraceKind.AGENT_SAID, part=ev.kind.value, text=ev.text, seconds=round(len(ev.audio) / 16000, 3))
        if ev.kind is SpeechKind.REPLY:
            self.run.reply.record_latency()

    def _pause(self) -> None:
        self.run.reply.playout.paused = True
        self._out.append(ce.ClearAudio())
        self.run.reply.playout.rewind_unheard()

    def _cut_off(self) -> None:
        """Forget the reply in flight (queued clauses included) and flush the transport; keep what was heard."""
        self.run.reply.playout.clear()
        self._out.append(ce.ClearAudio())
        self.run.reply.generation = self._new_generation()
        self.run.reply.chunker, self.run.reply.synthesising = self.chunker_cls(), 0

    def _new_generation(self) -> int:
        """A new reply supersedes the one before: clauses of older ones still queued are skipped."""
        self.run.generation += 1
        self._out.append(ce.DropStaleSpeech(self.run.generation))
        return self.run.generation

    def _commit_barge(self, barge: Barge, text: str) -> None:
        if self._goes_on(fresh := self._fresh(text), barge.onset_s):
            self._withdraw(barge, fresh)
            return
        barge.committed = True
        heard = self.run.reply.heard_text()
        self._cut_off()
        if self.talk.turns and self.run.approval is None:
            rec = self.talk.turns[-1]
            rec.interrupted, rec.heard_text = True, heard
            if self.run.active:  # history is cut when the cancellation lands, with its finished messages
                self._out.append(ce.CancelRun("caller barged in"))
            else:
                self.talk.history = heard_history(self.talk.history, heard)
        self._trace(TraceKind.BARGE_IN, caller_text=text, heard=heard)

    # ---- runs --------------------------------------------------------------------------------------------

    def _start_run(self, text: str, latency: dict[str, float], speech_end: float) -> None:
        if self.run.active:  # the run the caller cut off is still unwinding: its messages come first
            self.run.waiting_turn = (text, latency, speech_end)
            return
        rec = TurnRecord(user_text=text, started_s=self.now, latency_ms=latency, speech_end_s=speech_end)
        self.talk.history_before = list(self.talk.history)
        self.talk.turns.append(rec)
        self.run.reply = Reply.start(self._new_generation(), self.chunker_cls, rec, self.clock())
        self.run.active, self.talk.transcript, self.run.writes = True, [], WriteOutcomes(words=self.words)
        self._out.append(ce.StartRun(text, list(self.talk.history), self.talk.transcript))

    def _on_run_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == EventKind.MODEL_DELTA and payload.get("type") == "text":
            self.run.reply.mark("first_token", self.clock())
            for clause in [] if self.run.writes.override else self.run.reply.chunker.push(payload["text"]):
                self._say(clause, SpeechKind.REPLY)
        elif kind == EventKind.MODEL_RESPONSE:
            truth = self.run.writes.override  # an approved write failed: the caller hears that, not the model
            for clause in self.run.reply.chunker.push(truth) + self.run.reply.chunker.flush() if truth \
                    else self.run.reply.chunker.flush():
                self._say(clause, SpeechKind.REPLY)
        elif kind == EventKind.TOOL_ANSWER:  # a tool's result is the reply as it stands (loop.Tool.answers)
            self.run.reply.mark("first_token", self.clock())
            for clause in [*self.run.reply.chunker.push(payload["text"]), *self.run.reply.chunker.flush()]:
                self._say(clause, SpeechKind.REPLY)
        elif kind in FORWARDED_LOOP_EVENTS:
            self._trace(loop_trace_kind(kind), **{k: v for k, v in payload.items() if k != "content"})
            if kind == EventKind.TOOL_RESULT:
                self.run.writes.observe(payload)
            if kind == EventKind.TOOL_RESULT and self.run.reply.record is not None:
                self.run.reply.record.tool_calls.append({**payload["call"], "status": payload["status"],
                                                         "executed": payload["executed"]})

    def _on_run_ended(self, ev: ce.RunEnded) -> None:
        self.run.active, self.run.approval = False, None
        rec = self.run.reply.record
        if rec is not None and rec is self.run.went_on:  # withdrawn: the caller had only paused; answered whole
            self.run.went_on = None
            self.talk.turns.remove(rec)
        elif rec is not None and ev.result is None:
            self.talk.history = heard_history(self.talk.transcript, rec.heard_text)
            rec.outcome, rec.reason = CANCELLED_BY_CALLER, "cut short by the caller"
            if ev.error:  # the run crashed rather than being withdrawn
                rec.outcome, rec.reason = RunOutcome.ERROR.value, ev.error
                self._say(self.words.COULD_NOT_FINISH, SpeechKind.REPLY)
        elif rec is not None and ev.result is not None:
            self._record_result(rec, ev.result)
        if self.run.waiting_turn is not None:
            waiting, self.run.waiting_turn = self.run.waiting_turn, None
            self._start_run(*waiting)

    def _record_result(self, rec: TurnRecord, result: RunResult) -> None:
        self.talk.history = result.messages
        rec.outcome, rec.reason, rec.agent_text = result.outcome.value, result.reason, result.answer
        if (truth := self.run.writes.override) and result.outcome is RunOutcome.COMPLETED:
            rec.agent_text = truth  # what the caller heard; the model's claim is not kept as the agent's words
            last = next((m for m in reversed(self.talk.history) if m.role == "assistant"), None)
            if last is not None:
                last.content = truth
        if result.outcome is RunOutcome.ESCALATED:
            self._say_clauses(self.words.HAND_OVER)
            self.run.hand_over = (result.reason, self.now)  # once it has been heard: `_check_hand_over`
        elif result.outcome is RunOutcome.APPROVAL_DENIED and not self.run.writes.override:
            self._say_declined(rec)
        elif result.outcome is not RunOutcome.COMPLETED:
            self._say_clauses(self.run.writes.override or self.run.writes.after_failure())

    def _say_declined(self, rec: TurnRecord) -> None:
        """The run ended on a declined approval: say what became of it, in the session's words, never the
        model's ("I haven't done that: I didn't hear a yes."). A change says nothing: the new turn answers."""
        line, self.run.decline_line = self.run.decline_line, ""
        if line and self.run.writes.made:
            line = f"I did {' and '.join(self.run.writes.made)}. {line}"
        if line:
            rec.agent_text = line
            self.talk.history = [*self.talk.history, Message("assistant", line)]
            self._say_clauses(line)

    def _say_clauses(self, text: str) -> None:
        """A fixed line a clause at a time, like a model's reply: its first clause is heard sooner."""
        self.run.reply.mark("first_token", self.clock())  # the session's own words: nothing to wait for
        for clause in [*self.run.reply.chunker.push(text), *self.run.reply.chunker.flush()]:
            self._say(clause, SpeechKind.REPLY)

    def _check_hand_over(self) -> None:
        """The escalation's words have been heard (nothing left to synthesise or play): hand the call over."""
        if self.run.hand_over is None:
            return
        reason, since = self.run.hand_over
        if (not self.run.reply.busy and not self.run.active) or self.now - since > HAND_OVER_WAIT_S:
            self.run.hand_over = None
            self._trace(TraceKind.HAND_OVER, reason=reason)
            self._out.append(ce.HandOver(reason))

    def _may_speculate(self) -> bool:
        """Nothing in the way of work ahead of the turn's end (`SessionConfig.speculate` and `preempt` say which)."""
        return not self.run.approval and not self.run.active and not self.turn.barge

    def _hangup(self, reason: str) -> None:
        """The call is ending: a run in flight is withdrawn (the driver traces `call_ended` once it has landed)."""
        self._out.extend([ce.CancelRun(reason)] if self.run.active else [])

    # ---- approval ----------------------------------------------------------------------------------------

    def _on_approval_requested(self, ev: ce.ApprovalRequested) -> None:
        if ev.verdict.decision is not Decision.ASK:
            self._out.append(ce.SettleApproval(ApprovalAnswer(False, f"not an ASK verdict ({ev.verdict.rule})")))
            return
        # The model went on to act after a read whose words were being said: the caller asked for this, not the
        # read, so the question follows the clause playing now instead of the rest of the read
        self.run.reply.playout.drop_unsent(SpeechKind.REPLY.value)
        dialog = ApprovalDialog(ev.call, ev.tool, keypad=self.cfg.keypad, other_tools=ev.other_tools,
                                words=self.words)
        self._ask(dialog.question)
        self._ask(dialog.hint, SpeechKind.HINT)  # not part of the question: a yes over it still heard it all
        self.run.writes.ask(ev.call, ev.tool)
        self.run.approval = PendingApproval(ev.call, self.now, dialog)
        self._trace(TraceKind.APPROVAL_ASKED, call=ev.call.name, arguments=ev.call.arguments, rule=ev.verdict.rule)

    def _ask(self, line: str, kind: SpeechKind = SpeechKind.PROMPT) -> None:
        """A line of the approval dialog, a clause at a time ("Just to confirm:" is heard while the rest is
        synthesised)."""
        chunker = self.chunker_cls()
        for clause in [*chunker.push(line), *chunker.flush()]:
            self._say(clause, kind)

    def _question_unheard(self) -> bool:
        """Part of the approval question has not reached the caller's ear yet (a grace for the last syllable)."""
        pending = sum(len(s.audio) - s.heard for s in self.run.reply.playout.queue if s.kind == SpeechKind.PROMPT.value)
        return self.run.reply.synthesising > 0 or pending > QUESTION_GRACE_S * 16000

    def _approval_reply(self, text: str, turn: tuple[dict[str, float], float] | None = None) -> Step:
        """The caller's whole turn while the approval waits; `turn` is its latency parts and speech end."""
        assert self.run.approval is not None
        pending = self.run.approval
        step = pending.dialog.hear(text, over_question=pending.over_question)
        pending.over_question, pending.held = False, None
        reading = step.reading
        self._trace(TraceKind.APPROVAL_REPLY, text=text, answer=reading.answer.value if reading else "",
                    why=reading.why if reading else "")
        if step.resume:  # a backchannel over the question: it plays on (or again, if it was cut off meanwhile)
            self.run.reply.playout.paused = False
            if not any(s.kind == SpeechKind.PROMPT.value for s in self.run.reply.playout.queue):
                self._ask(pending.dialog.question)
            return step
        self._cut_off()
        self._apply(step, turn)
        return step

    def _apply(self, step: Step, turn: tuple[dict[str, float], float] | None = None) -> None:
        if step.hold and step.settle is not None and self.run.approval is not None and self.cfg.approval_hold_s > 0:
            self.run.approval.held = (self.now, step.settle)  # committed once the caller stays quiet (`_check_held`)
            self._trace(TraceKind.APPROVAL_HELD, hold_s=self.cfg.approval_hold_s)
            if step.settle.approved:  # heard at once: the caller is not left in silence while the write waits
                self._say(self.words.HELD_YES, SpeechKind.ACK)
            return
        if step.settle is None:
            if step.say and self.run.approval is not None:
                self._ask(step.say)
                self.run.approval.asked_s = self.now  # a question asked again gets its own time to be answered
            return
        self.run.decline_line = "" if step.settle.approved else step.say
        if step.rerun:  # a change: the caller's words are their next turn, once the declined run has ended
            self.run.waiting_turn = (step.rerun, *(turn or ({}, self.now)))
        self._settle_approval(step.settle)

    def _check_approval_timeout(self) -> None:
        if self.run.approval is not None and self.run.approval.held is not None:
            self._check_held(*self.run.approval.held)
            return
        if self.run.approval and self.run.reply.speaking:  # the time to answer starts when the question has been said
            self.run.approval.asked_s = self.now
        # never while the caller speaks, nor while a turn they ended is still being transcribed: that is the answer
        if self.run.approval and not self._caller_speaking() and self.hearing.closed is None and \
                self.now - self.run.approval.asked_s > self.cfg.approval_timeout_s:
            self._trace(TraceKind.APPROVAL_TIMEOUT, call=self.run.approval.call.name)
            self._apply(self.run.approval.dialog.timed_out())

    def _check_held(self, since: float, answer: ApprovalAnswer) -> None:
        """A held yes is committed after `approval_hold_s` of quiet; while the caller speaks again, or their words
        are being transcribed, it waits: their next turn is read together with it (`ApprovalDialog.hear`)."""
        if self._caller_speaking() or self.hearing.closed is not None:
            return
        if self.now - since >= self.cfg.approval_hold_s:
            self._settle_approval(answer)

    def _operator_decision(self, approved: bool) -> None:
        if self.run.approval is not None:
            self._cut_off()
            self._apply(self.run.approval.dialog.decided(approved))

    def _caller_speaking(self) -> bool:
        raise NotImplementedError

    # ---- the phone's keypad ------------------------------------------------------------------------------

    def _on_key(self, digit: str) -> None:
        """A key: one the approval question offered settles it; digits gather until '#' or a pause."""
        self._trace(TraceKind.CALLER_KEY, digit=digit)
        approval = self.run.approval
        if approval is not None and not self.keypad.digits and (step := approval.dialog.key(digit)) is not None:
            self._cut_off()
            self._apply(step)
        elif digit == "*":
            self.keypad = Keypad()  # start again
        elif digit == "#":
            self._keys_done()
        elif digit.isdigit():
            self.keypad.digits, self.keypad.at = self.keypad.digits + digit, self.now

    def _check_keys(self) -> None:
        if self.keypad.digits and self.now - self.keypad.at >= self.cfg.keys_gap_s:
            self._keys_done()

    def _keys_done(self) -> None:
        """The digits keyed in are the caller's turn ("4567" for "Could you tell me the order number?")."""
        digits, self.keypad = self.keypad.digits, Keypad()
        if not digits:
            return
        self._trace(TraceKind.CALLER_KEYED, digits=digits)
        if self.run.approval is not None:
            self._approval_reply(digits)
        else:
            self._start_run(digits, {}, self.now)

    def _settle_approval(self, answer: ApprovalAnswer) -> None:
        if self.run.approval is None:
            return
        self.run.approval = None
        self.run.reply.restart(self.chunker_cls(), self.clock())
        self._out.append(ce.SettleApproval(answer))
