"""The Regent Cinema's phone line: tonight's showtimes for a film, and seat bookings.

    voiceloop serve --agent evals/agents/cinema/cinema.py:build --llm local \
        --greeting "Good evening, the Regent Cinema, how can I help?"
"""

from __future__ import annotations

from typing import Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool

GREETING = "Good evening, the Regent Cinema, how can I help?"  # an Agent takes no greeting: pass it with --greeting
Film = Literal["The Long Tide", "Paper Moons", "Starfall", "Maggie's Garden", "Iron Harbour", "The Quiet Hour"]
Showtime = Literal["5 p.m.", "5:30 p.m.", "6 p.m.", "6:15 p.m.", "7 p.m.", "7:30 p.m.", "8 p.m.", "8:30 p.m.",
                   "8:45 p.m.", "9:15 p.m.", "9:30 p.m."]
PRICE = 12  # dollars a seat
# film: {showtime tonight: seats left}
TONIGHT = {"The Long Tide": {"6 p.m.": 40, "8:45 p.m.": 12},
           "Paper Moons": {"5:30 p.m.": 60, "8 p.m.": 3},
           "Starfall": {"6:15 p.m.": 25, "7:30 p.m.": 0, "9:30 p.m.": 50},
           "Maggie's Garden": {"5 p.m.": 30},
           "Iron Harbour": {"7 p.m.": 18, "9:15 p.m.": 44},
           "The Quiet Hour": {"8:30 p.m.": 20}}
PROMPT = f"""You answer the phone at the Regent Cinema. Be cheerful and brief: one or two short sentences.
Tonight's films are {', '.join(TONIGHT)}. Only the tools know the showtimes, the seats left and bookings.
Never make up a showtime, a film or a number of seats.
- the caller asks when a film is on tonight, or whether there are seats -> showtimes
- the caller wants seats and has given the film, the showtime, how many seats and a name -> book_seats
If the film, the showtime, the number of seats or the name is missing, ask for it.
After a tool result, tell the caller what it says.
What you may tell callers without a tool: tickets are ${PRICE} a seat, paid when you collect them at the box office,
which opens 30 minutes before the first film.
You cannot help with anything else: no running times, age ratings, films on other days, food or parking."""


def build(call_id: str) -> Agent:
    seats_left = {film: dict(times) for film, times in TONIGHT.items()}  # this call's own copy
    next_ref = [4101]

    def showtimes(film: Film) -> dict[str, str]:
        """Tonight's showtimes for a film, with the seats left at each"""
        return {time: (f"{left} seats left" if left else "sold out") for time, left in seats_left[film].items()}

    def book_seats(film: Film, showtime: Showtime, seats: int, name: str) -> str:
        """Book seats for a film at one of tonight's showtimes, under the caller's name"""
        if showtime not in seats_left[film]:
            return f"{film} isn't showing at {showtime} tonight; it's on at " + " and ".join(seats_left[film])
        left = seats_left[film][showtime]
        if seats < 1 or seats > left:
            return f"Sorry, only {left} seats are left at {showtime} for {film}." if left else \
                f"{film} at {showtime} is sold out."
        seats_left[film][showtime] -= seats
        next_ref[0] += 1
        return (f"Done: {seats} seats for {film} at {showtime} tonight, under {name}, booking reference "
                f"{next_ref[0]}; ${seats * PRICE} to pay at the box office.")

    tools = [Tool(showtimes), Tool(book_seats, mutates=True,
                                   confirm="book {seats} seats for {film} at {showtime} under the name {name}")]
    return Agent(model=ScriptedModel(["Which film would you like to see tonight?"]), name="cinema",
                 config=LoopConfig.profile("voice"), tools=tools, system_prompt=PROMPT,
                 scope="Sorry, I can only help with tonight's showtimes and seat bookings.",
                 vocabulary=["Regent Cinema", "showtimes", "tickets", "seats", "box office", "tonight", *TONIGHT])
