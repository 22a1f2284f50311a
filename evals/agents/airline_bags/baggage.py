"""Atlantic Air's delayed-bag desk on SQLite: a bag's status by its file reference, and its delivery address.

A file reference is three letters (the airport) and five digits, like LIS48213; spaces, dashes and spoken
digits ("L I S four eight two one three") are set aside before the look-up.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from loop import Tool

# file reference, passenger, bag, where it is now, when it should be delivered, delivery address
BAGS = [("LIS48213", "Ana Ferreira", "black hard-shell suitcase", "found in Lisbon, on flight AA215 tonight",
         "tomorrow between 9 a.m. and 1 p.m.", "Hotel Avenida, 12 Rua Augusta"),
        ("MAD20577", "Tom Whitaker", "green rucksack", "still being traced; last seen in Madrid",
         "not known yet", "22 Baker Street"),
        ("CDG91034", "Claire Dubois", "red suitcase", "at the airport here, with the courier",
         "today by 6 p.m.", "5 Church Lane"),
        ("JFK33460", "Marcus Bell", "golf bag", "found in New York, on flight AA101 tomorrow morning",
         "the day after tomorrow, in the afternoon", "77 Harbour Road"),
        ("LHR70219", "Sofia Rossi", "blue carry-on suitcase", "delivered",
         "delivered yesterday at 4 p.m.", "3 Park View"),
        ("FRA55108", "Jonas Weber", "grey duffel bag", "found in Frankfurt, on flight AA330 tonight",
         "tomorrow between 2 p.m. and 6 p.m.", "19 Station Road")]
_DIGITS = {"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
           "seven": "7", "eight": "8", "nine": "9"}


def file_key(value: str) -> str:
    """'lis 48213', 'L-I-S four eight two one three' -> 'LIS48213'."""
    words = str(value).lower().replace("-", " ").split()
    return "".join(_DIGITS.get(w, w) for w in words).upper().replace(".", "")


class BagDesk:
    """Owns the bags table; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS bags (ref TEXT PRIMARY KEY, passenger TEXT, bag TEXT, "
                        "location TEXT, delivery TEXT, address TEXT)")
        if not self.db.execute("SELECT count(*) FROM bags").fetchone()[0]:
            self.db.executemany("INSERT INTO bags VALUES (?,?,?,?,?,?)", BAGS)

    def bag(self, file_reference: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM bags WHERE ref=?", (file_key(file_reference),)).fetchone()
        keys = ("file_reference", "passenger", "bag", "where", "delivery", "address")
        return dict(zip(keys, row, strict=True)) if row else None

    def bag_status(self, file_reference: str) -> dict[str, Any]:
        """Where a delayed bag is and when it will be delivered, by its file reference (3 letters, 5 digits)"""
        bag = self.bag(file_reference)
        if bag is None:
            return {"file_reference": file_reference, "found": False,
                    "note": "no such file; a file reference is 3 letters and 5 digits, like LIS48213"}
        return bag

    def change_delivery_address(self, file_reference: str, address: str) -> str:
        """Change the street address a delayed bag is delivered to"""
        bag = self.bag(file_reference)
        if bag is None:
            return f"There is no file {file_reference}; the file reference is on the paper the airport gave you."
        if bag["where"] == "delivered":
            return f"The bag on file {bag['file_reference']} was already delivered, so the address can't change."
        self.db.execute("UPDATE bags SET address=? WHERE ref=?", (address, bag["file_reference"]))
        return f"Done: the {bag['bag']} on file {bag['file_reference']} will be delivered to {address}."

    def tools(self) -> list[Tool]:
        return [Tool(self.bag_status),
                Tool(self.change_delivery_address, mutates=True,
                     confirm="deliver the bag on file {file_reference} to {address}")]


def open_bag_desk(data_dir: str | Path) -> BagDesk:
    """The agent file's `toolset`: one bag desk per server (or scripted call)."""
    return BagDesk(Path(data_dir) / "bags.db")
