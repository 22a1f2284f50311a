"""The demo's order desk on a real SQLite file: seeded once, refunds idempotent on the call id."""

from __future__ import annotations

from pathlib import Path

import pytest

from loop import Escalated
from voice.demo.order_desk import OrderDesk


def test_seeded_on_first_use_and_kept_after(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.lookup_order("4567") == "Order 4567 has shipped, and it is on its way to Lisbon. The total was $59.90."
    desk.update_address("4567", "1 Rua Nova, Lisbon")
    again = OrderDesk(tmp_path / "orders.db")  # a restart does not reseed over changes
    assert again.db.execute("SELECT address FROM orders WHERE id='4567'").fetchone()[0] == "1 Rua Nova, Lisbon"


def test_a_refund_is_never_paid_twice_for_the_same_call(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.issue_refund("4567", 20, idempotency_key="call_1") == "Done: $20 has been refunded on order 4567."
    repeat = desk.issue_refund("4567", 20, idempotency_key="call_1")
    assert repeat == "That refund of $20 on order 4567 was already made."
    assert desk.db.execute("SELECT count(*), sum(amount) FROM refunds").fetchone() == (1, 20.0)
    assert desk.lookup_order("4567").endswith("The total was $59.90, and $20 of it has been refunded.")


def test_unknown_orders_are_sentences_or_errors_the_model_can_read(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    assert desk.lookup_order("9999").startswith("I can't find an order 9999.")
    assert desk.issue_refund("9999", 5, idempotency_key="k") == "There is no order 9999, so nothing was refunded."
    assert desk.update_address("9999", "1 Main St") == "There is no order 9999, so no address was changed."
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (0,)
    transfer = next(t for t in desk.tools() if t.name == "transfer_to_human")
    with pytest.raises(Escalated):
        transfer.fn(reason="billing dispute")


def test_results_are_short_sentences_a_caller_can_hear(tmp_path: Path) -> None:
    from loop.grounding.speakable import leaks, sentences
    from voice.demo.order_desk import money, say_deliveries, say_order

    desk = OrderDesk(tmp_path / "orders.db")
    names = [t.name for t in desk.tools()]
    results = [desk.lookup_order(i) for i in ("4567", "1234", "7788", "2020", "9999")]
    results += [desk.delivery_status(c) for c in ("Denver", "Paris")]
    results += [desk.issue_refund("2020", 5, idempotency_key="k1"),
                desk.update_address("1234", "12 High Street, Leeds")]
    for text in results:
        assert not leaks(text, names) and sentences(text) <= 2, text
        assert "Ruiz" not in text and "Okafor" not in text  # the caller's name is not news to them
    assert desk.delivery_status("denver") == "One order is going to denver: order 7788 is delivered."
    assert say_deliveries("Leeds", [{"order_id": "1", "status": "shipped"}, {"order_id": "2", "status": "delayed"}]) \
        == "2 orders are going to Leeds: order 1 is shipped; order 2 is delayed."
    assert desk.order("2020") == {"order_id": "2020", "customer": "Dara Singh", "city": "Austin", "status": "delayed",
                                  "total": 35.5, "refunded": 5.0}
    assert say_order("1", {"order_id": "1", "city": "Oslo", "status": "lost", "total": 1200.5}) \
        == "Order 1 is lost, going to Oslo. The total was $1,200.50."
    assert [money(v) for v in (20, 59.9, 0.5)] == ["$20", "$59.90", "$0.50"]
