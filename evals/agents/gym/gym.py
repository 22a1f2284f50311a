"""Peak Fitness's phone line: tomorrow's class times, a membership by its number, freezing a membership (after a yes).

Run it with  voiceloop serve --agent evals/agents/gym/gym.py:build --llm local
"""

from typing import Annotated, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool

GymClass = Literal["yoga", "spin", "pilates", "boxing"]
TOMORROW = {"yoga": ["7 a.m.", "12:30 p.m.", "6 p.m."], "spin": ["6:30 a.m.", "5:30 p.m.", "7:30 p.m."],
            "pilates": ["9:30 a.m.", "7 p.m."], "boxing": ["6 p.m."]}   # tomorrow is Saturday
# member number -> name, plan, monthly fee, status
MEMBERS = {"204817": ("Jordan Lee", "Gold", "$59", "active"), "330962": ("Priya Patel", "Standard", "$39", "active"),
           "418005": ("Sam O'Brien", "Off-peak", "$29", "active"), "551270": ("Grace Kim", "Gold", "$59", "active"),
           "702394": ("Luis Moreno", "Standard", "$39", "frozen until June 1"),
           "880013": ("Hannah Wright", "Student", "$25", "active")}


def class_times(class_name: GymClass) -> str:
    """Tomorrow's times for one class: yoga, spin, pilates or boxing"""
    times = TOMORROW[class_name]
    said = f"{', '.join(times[:-1])} and {times[-1]}" if len(times) > 1 else times[0]
    return f"Tomorrow, Saturday, {class_name} is at {said}".rstrip(".") + "."


def build(call_id: str = "") -> Agent:
    members = {k: list(v) for k, v in MEMBERS.items()}   # each call starts from the same members

    def membership(member_number: str) -> dict[str, str]:
        """A membership's holder, plan, monthly fee and status, by the six-digit member number"""
        number = "".join(ch for ch in str(member_number) if ch.isdigit())
        if number not in members:
            return {"member_number": member_number, "found": False, "note": "member numbers have six digits"}
        name, plan, fee, status = members[number]
        return {"member_number": number, "name": name, "plan": plan, "monthly fee": fee, "status": status}

    def freeze_membership(member_number: str, months: Annotated[int, Field(ge=1, le=3)]) -> str:
        """Freeze a membership for 1 to 3 months: no fees and no visits while it is frozen"""
        number = "".join(ch for ch in str(member_number) if ch.isdigit())
        if number not in members:
            return f"There is no member {member_number}; the member number is on the back of the key tag."
        plural = "month" if months == 1 else "months"
        members[number][3] = f"frozen for {months} {plural}"
        return f"Done: membership {number} for {members[number][0]} is frozen for {months} {plural}, from tomorrow."

    prompt = (
        "You answer the phone for Peak Fitness gym. Sound upbeat and friendly: one or two short sentences.\n"
        "Only a tool knows the class times and the memberships. Never make up a time, a member or a fee.\n"
        "- the caller asks when a class is tomorrow (yoga, spin, pilates or boxing) -> class_times\n"
        "- the caller asks about their membership, plan or fee and gives the six-digit member number -> membership\n"
        "- the caller wants to freeze or pause their membership and gives the member number and 1, 2 or 3 months "
        "-> freeze_membership\n"
        "A membership can be frozen for 1 to 3 months only. If the member number, the class or the number of months "
        "is missing, ask for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: the gym is open 6 a.m. to 10 p.m. every day; classes are booked in "
        "the Peak Fitness app.")
    return Agent(model=ScriptedModel(["Sure, which class are you asking about?"]), config=LoopConfig.profile("voice"),
                 tools=[Tool(class_times), Tool(membership),
                        Tool(freeze_membership, mutates=True,
                             confirm="freeze membership {member_number} for {months} months")],
                 system_prompt=prompt, name="gym",
                 scope="Sorry, I can only help with class times and freezing or checking a membership.",
                 vocabulary=["Peak Fitness", "member number", "membership", "freeze", "pause", "yoga", "spin",
                             "pilates", "boxing", "class", "Gold", "off-peak"])


build.greeting = "Peak Fitness, how can I help you today?"   # not in the README: found by trial
