"""Farmacia Sol's own tests, in Spanish, written the way a user tests their agent: text conversations with
`loop.testing` (fast, no audio), two call scripts with their scripted replies over audio (`voice.testing`), every
call script checked without audio, and one call with the embedded model (`-m slow`). All the calls over audio,
scripted or with the embedded model: `voiceloop bench voice --calls examples/farmacia/calls [--llm local]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.farmacia import AGENT_FILE
from loop import ScriptedModel, ToolCall
from loop.testing import Conversation, TestModel
from voice.agents.source import load_agent
from voice.testing import check_call_script, check_call_scripts_complete, check_call_with_embedded_model

CALLS = sorted((Path(__file__).resolve().parent / "calls").glob("*.yaml"))
AUDIO = CALLS[0].parent / "audio"


def agent_for(tmp_path: Path, *script: object):
    """The agent from agent.yaml, its pharmacy fresh, answering with `script`."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(list(script)))
    return maker("test-call"), maker.state


def test_stock_and_price_are_read_from_the_pharmacy(tmp_path: Path) -> None:
    agent, _ = agent_for(tmp_path, ToolCall("consultar_medicamento", {"medicamento": "paracetamol"}),
                         "Sí, tenemos paracetamol de 1 gramo, a 2,50 euros la caja.")
    turn = Conversation(agent).say_sync("¿Tienen paracetamol? ¿Cuánto cuesta la caja?")
    turn.expect.called("consultar_medicamento", medicamento="paracetamol").verdict("consultar_medicamento", "ALLOW")
    turn.expect.executed("consultar_medicamento").said("2,50").outcome("COMPLETED")


def test_a_reservation_is_made_only_after_a_yes(tmp_path: Path) -> None:
    script = [ToolCall("reservar_medicamento", {"medicamento": "ibuprofeno", "cajas": 2, "nombre": "Marta Jiménez"}),
              "Reservado, número de reserva 61204."]
    agent, farmacia = agent_for(tmp_path, *script)
    Conversation(agent, approve=False).say_sync("Resérveme dos cajas de ibuprofeno, soy Marta Jiménez.").expect \
        .verdict("reservar_medicamento", "ASK").executed()
    assert farmacia.check_expectations({"reservas": []}) == []
    agent, farmacia = agent_for(tmp_path / "sí", *script)
    Conversation(agent, approve=True).say_sync("Resérveme dos cajas de ibuprofeno, soy Marta Jiménez.").expect \
        .executed("reservar_medicamento").said("61204")
    assert farmacia.check_expectations({"reservas": ["ibuprofeno 2"]}) == []
    assert farmacia.stock["ibuprofeno"] == 10


def test_amoxicilina_is_never_reserved_by_phone(tmp_path: Path) -> None:
    """The agent file's rule denies it before any question is put; the model hears why and tells the caller."""
    agent, farmacia = agent_for(tmp_path, ToolCall("reservar_medicamento", {
        "medicamento": "amoxicilina", "cajas": 1, "nombre": "Lucía Fernández"}), "Necesita receta médica.")
    turn = Conversation(agent, approve=True).say_sync("Resérveme una caja de amoxicilina, soy Lucía Fernández.")
    turn.expect.verdict("reservar_medicamento", "DENY").executed().said("receta")
    assert farmacia.check_expectations({"reservas": []}) == []


def test_a_cancellation_is_irreversible_so_it_is_asked(tmp_path: Path) -> None:
    agent, farmacia = agent_for(tmp_path, ToolCall("cancelar_reserva", {"numero_reserva": "reserva 30981"}),
                                "Cancelada.")
    Conversation(agent, approve=True).say_sync("Cancele la reserva 30981.").expect \
        .verdict("cancelar_reserva", "ASK").executed("cancelar_reserva")
    assert farmacia.check_expectations({"canceladas": ["30981"]}) == []
    assert farmacia.stock["omeprazol"] == 9  # its box is back on the shelf


def test_plain_data_comes_back_from_every_tool(tmp_path: Path) -> None:
    """No script: TestModel calls each tool once with arguments made from its schema."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: TestModel(args={
        "consultar_medicamento": {"medicamento": "cetirizina"}, "consultar_reserva": {"numero_reserva": "72046"},
        "reservar_medicamento": {"medicamento": "almagato", "cajas": 3, "nombre": "Martín Gómez"},
        "cancelar_reserva": {"numero_reserva": "45127"}}))
    turn = Conversation(maker("c1"), approve=True).say_sync("Pruebe todo.")
    turn.expect.executed("consultar_medicamento", "consultar_reserva", "reservar_medicamento", "cancelar_reserva")
    turn.expect.said("agotadas", "Ana Torres", "número de reserva 61204", "Cancelada")
    assert maker.state.check_expectations({"reservas": ["almagato 3"], "canceladas": ["45127"]}) == []


def test_what_the_pharmacy_does_not_know_is_said() -> None:
    """Unknown and picked-up reservations, too many boxes, no surname: the tool says so, in a sentence."""
    from examples.farmacia.farmacia import Farmacia

    farmacia = Farmacia()
    assert "no hay ninguna reserva" in farmacia.consultar_reserva("99999")["nota"]
    assert "ya se recogió" in farmacia.cancelar_reserva("58310")
    assert "Solo nos quedan 5 cajas" in farmacia.reservar_medicamento("loratadina", 6, "Pablo Serrano")
    assert "nombre y el apellido" in farmacia.reservar_medicamento("loratadina", 1, "Pablo")
    assert farmacia.check_expectations({"reservas": [], "canceladas": [], "recetas": 1}) == [
        "expect: recetas unknown to the pharmacy"]


@pytest.mark.parametrize("name", ["stock_precio", "reservar_si", "cancelar_si"])
def test_a_call_script_passes_over_audio(name: str) -> None:
    check_call_script(AUDIO.parent / f"{name}.yaml")  # heard in the agent's Spanish


def test_every_call_script_is_complete(tmp_path: Path) -> None:
    """Recordings that load and are in the manifest, this agent, and expectations its toolset knows."""
    check_call_scripts_complete(AUDIO.parent, "farmacia", lambda sub: agent_for(tmp_path / sub)[1])
    assert len(CALLS) >= 12


@pytest.mark.slow
def test_a_stock_call_with_the_embedded_model(tmp_path: Path) -> None:
    check_call_with_embedded_model(AUDIO.parent / "stock_precio.yaml", tmp_path)
