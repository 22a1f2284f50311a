"""StoreSafe Self Storage's phone line: unit sizes free now, reserving a unit (after a yes), and an account's
balance by its seven-digit account number.

Run it with  voiceloop serve --agent evals/agents_set4/self_storage/storage.py:build --llm local
"""

from __future__ import annotations

from typing import Annotated, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier, person_name, when

Size = Literal["small", "medium", "large", "extra large"]
# size -> square feet, dollars a month, units free
UNITS = {"small": (25, 59, 4), "medium": (50, 95, 2), "large": (100, 160, 0), "extra large": (200, 275, 1)}
# account number -> name, unit, balance, note
ACCOUNTS = {"4821093": ("Ruth Gallagher", "medium unit B14", "$95.00", "due on the 1st"),
            "3307715": ("Dev Sharma", "small unit A03", "$0.00", "paid up"),
            "5560248": ("Carla Mendes", "large unit C07", "$320.00", "two months overdue"),
            "6012345": ("Ben Ashford", "extra large unit D02", "$275.00", "due on the 15th")}


def free_units() -> str:
    """Which unit sizes are free now, with their size in square feet and monthly price"""
    parts = [f"{size} ({feet} square feet, ${price} a month): {free} free" if free else f"{size}: none free"
             for size, (feet, price, free) in UNITS.items()]
    return "Right now: " + "; ".join(parts) + "."


def build(call_id: str = "") -> Agent:
    free = {size: n for size, (_, _, n) in UNITS.items()}   # each call starts from the same units
    made = [0]

    def account_balance(account_number: Annotated[str, identifier(digits=7)]) -> dict[str, str]:
        """The balance on a storage account, by its seven-digit account number"""
        number = "".join(ch for ch in str(account_number) if ch.isdigit())
        if number not in ACCOUNTS:
            return {"account_number": account_number, "found": False, "note": "no account with that number"}
        name, unit, balance, note = ACCOUNTS[number]
        return {"account_number": number, "name": name, "unit": unit, "balance": balance, "status": note}

    def reserve_unit(size: Size, name: Annotated[str, person_name()],
                     start_date: Annotated[str, when(date=True)]) -> str:
        """Reserve a storage unit of a size for a customer from a start date"""
        feet, price, _ = UNITS[size]
        if free[size] < 1:
            others = [s for s, n in free.items() if n > 0]
            return f"Sorry, we have no {size} units free. We do have {', '.join(others)} units."
        free[size] -= 1
        made[0] += 1
        return (f"Reserved: a {size} unit, {feet} square feet, for {name} from {start_date}, at ${price} a month. "
                f"Your reservation number is R{700 + made[0]}.")

    prompt = (
        "You answer the phone for StoreSafe Self Storage. Be helpful and brief: one or two short sentences.\n"
        "Only a tool knows which units are free, their prices and the accounts. Never make up a price or a balance.\n"
        "- the caller asks what units or sizes are free, or what they cost -> free_units\n"
        "- the caller asks about their balance or bill and gives the seven-digit account number -> account_balance\n"
        "- the caller wants to reserve a unit and has given the size, their name and the start date -> reserve_unit\n"
        "Unit sizes are: small, medium, large, extra large. If the size, the name, the start date or the account "
        "number is missing, ask for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: the site is open 7 a.m. to 9 p.m. every day, the office 9 to 5 on "
        "weekdays; bring photo ID and a padlock, or buy one here for $12.\n"
        "You cannot help with anything else: no removals or van hire, no insurance claims, no payments by phone.")
    return Agent(model=ScriptedModel(["I can help with storage units. Which size are you after?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(free_units), Tool(account_balance),
                        Tool(reserve_unit, mutates=True, confirm="reserve a {size} unit for {name} from {start_date}")],
                 system_prompt=prompt, name="self_storage",
                 scope="Sorry, I can only help with storage units, reservations and account balances.",
                 vocabulary=["StoreSafe", "storage unit", "square feet", "account number", "balance", "reserve",
                             "small", "medium", "large", "extra large", "padlock"],
                 related=[["unit", "storage", "locker", "space", "room"],
                          ["reserve", "reservation", "book", "booking", "hold"],
                          ["balance", "bill", "owe", "payment", "account"]])


build.greeting = "StoreSafe Self Storage, how can I help?"
