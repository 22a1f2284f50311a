"""The kinds of entry in a call's trace: what the session, speculation and transports record, and the loop
events the session forwards. One `StrEnum`, values unchanged, so trace.jsonl files, the browser page
(`voice/web/app.js` dispatches on these strings) and the operator API read the same as before.

Each entry is `{"t": seconds on the call's clock, "kind": TraceKind, ...data}`.
"""

from __future__ import annotations

from enum import StrEnum

from loop.events import EventKind

LOOP_PREFIX = "loop."
TRANSPORT_PREFIX = "transport."


class TraceKind(StrEnum):
    # the call
    PREFIX_WARMED = "prefix_warmed"  # the model's stable prefix is in its cache before the first turn
    CALL_READ_AHEAD = "call_read_ahead"  # the model read the call so far while the caller spoke (tokens, ms)
    CALL_ENDED = "call_ended"
    CALL_STATE = "call_state"  # the call's state changed (`voice.call.events.CallState`): what a caller's page shows
    # the caller
    CALLER_SPEECH_STARTED = "caller_speech_started"
    CALLER_PARTIAL = "caller_partial"  # a partial transcript while the caller speaks
    APPROVAL_WITHDRAWN = "approval_withdrawn"  # a confirmation question withdrawn unheard: the caller went on
    CALLER_WENT_ON = "caller_went_on"  # the caller spoke on before hearing the answer: one turn, answered whole
    TURN_END_SCORED = "turn_end_scored"  # the end-of-turn model's verdict on a pause (`complete`: its probability)
    TURN_END_SKIPPED = "turn_end_skipped"  # a pause not scored: the shared end-of-turn model was busy (load)
    CALLER_TURN_ENDED = "caller_turn_ended"  # endpointing closed the turn; the final text
    IGNORED_NOISE = "ignored_noise"  # speech-like sound with no words
    CALLER_TURN_CAPPED = "caller_turn_capped"  # the turn reached max_turn_s: closed and answered; more is a new turn
    # the agent
    AGENT_AUDIO_STARTED = "agent_audio_started"
    AGENT_SAID = "agent_said"  # one clause synthesised (part: reply, ask, greeting...)
    SPEECH_REHEARSED = "speech_rehearsed"  # an answer's first clause synthesised in the caller's pause
    AGENT_PAUSED = "agent_paused"  # caller speech over the agent: playout stopped (stop_latency_ms)
    FALSE_INTERRUPTION_RESUMED = "false_interruption_resumed"  # it was a cough or "uh-huh": go on
    BARGE_IN = "barge_in"  # the caller took the turn; `heard` is what they had heard
    # spoken approval
    APPROVAL_ASKED = "approval_asked"
    APPROVAL_REPLY = "approval_reply"
    APPROVAL_TIMEOUT = "approval_timeout"  # no answer in time: declined
    APPROVAL_HELD = "approval_held"  # a yes heard, committed once the caller has stayed quiet a moment
    CALLER_KEY = "caller_key"  # a key pressed on the phone's keypad
    CALLER_KEYED = "caller_keyed"  # keyed digits ended by '#' or a pause: the caller's turn
    OPERATOR_DECISION = "operator_decision"
    HAND_OVER = "hand_over"  # an escalation's hand-over line was heard: the call goes to a person if it can
    # speculative reads on the partial transcript
    SPECULATIVE_READ = "speculative_read"
    SPECULATION_FAILED = "speculation_failed"
    SPECULATION_SKIPPED = "speculation_skipped"
    # a speech engine failed; the call goes on (a turn heard as nothing, a clause not spoken)
    STT_FAILED = "stt_failed"
    TTS_FAILED = "tts_failed"
    # loop events the session forwards (see FORWARDED_LOOP_EVENTS)
    LOOP_GUARDRAIL = LOOP_PREFIX + EventKind.GUARDRAIL
    LOOP_VERDICT = LOOP_PREFIX + EventKind.VERDICT
    LOOP_APPROVAL = LOOP_PREFIX + EventKind.APPROVAL
    LOOP_TOOL_RESULT = LOOP_PREFIX + EventKind.TOOL_RESULT
    LOOP_RUN_FINISHED = LOOP_PREFIX + EventKind.RUN_FINISHED
    LOOP_RUN_CANCELLED = LOOP_PREFIX + EventKind.RUN_CANCELLED
    # what a transport notes about its connection (`Call.note(kind)`)
    TRANSPORT_START = TRANSPORT_PREFIX + "start"
    TRANSPORT_DTMF = TRANSPORT_PREFIX + "dtmf"
    TRANSPORT_UNKNOWN_EVENT = TRANSPORT_PREFIX + "unknown_event"
    TRANSPORT_CLOSED = TRANSPORT_PREFIX + "closed"
    TRANSPORT_ENDED = TRANSPORT_PREFIX + "ended"
    # an escalated call handed to a person (voice/hosting/transfer.py)
    TRANSPORT_TRANSFER = TRANSPORT_PREFIX + "transfer"
    TRANSPORT_TRANSFER_FAILED = TRANSPORT_PREFIX + "transfer_failed"


#: The loop events that go into a call's trace (the others stay in the journal).
FORWARDED_LOOP_EVENTS = frozenset({EventKind.GUARDRAIL, EventKind.VERDICT, EventKind.APPROVAL,
                                   EventKind.TOOL_RESULT, EventKind.RUN_FINISHED, EventKind.RUN_CANCELLED})


def loop_trace_kind(kind: str) -> TraceKind:
    """`verdict` -> `TraceKind.LOOP_VERDICT`; ValueError for a loop event the trace does not carry."""
    return TraceKind(LOOP_PREFIX + EventKind(kind))


def transport_trace_kind(note: str) -> TraceKind:
    """`closed` -> `TraceKind.TRANSPORT_CLOSED`; ValueError for a note nobody has declared here."""
    return TraceKind(TRANSPORT_PREFIX + note)
