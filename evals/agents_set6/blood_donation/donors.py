"""Give Blood's Northvale donor line: donation sessions in a town, an appointment booked by donor number (after a
yes), an appointment cancelled by its four-digit number (after a yes). Today is Tuesday, July 7, 2026.

The date, the time and the appointment number are left as plain `str`/docstrings, without a declared kind.

Run it with  voiceloop serve --agent evals/agents_set6/blood_donation/donors.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier

TODAY = dt.date(2026, 7, 7)
Town = Literal["Ashby", "Brampton", "Carlow", "Dunmore"]
# town: [(date, place, first hour, last appointment hour, 24h clock)]
SESSIONS = {
    "Ashby": [(dt.date(2026, 7, 14), "the Town Hall", 13, 19), (dt.date(2026, 7, 23), "the Town Hall", 13, 19)],
    "Brampton": [(dt.date(2026, 7, 11), "the Methodist Church hall", 10, 15)],
    "Carlow": [(dt.date(2026, 7, 15), "Carlow Leisure Centre", 14, 20)],
    "Dunmore": [],
}
NEXT_DUNMORE = "August 4 at St Mary's Church hall"
# donor number: name, the first date they may give again
DONORS = {
    "4471023": ("Helen Marsh", dt.date(2026, 6, 1)),
    "5830117": ("Colin Baptiste", dt.date(2026, 9, 15)),
    "6002348": ("Aisha Karim", dt.date(2026, 5, 20)),
    "7129964": ("Peter Novak", dt.date(2026, 3, 2)),
    "3318850": ("Tom Eze", dt.date(2026, 4, 27)),
}
# appointment number: donor number, town, date, time
APPOINTMENTS = {
    "2204": ("4471023", "Ashby", dt.date(2026, 7, 14), "5 p.m."),
    "2211": ("6002348", "Carlow", dt.date(2026, 7, 15), "3:30 p.m."),
}
FIRST_NEW_APPOINTMENT = 2301
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}
_HOURS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                      "nine", "ten", "eleven", "twelve"))}


def parse_date(value: str) -> dt.date | None:
    """'July 15', 'the fifteenth', '23rd', 'Saturday', 'tomorrow' -> a date; None when unclear."""
    text = str(value).lower().replace("-", " ")
    if "tomorrow" in text:
        return TODAY + dt.timedelta(days=1)
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m[:3]}[a-z]*\b", text)), None)
    day = None
    if found := re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\s*(?:a\.?m|p\.?m|:))", text):
        day = int(found.group(1))
    else:
        words = re.findall(r"[a-z]+", text)
        for i, word in enumerate(words):
            if word in ("twenty", "thirty"):
                nxt = _DAY_WORDS.get(words[i + 1], 0) if i + 1 < len(words) else 0
                day = (20 if word == "twenty" else 30) + (nxt if nxt < 10 else 0)
                break
            if word in _DAY_WORDS:
                day = _DAY_WORDS[word]
                break
    if day is not None:
        try:
            return dt.date(TODAY.year, month or TODAY.month, day)
        except ValueError:
            return None
    weekday = next((i for i, d in enumerate(WEEKDAYS) if d in text), None)
    if weekday is not None:
        return TODAY + dt.timedelta(days=(weekday - TODAY.weekday()) % 7 or 7)
    return None


def parse_time(value: str) -> tuple[int, int] | None:
    """'4', '4 p.m.', 'four o'clock', 'half past five', '17:30' -> (hour on a 24h clock, minutes)."""
    text = str(value).lower().replace(".", "")
    found = re.search(r"\b(\d{1,2})(?::(\d\d))?", text)
    if found:
        hour, minutes = int(found.group(1)), int(found.group(2) or 0)
    else:
        word = next((w for w in re.findall(r"[a-z]+", text) if w in _HOURS), None)
        if word is None:
            return None
        hour, minutes = _HOURS[word], 0
    if "half" in text:
        minutes = 30
    if hour < 12 and ("pm" in text.replace(" ", "") or "afternoon" in text or "evening" in text or hour < 8):
        hour += 12
    return hour, minutes


def _say_time(hour: int, minutes: int) -> str:
    half = "a.m." if hour < 12 else "p.m."
    shown = hour - 12 if hour > 12 else hour
    return f"{shown}:{minutes:02d} {half}" if minutes else f"{shown} {half}"


def _say_date(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def sessions_in(town: Town) -> dict[str, Any]:
    """The blood donation sessions coming up in a town (Ashby, Brampton, Carlow or Dunmore)"""
    found = SESSIONS[town]
    if not found:
        return {"town": town, "note": f"no sessions this month; the next one is {NEXT_DUNMORE}"}
    return {"town": town, "sessions": "; ".join(
        f"{_say_date(day)} at {place}, {_say_time(first, 0)} to {_say_time(last, 0)}"
        for day, place, first, last in found)}


def build(call_id: str = "") -> Agent:
    appointments = dict(APPOINTMENTS)
    made: list[str] = []

    def book_donation(donor_number: Annotated[str, identifier(digits=7)], town: Town, date: str, time: str) -> str:
        """Book an appointment to give blood at a session: the donor's seven-digit donor number, the town, the
        session's date (like July 14) and the appointment time (like 2:30 p.m.)"""
        donor = "".join(ch for ch in str(donor_number) if ch.isdigit())
        if donor not in DONORS:
            return (f"I can't find donor number {donor_number}; it has seven digits and is on your donor card. "
                    "New donors register at giveblood.example.")
        name, may_give = DONORS[donor]
        day = parse_date(date)
        session = next((s for s in SESSIONS[town] if s[0] == day), None)
        if session is None:
            return f"There's no session in {town} on {date}. " + str(sessions_in(town).get("sessions", ""))
        if day < may_give:
            return (f"Sorry {name}, you can't give blood again until {_say_date(may_give)}: it has to be twelve "
                    "weeks since your last donation.")
        at = parse_time(time)
        _, place, first, last = session
        if at is None or not (first, 0) <= at <= (last, 0):
            return (f"The {town} session on {_say_date(day)} takes appointments from {_say_time(first, 0)} to "
                    f"{_say_time(last, 0)}.")
        made.append(donor)
        number = str(FIRST_NEW_APPOINTMENT + len(made) - 1)
        appointments[number] = (donor, town, day, _say_time(*at))
        return (f"Booked: {name}, {_say_date(day)} at {_say_time(*at)}, {place}, {town}. Your appointment number "
                f"is {number}. Drink plenty of water and have something to eat beforehand.")

    def cancel_donation(appointment_number: str) -> str:
        """Cancel an appointment to give blood, by its four-digit appointment number"""
        number = "".join(ch for ch in str(appointment_number) if ch.isdigit())
        if number not in appointments:
            return f"I can't find appointment {appointment_number}; appointment numbers have four digits."
        donor, town, day, at = appointments.pop(number)
        return (f"Cancelled: appointment {number} for {DONORS[donor][0]} in {town} on {_say_date(day)} at {at}. "
                "Thank you for letting us know.")

    prompt = (
        "You answer the phone for Give Blood in the Northvale area. Be warm and clear: one or two short "
        "sentences.\n"
        "Only a tool knows the sessions, the donors and their appointments. Never make up a date, a time or a "
        "number.\n"
        "- the caller asks where or when they can give blood in a town -> sessions_in\n"
        "- the caller wants to book, and has given their seven-digit donor number, the town, the date and the "
        "time -> book_donation\n"
        "- the caller wants to cancel, and gives the four-digit appointment number -> cancel_donation\n"
        "The towns are Ashby, Brampton, Carlow and Dunmore. Today is Tuesday, July 7.\n"
        "If the donor number, the town, the date, the time or the appointment number is missing, ask for it. After "
        "a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: donors must be 17 to 65 and weigh at least 50 kilos; after a "
        "tattoo or a piercing, wait four months before giving blood; men wait twelve weeks and women sixteen weeks "
        "between donations; new donors register online at giveblood.example.\n"
        "You cannot help with anything else: no test results, no blood types, no medical advice; for those, "
        "the caller should speak to their doctor.")
    return Agent(model=ScriptedModel(["I can help you give blood. Which town would suit you?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(sessions_in),
                        Tool(book_donation, mutates=True,
                             confirm="book donor {donor_number} in {town} on {date} at {time}"),
                        Tool(cancel_donation, mutates=True, confirm="cancel appointment {appointment_number}")],
                 system_prompt=prompt, name="blood_donation",
                 scope="Sorry, I can only help with blood donation sessions and appointments.",
                 vocabulary=["Give Blood", "Northvale", "Ashby", "Brampton", "Carlow", "Dunmore", "donor number",
                             "appointment number", "session"],
                 related=[("blood", "donate", "donation", "donating", "give", "donor", "session", "sessions"),
                          ("appointment", "appointments", "book", "booking", "slot", "cancel")])


build.greeting = "Hello, Give Blood Northvale, how can I help?"
