"""The deadline and cap bookkeeping behind the lock-out cases, on a virtual clock: which deadline closes a
connection, with which code, and how per-source counts move as sockets start calls and close."""

from __future__ import annotations

import pytest

from voice.hosting.admission import MADE_ROOM, Admission, Refused, Ticket, oldest_of_busiest
from voice.hosting.config import ServerConfig
from voice.transports import CloseCode, Drop
from voice.transports.watch import RealTimeBudget, Watch

CFG = ServerConfig(start_timeout_s=2, media_timeout_s=3, idle_timeout_s=10, max_call_s=60,
                   max_pending_sockets=3, max_pending_per_source=2, max_calls_per_source=1)


def expired(watch: Watch, now: float, busy: bool = False) -> tuple[int, str] | None:
    try:
        watch.check(now, busy)
    except Drop as drop:
        return drop.code, drop.reason
    return None


def test_no_start_no_audio_idle_and_too_long_each_close_the_connection() -> None:
    watch = Watch(CFG, now=0.0, waiting_for="'start'")
    assert expired(watch, 1.9) is None
    assert expired(watch, 2.1) == (CloseCode.POLICY_VIOLATION, "no 'start' within 2 s")
    watch = Watch(CFG, now=0.0)
    watch.opened_call(1.0)
    watch.media(3.5)
    assert expired(watch, 6.4) is None
    assert expired(watch, 6.6) == (CloseCode.POLICY_VIOLATION, "no audio from the client for 3 s")
    for t in range(2, 30):  # audio keeps coming; the call has something going on until t=19
        watch.media(float(t))
        assert expired(watch, float(t), busy=t <= 19) is None
    watch.media(30.0)
    assert expired(watch, 30.5) == (CloseCode.NORMAL, "no caller speech for 10 s")  # idle since t=19
    watch = Watch(CFG, now=0.0)
    watch.opened_call(0.0)
    for t in range(1, 61):
        watch.media(float(t))
        watch.check(float(t), busy=True)
    assert expired(watch, 61.0, busy=True) == (CloseCode.NORMAL, "call longer than 60 s")


def test_per_source_caps_and_release() -> None:
    admission = Admission()
    a1, a2 = admission.open_socket("a", CFG), admission.open_socket("a", CFG)
    with pytest.raises(Refused, match="from your address"):
        admission.open_socket("a", CFG)
    b1 = admission.open_socket("b", CFG)
    with pytest.raises(Refused, match="waiting to start"):
        admission.open_socket("c", CFG)  # three pending server-wide, none of them can be made to leave
    a1.promote(CFG)
    with pytest.raises(Refused, match="too many calls from your address"):
        a2.promote(CFG)
    a2.promote(CFG, per_source=False)  # a stream vouched for by a signed webhook is not counted
    assert dict(admission.pending) == {"b": 1} and dict(admission.calls) == {"a": 1}
    for ticket in (a1, a2, b1, a1):  # releasing twice is harmless
        ticket.release()
    assert not admission.pending and not admission.calls


def test_a_full_table_of_sockets_yet_to_start_closes_the_oldest_of_the_busiest_address() -> None:
    cfg = ServerConfig(max_pending_sockets=6, max_pending_per_source=4)
    admission, closed = Admission(), []

    def socket_from(source: str) -> Ticket:
        ticket = admission.open_socket(source, cfg, evict=lambda reason: closed.append((held.index(ticket), reason)))
        held.append(ticket)
        return ticket

    held: list[Ticket] = []
    for source in "aaabbb":  # the table is full: a flood from two addresses
        socket_from(source)
    caller = socket_from("c")  # a caller from a third address gets in: a's oldest (the first socket) makes room
    assert closed == [(0, MADE_ROOM)] and held[0].state == "released"
    socket_from("a")  # now b holds the most: its oldest goes
    assert [i for i, _ in closed] == [0, 3] and dict(admission.pending) == {"a": 3, "b": 2, "c": 1}
    for _ in range(20):  # the flood goes on, from both addresses: it only ever churns its own sockets
        socket_from("a")
        socket_from("b")
    assert caller.state == "pending" and sum(admission.pending.values()) == 6
    caller.promote(cfg)  # its call starts
    assert caller.state == "call" and caller not in admission.waiting


def test_oldest_of_busiest_breaks_ties_by_age() -> None:
    assert oldest_of_busiest([]) is None
    assert oldest_of_busiest([("a", 5, "a5"), ("b", 1, "b1"), ("a", 3, "a3"), ("b", 4, "b4")]) == "b1"
    assert oldest_of_busiest([("a", 5, "a5"), ("b", 1, "b1"), ("a", 3, "a3")]) == "a3"


def test_the_real_time_budget_admits_the_slack_then_the_clock() -> None:
    budget = RealTimeBudget(started=0.0, slack_s=1.0)
    assert budget.admit(16000, now=0.0) and not budget.admit(1, now=0.0)
    assert budget.room(0.5) == 8000 and budget.admit(8000, now=0.5) and not budget.admit(1, now=0.5)
