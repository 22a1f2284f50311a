"""The demo order-support toolset on a real SQLite database, seeded on first use."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from loop import Escalated, Policy, Tool
from loop.brain_bench import BrainSetup
from loop.policy_config import load_policy
from loop.prompt import PromptAssembler

SEED = [
    ("4567", "Ana Ruiz", "Lisbon", "shipped", 59.90),
    ("1234", "Ben Okafor", "Leeds", "processing", 120.00),
    ("7788", "Chen Li", "Denver", "delivered", 820.00),
    ("2020", "Dara Singh", "Austin", "delayed", 35.50),
]


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


class TransferArgs(BaseModel):
    reason: str


class OrderDesk:
    """Owns the database; every tool is a method so tests can point it at a temp file."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.db.executescript("""
            CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, customer TEXT, city TEXT, status TEXT,
                                               total REAL, address TEXT DEFAULT '');
            CREATE TABLE IF NOT EXISTS refunds (idempotency_key TEXT PRIMARY KEY, order_id TEXT, amount REAL);
        """)
        if not self.db.execute("SELECT count(*) FROM orders").fetchone()[0]:
            self.db.executemany("INSERT INTO orders (id, customer, city, status, total) VALUES (?,?,?,?,?)", SEED)

    def lookup_order(self, order_id: str) -> str:
        with self.lock:
            row = self.db.execute(
                "SELECT id, customer, city, status, total FROM orders WHERE id=?", (order_id,)
            ).fetchone()
        if row is None:
            return f"No order {order_id} exists. Ask the caller to repeat the order number."
        refunded = self.refunded(order_id)
        return (
            f"Order {row[0]} for {row[1]} to {row[2]}: {row[3]}, total ${row[4]:.2f}"
            + (f", already refunded ${refunded:.2f}" if refunded else "")
            + "."
        )

    def delivery_status(self, city: str) -> str:
        with self.lock:
            rows = self.db.execute("SELECT id, status FROM orders WHERE lower(city)=lower(?)", (city,)).fetchall()
        return "; ".join(f"order {i} is {s}" for i, s in rows) or f"No deliveries are going to {city}."

    def refunded(self, order_id: str) -> float:
        with self.lock:
            return self.db.execute(
                "SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id=?", (order_id,)
            ).fetchone()[0]

    def issue_refund(self, order_id: str, amount: float, idempotency_key: str) -> str:
        with self.lock:
            if self.db.execute("SELECT 1 FROM orders WHERE id=?", (order_id,)).fetchone() is None:
                raise ValueError(f"order {order_id} does not exist")
            # The call id is the key: a replayed or retried call never pays twice.
            cur = self.db.execute("INSERT OR IGNORE INTO refunds VALUES (?,?,?)", (idempotency_key, order_id, amount))
        if cur.rowcount == 0:
            return f"Refund of ${amount:.2f} for order {order_id} was already issued."
        return f"Refunded ${amount:.2f} for order {order_id}."

    def update_address(self, order_id: str, address: str) -> str:
        with self.lock:
            cur = self.db.execute("UPDATE orders SET address=? WHERE id=?", (address, order_id))
        if cur.rowcount == 0:
            raise ValueError(f"order {order_id} does not exist")
        return f"Order {order_id} will now go to {address}."

    def tools(self) -> list[Tool]:
        def transfer_to_human(reason: str) -> str:
            raise Escalated(reason)

        return [
            Tool(
                self.lookup_order,
                description="Look up an order's status and total by its number",
                args=OrderArgs,
            ),
            Tool(self.delivery_status, description="Delivery status of orders going to a city", args=CityArgs),
            Tool(
                self.issue_refund,
                description="Refund money for an order",
                args=RefundArgs,
                confirm="refund {amount} on order {order_id}",
                mutates=True,
                reversible=False,
            ),
            Tool(
                self.update_address,
                description="Change the delivery address of an order",
                args=AddressArgs,
                confirm="send order {order_id} to {address}",
                mutates=True,
                reversible=True,
            ),
            Tool(transfer_to_human, description="Hand the call to a human agent", args=TransferArgs),
        ]


DEMO_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "order_support.yaml"


def demo_config() -> dict:
    return yaml.safe_load(DEMO_CONFIG.read_text())


def order_policy() -> Policy:
    """The demo's policy, as written in configs/order_support.yaml."""
    return load_policy(DEMO_CONFIG)


# ---- the order desk as `voiceloop bench brain` measures it -----------------------------------------------

EVAL_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "tool_choice_eval.yaml"


def order_desk_brain(system_prompt: str | None = None) -> BrainSetup:
    """The prompt an Agent over the order desk sends (its tools, policy text, and the system prompt from
    configs/order_support.yaml unless another is given), with the demo's tool-choice eval set."""
    tools = OrderDesk(":memory:").tools()  # the schemas are what matters; nothing is executed here
    system = system_prompt if system_prompt is not None else demo_config()["system_prompt"]
    return BrainSetup(system, tools, order_policy().text, EVAL_SET)


def demo_assembler(count_tokens: Callable[[str], int], system: str | None = None) -> PromptAssembler:
    """The prompt assembler an Agent over the order desk builds."""
    return order_desk_brain(system).assembler(count_tokens)
