"""The demo order desk's toolset on a real SQLite database, seeded on first use (the agent itself is declared in
order_support.yaml beside this file: `voiceloop call --agent voice/demo/order_support.yaml`).

What a tool returns is what the model reads, and a small model copies it into its reply: so every result is one
or two short sentences a person would say ("Order 4567 has shipped and is on its way to Lisbon. The total was
$59.90."), with the facts a caller asks for and nothing else (no customer name, no JSON, no instructions).
`OrderDesk.order()` gives the same order as data; `say_order` / `say_deliveries` turn data into those sentences.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from loop import Escalated, Policy, Tool
from loop.bench.brain import BrainSetup
from loop.commit_gate import CommitGate, WriteAbandoned
from loop.policy.config import load_policy
from loop.prompt import PromptAssembler

SEED = [
    ("4567", "Ana Ruiz", "Lisbon", "shipped", 59.90),
    ("1234", "Ben Okafor", "Leeds", "processing", 120.00),
    ("7788", "Chen Li", "Denver", "delivered", 820.00),
    ("2020", "Dara Singh", "Austin", "delayed", 35.50),
]


_STATUS = {
    "shipped": "has shipped, and it is on its way to {city}",
    "processing": "is still being processed; it will go to {city}",
    "delivered": "was delivered in {city}",
    "delayed": "is delayed, on its way to {city}",
}


def money(amount: float) -> str:
    """$59.90, $20, $1,200.50."""
    return f"${amount:,.2f}".removesuffix(".00")


def say_order(order_id: str, order: dict[str, Any] | None) -> str:
    """An order as the caller should hear it, or how to ask again when there is no such order."""
    if order is None:
        return f"I can't find an order {order_id}. Could you say the order number again, digit by digit?"
    status = _STATUS.get(order["status"], "is " + order["status"] + ", going to {city}").format(city=order["city"])
    text = f"Order {order['order_id']} {status}. The total was {money(order['total'])}"
    if order.get("refunded"):
        text += f", and {money(order['refunded'])} of it has been refunded"
    return text + "."


def say_deliveries(city: str, rows: list[dict[str, Any]]) -> str:
    """The orders going to a city, as a sentence."""
    if not rows:
        return f"There are no deliveries going to {city}."
    each = "; ".join(f"order {r['order_id']} is {r['status']}" for r in rows)
    return f"{'One order is' if len(rows) == 1 else f'{len(rows)} orders are'} going to {city}: {each}."


class OrderArgs(BaseModel):
    order_id: str = Field(description="The order number the caller gave, digits only")


class CityArgs(BaseModel):
    city: str


class RefundArgs(BaseModel):
    order_id: str
    amount: float = Field(gt=0, description="Refund amount in dollars")


class AddressArgs(BaseModel):
    order_id: str
    address: str


# A question about deliveries names them; "What will the weather be like in Lisbon?" names a city but is not one.
DELIVERY_CUES = ("deliver", "delivers", "delivery", "deliveries", "delivered", "delivering", "going", "goes",
                 "heading", "headed", "sent", "sending", "ship", "ships", "shipping", "shipped", "shipment",
                 "shipments", "order", "orders", "package", "packages", "parcel", "parcels", "arrive", "arrived",
                 "arriving", "coming", "delayed", "late", "status", "stuck")
# What a caller says when they want a person; the 0.5B otherwise hands over on stray remarks ("a losing game").
HANDOVER_CUES = ("person", "human", "agent", "someone", "somebody", "supervisor", "manager", "representative",
                 "operator", "staff", "people", "customer service", "transfer", "speak to", "talk to")


class TransferArgs(BaseModel):
    reason: str


class OrderDesk:
    """Owns the database; every tool is a method so tests can point it at a temp file.

    Writes are keyed by the call id (`idempotency_key`) and run in one transaction that also records their result
    in `applied`; they commit only if the loop has not given up on them (`CommitGate`). So a write is made at
    most once, a write cut off by its timeout or by a kill leaves nothing behind, and `reconcile(call_id)` tells
    what a write really did. `write_delay_s` slows every write inside its transaction (a slow database, in
    tests: `VOICELOOP_ORDERS_WRITE_DELAY_S` for `voiceloop serve`)."""

    def __init__(self, path: str | Path, write_delay_s: float = 0.0) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.write_delay_s = write_delay_s
        self.db.executescript("""
            CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, customer TEXT, city TEXT, status TEXT,
                                               total REAL, address TEXT DEFAULT '');
            CREATE TABLE IF NOT EXISTS refunds (idempotency_key TEXT PRIMARY KEY, order_id TEXT, amount REAL);
            CREATE TABLE IF NOT EXISTS applied (idempotency_key TEXT PRIMARY KEY, tool TEXT, result TEXT);
        """)
        if not self.db.execute("SELECT count(*) FROM orders").fetchone()[0]:  # OR IGNORE: servers sharing one
            # new file (a fleet) may both find it empty; the second one's seed is then already there
            self.db.executemany("INSERT OR IGNORE INTO orders (id, customer, city, status, total) VALUES (?,?,?,?,?)",
                                SEED)

    def order(self, order_id: str) -> dict[str, Any] | None:
        """One order as data (None: there is no such order)."""
        with self.lock:
            row = self.db.execute(
                "SELECT id, customer, city, status, total FROM orders WHERE id=?", (order_id,)
            ).fetchone()
        if row is None:
            return None
        return {"order_id": row[0], "customer": row[1], "city": row[2], "status": row[3], "total": row[4],
                "refunded": self.refunded(order_id)}

    def lookup_order(self, order_id: str) -> str:
        return say_order(order_id, self.order(order_id))

    def delivery_status(self, city: str) -> str:
        with self.lock:
            rows = self.db.execute("SELECT id, status FROM orders WHERE lower(city)=lower(?)", (city,)).fetchall()
        return say_deliveries(city, [{"order_id": i, "status": s} for i, s in rows])

    def refunded(self, order_id: str) -> float:
        with self.lock:
            return self.db.execute(
                "SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id=?", (order_id,)
            ).fetchone()[0]

    def issue_refund(self, order_id: str, amount: float, idempotency_key: str,
                     commit_gate: CommitGate | None = None) -> str:
        def change() -> str | None:
            if self.db.execute("SELECT 1 FROM orders WHERE id=?", (order_id,)).fetchone() is None:
                return None
            self.db.execute("INSERT INTO refunds VALUES (?,?,?)", (idempotency_key, order_id, amount))
            return f"Done: {money(amount)} has been refunded on order {order_id}."

        if self.reconcile(idempotency_key) is not None:  # the call id is the key: a retried call never pays twice
            return f"That refund of {money(amount)} on order {order_id} was already made."
        made = self._write("issue_refund", idempotency_key, commit_gate, change)
        return made if made is not None else f"There is no order {order_id}, so nothing was refunded."

    def update_address(self, order_id: str, address: str, idempotency_key: str = "",
                       commit_gate: CommitGate | None = None) -> str:
        def change() -> str | None:
            cur = self.db.execute("UPDATE orders SET address=? WHERE id=?", (address, order_id))
            return f"Done: order {order_id} will now be delivered to {address}." if cur.rowcount else None

        made = self._write("update_address", idempotency_key, commit_gate, change)
        return made if made is not None else f"There is no order {order_id}, so no address was changed."

    def _write(self, tool: str, key: str, gate: CommitGate | None, change: Callable[[], str | None]) -> str | None:
        """Run `change` in one transaction with its result recorded under `key`; commit only through the gate.
        A key already applied returns its result again (a retried call never changes anything twice)."""
        with self.lock:
            if key and (done := self._applied(key)) is not None:
                return done
            self.db.execute("BEGIN IMMEDIATE")  # may wait for another writer: the gate is asked after any wait
            try:
                result = change()
                if self.write_delay_s:
                    time.sleep(self.write_delay_s)  # a slow database: the transaction is still open
                if result is not None and key:
                    self.db.execute("INSERT INTO applied VALUES (?,?,?)", (key, tool, result))
                if gate is not None and not gate.may_commit():
                    raise WriteAbandoned(f"{tool} was abandoned at its deadline and rolled back")
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # a failed COMMIT leaves it open: nothing of it may stay
                    self.db.execute("ROLLBACK")
                raise
        return result

    def _applied(self, key: str) -> str | None:
        row = self.db.execute("SELECT result FROM applied WHERE idempotency_key=?", (key,)).fetchone()
        if row is not None:
            return row[0]
        old = self.db.execute("SELECT order_id, amount FROM refunds WHERE idempotency_key=?", (key,)).fetchone()
        return None if old is None else f"Done: {money(old[1])} has been refunded on order {old[0]}."

    def reconcile(self, call_id: str) -> str | None:
        """What the write keyed by `call_id` committed, or None if it never committed."""
        with self.lock:
            return self._applied(call_id)

    def check_expectations(self, expect: dict[str, Any]) -> list[str]:
        """A call script's order-desk expectations (`refunds:`, `addresses:`), each unmet one as a line."""
        fails: list[str] = []
        if "refunds" in expect:
            got = self.db.execute("SELECT order_id, amount FROM refunds").fetchall()
            if [list(r) for r in got] != expect["refunds"]:
                fails.append(f"refunds in the database should be {expect['refunds']}, got {got}")
        for order_id, fragment in expect.get("addresses", {}).items():  # order id: words of its new address, or null
            row = self.db.execute("SELECT address FROM orders WHERE id=?", (str(order_id),)).fetchone()
            got_address = (row[0] if row else "") or ""
            if (got_address != "") if fragment is None else fragment.lower() not in got_address.lower():
                want = "stay unchanged" if fragment is None else f"contain {fragment!r}"
                fails.append(f"order {order_id}'s address should {want}, got {got_address!r}")
        return fails

    def tools(self) -> list[Tool]:
        def transfer_to_human(reason: str) -> str:
            raise Escalated(reason)

        return [
            Tool(
                self.lookup_order,
                description="Look up an order's status and total by its number",
                args=OrderArgs,
                answers=True,
            ),
            Tool(self.delivery_status, description="Delivery status of orders going to a city", args=CityArgs,
                 answers=True, cues=DELIVERY_CUES),
            Tool(
                self.issue_refund,
                description="Refund money for an order",
                args=RefundArgs,
                confirm="refund {amount} on order {order_id}",
                mutates=True,
                reversible=False,
                answers=True,
                reconcile=self.reconcile,
            ),
            Tool(
                self.update_address,
                description="Change the delivery address of an order",
                args=AddressArgs,
                confirm="send order {order_id} to {address}",
                mutates=True,
                reversible=True,
                answers=True,
                reconcile=self.reconcile,
            ),
            Tool(transfer_to_human, description="Hand the call to a human agent", args=TransferArgs,
                 cues=HANDOVER_CUES),
        ]


def open_desk(data_dir: str | Path) -> OrderDesk:
    """The agent file's `toolset`: one orders database in the server's (or scripted call's) data folder.
    VOICELOOP_ORDERS_WRITE_DELAY_S slows every write inside its transaction (fault tests: a slow database)."""
    return OrderDesk(Path(data_dir) / "orders.db", float(os.environ.get("VOICELOOP_ORDERS_WRITE_DELAY_S") or 0))


DEMO_CONFIG = Path(__file__).resolve().with_name("order_support.yaml")


def demo_config() -> dict:
    return yaml.safe_load(DEMO_CONFIG.read_text())


def order_policy() -> Policy:
    """The demo's policy, as written in order_support.yaml."""
    return load_policy(DEMO_CONFIG)


# ---- the order desk as `voiceloop bench brain` measures it -----------------------------------------------

EVAL_SET = Path(__file__).resolve().with_name("tool_choice_eval.yaml")  # package data, beside this file


def order_desk_brain(system_prompt: str | None = None) -> BrainSetup:
    """The prompt an Agent over the order desk sends (its tools, policy text, and the system prompt from
    order_support.yaml unless another is given), with the demo's tool-choice eval set."""
    tools = OrderDesk(":memory:").tools()  # the schemas are what matters; nothing is executed here
    system = system_prompt if system_prompt is not None else demo_config()["system_prompt"]
    return BrainSetup(system, tools, order_policy().text, EVAL_SET)


def demo_assembler(count_tokens: Callable[[str], int], system: str | None = None) -> PromptAssembler:
    """The prompt assembler an Agent over the order desk builds."""
    return order_desk_brain(system).assembler(count_tokens)
