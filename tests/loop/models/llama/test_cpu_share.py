"""A generation's threads: as many as asked while the cores are free, one while other processes hold them
(`loop.models.llama.cpu_share`). Tick readings and the clock are given, so nothing depends on this machine's load."""

from __future__ import annotations

from loop.models.llama.cpu_share import CpuShare, read_ticks


class Machine:
    """Two cores' ticks: each `spend(others, own, s)` advances them as if that many cores were busy for `s`."""

    def __init__(self) -> None:
        self.now, self.busy, self.total, self.own = 0.0, 0, 0, 0

    def spend(self, others: float, own: float, seconds: float = 1.0) -> None:
        self.now += seconds
        self.total += int(2 * 100 * seconds)
        self.busy += int((others + own) * 100 * seconds)
        self.own += int(own * 100 * seconds)

    def read(self) -> tuple[int, int, int]:
        return self.busy, self.total, self.own


def share(machine: Machine) -> CpuShare:
    return CpuShare(cpus=2, read=machine.read, clock=lambda: machine.now)


def test_both_threads_while_only_this_process_works() -> None:
    machine = Machine()
    cpu = share(machine)
    machine.spend(others=0.1, own=1.8)  # its own speech-to-text and voice are no other process's load
    assert cpu.threads(2) == 2


def test_one_thread_while_another_process_holds_a_core() -> None:
    machine = Machine()
    cpu = share(machine)
    machine.spend(others=1.2, own=0.3)  # another call's evaluation, niced or not
    assert cpu.threads(2) == 1 and cpu.threads(1) == 1
    machine.spend(others=0.2, own=0.5)  # it ended: both threads again at the next look
    assert cpu.threads(2) == 2


def test_a_look_too_soon_keeps_the_last_answer() -> None:
    machine = Machine()
    cpu = share(machine)
    machine.spend(others=1.5, own=0.0)
    assert cpu.threads(2) == 1
    machine.spend(others=0.0, own=0.0, seconds=0.1)
    assert cpu.threads(2) == 1


def test_without_proc_the_threads_asked_for() -> None:
    cpu = CpuShare(cpus=2, read=lambda: None)
    assert cpu.threads(2) == 2


def test_this_machine_can_be_read() -> None:
    ticks = read_ticks()
    assert ticks is None or (ticks[1] >= ticks[0] >= 0 and ticks[2] >= 0)
