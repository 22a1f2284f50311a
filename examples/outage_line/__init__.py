"""A third agent: a power company's outage line over an outage map and fault reports in SQLite."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("agent.yaml")
