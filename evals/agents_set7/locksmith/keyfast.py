"""KeyFast Locksmiths' phone line: a call-out price for a kind of job, a locksmith's visit booked (after a yes),
where a visit is by its job reference (a letter and five digits, K40213), and a visit cancelled (after a yes).
Today is Monday, September 14, 2026; it is 11 a.m.

Run it with  voiceloop serve --agent evals/agents_set7/locksmith/keyfast.py:build --llm local
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import address, free_text, identifier, person_name, when

Job = Literal["locked out", "lock change", "broken key", "door repair"]
JobReference = Annotated[str, identifier(letters=1, digits=5)]
# job: daytime price (8 a.m. to 6 p.m.), evening and night price, what it covers
PRICES = {"locked out": (75, 110, "getting you back in, usually without damaging the lock"),
          "lock change": (95, 130, "fitting, plus the new lock from 25 pounds"),
          "broken key": (65, 95, "taking the broken key out of the lock"),
          "door repair": (85, 120, "an hour's work on a uPVC or wooden door, plus parts")}
# job reference: customer, job, address, when, status
VISITS = {
    "K40213": ("Tom Briggs", "locked out", "23 Fern Street", "today, as soon as possible",
               "Dave is on his way and should be there at about 11:40 a.m."),
    "K40220": ("Linda Shaw", "lock change", "6 Bridge Terrace", "Wednesday at 10 a.m.",
               "booked with Priya for Wednesday at 10 a.m."),
    "K40231": ("Carl Dobbs", "broken key", "71 Hawthorn Drive", "this morning", "done this morning and paid"),
}
FIRST_NEW_JOB = 40301


def reference_key(value: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(value).upper())


def callout_price(job: Job) -> str:
    """What a locksmith's call-out costs for a kind of job: locked out, lock change, broken key or door repair"""
    day, evening, covers = PRICES[job]
    return (f"For {job} jobs, it's £{day} between 8 a.m. and 6 p.m., and £{evening} in the evening or at night. That "
            f"covers {covers}.")


def build(call_id: str = "") -> Agent:
    visits = dict(VISITS)
    cancelled: list[str] = []

    def visit_status(job_reference: JobReference) -> dict[str, Any]:
        """Where a locksmith's visit is, by its job reference: a letter and five digits, like K40213"""
        key = reference_key(job_reference)
        if key not in visits or key in cancelled:
            return {"found": False, "note": f"no job {job_reference}; job references are K and five digits"}
        name, job, where, _at, status = visits[key]
        return {"job": key, "name": name, "work": job, "address": where, "status": status}

    def book_visit(name: Annotated[str, person_name()], address: Annotated[str, address()], job: Job,
                   arrival: Annotated[str, when()] = "as soon as possible",
                   note: Annotated[str, free_text()] = "") -> str:
        """Book a locksmith to come out: the customer's name, the address, the kind of job, when (as soon as
        possible unless the caller gives a day or time) and an optional note about the door or lock"""
        urgent = "soon" in arrival.lower() or arrival.lower() in ("now", "today")
        key = f"K{FIRST_NEW_JOB + len(visits) - len(VISITS)}"
        visits[key] = (name, job, address, arrival, "booked")
        when_said = "within the hour" if urgent else arrival
        said = f"Booked: a locksmith for {name} at {address}, {job}, {when_said}".rstrip(".") + "."
        if note:
            said += f" I've noted: {note}".rstrip(".") + "."
        return said + f" Your job reference is {key}; the locksmith will ring ten minutes before arriving."

    def cancel_visit(job_reference: JobReference) -> str:
        """Cancel a locksmith's visit by its job reference"""
        key = reference_key(job_reference)
        if key not in visits or key in cancelled:
            return f"I can't find a job {job_reference}; job references are K and five digits."
        name, job, where, _at, status = visits[key]
        if status.startswith("done"):
            return f"Job {key} is already done, so there's nothing to cancel."
        cancelled.append(key)
        return f"Cancelled: the {job} visit to {where} for {name}. There's no charge."

    prompt = (
        "You answer the phone for KeyFast Locksmiths, a 24-hour locksmith. Be calm, kind and brief: one or two short "
        "sentences.\n"
        "Only a tool knows prices and visits. Never make up a price, a time or a job reference.\n"
        "- the caller asks what it costs, for being locked out, a lock change, a broken key or a door repair "
        "-> callout_price\n"
        "- the caller wants a locksmith to come, and has given their name, the address and the kind of job "
        "-> book_visit (if they give no day or time, it is as soon as possible)\n"
        "- the caller asks where their locksmith is or about their job, and gives the job reference -> "
        "visit_status\n"
        "- the caller wants to cancel a visit and gives the job reference -> cancel_visit\n"
        "Job references are the letter K and five digits, like K40213. Today is Monday, September 14; it is 11 in "
        "the morning.\n"
        "If the name, the address, the kind of job or the job reference is missing, ask for it. After a tool result, "
        "tell the caller what it says.\n"
        "What you may tell callers without a tool: the locksmith will ask for proof that you live there, such as a "
        "bill or a driving licence with the address; if someone is breaking in right now, hang up and call the "
        "police on 999; we don't open cars or safes.\n"
        "You cannot help with anything else: no alarms, no CCTV, no key cutting by post.")
    return Agent(model=ScriptedModel(["I can help. Are you locked out, or do you need a lock changed?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(callout_price), Tool(visit_status),
                        Tool(book_visit, mutates=True, confirm="send a locksmith to {address} for {name}: {job}, "
                                                               "{arrival}"),
                        Tool(cancel_visit, mutates=True, confirm="cancel job {job_reference}")],
                 system_prompt=prompt, name="locksmith",
                 scope="Sorry, I can only help with locksmith call-outs here.",
                 vocabulary=["KeyFast", "locksmith", "locked out", "lock change", "job reference", "uPVC",
                             "Fern Street", "Bridge Terrace", "Hawthorn Drive"],
                 related=[("lock", "locks", "locked", "key", "keys", "door", "locksmith", "barrel", "handle",
                           "deadlock", "yale"),
                          ("come out", "call out", "callout", "visit", "send someone", "someone", "engineer")])


build.greeting = "KeyFast Locksmiths, hello. How can I help?"
