"""Greenlight Driving School's diary: free lessons by instructor and day, bookings, cancellations by lesson number.

The diary lives in memory and is seeded afresh each time the toolset is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from loop import Tool
from loop.kinds import identifier, person_name

Instructor = Literal["Maggie", "Dev", "Colin"]
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
LessonTime = Literal["9 a.m.", "11 a.m.", "1 p.m.", "3 p.m.", "5 p.m."]
TIMES: tuple[str, ...] = ("9 a.m.", "11 a.m.", "1 p.m.", "3 p.m.", "5 p.m.")

# lesson number: (learner, instructor, day, time)
LESSONS = {
    "20417": ("Aisha Khan", "Maggie", "tuesday", "9 a.m."),
    "20426": ("Priya Nair", "Maggie", "tuesday", "11 a.m."),
    "20433": ("Ben Carter", "Dev", "wednesday", "3 p.m."),
    "20458": ("Chloe Evans", "Colin", "thursday", "11 a.m."),
    "20461": ("Aisha Khan", "Maggie", "thursday", "5 p.m."),
    "20470": ("Leon Price", "Colin", "friday", "1 p.m."),
}
# Dev is fully booked on Saturday
for _n, _t in enumerate(TIMES):
    LESSONS[f"2049{_n}"] = ("Saturday learner", "Dev", "saturday", _t)
FIRST_NEW = 30501


def _times(times: list[str]) -> str:
    return f"{', '.join(times[:-1])} and {times[-1]}" if len(times) > 1 else times[0]


class Diary:
    """The instructors' diary; the tools are its methods."""

    def __init__(self) -> None:
        self.lessons = dict(LESSONS)
        self.next_number = FIRST_NEW

    def _taken(self, instructor: str, day: str) -> set[str]:
        return {t for _, i, d, t in self.lessons.values() if i == instructor and d == day}

    def free_lessons(self, instructor: Instructor, day: Day) -> str:
        """An instructor's free lesson times on a day of the week"""
        day = day.lower()
        if day == "sunday":
            return "There are no lessons on Sunday; lessons are Monday to Saturday."
        free = [t for t in TIMES if t not in self._taken(instructor, day)]
        if not free:
            return f"{instructor} is fully booked on {day.title()}."
        return f"{instructor} has free lessons on {day.title()} at {_times(free)}"

    def book_lesson(self, learner_name: Annotated[str, person_name()], instructor: Instructor, day: Day,
                    time: LessonTime) -> str:
        """Book a one-hour driving lesson for a learner with an instructor on a day at a time"""
        day = day.lower()
        if day == "sunday":
            return "There are no lessons on Sunday; lessons are Monday to Saturday."
        if time in self._taken(instructor, day):
            free = [t for t in TIMES if t not in self._taken(instructor, day)]
            also = f" {instructor} is free then at {_times(free)}." if free else f" {instructor} is fully booked then."
            return f"Sorry, {instructor} already has a lesson on {day.title()} at {time}".rstrip(".") + f".{also}"
        number, self.next_number = str(self.next_number), self.next_number + 1
        self.lessons[number] = (learner_name, instructor, day, time)
        done = f"Booked: {learner_name} has a lesson with {instructor} on {day.title()} at {time}"
        return done.rstrip(".") + f". The lesson number is {number}."

    def cancel_lesson(self, lesson_number: Annotated[str, identifier(digits=5)]) -> str:
        """Cancel a driving lesson by its five-digit lesson number"""
        number = "".join(ch for ch in str(lesson_number) if ch.isdigit())
        if number not in self.lessons:
            return f"I can't find lesson {lesson_number}; the lesson number is in the booking text message."
        learner, instructor, day, time = self.lessons.pop(number)
        return f"Cancelled: {learner}'s lesson with {instructor} on {day.title()} at {time}".rstrip(".") + "."

    def tools(self) -> list[Tool]:
        return [Tool(self.free_lessons),
                Tool(self.book_lesson, mutates=True,
                     confirm="book a lesson for {learner_name} with {instructor} on {day} at {time}"),
                Tool(self.cancel_lesson, mutates=True, reversible=False, confirm="cancel lesson {lesson_number}")]


def open_diary(data_dir: str | Path) -> Diary:
    """The agent file's `toolset`: the diary, seeded in memory."""
    return Diary()
