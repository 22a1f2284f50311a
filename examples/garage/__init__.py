"""A fourth agent: a garage's repair-status line over its jobs and collection times in SQLite."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("agent.yaml")
