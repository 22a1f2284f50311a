"""Metro Rail lost property: search the items handed in, hold one for collection, report an item still missing.

Run it with  voiceloop serve --agent evals/agents_set3/lost_property/lost.py:build --llm local
"""

from typing import Annotated, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier, item, person_name

Line = Literal["Red Line", "Green Line", "Blue Line"]
# reference -> description, day found, line, station office
FOUND = {"7301": ("black umbrella", "Monday", "Green Line", "Central"),
         "7302": ("blue backpack", "Tuesday", "Red Line", "Harbour"),
         "7305": ("brown leather wallet", "Wednesday", "Green Line", "Park Street"),
         "7310": ("grey laptop bag", "Wednesday", "Blue Line", "Airport"),
         "7312": ("red child's scooter", "Thursday", "Red Line", "Central"),
         "7316": ("pink umbrella", "Friday", "Blue Line", "Airport")}


def build(call_id: str = "") -> Agent:
    holds: dict[str, str] = {}
    reports: list[tuple[str, str, str]] = []

    def search_found_items(description: Annotated[str, item()]) -> str:
        """Search the items handed in on Metro Rail trains this week, by what the item is (umbrella, wallet, ...)"""
        words = {w.strip(".,'s").lower() for w in description.split()}
        hits = [(ref, f) for ref, f in FOUND.items() if words & set(f[0].replace("'s", "").split())]
        if not hits:
            return f"Nothing like a {description} has been handed in this week."
        said = "; ".join(f"a {d} found on {day} on the {line}, reference {ref}, at the {office} office"
                         for ref, (d, day, line, office) in hits)
        return f"We have {said}."

    def hold_item(reference: Annotated[str, identifier(digits=4)], name: Annotated[str, person_name()]) -> str:
        """Hold a found item for the owner to collect, by its four-digit reference and the owner's name"""
        ref = "".join(ch for ch in str(reference) if ch.isdigit())
        if ref not in FOUND:
            return f"There is no found item {reference}; references have four digits."
        holds[ref] = name
        d, _day, _line, office = FOUND[ref]
        return (f"Done: the {d}, reference {ref}, is held for {name} at the {office} office for 14 days. "
                f"Bring photo ID; the collection fee is $3.")

    def report_lost_item(name: Annotated[str, person_name()], description: Annotated[str, item()], line: Line) -> str:
        """Report an item lost on a Metro Rail line that has not been handed in, with the owner's name"""
        number = str(9001 + len(reports))
        reports.append((name, description, line))
        return f"Done: the {description} lost on the {line} is reported for {name}, report number {number}."

    prompt = (
        "You answer the phone for Metro Rail's lost property office. Be kind and brief: one or two short sentences.\n"
        "Only the tools know what has been handed in. Never say an item was found unless a tool says so.\n"
        "- the caller lost something on a train and says what it is -> search_found_items\n"
        "- the caller wants a found item kept for them and gives its four-digit reference and their name -> hold_item\n"
        "- the caller wants to report a lost item that was not found, and gives their name, the item and the line "
        "(Red, Green or Blue Line) -> report_lost_item\n"
        "If the item, the reference, the name or the line is missing, ask for it. After a tool result, tell the "
        "caller what it says.\n"
        "What you may tell callers without a tool: the lost property offices are open Monday to Saturday, 8 a.m. to "
        "6 p.m.; collecting an item costs $3 and needs photo ID; items are kept for 14 days.")
    return Agent(model=ScriptedModel(["I'm sorry to hear that. What did you lose?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(search_found_items),
                        Tool(hold_item, mutates=True, confirm="hold item {reference} for {name}"),
                        Tool(report_lost_item, mutates=True,
                             confirm="report a lost {description} on the {line} for {name}")],
                 system_prompt=prompt, name="lost_property",
                 scope="Sorry, I can only help with lost property on Metro Rail trains.",
                 vocabulary=["Metro Rail", "lost property", "reference", "Red Line", "Green Line", "Blue Line",
                             "Central", "Harbour", "Park Street", "Airport", "umbrella", "backpack", "wallet"])


build.greeting = "Metro Rail lost property, how can I help?"
