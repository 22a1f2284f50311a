"""Brightside Logistics' IT helpdesk: tickets by six-digit number, new tickets, password resets by staff ID.

Kinds are declared with `Annotated` on the toolset's methods; the tickets and staff live in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from loop import Tool
from loop.kinds import free_text, identifier, person_name

Device = Literal["laptop", "desktop", "phone", "printer", "monitor", "headset"]

# ticket number: (staff, device, problem, status)
TICKETS = {
    "318204": ("Dana Whitfield", "laptop", "won't charge", "waiting for a new charger, due on Thursday"),
    "318377": ("Omar Haddad", "printer", "paper jam on the second floor", "fixed and closed"),
    "319050": ("Lucy Fernandes", "monitor", "screen flickers", "an engineer will visit today at 2 p.m."),
}
# staff ID: (name, account state)
STAFF = {"E40213": ("Dana Whitfield", "active"), "E51877": ("Omar Haddad", "active"),
         "E62090": ("Lucy Fernandes", "active"), "E70346": ("Kevin Moss", "locked after too many tries")}
FIRST_NEW_TICKET = 320101


class Helpdesk:
    """The helpdesk's tickets and staff accounts; the tools are its methods."""

    def __init__(self) -> None:
        self.tickets = dict(TICKETS)
        self.staff = dict(STAFF)
        self.next_ticket = FIRST_NEW_TICKET
        self.resets: list[str] = []

    def ticket_status(self, ticket_number: Annotated[str, identifier(digits=6)]) -> dict[str, Any]:
        """Where a helpdesk ticket is, by its six-digit ticket number"""
        number = "".join(ch for ch in str(ticket_number) if ch.isdigit())
        if number not in self.tickets:
            return {"ticket": ticket_number, "found": False,
                    "note": "no ticket with that number; ticket numbers have six digits and are in the email"}
        _, device, problem, status = self.tickets[number]
        return {"ticket": number, "device": device, "problem": problem, "status": status}

    def open_ticket(self, name: Annotated[str, person_name()], device: Device,
                    problem: Annotated[str, free_text()]) -> str:
        """Open a new helpdesk ticket for a member of staff: their name, the device and what is wrong with it"""
        number, self.next_ticket = str(self.next_ticket), self.next_ticket + 1
        self.tickets[number] = (name, device, problem, "new, not yet assigned")
        return (f"Ticket {number} is open for {name}'s {device}. An engineer will be in touch within four working "
                "hours.")

    def reset_password(self, staff_id: Annotated[str, identifier(letters=1, digits=5)]) -> str:
        """Reset a member of staff's password, by their staff ID (the letter E and five digits)"""
        key = str(staff_id).replace(" ", "").replace("-", "").upper()
        if key not in self.staff:
            return f"There is no staff ID {staff_id}; it is on the back of your access card, E and five digits."
        name, _ = self.staff[key]
        self.staff[key] = (name, "active")
        self.resets.append(key)
        return (f"Done: the password for {name} is reset and the account unlocked. A temporary password has been "
                "sent by text to the mobile number we hold.")

    def tools(self) -> list[Tool]:
        return [Tool(self.ticket_status),
                Tool(self.open_ticket, mutates=True, confirm="open a ticket for {name}'s {device}: {problem}"),
                Tool(self.reset_password, mutates=True, confirm="reset the password for staff ID {staff_id}")]


def open_helpdesk(data_dir: str | Path) -> Helpdesk:
    """The agent file's `toolset`: the helpdesk, seeded in memory."""
    return Helpdesk()
