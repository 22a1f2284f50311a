"""A second, different agent: a dental practice's appointment line over a calendar in SQLite."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("agent.yaml")
