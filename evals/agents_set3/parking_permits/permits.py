"""Northgate Council residents' parking permits: a permit's details, renewing it, ordering visitor passes.

Run it with  voiceloop serve --agent evals/agents_set3/parking_permits/permits.py:build --llm local
"""

from typing import Annotated, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import count, identifier

PRICES = {3: 30, 6: 55, 12: 100}   # dollars for a renewal of so many months
PASS_BOOK = 12                     # dollars for a book of 10 visitor passes
# permit number -> holder, zone, vehicle, expiry
PERMITS = {"NG40211": ("Alice Morgan", "zone B", "silver Nissan Micra", "April 30"),
           "NG58830": ("Daniel Okafor", "zone A", "blue Ford Kuga", "expired on March 15"),
           "NG61174": ("Beth Harris", "zone C", "white Tesla Model 3", "September 1"),
           "NG70025": ("Karim Haddad", "zone B", "red Mini Cooper", "May 12")}

PermitNumber = Annotated[str, identifier(letters=2, digits=5)]


def _key(permit_number: str) -> str:
    return "".join(ch for ch in str(permit_number).upper() if ch.isalnum())


def build(call_id: str = "") -> Agent:
    permits = {k: list(v) for k, v in PERMITS.items()}

    def permit_details(permit_number: PermitNumber) -> dict[str, str]:
        """A residents' parking permit's holder, zone, vehicle and expiry date, by its permit number (like NG40211)"""
        key = _key(permit_number)
        if key not in permits:
            return {"permit": permit_number, "found": False, "note": "permit numbers are NG and five digits"}
        holder, zone, vehicle, expiry = permits[key]
        state = expiry if expiry.startswith("expired") else f"valid until {expiry}"
        return {"permit": key, "holder": holder, "zone": zone, "vehicle": vehicle, "status": state}

    def renew_permit(permit_number: PermitNumber, months: Literal[3, 6, 12]) -> str:
        """Renew a residents' parking permit for 3, 6 or 12 months"""
        key = _key(permit_number)
        if key not in permits:
            return f"There is no permit {permit_number}; the permit number is printed on the permit."
        permits[key][3] = f"renewed for {months} months from today"
        return (f"Done: permit {key} for {permits[key][0]} is renewed for {months} months. "
                f"${PRICES[months]} will be taken from the card on file.")

    def order_visitor_passes(permit_number: PermitNumber, books: Annotated[int, count(), Field(ge=1, le=4)]) -> str:
        """Order books of ten visitor parking passes for a permit holder, 1 to 4 books"""
        key = _key(permit_number)
        if key not in permits:
            return f"There is no permit {permit_number}; the permit number is printed on the permit."
        plural = "book" if books == 1 else "books"
        return (f"Done: {books} {plural} of visitor passes for {permits[key][0]}, ${books * PASS_BOOK}, "
                f"posted within 5 working days.")

    prompt = (
        "You answer the phone for Northgate Council's residents' parking permits. Be polite and brief: one or two "
        "short sentences.\n"
        "Only the tools know about permits. Never make up an expiry date, a zone or a price that is not below.\n"
        "- the caller asks about their permit (expiry, zone, vehicle) and gives the permit number -> permit_details\n"
        "- the caller wants to renew and gives the permit number and 3, 6 or 12 months -> renew_permit\n"
        "- the caller wants visitor passes and gives the permit number and how many books (1 to 4) -> "
        "order_visitor_passes\n"
        "Permit numbers are two letters and five digits, like NG40211. If the permit number, the months or the "
        "number of books is missing, ask for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: a renewal is $30 for 3 months, $55 for 6 months and $100 for 12 "
        "months; a book of 10 visitor passes is $12. Parking fines and appeals are handled online at northgate dot "
        "gov slash fines, not on this line.")
    return Agent(model=ScriptedModel(["I can help with your parking permit. What's the permit number?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(permit_details),
                        Tool(renew_permit, mutates=True, confirm="renew permit {permit_number} for {months} months"),
                        Tool(order_visitor_passes, mutates=True,
                             confirm="order {books} books of visitor passes for permit {permit_number}")],
                 system_prompt=prompt, name="parking_permits",
                 scope="Sorry, I can only help with residents' parking permits and visitor passes.",
                 vocabulary=["Northgate", "parking permit", "permit number", "visitor passes", "renew", "zone",
                             "NG"])


build.greeting = "Northgate Council parking permits, how can I help?"
