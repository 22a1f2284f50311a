"""The demo order desk: orders, deliveries, refunds and address changes on SQLite (`./run demo`)."""

from pathlib import Path

AGENT_FILE = Path(__file__).resolve().with_name("order_support.yaml")
