"""voiceloop's turn loop as a LiveKit Agents `llm.LLM`, so an `AgentSession` (its console, metrics, test helpers,
turn detection and any STT/TTS plugin) drives a voiceloop `Agent` with its tools, policy, approvals and journal:

    from livekit.agents import Agent as LKAgent, AgentSession
    from voice.livekit.llm import VoiceloopLLM
    session = AgentSession(llm=VoiceloopLLM(my_voiceloop_agent))
    await session.start(LKAgent(instructions="(voiceloop's own prompt applies)"))
    result = await session.run(user_input="Refund $20 on order 4567")
    result.expect.next_event().is_message(role="assistant")

Each user turn is one `Agent.run` (the goal is the newest user message; the history is the loop's own, with its
tool calls and results). The tools run inside the loop (vetted, policy-checked, journaled); LiveKit sees the
spoken text only, so it never executes them itself. An ASK verdict is asked aloud ("Just to confirm: ...?") and
the run waits: the caller's next turn answers it, read by the same approval dialog as a voiceloop call
(`voice.call.approval_dialog`: only a clear yes approves, a question is answered, a change goes back to the model, a
decline says why). What the caller hears about an approved write is what happened to it (`voice.call.write_truth`), as
in a voiceloop call. A reply LiveKit interrupts cancels the run, which the journal records as `run_cancelled`;
finished tool results stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from loop import locale

try:
    from livekit.agents import APIConnectOptions, llm, utils
    from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, NOT_GIVEN, NotGivenOr
except ImportError as exc:  # an optional extra: say how to get it
    raise ImportError("voice.livekit.llm needs livekit-agents: pip install 'voiceloop[livekit]'") from exc

from loop import (
    Agent,
    ApprovalAnswer,
    Decision,
    Event,
    EventKind,
    Message,
    RunOutcome,
    RunResult,
    ToolCall,
    Verdict,
)
from voice.call.approval_dialog import ApprovalDialog
from voice.call.state import complete_pairs
from voice.call.write_truth import WriteOutcomes


class VoiceloopLLM(llm.LLM):
    """One conversation's LLM: give each LiveKit session its own (it keeps the call's history and any pending
    approval). `conversation_id` (e.g. the room name) becomes every run's `gen_ai.conversation.id`."""

    def __init__(self, agent: Agent, conversation_id: str = "", approval_hold_s: float = 0.55) -> None:
        super().__init__()
        self.approval_hold_s = approval_hold_s  # a yes is committed after this much quiet, as in a voiceloop call
        self._held: asyncio.TimerHandle | None = None
        # the session's own view of the agent (`Agent.override`): the user's object is left as it was
        self.agent = agent.override(conversation_id=conversation_id or agent.conversation_id or uuid.uuid4().hex[:12],
                                    approver=self._approve, listeners=[*agent.listeners, self._on_event])
        self.history: list[Message] = []
        self.results: list[RunResult] = []  # every finished run, for tests and reports
        self._transcript: list[Message] = []
        self._run: asyncio.Task[RunResult] | None = None
        self._pending: asyncio.Future[ApprovalAnswer] | None = None
        self._dialog: ApprovalDialog | None = None
        self._out: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._answered: str | None = None  # the user message the latest run answers
        self.words = locale.get(agent.language)  # the agent's language's fixed sentences (`loop.locale`)
        # the run's approved writes and how they ended: what the caller may hear
        self.writes = WriteOutcomes(words=self.words)
        self.declined_say = ""  # what the caller hears when the run ends on a declined approval
        self.rerun = ""  # a change the caller asked for: their words start the next run

    @property
    def model(self) -> str:
        return str(getattr(self.agent.model, "name", "unknown"))

    @property
    def provider(self) -> str:
        return "voiceloop"

    def chat(self, *, chat_ctx: llm.ChatContext, tools: list[llm.Tool] | None = None,
             conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
             parallel_tool_calls: NotGivenOr[bool] = NOT_GIVEN, tool_choice: NotGivenOr[llm.ToolChoice] = NOT_GIVEN,
             extra_kwargs: NotGivenOr[dict[str, Any]] = NOT_GIVEN) -> llm.LLMStream:
        return _LoopStream(self, chat_ctx=chat_ctx, tools=tools or [], conn_options=conn_options)

    @property
    def awaiting_approval(self) -> bool:
        return self._pending is not None and not self._pending.done()

    # ---- the loop's side ---------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if event.kind == EventKind.MODEL_DELTA and event.payload.get("type") == "text":
            if not self.writes.override:  # an approved write failed: the caller hears that, not the model
                self._out.put_nowait(("text", event.payload["text"]))
        elif event.kind == EventKind.TOOL_ANSWER:  # the tools' own words are the answer (loop.Tool.answers)
            self._out.put_nowait(("text", event.payload["text"] + " "))  # then maybe a question
        elif event.kind == EventKind.MODEL_RESPONSE:
            if self.writes.override and not self.writes.told:
                self.writes.told = True
                self._out.put_nowait(("text", self.writes.override))
            self._out.put_nowait(("usage", event.payload["response"].get("usage") or {}))
        elif event.kind == EventKind.TOOL_RESULT:
            self.writes.observe(event.payload)

    async def _approve(self, call: ToolCall, verdict: Verdict) -> ApprovalAnswer:
        if verdict.decision is not Decision.ASK:
            return ApprovalAnswer(False, f"not an ASK verdict ({verdict.rule})")
        tool = self.agent.tools.get(call.name)
        self._dialog = ApprovalDialog(call, tool, other_tools=tuple(self.agent.tools), words=self.words)
        self.writes.ask(call, tool)
        self._pending = asyncio.get_running_loop().create_future()
        self._out.put_nowait(("ask", self._dialog.question))
        try:
            return await self._pending
        finally:
            self._pending = self._dialog = None

    def _commit(self, answer: ApprovalAnswer) -> None:
        """A held yes after its moment of quiet: the write may go ahead."""
        self._held = None
        if self._pending is not None and not self._pending.done():
            self._pending.set_result(answer)

    def _run_done(self, task: asyncio.Task[RunResult]) -> None:
        if task.cancelled():
            self.history = complete_pairs(self._transcript)
            self._out.put_nowait(("end", None))
        elif (exc := task.exception()) is not None:
            self.history = complete_pairs(self._transcript)
            self._out.put_nowait(("end", exc))
        else:
            result = task.result()
            self.history = result.messages
            self.results.append(result)
            self._out.put_nowait(("end", result))

    # ---- one LiveKit turn --------------------------------------------------------------------------------

    def start_turn(self, message_id: str, text: str) -> asyncio.Queue[tuple[str, Any]] | str:
        """The user said `text`: answer a pending approval or start a run. Returns the queue the turn's output
        arrives on, or a sentence to say at once."""
        self._out = queue = asyncio.Queue()
        if self.awaiting_approval:
            assert self._pending is not None and self._dialog is not None
            if self._held is not None:  # the caller went on after a yes: the dialog reads it all again
                self._held.cancel()
                self._held = None
            step = self._dialog.hear(text)
            if step.settle is None:
                return step.say  # asked again, or "" for the agent's own question heard back
            if step.hold and self.approval_hold_s > 0:
                self._held = asyncio.get_running_loop().call_later(self.approval_hold_s, self._commit, step.settle)
                return queue
            self.declined_say, self.rerun = step.say, step.rerun
            self._pending.set_result(step.settle)
            return queue
        if self._run is not None and not self._run.done():
            self._run.cancel("a new user turn")  # LiveKit moved on without closing the old stream
        self._answered, self._transcript, self.writes = message_id, [], WriteOutcomes(words=self.words)
        self._run = asyncio.create_task(self.agent.run(text, history=list(self.history), transcript=self._transcript))
        self._run.add_done_callback(self._run_done)
        return queue

    def interrupted(self) -> None:
        """LiveKit closed the stream mid-reply (the user barged in): withdraw the run unless it waits for a yes."""
        if self._run is not None and not self._run.done() and not self.awaiting_approval:
            self._run.cancel("caller barged in")
            self._answered = None  # the same message may be answered again (LiveKit's preemptive reply retried)

    def is_new(self, message_id: str) -> bool:
        return message_id != self._answered or self.awaiting_approval

    async def aclose(self) -> None:
        if self._run is not None and not self._run.done():
            self._run.cancel("session closed")
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._run
        await super().aclose()

    def closing_words(self, result: RunResult | BaseException | None) -> str:
        """What the caller hears when a run ends without an answer of its own (as in a voiceloop call)."""
        if not isinstance(result, RunResult):
            return self.writes.after_failure() if result is not None else ""
        if result.outcome is RunOutcome.ESCALATED:
            return self.words.HAND_OVER
        if result.outcome is RunOutcome.APPROVAL_DENIED and not self.writes.override:
            said, self.declined_say = self.declined_say, ""
            if said:
                self.history = [*self.history, Message("assistant", said)]
            return said
        return "" if result.outcome is RunOutcome.COMPLETED else self.writes.override or self.writes.after_failure()


class _LoopStream(llm.LLMStream):
    _said = False

    async def _run(self) -> None:
        owner: VoiceloopLLM = self._llm  # type: ignore[assignment]
        user = next((m for m in reversed(self._chat_ctx.items)
                     if isinstance(m, llm.ChatMessage) and m.role == "user"), None)
        if user is None or not owner.is_new(user.id):
            return  # nothing new from the user (an instruction-only reply): the loop has nothing to answer
        request_id = utils.shortuuid("vl_")
        started = owner.start_turn(user.id, user.text_content or "")
        if isinstance(started, str):
            self._say(request_id, started)
            return
        usage = {"input_tokens": 0, "output_tokens": 0}
        try:
            while True:
                kind, value = await started.get()
                if kind == "text":
                    self._say(request_id, value)
                elif kind == "usage":
                    usage = {k: usage[k] + int(value.get(k, 0)) for k in usage}
                elif kind == "ask":
                    self._say(request_id, value, sentence=True)
                    break
                else:
                    if words := owner.closing_words(value):
                        self._say(request_id, words, sentence=True)
                    if not owner.rerun:
                        break
                    rerun, owner.rerun = owner.rerun, ""  # a change: the caller's words are the next turn
                    started = owner.start_turn(user.id, rerun)
                    if isinstance(started, str):
                        self._say(request_id, started, sentence=True)
                        break
        except asyncio.CancelledError:
            owner.interrupted()
            raise
        self._event_ch.send_nowait(llm.ChatChunk(id=request_id, usage=llm.CompletionUsage(
            completion_tokens=usage["output_tokens"], prompt_tokens=usage["input_tokens"],
            total_tokens=usage["input_tokens"] + usage["output_tokens"])))

    def _say(self, request_id: str, text: str, sentence: bool = False) -> None:
        """One piece of the reply; a whole sentence after earlier text gets its space."""
        text = " " + text if sentence and self._said else text
        self._said = True
        self._event_ch.send_nowait(llm.ChatChunk(id=request_id, delta=llm.ChoiceDelta(role="assistant",
                                                                                      content=text)))
