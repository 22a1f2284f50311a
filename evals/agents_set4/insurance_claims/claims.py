"""Homeguard Insurance's home claims line, in memory: a claim's status by its claim number, a new claim on a policy
(after a yes), and a callback from a claims handler (after a yes).

Claim numbers are six digits, printed as CL-583920; policy numbers are two letters and six digits, like HG204311.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from loop import Tool
from loop.kinds import free_text, identifier, when

# claim number -> policy, what happened, status
CLAIMS = {"583920": ("HG204311", "a burst pipe in the kitchen",
                     "approved: $2,340 will be paid into your account within 5 working days"),
          "601147": ("HG318840", "storm damage to the roof",
                     "an assessor will visit on Thursday between 9 a.m. and 1 p.m."),
          "612508": ("HG455019", "a break-in and stolen laptop", "on hold: we are waiting for the police reference"),
          "598004": ("HG204311", "a cracked window", "closed: paid $180 on May 2")}
# policy number -> holder, address
POLICIES = {"HG204311": ("Mark Ellis", "18 Brook Street"), "HG318840": ("Sophie Grant", "4 Hill Crescent"),
            "HG455019": ("Tariq Aziz", "67 Queens Road"), "HG502776": ("Joan Fletcher", "2 Mill Lane")}


def _claim_key(claim_number: str) -> str:
    return "".join(ch for ch in str(claim_number) if ch.isdigit())


class ClaimsDesk:
    """The claims and callbacks; the tools are its methods."""

    def __init__(self) -> None:
        self.claims = dict(CLAIMS)
        self.callbacks: list[str] = []
        self.next_claim = 700001

    def claim_status(self, claim_number: Annotated[str, identifier(digits=6)]) -> dict[str, str]:
        """The status of a home insurance claim, by its six-digit claim number (printed like CL-583920)"""
        key = _claim_key(claim_number)
        if key not in self.claims:
            return {"claim_number": claim_number, "found": False, "note": "no claim with that number"}
        _policy, what, status = self.claims[key]
        return {"claim_number": f"CL-{key}", "claim": what, "status": status}

    def report_claim(self, policy_number: Annotated[str, identifier(letters=2, digits=6)],
                     what_happened: Annotated[str, free_text()],
                     incident_date: Annotated[str, when(date=True)]) -> str:
        """Report a new home insurance claim on a policy: what happened and the date it happened"""
        policy = "".join(ch for ch in str(policy_number).upper() if ch.isalnum())
        if policy not in POLICIES:
            return f"I can't find policy {policy_number}; the policy number is on your renewal letter, like HG204311."
        key, self.next_claim = str(self.next_claim), self.next_claim + 1
        self.claims[key] = (policy, what_happened, "new: a claims handler will call you within 2 working days")
        holder, _ = POLICIES[policy]
        return (f"Your claim is registered for {holder}: claim number CL-{key}. A claims handler will call you "
                "within 2 working days.")

    def request_callback(self, phone_number: Annotated[str, identifier(digits=10)]) -> str:
        """Ask a claims handler to call the caller back on a ten-digit phone number"""
        number = "".join(ch for ch in str(phone_number) if ch.isdigit())
        if len(number) != 10:
            return f"{phone_number} is not a ten-digit phone number; please say it again."
        self.callbacks.append(number)
        return f"Done: a claims handler will call {number} back today before 6 p.m."

    def tools(self) -> list[Tool]:
        return [Tool(self.claim_status),
                Tool(self.report_claim, mutates=True,
                     confirm="report a claim on policy {policy_number} for {what_happened} on {incident_date}"),
                Tool(self.request_callback, mutates=True, confirm="have a claims handler call you on {phone_number}")]


def open_claims_desk(data_dir: str | Path) -> ClaimsDesk:
    """The agent file's `toolset`: the claims live in memory."""
    return ClaimsDesk()
