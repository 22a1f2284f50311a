"""A count's value of four digits or more is read when no identifier of the tool can be it: the tool's identifiers
declare their length, so every number the caller said is accounted for by the argument whose shape it fits. Written
for a gas meter line (the failure was a water company's dev call, "Account 55038810, and the reading is 1345")."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from loop import Tool
from loop.grounding.arguments import ground
from loop.kinds import count, identifier
from loop.types import Message

Customer = Annotated[str, identifier(digits=8)]
AnyCustomer = Annotated[str, identifier()]
Units = Annotated[int, count(), Field(ge=0, le=99999)]


def send_reading(customer_number: Customer, units: Units) -> str:
    """Send a gas meter reading, in units, for a customer"""


def send_any_reading(customer_number: AnyCustomer, units: Units) -> str:
    """Send a gas meter reading, in units, for a customer"""


def _meter(declared: bool = True) -> list[dict]:
    return [Tool(send_reading if declared else send_any_reading, mutates=True).openai_schema()]


def _units(said: str, declared: bool = True) -> list:
    grounded, _ = ground(_meter(declared), [Message("user", said)])
    return grounded[0]["function"]["parameters"]["properties"]["units"]["enum"] if grounded else []


def test_a_number_no_identifier_can_be_is_the_counts() -> None:
    assert _units("Customer number 44029187, the meter says 20417.") == [20417]
    assert _units("It's 20417 on the meter, customer 44029187.") == [20417]


def test_a_number_an_identifier_holds_or_could_hold_is_not_a_count() -> None:
    assert _units("Customer number 44029187.") == []  # the only number is the customer's
    assert _units("Customer 4402 9187.") == []  # the number's pieces are the id's
    assert _units("Customer 44029187, reading 12345678.") == []  # eight digits: an id's length (and past the bound)
    assert _units("Customer 44029187, reading 123456.") == []  # past the count's bound


def test_without_a_declared_length_a_bare_number_still_names_something() -> None:
    assert _units("Customer number 44029187, the meter says 20417.", declared=False) == []


def test_a_changed_reading_is_the_counts_new_value() -> None:
    """"Sorry, I read that wrong, it's 20471." to the reading put to the caller: the same call with the new units."""
    from loop.grounding._change import changed_call
    from loop.types import ModelRequest, ToolCall

    call = ToolCall("send_reading", {"customer_number": "44029187", "units": 20417}, "c1")
    change = "Sorry, I read that wrong, it's 20471."
    messages = [Message("user", "Customer 44029187, the meter says 20417."), Message("assistant", "", [call]),
                Message("tool", f"send_reading was not approved (the caller asked for a change: {change!r}). "
                                "It was not done.", tool_call_id="c1"), Message("user", change)]
    changed = changed_call(ModelRequest(messages, _meter(), 96, writes=frozenset({"send_reading"})))
    assert changed is not None and changed.arguments == {"customer_number": "44029187", "units": 20471}


def test_pieces_of_digits_join_to_the_declared_length() -> None:
    """Whisper writes a dictated id in pieces ("account 5 5038 810"); the argument's declared length says where it
    starts and ends. A digit's homophone between pieces is that digit only with three real digits about it."""
    from loop.grounding._pieces import joined_to_length

    assert joined_to_length("account 5 5038 810, and the reading is 1345.", 8) == ["55038810"]
    assert joined_to_length("It's 48 to 1.", 4) == ["4821"]
    assert joined_to_length("I want 2 for 3 people.", 3) == []
    assert joined_to_length("12 34. And 5", 5) == []  # never across sentences
    assert _units("Customer 4 4029 187, the meter says 20417.") == [20417]


def test_a_reference_dictated_across_two_turns_is_one() -> None:
    """"The job reference is K, four oh..." then, asked again, "...213.": speech-to-text's ellipses say the first
    turn was cut and the second is its rest; a reference of a letter and five digits (as declared)
    is K40213, its letter said alone and its digits in words and figures. Without the ellipses, two answers."""

    def visit_status(job_reference: Annotated[str, identifier(letters=1, digits=5)]) -> str:
        """How a call-out is going, by its job reference"""

    tool = Tool(visit_status).openai_schema()
    ask = "Could you tell me the job reference, a letter and five digits?"

    def heard(first: str, second: str) -> list:
        messages = [Message("user", "Where's my locksmith?"), Message("assistant", ask), Message("user", first),
                    Message("assistant", f"Sorry, I didn't catch that. {ask}"), Message("user", second)]
        grounded, _ = ground([tool], messages)
        return grounded[0]["function"]["parameters"]["properties"]["job_reference"]["enum"] if grounded else []

    assert heard("The job reference is K, four oh...", "...213.") == ["K40213"]
    assert heard("The job reference is K, four oh.", "213.") == []
    assert heard("It's K 40213.", "Yes.") == ["K40213"]
