"""The demo's order desk on a real SQLite file: seeded once, refunds idempotent on the call id."""

from __future__ import annotations

from pathlib import Path

import pytest

from loop import Escalated
from voice.orders import OrderDesk


def test_seeded_on_first_use_and_kept_after(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.lookup_order("4567") == "Order 4567 for Ana Ruiz to Lisbon: shipped, total $59.90."
    desk.update_address("4567", "1 Rua Nova, Lisbon")
    again = OrderDesk(tmp_path / "orders.db")  # a restart does not reseed over changes
    assert again.db.execute("SELECT address FROM orders WHERE id='4567'").fetchone()[0] == "1 Rua Nova, Lisbon"


def test_a_refund_is_never_paid_twice_for_the_same_call(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.issue_refund("4567", 20, idempotency_key="call_1") == "Refunded $20.00 for order 4567."
    repeat = desk.issue_refund("4567", 20, idempotency_key="call_1")
    assert repeat == "Refund of $20.00 for order 4567 was already issued."
    assert desk.db.execute("SELECT count(*), sum(amount) FROM refunds").fetchone() == (1, 20.0)
    assert "already refunded $20.00" in desk.lookup_order("4567")


def test_unknown_orders_are_sentences_or_errors_the_model_can_read(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.lookup_order("9999").startswith("No order 9999 exists")
    with pytest.raises(ValueError, match="order 9999 does not exist"):
        desk.issue_refund("9999", 5, idempotency_key="k")
    transfer = next(t for t in desk.tools() if t.name == "transfer_to_human")
    with pytest.raises(Escalated):
        transfer.fn(reason="billing dispute")
