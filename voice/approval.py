"""Spoken approval: phrase the question, and read a caller's yes or no robustly."""

from __future__ import annotations

import re
from enum import StrEnum

from loop import ToolCall


class Answer(StrEnum):
    YES = "yes"
    NO = "no"
    UNCLEAR = "unclear"


_NO = re.compile(r"\b(no|nope|nah|don'?t|do not|stop|cancel|never ?mind|wait|hold on|not now|negative)\b")
_YES = re.compile(
    r"\b(yes|yeah|yep|yup|sure|ok|okay|go ahead|do it|please do|confirm(ed)?|correct|"
    r"right|absolutely|of course|affirmative|sounds good)\b"
)


def classify_answer(text: str) -> Answer:
    """A "no" anywhere wins over a "yes" ("yes, no wait" is a no): declining is the safe error."""
    words = re.sub(r"[^a-z' ]+", " ", text.lower())
    if _NO.search(words):
        return Answer.NO
    if _YES.search(words):
        return Answer.YES
    return Answer.UNCLEAR


def confirmation_question(call: ToolCall) -> str:
    """One sentence naming the action and its identifying arguments, e.g. the order and the amount."""
    action = call.name.replace("_", " ")
    details = []
    for key, value in call.arguments.items():
        if key == "amount" and isinstance(value, (int, float)):
            details.append(f"${value:g}")
        else:
            details.append(f"{key.replace('_', ' ')} {value}")
    tail = f" with {', '.join(details)}" if details else ""
    return f"Shall I {action}{tail}? Please say yes or no."
