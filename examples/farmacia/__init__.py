"""A fifth agent, in Spanish: Farmacia Sol's phone line over its stock and reservations (promoted from
evals/agents_es/farmacia)."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("agent.yaml")
