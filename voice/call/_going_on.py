"""A caller who only paused: speech that starts before they could have reacted to the answer to their last turn
goes on with that turn. A mixin of `CallCore` (`voice/call/core.py`), like `voice/call/_agent_side.py`.

The two turns' audio is transcribed as one (`_join_last_turn`), the answer in the making is withdrawn
(`_withdraw`: its run cancelled, or its messages dropped if it had finished unheard), and the whole is answered once.
Never once a change has been made, or for a yes, no or change said over a confirmation question.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import numpy as np

from voice.audio import SAMPLE_RATE
from voice.call import events as ce
from voice.call._parts import AgentRun, CallerTurn, Conversation, Hearing
from voice.call.answers import Answer, read_answer
from voice.call.state import Barge, SessionConfig, fresh_words
from voice.call.turns import TurnDetector, content_words, sentence_done
from voice.speech.incremental_stt import TurnTranscriber
from voice.trace import TraceKind

MAX_JOINED_GAP_S = 0.5  # the silence kept between two turns transcribed as one


class GoingOn:
    cfg: SessionConfig
    words: ModuleType  # the call's language pack (`loop.locale`)
    detector: TurnDetector
    turn: CallerTurn  # the turn that may go on with the last one
    hearing: Hearing  # for the last closed turn's audio (`last_turn`)
    run: AgentRun  # the answer in the making that a caller who goes on withdraws
    talk: Conversation
    _out: list[ce.CallCommand]

    def _trace(self, kind: TraceKind, **data: Any) -> None:
        raise NotImplementedError

    def _cut_off(self) -> None:
        raise NotImplementedError

    def _join_last_turn(self) -> None:
        """If this speech can only be the caller going on with their last turn, transcribe the two as one: Whisper
        hears the words either side of the pause in context, and the whole is one turn's text if it goes on."""
        last, turns = self.hearing.last_turn, self.talk.turns
        if last is None or not turns or last[0] != turns[-1].speech_end_s \
                or self.run.approval is not None or not self._may_go_on(self.detector.onset_s):
            return  # over a confirmation question the answer is read alone: no earlier words may leak into it
        end, audio = last
        gap = np.zeros(int(min(max(self.detector.onset_s - end, 0.0), MAX_JOINED_GAP_S) * SAMPLE_RATE), np.int16)
        self.turn.audio = [audio, gap, *self.turn.audio]
        self.turn.prefix = turns[-1].user_text
        if self._long_pause(self.detector.onset_s - end):  # after a finished sentence only new words are transcribed
            self.turn.heard.offer_head(len(audio) + len(gap), self.turn.prefix)

    def _new_transcriber(self) -> TurnTranscriber:
        """A turn's transcriber; it keeps a finished sentence as the turn's head where the caller goes on after it."""
        turns = self.cfg.turns
        done = functools.partial(sentence_done, words=self.words)  # a finished sentence in the call's language
        return TurnTranscriber(turns.stt_window_s, None if turns.keep_sentences_after_s is None else done)

    def _going_on_in_turn(self, pause_key: float, t: float) -> None:
        """The caller speaks again in their turn (this frame, at `t`, is speech after the pause at `pause_key`):
        a long pause that the end-of-turn model heard as the end of a sentence ends the turn's head there. Its
        word alone is not enough: Whisper closes a fragment cut at a reader's pause ("... to consider how.")."""
        if self.detector.last_speech_s > pause_key and self._long_pause(t - pause_key):
            complete = self.turn.scores.get(pause_key, (None, 0.0))[0]
            if complete is not None and complete >= self.cfg.turns.semantic_threshold:
                self.turn.heard.went_on(pause_key)

    def _long_pause(self, pause_s: float) -> bool:
        after = self.cfg.turns.keep_sentences_after_s
        return after is not None and pause_s >= after - 1e-9

    def _fresh(self, text: str) -> str:
        """The words of this turn that are not the turn it may go on with (`_join_last_turn`)."""
        return fresh_words(self.turn.prefix, text)

    def _may_go_on(self, onset_s: float) -> bool:
        """Speech starting at `onset_s` could only be the caller going on with their last turn: it comes after a
        pause shorter than any turn end would wait for (`hold_silence_s`); they cannot have reacted to its answer
        yet (none of it was sent, or it began at most `continue_within_s` before and no more of it was heard); and
        nothing has been changed or asked of them. The words decide (`_goes_on`)."""
        run, rec = self.run, self.talk.turns[-1] if self.talk.turns else None
        if rec is None or run.reply.record is not rec or run.went_on is not None:
            return False
        if onset_s - rec.speech_end_s >= self.cfg.turns.hold_silence_s:
            return False  # a pause the rules would have ended the turn on whatever the words: a new turn
        within = self.cfg.turns.continue_within_s
        if run.approval is not None:  # the run waits for a yes to a question not heard yet: nothing is done
            return run.active and len(run.writes.asked) == 1 and run.reply.playout.heard_s("prompt") <= within
        if run.writes.asked or not (run.active or run.reply.busy):  # a short answer heard to its end: heard
            return False
        started = rec.first_audio_s
        return started is None or (onset_s - started <= within and run.reply.playout.heard_s() <= within)

    def _goes_on(self, fresh: str, onset_s: float) -> bool:
        """`fresh`: the caller's new words (`_fresh`); a backchannel alone does not go on with anything, and an
        answer to the confirmation question is one, heard or not (`ApprovalDialog` asks again if it was not)."""
        if not content_words(fresh, self.words) or not self._may_go_on(onset_s):
            return False
        answers = (Answer.YES, Answer.NO, Answer.CHANGE)
        return self.run.approval is None or read_answer(fresh, self.run.approval.dialog.context).answer not in answers

    def _withdraw(self, barge: Barge, text: str) -> None:
        """The caller went on with `text` (`_goes_on`): withdraw the answer in the making; the turn is answered
        whole when it ends (`barge.went_on` carries its first words)."""
        rec = self.talk.turns[-1]
        barge.committed, barge.went_on = True, rec.user_text
        self._cut_off()
        self._trace(TraceKind.CALLER_WENT_ON, before=rec.user_text, text=text)
        if self.run.active:
            if self.run.approval is not None:  # the question goes with its run, unheard and unanswered
                self._trace(TraceKind.APPROVAL_WITHDRAWN, call=self.run.approval.call.name)
            self.run.went_on, self.run.approval = rec, None
            self._out.append(ce.CancelRun("the caller went on"))
        else:  # answered already, but none of it heard: as if it had never been asked
            self.talk.history = self.talk.history_before
            self.talk.turns.remove(rec)
