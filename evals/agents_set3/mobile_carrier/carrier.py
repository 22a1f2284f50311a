"""Lumen Mobile's customer line: data left by mobile number, adding a data pack, barring a lost phone's SIM.

Run it with  voiceloop serve --agent evals/agents_set3/mobile_carrier/carrier.py:build --llm local
"""

from typing import Annotated, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier

Pack = Literal["5 GB", "20 GB", "roaming day pass"]
PACK_PRICE = {"5 GB": 10, "20 GB": 25, "roaming day pass": 5}
# mobile number -> name, plan, data left, renews on
LINES = {"0412555018": ("Zoe Adams", "Lumen 20", "2.5 GB of 20 GB", "the 14th"),
         "0433210987": ("Liam Foster", "Lumen 40", "11 GB of 40 GB", "the 3rd"),
         "0455600321": ("Maya Singh", "Lumen 10", "0 GB of 10 GB", "the 22nd"),
         "0498002740": ("Noah Clark", "Lumen 20", "18 GB of 20 GB", "the 9th")}

MobileNumber = Annotated[str, identifier(digits=10)]


def _key(number: str) -> str:
    return "".join(ch for ch in str(number) if ch.isdigit())


def build(call_id: str = "") -> Agent:
    barred: set[str] = set()
    packs: list[tuple[str, str]] = []

    def data_left(mobile_number: MobileNumber) -> dict[str, str]:
        """The plan, data left this month and renewal day of a Lumen mobile number (ten digits, starting 04)"""
        key = _key(mobile_number)
        if key not in LINES:
            return {"mobile_number": mobile_number, "found": False, "note": "not a Lumen number"}
        name, plan, left, renews = LINES[key]
        info = {"name": name, "plan": plan, "data left": left, "renews on": renews}
        return {**info, "SIM": "barred"} if key in barred else info

    def add_data_pack(mobile_number: MobileNumber, pack: Pack) -> str:
        """Add a data pack to a mobile number: 5 GB, 20 GB or a roaming day pass"""
        key = _key(mobile_number)
        if key not in LINES:
            return f"There is no Lumen number {mobile_number}."
        packs.append((key, pack))
        return (f"Done: the {pack} pack is on {LINES[key][0]}'s number now, ${PACK_PRICE[pack]} added to the next "
                f"bill.")

    def bar_sim(mobile_number: MobileNumber) -> str:
        """Bar the SIM of a lost or stolen phone so nobody can use it; a new SIM is posted free"""
        key = _key(mobile_number)
        if key not in LINES:
            return f"There is no Lumen number {mobile_number}."
        barred.add(key)
        return f"Done: the SIM for {LINES[key][0]}'s number is barred. A new SIM will be posted within 2 days."

    prompt = (
        "You answer the phone for Lumen Mobile. Be friendly and brief: one or two short sentences.\n"
        "Only the tools know a customer's plan and data. Never make up an amount of data or a price not below.\n"
        "- the caller asks how much data they have left or about their plan, and gives their mobile number "
        "-> data_left\n"
        "- the caller wants a data pack (5 GB, 20 GB or a roaming day pass) and gives their mobile number "
        "-> add_data_pack\n"
        "- the caller's phone is lost or stolen and they want the SIM barred or blocked, and give the mobile number "
        "-> bar_sim\n"
        "Mobile numbers have ten digits and start with 04. If the number or the pack is missing, ask for it. After "
        "a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: the 5 GB pack is $10, the 20 GB pack is $25, the roaming day "
        "pass is $5 a day and works in 60 countries. Packs last until the plan renews.")
    return Agent(model=ScriptedModel(["I can help with that. What's your mobile number?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(data_left),
                        Tool(add_data_pack, mutates=True, confirm="add the {pack} pack to {mobile_number}"),
                        Tool(bar_sim, mutates=True, reversible=False, confirm="bar the SIM for {mobile_number}")],
                 system_prompt=prompt, name="mobile_carrier",
                 scope="Sorry, I can only help with data, data packs and barring a lost SIM.",
                 vocabulary=["Lumen Mobile", "data pack", "roaming day pass", "gig", "GB", "SIM", "bar", "block"])


build.greeting = "Thanks for calling Lumen Mobile, how can I help?"
