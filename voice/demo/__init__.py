"""The demo order desk, the default agent of every command: orders, deliveries, refunds and address changes on
SQLite (`./run demo`). It ships in the wheel: its agent file and eval sets are package data beside this file."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("order_support.yaml")
