"""Riverside Leisure Centre's swimming lessons desk as plain functions: which classes have spaces for a stage, a
child enrolled in a class (after a yes), a child withdrawn by the five-digit enrolment number (after a yes).

Lessons run weekly through the autumn term, from Monday, September 14, 2026. The classes and enrolments live in
memory at module level (plain functions get no data_dir), so what calls write is kept beside them.
"""

from __future__ import annotations

from typing import Any, Literal

Stage = Literal["stage 1", "stage 2", "stage 3", "stage 4", "stage 5", "adult"]
Day = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
Time = Literal["9 a.m.", "10 a.m.", "4 p.m.", "4:30 p.m.", "5 p.m.", "7 p.m."]
AGES = {"stage 1": (4, 7), "stage 2": (5, 9), "stage 3": (6, 11), "stage 4": (7, 14), "stage 5": (8, 15),
        "adult": (16, 99)}
# (day, time): stage, places, places taken
CLASSES: dict[tuple[str, str], list[Any]] = {
    ("Monday", "4 p.m."): ["stage 1", 8, 6],
    ("Monday", "4:30 p.m."): ["stage 2", 10, 10],
    ("Monday", "5 p.m."): ["stage 3", 10, 9],
    ("Tuesday", "7 p.m."): ["adult", 12, 8],
    ("Wednesday", "4 p.m."): ["stage 2", 10, 7],
    ("Wednesday", "4:30 p.m."): ["stage 3", 10, 10],
    ("Wednesday", "5 p.m."): ["stage 4", 12, 10],
    ("Thursday", "5 p.m."): ["stage 5", 12, 10],
    ("Saturday", "9 a.m."): ["stage 1", 8, 8],
    ("Saturday", "10 a.m."): ["stage 2", 10, 9],
}
# enrolment number: child, stage, day, time
ENROLMENTS = {
    "30412": ("Maisie Carter", "stage 2", "Wednesday", "4 p.m."),
    "30418": ("Leo Marsh", "stage 3", "Monday", "5 p.m."),
    "30425": ("Amara Obi", "stage 1", "Saturday", "9 a.m."),
}
WITHDRAWN: list[str] = []
FIRST_NEW_ENROLMENT = 30501


def classes_with_spaces(stage: Stage) -> dict[str, Any]:
    """Which weekly swimming classes for a stage (stage 1 to stage 5, or adult) have spaces this term"""
    free = [f"{day} at {time}, {places - taken} left" for (day, time), (s, places, taken) in CLASSES.items()
            if s == stage and taken < places]
    full = [f"{day} at {time}" for (day, time), (s, places, taken) in CLASSES.items()
            if s == stage and taken >= places]
    said: dict[str, Any] = {"stage": stage}
    if free:
        said["spaces"] = "; ".join(free)
    else:
        said["note"] = f"every {stage} class is full this term; we can add you to the waiting list at reception"
    if full:
        said["full"] = ", ".join(full)
    return said


def enrol(child_name: str, age: int, stage: Stage, day: Day, time: Time) -> str:
    """Enrol a swimmer in a weekly class for the term: the swimmer's name, their age, the stage, the day and the
    time of the class"""
    lesson = CLASSES.get((day, time))
    if lesson is None or lesson[0] != stage:
        times = [f"{d} at {t}" for (d, t), (s, _, _) in CLASSES.items() if s == stage]
        return f"There's no {stage} class on {day} at {time}. {stage.capitalize()} is on {', '.join(times)}."
    low, high = AGES[stage]
    if not low <= age <= high:
        return f"{stage.capitalize()} is for ages {low} to {high}; the instructor at the pool can suggest a stage."
    if lesson[2] >= lesson[1]:
        return f"Sorry, the {stage} class on {day} at {time} is full; we can add {child_name} to the waiting list."
    lesson[2] += 1
    number = str(FIRST_NEW_ENROLMENT + len(ENROLMENTS) - 3)
    ENROLMENTS[number] = (child_name, stage, day, time)
    return (f"Enrolled: {child_name} in {stage} on {day}s at {time}, starting this week. The enrolment number is "
            f"{number}, and the term's fee is paid at reception before the first lesson.")


def withdraw(enrolment_number: str) -> str:
    """Take a swimmer out of their class, by the five-digit enrolment number"""
    number = "".join(ch for ch in str(enrolment_number) if ch.isdigit())
    if number not in ENROLMENTS or number in WITHDRAWN:
        return f"I can't find enrolment {enrolment_number}; enrolment numbers have five digits."
    child, stage, day, time = ENROLMENTS[number]
    WITHDRAWN.append(number)
    CLASSES[(day, time)][2] -= 1
    return (f"Withdrawn: {child} from {stage} on {day}s at {time}; the lessons left this term are refunded to the "
            f"card you paid with.")
