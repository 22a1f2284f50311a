"""voiceloop inside LiveKit Agents, tested with LiveKit's own helpers (no server): the turn loop as an `llm.LLM`
driven by `AgentSession.run(user_input=...)` and its `expect` assertions, with tools, policy, spoken approval
and the journal intact; Whisper, Piper and Silero as LiveKit STT, TTS and VAD plugins."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("livekit.agents")
from livekit import rtc
from livekit.agents import Agent as LiveKitAgent
from livekit.agents import AgentSession
from livekit.agents import llm as lk_llm
from livekit.agents import vad as lk_vad

from loop import Agent, Journal, LoopConfig, ScriptedModel, Tool, ToolCall
from loop.locale.en import HAND_OVER as ESCALATED_SAY
from loop.locale.en import SAID_NO
from tests.helpers import ORDER_SCHEMA, assert_heard
from tests.paths import ROOT
from voice.audio import SAMPLE_RATE, load_audio, resample
from voice.demo.order_desk import OrderDesk, order_policy
from voice.livekit.llm import VoiceloopLLM
from voice.livekit.plugins import OfflineSTT, OfflineTTS, OfflineVAD
from voice.testing.scripted_call import FIXTURES

CLIP = FIXTURES / "recordings/telephone/osr34_002.wav"  # "The long journey home took a year."
REFUND = [ToolCall("lookup_order", {"order_id": "4567"}), ToolCall("issue_refund", {"order_id": "4567", "amount": 20}),
          "Done. I refunded twenty dollars for order 4567."]


def desk_agent(tmp_path: Path, script: list) -> tuple[Agent, OrderDesk]:
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=ScriptedModel(script), tools=desk.tools(), policy=order_policy(),
                  config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "journal.db"))
    return agent, desk


def refunds(desk: OrderDesk) -> list:
    return desk.db.execute("SELECT order_id, amount FROM refunds").fetchall()


async def test_the_turn_loop_answers_in_an_agent_session_and_asks_before_it_refunds(tmp_path: Path) -> None:
    agent, desk = desk_agent(tmp_path, REFUND)
    adapter = VoiceloopLLM(agent, conversation_id="room-42")
    async with AgentSession(llm=adapter) as session:
        await session.start(LiveKitAgent(instructions="voiceloop's own prompt applies"))
        asked = await session.run(user_input="I want a refund of $20 on order 4567")
        asked.expect.next_event().is_message(role="assistant")
        asked.expect.no_more_events()
        said = asked.expect[0].event().item.text_content  # the lookup's own words, then the question
        assert said.startswith("Order 4567 has shipped") and said.endswith("Just to confirm: refund $20 on order 4567?")
        assert refunds(desk) == [] and adapter.awaiting_approval  # nothing refunded before the yes

        question = await session.run(user_input="hmm, what was that about the weather?")  # answered, asked again
        assert question.expect[0].event().item.text_content == (
            "I'm asking you this: shall I refund $20 on order 4567?")
        unclear = await session.run(user_input="mhm")  # a backchannel is no yes
        assert unclear.expect[0].event().item.text_content.startswith("Sorry, I need a clear answer.")
        assert refunds(desk) == [] and adapter.awaiting_approval

        done = await session.run(user_input="Yes, go ahead.")  # held a moment (approval_hold_s), then committed
        done.expect.next_event().is_message(role="assistant")
        assert done.expect[0].event().item.text_content.strip() == "Done: $20 has been refunded on order 4567."
    assert refunds(desk) == [("4567", 20.0)]
    (result,) = adapter.results
    assert result.outcome.value == "COMPLETED"
    assert [o.call.name for o in result.trajectory] == ["lookup_order", "issue_refund"]
    journal = Journal(str(tmp_path / "journal.db"))
    kinds = [e.kind for e in journal.events(result.run_id)]
    assert "approval" in kinds and kinds[-1] == "run_finished"
    assert adapter.agent.conversation_id == "room-42"  # the session's own view of the agent (Agent.override):
    assert agent.conversation_id == "" and agent.approver is None and agent.listeners == []  # the user's is as built


async def test_a_no_declines_and_the_policy_still_denies(tmp_path: Path) -> None:
    over = [ToolCall("issue_refund", {"order_id": "4567", "amount": 900}), "I can't refund that much."]
    agent, desk = desk_agent(tmp_path, [*REFUND[:2], *over])
    adapter = VoiceloopLLM(agent)
    async with AgentSession(llm=adapter) as session:
        await session.start(LiveKitAgent(instructions=""))
        await session.run(user_input="Refund $20 on order 4567 please")
        declined = await session.run(user_input="No, don't.")
        declined.expect.next_event().is_message(role="assistant")
        assert declined.expect[0].event().item.text_content.strip() == SAID_NO  # the session's words, not a model's
        denied = await session.run(user_input="Then refund $900 on order 4567.")
        assert "can't refund" in denied.expect[0].event().item.text_content
    assert refunds(desk) == []
    assert [r.outcome.value for r in adapter.results] == ["APPROVAL_DENIED", "COMPLETED"]
    tool_results = [e.payload for r in adapter.results for e in Journal(str(tmp_path / "journal.db")).events(r.run_id)
                    if e.kind == "tool_result" and e.payload["call"]["name"] == "issue_refund"]
    assert [p["status"] for p in tool_results] == ["declined", "denied"]  # the caller's no, then policy's limit


async def test_a_yes_with_a_change_is_proposed_and_confirmed_afresh(tmp_path: Path) -> None:
    thirty = ToolCall("issue_refund", {"order_id": "4567", "amount": 30})
    agent, desk = desk_agent(tmp_path, [*REFUND[:2], thirty, "Done."])
    adapter = VoiceloopLLM(agent)
    async with AgentSession(llm=adapter) as session:
        await session.start(LiveKitAgent(instructions=""))
        await session.run(user_input="I want a refund of $20 on order 4567")
        changed = await session.run(user_input="Yes, but make it $30.")
        asked_again = changed.expect[0].event().item.text_content.strip()
        assert asked_again.endswith("Just to confirm: refund $30 on order 4567?")
        assert refunds(desk) == [] and adapter.awaiting_approval
        await session.run(user_input="Yes.")
    assert refunds(desk) == [("4567", 30.0)]
    assert [r.outcome.value for r in adapter.results] == ["APPROVAL_DENIED", "COMPLETED"]


async def test_a_yes_the_caller_goes_on_from_is_read_again_whole(tmp_path: Path) -> None:
    """"Yes." then, before the held yes is committed, "but make it $30.": the two are one answer, a change."""
    agent, desk = desk_agent(tmp_path, REFUND)
    adapter = VoiceloopLLM(agent, approval_hold_s=0.5)
    async with AgentSession(llm=adapter) as session:
        await session.start(LiveKitAgent(instructions=""))
        await session.run(user_input="I want a refund of $20 on order 4567")
        adapter.start_turn("m-yes", "Yes.")
        await asyncio.sleep(0.1)
        assert adapter.awaiting_approval  # held, not committed
        adapter.start_turn("m-but", "but make it $30.")
        await asyncio.sleep(0.8)
        assert refunds(desk) == [] and adapter.rerun == "Yes. but make it $30."


async def test_an_interrupted_reply_withdraws_the_run_and_the_next_turn_goes_on(tmp_path: Path) -> None:
    started, delays = asyncio.Event(), [30.0]

    async def lookup_order(order_id: str) -> str:
        started.set()
        await asyncio.sleep(delays.pop() if delays else 0.0)  # the first lookup hangs until it is withdrawn
        return f"order {order_id} shipped"

    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "42"}), "It shipped."])
    agent = Agent(model=model, tools=[Tool(lookup_order, args=ORDER_SCHEMA)], config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "journal.db"))
    adapter = VoiceloopLLM(agent)
    ctx = lk_llm.ChatContext()
    ctx.add_message(role="user", content="Where is order 42?")
    stream = adapter.chat(chat_ctx=ctx)
    await asyncio.wait_for(started.wait(), 5)
    await stream.aclose()  # what LiveKit does when the user talks over the reply
    async with asyncio.timeout(5):
        while adapter._run is not None and not adapter._run.done():
            await asyncio.sleep(0.01)
    journal = Journal(str(tmp_path / "journal.db"))
    (withdrawn,) = journal.run_ids()
    assert journal.events(withdrawn)[-1].kind == "run_cancelled" and adapter.results == []

    ctx.add_message(role="user", content="Sorry, order 42, where is it?")
    text = "".join([c.delta.content async for c in adapter.chat(chat_ctx=ctx) if c.delta and c.delta.content])
    assert text == "It shipped."
    (result,) = adapter.results
    assert [m.role for m in result.messages[:2]] == ["user", "user"]  # the withdrawn turn left no dangling call


async def test_an_escalation_says_a_person_will_help(tmp_path: Path) -> None:
    agent, _ = desk_agent(tmp_path, [ToolCall("transfer_to_human", {"reason": "asked for a person"})])
    async with AgentSession(llm=VoiceloopLLM(agent)) as session:
        await session.start(LiveKitAgent(instructions=""))
        result = await session.run(user_input="Can I speak to a real person?")
        result.expect.next_event().is_message(role="assistant")
        assert result.expect[0].event().item.text_content == ESCALATED_SAY


def _frames(pcm16k: np.ndarray, rate: int = 48000, ms: int = 20) -> list[rtc.AudioFrame]:
    """The way a room delivers audio: 20 ms frames at 48 kHz."""
    pcm = resample(pcm16k, SAMPLE_RATE, rate).astype(np.int16)
    n = rate * ms // 1000
    return [rtc.AudioFrame(pcm[i:i + n].tobytes(), rate, 1, len(pcm[i:i + n])) for i in range(0, len(pcm) - n + 1, n)]


async def test_whisper_and_piper_as_livekit_stt_and_tts() -> None:
    stt = OfflineSTT.load("tiny.en")
    event = await stt.recognize(_frames(load_audio(CLIP)))
    assert_heard(event.alternatives[0].text, "journey", "home")
    assert (stt.provider, stt.model) == ("voiceloop", "tiny.en")

    tts = OfflineTTS.load("piper")
    frames = [a.frame async for a in tts.synthesize("Your order shipped on Monday.")]
    audio = np.concatenate([np.frombuffer(f.data, np.int16) for f in frames])
    assert {f.sample_rate for f in frames} == {SAMPLE_RATE} and len(audio) / SAMPLE_RATE > 1.0
    heard = await stt.recognize([rtc.AudioFrame(audio.tobytes(), SAMPLE_RATE, 1, len(audio))])
    assert_heard(heard.alternatives[0].text, ("ship", "monday"))  # what Piper said, Whisper hears (Piper samples noise)


async def test_silero_as_a_livekit_vad_finds_the_utterance() -> None:
    speech = load_audio(CLIP)
    silence = np.zeros(SAMPLE_RATE, np.int16)
    stream = OfflineVAD.load().stream()
    for frame in _frames(np.concatenate([silence, speech, silence])):
        stream.push_frame(frame)
    stream.end_input()
    events = [e async for e in stream]
    kinds = [e.type for e in events if e.type != lk_vad.VADEventType.INFERENCE_DONE]
    assert kinds == [lk_vad.VADEventType.START_OF_SPEECH, lk_vad.VADEventType.END_OF_SPEECH]
    start = next(e for e in events if e.type == lk_vad.VADEventType.START_OF_SPEECH)
    end = next(e for e in events if e.type == lk_vad.VADEventType.END_OF_SPEECH)
    assert 0.8 <= start.samples_index / SAMPLE_RATE <= 1.5  # speech begins after the 1 s of silence
    utterance_s = sum(f.samples_per_channel for f in end.frames) / SAMPLE_RATE
    assert abs(utterance_s - len(speech) / SAMPLE_RATE) < 1.0  # the utterance's audio comes with its end
    assert any(e.speaking for e in events if e.type == lk_vad.VADEventType.INFERENCE_DONE)
    await stream.aclose()


def test_nothing_else_in_voiceloop_imports_livekit() -> None:
    import subprocess
    import sys

    code = ("import sys, voice.cli, voice.server.app, voice.runtime.session\n"
            "print(any(m.startswith('livekit') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "False"


if __name__ == "__main__":  # pragma: no cover
    asyncio.run(test_silero_as_a_livekit_vad_finds_the_utterance())


async def test_an_agent_on_a_remote_model_is_grounded_in_a_livekit_session(tmp_path: Path) -> None:
    """The grounding phase is the loop's: a LiveKit session over an OpenAI-compatible model (a real SSE server)
    does not speak a fact no tool gave."""
    from loop.models.openai import OpenAICompatModel
    from tests.openai_server import OpenAIServer, text_reply

    with OpenAIServer() as server:
        server.enqueue(text_reply("Order 4567 was delivered to Lisbon yesterday at 3 p.m."))
        desk = OrderDesk(tmp_path / "orders.db")
        model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
        agent = Agent(model=model, tools=desk.tools(), policy=order_policy(), config=LoopConfig.profile("voice"))
        adapter = VoiceloopLLM(agent)
        async with AgentSession(llm=adapter) as session:
            await session.start(LiveKitAgent(instructions=""))
            said = await session.run(user_input="Where is my order?")
            text = said.expect[0].event().item.text_content
        await model.aclose()
    assert "Lisbon" not in text and "yesterday" not in text and text.strip()
