"""Brightwater Power's outage map and fault reports on SQLite, seeded on first use.

The tools are plain methods with type hints that return plain data: a dict for a look-up, a short sentence for
a report. Postcodes and account numbers are digits; whatever else comes with them ("account 40213", "3-0-5-8")
is dropped before the look-up.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from loop import Tool

# account number, address, postcode
ACCOUNTS = [("40213", "12 Mill Road", "3058"), ("51877", "7 Harbour Street", "3071"),
            ("63120", "90 Station Road", "3058"), ("72904", "31 Hill Crescent", "3102")]
# postcode, what it is, cause, when the power should be back, homes affected
OUTAGES = [("3058", "power cut", "a damaged underground cable", "today at about 6 p.m.", 140),
           ("3102", "planned work", "planned maintenance at the substation", "tomorrow at 4 p.m.", 60)]
AREAS = ("3058", "3071", "3102", "3120")  # the postcodes Brightwater supplies
FIRST_REFERENCE = 1001


def digits(value: str) -> str:
    """'account 40213' -> '40213', '3-0-5-8' -> '3058'."""
    return "".join(ch for ch in str(value) if ch.isdigit())


class OutageMap:
    """Owns the outages, accounts and reports tables; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        with self.lock:
            self.db.execute("CREATE TABLE IF NOT EXISTS accounts (account TEXT PRIMARY KEY, address TEXT, "
                            "postcode TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS outages (postcode TEXT PRIMARY KEY, kind TEXT, "
                            "cause TEXT, restore TEXT, homes INTEGER)")
            self.db.execute("CREATE TABLE IF NOT EXISTS reports (reference INTEGER PRIMARY KEY, account TEXT UNIQUE)")
            if not self.db.execute("SELECT count(*) FROM accounts").fetchone()[0]:
                self.db.executemany("INSERT INTO accounts VALUES (?,?,?)", ACCOUNTS)
                self.db.executemany("INSERT INTO outages VALUES (?,?,?,?,?)", OUTAGES)

    def _outage(self, postcode: str) -> dict[str, Any]:
        with self.lock:
            row = self.db.execute("SELECT kind, cause, restore, homes FROM outages WHERE postcode=?",
                                  (postcode,)).fetchone()
        if row is None:
            return {"outage": "none", "note": "no known power cuts in this area"}
        kind, cause, restore, homes = row
        return {"outage": kind, "cause": cause, "power back": restore, "homes": homes}

    def outage_by_postcode(self, postcode: str) -> dict[str, Any]:
        """Known power cuts and planned work in an area, by its four-digit postcode"""
        code = digits(postcode)
        if code not in AREAS:
            return {"postcode": postcode, "outage": "unknown", "note": "not an area Brightwater supplies"}
        return {"postcode": code, **self._outage(code)}

    def outage_for_account(self, account_number: str) -> dict[str, Any]:
        """Whether the power is off at a customer's address, by their five-digit account number"""
        account = self.account(account_number)
        if account is None:
            return {"account": account_number, "found": False, "note": "no such account number"}
        return {"account": account["account"], "address": account["address"], **self._outage(account["postcode"])}

    def report_outage(self, account_number: str) -> str:
        """Report that the power is off at a customer's address"""
        account = self.account(account_number)
        if account is None:
            return f"There is no account {account_number}; the account number is on the top of every bill."
        with self.lock:
            self.db.execute("INSERT OR IGNORE INTO reports (reference, account) VALUES "
                            "((SELECT coalesce(max(reference), ?) + 1 FROM reports), ?)",
                            (FIRST_REFERENCE - 1, account["account"]))
            reference = self.db.execute("SELECT reference FROM reports WHERE account=?",
                                        (account["account"],)).fetchone()[0]
        known = self._outage(account["postcode"])
        text = f"The power cut at {account['address']} is reported, reference {reference}."
        if known["outage"] != "none":
            back = known["power back"].removesuffix(".")  # "about 6 p.m." ends the sentence itself
            text += f" It is part of a known {known['outage']}; power should be back by {back}."
        return text

    def account(self, account_number: str) -> dict[str, str] | None:
        with self.lock:
            row = self.db.execute("SELECT account, address, postcode FROM accounts WHERE account=?",
                                  (digits(account_number),)).fetchone()
        return dict(zip(("account", "address", "postcode"), row, strict=True)) if row else None

    def reports(self) -> list[str]:
        """The accounts reported so far, oldest first."""
        with self.lock:
            return [r[0] for r in self.db.execute("SELECT account FROM reports ORDER BY reference").fetchall()]

    def tools(self) -> list[Tool]:
        return [Tool(self.outage_by_postcode), Tool(self.outage_for_account),
                Tool(self.report_outage, mutates=True, confirm="report a power cut for account {account_number}")]

    def check_expectations(self, expect: dict[str, object]) -> list[str]:
        """A call script's `reports: [account, ...]` (every report made in the call, in order), as unmet lines."""
        fails: list[str] = []
        if "reports" in expect:
            want = [str(a) for a in expect.pop("reports") or []]  # type: ignore[union-attr]
            if self.reports() != want:
                fails.append(f"reports should be {want}, got {self.reports()}")
        if expect:
            fails.append(f"expect: {', '.join(sorted(expect))} unknown to the outage map")
        return fails


def open_outage_map(data_dir: str | Path) -> OutageMap:
    """The agent file's `toolset`: one outage map per server (or scripted call)."""
    return OutageMap(Path(data_dir) / "outages.db")
