"""voiceloop's turn loop as a LiveKit Agents `llm.LLM`, so an `AgentSession` (its console, metrics, test helpers,
turn detection and any STT/TTS plugin) drives a voiceloop `Agent` with its tools, policy, approvals and journal:

    from livekit.agents import Agent as LKAgent, AgentSession
    from voice.livekit_llm import VoiceloopLLM
    session = AgentSession(llm=VoiceloopLLM(my_voiceloop_agent))
    await session.start(LKAgent(instructions="(voiceloop's own prompt applies)"))
    result = await session.run(user_input="Refund $20 on order 4567")
    result.expect.next_event().is_message(role="assistant")

Each user turn is one `Agent.run` (the goal is the newest user message; the history is the loop's own, with its
tool calls and results). The tools run inside the loop (vetted, policy-checked, journaled); LiveKit sees the
spoken text only, so it never executes them itself. An ASK verdict is asked aloud ("Just to confirm: ...?") and
the run waits: the caller's next turn answers it (yes / no, anything else is asked again). A reply LiveKit
interrupts cancels the run, which the journal records as `run_cancelled`; finished tool results stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

try:
    from livekit.agents import APIConnectOptions, llm, utils
    from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, NOT_GIVEN, NotGivenOr
except ImportError as exc:  # an optional extra: say how to get it
    raise ImportError("voice.livekit_llm needs livekit-agents: pip install 'voiceloop[livekit]'") from exc

from loop import Agent, Decision, Event, EventKind, Message, RunOutcome, RunResult, ToolCall, Verdict
from voice.approval import Answer, classify_answer, confirmation_question
from voice.call_state import complete_pairs

ESCALATED_SAY = "Let me get a person to help you with that. Please hold."
FAILED_SAY = "Sorry, I couldn't finish that just now."
UNCLEAR_SAY = "Sorry, was that a yes or a no?"


class VoiceloopLLM(llm.LLM):
    """One conversation's LLM: give each LiveKit session its own (it keeps the call's history and any pending
    approval). `conversation_id` (e.g. the room name) becomes every run's `gen_ai.conversation.id`."""

    def __init__(self, agent: Agent, conversation_id: str = "") -> None:
        super().__init__()
        self.agent = agent
        agent.conversation_id = conversation_id or agent.conversation_id or uuid.uuid4().hex[:12]
        agent.approver = self._approve
        agent.listeners.append(self._on_event)
        self.history: list[Message] = []
        self.results: list[RunResult] = []  # every finished run, for tests and reports
        self._transcript: list[Message] = []
        self._run: asyncio.Task[RunResult] | None = None
        self._pending: asyncio.Future[bool] | None = None
        self._out: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._answered: str | None = None  # the user message the latest run answers

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
            self._out.put_nowait(("text", event.payload["text"]))
        elif event.kind == EventKind.TOOL_ANSWER:  # the tools' own words are the answer (loop.Tool.answers)
            self._out.put_nowait(("text", event.payload["text"] + " "))  # then maybe a question
        elif event.kind == EventKind.MODEL_RESPONSE:
            self._out.put_nowait(("usage", event.payload["response"].get("usage") or {}))

    async def _approve(self, call: ToolCall, verdict: Verdict) -> bool:
        if verdict.decision is not Decision.ASK:
            return False
        self._pending = asyncio.get_running_loop().create_future()
        self._out.put_nowait(("ask", confirmation_question(call, self.agent.tools.get(call.name))))
        try:
            return await self._pending
        finally:
            self._pending = None

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
            answer = classify_answer(text)
            if answer is Answer.UNCLEAR:
                return UNCLEAR_SAY
            assert self._pending is not None
            self._pending.set_result(answer is Answer.YES)
            return queue
        if self._run is not None and not self._run.done():
            self._run.cancel("a new user turn")  # LiveKit moved on without closing the old stream
        self._answered, self._transcript = message_id, []
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


def _closing_words(result: RunResult | BaseException | None) -> str:
    """What the caller hears when a run ends without an answer of its own (as in a voiceloop call)."""
    if isinstance(result, RunResult):
        if result.outcome is RunOutcome.ESCALATED:
            return ESCALATED_SAY
        return "" if result.outcome is RunOutcome.COMPLETED else FAILED_SAY
    return FAILED_SAY if result is not None else ""


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
                    if words := _closing_words(value):
                        self._say(request_id, words, sentence=True)
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
