"""Hillside Primary School's office line: report a child absent today, and the next parents' evening for a class.

    voiceloop serve --agent evals/agents/school_office/school_office.py:build --llm local \
        --greeting "Hillside Primary School office, good morning."
"""

from __future__ import annotations

from typing import Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool

GREETING = "Hillside Primary School office, good morning."  # an Agent takes no greeting: pass it with --greeting
ClassName = Literal["1A", "1B", "2A", "2B", "3A", "3B", "4A", "4B", "5A", "5B", "6A", "6B"]
# first name, last name, class
PUPILS = [("Oliver", "Bennett", "4B"), ("Amira", "Hassan", "4B"), ("Jack", "Thompson", "2A"),
          ("Sophie", "Clarke", "6B"), ("Leo", "Martins", "3A"), ("Chloe", "Evans", "5A"),
          ("Noah", "Williams", "1B"), ("Ella", "Ward", "4A")]
# year group -> the next parents' evening
EVENINGS = {"1": "Monday, May 18, from 3:30 to 6:30 p.m.", "2": "Tuesday, May 19, from 3:30 to 6:30 p.m.",
            "3": "Thursday, May 28, from 4 to 7 p.m.", "4": "Thursday, May 21, from 4 to 7 p.m.",
            "6": "Wednesday, June 3, from 4 to 7 p.m."}
PROMPT = """You answer the phone in the office of Hillside Primary School. Be kind and brief: one or two sentences.
Only the tools know the pupils, absences and parents' evenings. Never guess a date or a class.
- a parent says their child is off today, with the child's first and last name, class and reason -> report_absence
- a parent asks when the next parents' evening is for a class -> next_parents_evening
A class is a year from 1 to 6 and a letter, like 4B. If the name, the class or the reason is missing, ask for it.
After a tool result, tell the caller what it says.
What you may tell callers without a tool: the school day runs from 8:45 a.m. to 3:15 p.m., and the office is
open from 8 a.m. to 4 p.m. You cannot help with anything else: no lunch menus, term dates, clubs or fees."""


def build(call_id: str) -> Agent:
    absent: dict[tuple[str, str], str] = {}  # (first, last) -> reason, today, in this call

    def report_absence(first_name: str, last_name: str, class_name: ClassName, reason: str) -> str:
        """Mark a child absent today: the child's first and last name, their class (like 4B) and the reason"""
        for first, last, form in PUPILS:
            if (first.lower(), last.lower()) == (first_name.strip().lower(), last_name.strip().lower()):
                if form != class_name:
                    return f"{first} {last} is in class {form}, not {class_name}; nothing is recorded yet."
                absent[(first, last)] = reason
                return f"Done: {first} {last} in {form} is marked absent today ({reason}). Thank you for telling us."
        return f"There is no pupil called {first_name} {last_name} in class {class_name}; nothing is recorded."

    def next_parents_evening(class_name: ClassName) -> str:
        """The date and time of the next parents' evening for a class, like 4B"""
        when = EVENINGS.get(class_name[0])
        if when is None:
            return f"The next parents' evening for {class_name} hasn't been set yet; it will be in the June newsletter."
        return f"The next parents' evening for {class_name} is on {when}, in the school hall."

    tools = [Tool(next_parents_evening),
             Tool(report_absence, mutates=True,
                  confirm="mark {first_name} {last_name} in {class_name} absent today because of {reason}")]
    return Agent(model=ScriptedModel(["I can help with that. What's your child's name and class?"]),
                 name="school_office", config=LoopConfig.profile("voice"), tools=tools, system_prompt=PROMPT,
                 scope="Sorry, I can only take absences and tell you about parents' evenings on this line.",
                 vocabulary=["Hillside Primary", "absent", "off sick", "parents' evening", "class", "year",
                             *sorted({n for pupil in PUPILS for n in pupil[:2]})])
