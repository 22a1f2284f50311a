"""The approval dialog on answers written by outside hands (tests/data/approval_sets/README.md): on both the
development set and the held-out test set, nothing but a clear yes approves, and clear yeses are not refused."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.paths import ROOT

_SCRIPT = ROOT / "scripts" / "approval_sets.py"
_spec = importlib.util.spec_from_file_location("approval_sets", _SCRIPT)
assert _spec is not None and _spec.loader is not None
approval_sets = sys.modules["approval_sets"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(approval_sets)

# First-ask floors as measured when the sets were added (dev 87.9 %, test 78.9 %, fresh 80.5 %): a yes with a
# word the grammar cannot account for is asked again, narrower, never approved
FIRST_ASK = {"dev": 0.85, "test": 0.75, "fresh": 0.75}
# Spanish (loop/locale/es/), written by other hands for eighteen other kinds of write: es_dev 88.3 %, es_test
# 75.0 %, es_fresh 75.4 %
FIRST_ASK_ES = {"es_dev": 0.85, "es_test": 0.70, "es_fresh": 0.70}


@pytest.mark.parametrize("name", sorted(FIRST_ASK) + sorted(FIRST_ASK_ES))
def test_nothing_but_a_clear_yes_approves_and_no_clear_yes_is_refused(name: str) -> None:
    counts, wrong = approval_sets.read(name)
    read = {key: n for key, n in counts.items() if key[1] != "second"}  # "second": approved when asked again
    assert sum(read.values()) >= (380 if name in FIRST_ASK_ES else 600) and len({k for k, _ in read}) == 10
    assert wrong == []
    yes = sum(n for (kind, _), n in read.items() if kind == "yes")
    assert counts[("yes", "approved")] >= {**FIRST_ASK, **FIRST_ASK_ES}[name] * yes
    # asked again ("Please say yes or no."), a caller who says "Yes." is approved: 95.0-98.9 % within two asks
    assert counts[("yes", "approved")] + counts[("yes", "second")] >= 0.93 * yes
    # es_fresh read two as a refusal ("Sí, por favor, que el 5 no me alcanza nunca.": a "no" inside the reason)
    assert counts[("yes", "refused")] <= (0.02 if name in FIRST_ASK_ES else 0.01) * yes


def test_the_sets_cover_ten_kinds_of_write_between_them() -> None:
    kinds = {w for name in FIRST_ASK for w in approval_sets.load(name)[0]}
    assert len(kinds) >= 18
