"""The closed vocabularies of the loop: journal event kinds and observation statuses.

Both are `StrEnum`s whose values are the strings journals have always held, so an old journal reads the
same and `EventKind.RUN_STARTED == "run_started"` is true. Match on the members, never on bare strings:
a renamed or new kind is then one edit here, and a typo is an AttributeError instead of a silent miss.
"""

from __future__ import annotations

from enum import StrEnum


class EventKind(StrEnum):
    """What one journaled event records, in the order a turn emits them."""

    RUN_STARTED = "run_started"  # goal, profile, model
    TURN_ADMITTED = "turn_admitted"  # the budget admitted another turn
    MODEL_CALL = "model_call"  # one model call is about to start
    MODEL_DELTA = "model_delta"  # a streamed piece of text or of a tool call
    MODEL_RESPONSE = "model_response"  # the finished model turn
    PROPOSALS = "proposals"  # the tool calls the model proposed, by signature
    GUARDRAIL = "guardrail"  # a guardrail blocked a call or halted the run
    VERDICT = "verdict"  # the policy's ALLOW / DENY / ASK for one call
    APPROVAL = "approval"  # a human settled an ASK
    TOOL_STARTED = "tool_started"  # an approved call is about to run
    TOOL_FINISHED = "tool_finished"  # a write's result, journaled the moment it is known (replayed on resume)
    TOOL_RESULT = "tool_result"  # the one observation of one proposed call
    TURN_FINISHED = "turn_finished"
    TOOL_ANSWER = "tool_answer"  # the batch's results, spoken as they are, are the run's answer (Tool.answers)
    RUN_FINISHED = "run_finished"  # the run ended with a RunOutcome
    RUN_CANCELLED = "run_cancelled"  # the run's caller withdrew it (a barge-in): not an outcome
    RUN_INTERRUPTED = "run_interrupted"  # a killed run, closed when its process restarted (`loop.run.settle`)
    PREFETCH_STARTED = "prefetch_started"  # speculation on the caller's words so far (`loop.prefetch`): not a run
    PREFETCH_FINISHED = "prefetch_finished"  # what it read and spent, or why it stopped short


#: The kinds that close a run; a run with none of them is still going (or was killed and not yet settled).
RUN_ENDS = frozenset({EventKind.RUN_FINISHED, EventKind.RUN_CANCELLED, EventKind.RUN_INTERRUPTED,
                      EventKind.PREFETCH_FINISHED})

#: How `voiceloop report` names a run closed by `loop.run.settle` after its process was killed (not a RunOutcome:
#: the run did not end for a reason of its own).
INTERRUPTED_BY_RESTART = "INTERRUPTED"


class ObservationStatus(StrEnum):
    """How one proposed tool call ended; every call gets exactly one observation with one of these."""

    OK = "ok"  # ran and returned (an escalation also returns ok, with `escalation` set)
    ERROR = "error"  # ran and raised
    TIMEOUT = "timeout"  # ran past its timeout
    INVALID_ARGS = "invalid_args"  # arguments failed validation; not run
    UNKNOWN_TOOL = "unknown_tool"  # no tool by that name; not run
    BLOCKED = "blocked"  # a guardrail blocked it; not run
    DENIED = "denied"  # the policy denied it; not run
    DECLINED = "declined"  # a human declined it; not run
    UNAPPROVED = "unapproved"  # it needed a yes and nobody could be asked; not run
    SKIPPED = "skipped"  # the batch was abandoned (halt, budget, repetition); not run
    INTERRUPTED = "interrupted"  # a restart cut it off mid-flight; its effect is unknown


#: Statuses that count as a tool failing (consecutive failures end the run with TOOL_FAILURE).
FAILED_STATUSES = frozenset({ObservationStatus.ERROR, ObservationStatus.TIMEOUT})

#: What a voice turn records as its outcome when the caller cut the run off. Not a `RunOutcome`: a run
#: withdrawn by its caller did not end for any reason of its own (the journal has `run_cancelled`).
CANCELLED_BY_CALLER = "CANCELLED"
