"""A fifth agent: a hotel's booking line over its rooms and bookings in SQLite."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("agent.yaml")
