"""How the approval dialog reads the held-out answer sets (tests/data/approval_sets/): per class, how many
approve, how many are read as a refusal, and every false approval.
`python scripts/approval_sets.py [dev|test|fresh|es_dev|es_test]`."""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from loop import Tool, ToolCall, locale
from voice.call.answers import Answer
from voice.call.approval_dialog import ApprovalDialog

SETS = Path(__file__).resolve().parent.parent / "tests" / "data" / "approval_sets"
OTHER_TOOLS = ("lookup_order", "transfer_to_human", "update_contact_details")  # an agent's other tools


@dataclass(frozen=True)
class Row:
    write: str
    kind: str
    answer: str


def load(name: str) -> tuple[dict[str, tuple[ToolCall, Tool]], list[Row]]:
    with (SETS / f"{name}_writes.tsv").open() as f:
        writes = {r["write"]: _pending(r) for r in csv.DictReader(f, delimiter="\t")}
    with (SETS / f"{name}_answers.tsv").open() as f:
        rows = [Row(r["write"], r["class"], r["answer"]) for r in csv.DictReader(f, delimiter="\t")]
    return writes, rows


def _pending(row: dict[str, str]) -> tuple[ToolCall, Tool]:
    args = json.loads(row["arguments_json"])
    tool = Tool(lambda **_: "ok", name=row["tool"], description=row["tool"].replace("_", " "), mutates=True,
                confirm=row["confirm_template"], args={"type": "object", "properties": {k: {} for k in args}})
    return ToolCall(row["tool"], args), tool


def language_of(name: str) -> str:
    """A set's language: its name's prefix ("es_dev" is Spanish), English without one."""
    prefix = name.split("_")[0]
    return prefix if "_" in name and prefix in locale.LANGUAGES else "en"


def plain_yes(words: ModuleType) -> str:
    """What a caller asked "Please say yes or no" says the second time: the language's first yes word ("Yes.")."""
    return words.ANSWER_YES[0].capitalize() + "."


def read(name: str) -> tuple[Counter[tuple[str, str]], list[tuple[Row, str]]]:
    """(count per (class, outcome), the false approvals with why); outcome: approved, refused, asked, change; and
    (class, "second") for an answer asked again that a plain yes then approves (the dialog's second ask)."""
    writes, rows = load(name)
    words = locale.get(language_of(name))
    counts: Counter[tuple[str, str]] = Counter()
    wrong = []
    for row in rows:
        dialog = ApprovalDialog(*writes[row.write], other_tools=OTHER_TOOLS, words=words)
        step = dialog.hear(row.answer)
        assert step.reading is not None
        if step.settle is not None and step.settle.approved:
            outcome = "approved"
            if row.kind != "yes":
                wrong.append((row, step.reading.why))
        elif step.reading.answer is Answer.NO:
            outcome = "refused"
        elif step.reading.answer is Answer.CHANGE:
            outcome = "change"
        else:
            outcome = "asked"
            again = dialog.hear(plain_yes(words))
            counts[(row.kind, "second")] += bool(step.say and again.settle is not None and again.settle.approved)
        counts[(row.kind, outcome)] += 1
    return counts, wrong


def main(name: str = "test") -> None:
    counts, wrong = read(name)
    words = locale.get(language_of(name))
    kinds = sorted({k for k, _ in counts})
    answers = sum(n for (_, outcome), n in counts.items() if outcome != "second")
    print(f"{name} set: {answers} answers")
    print(f"{'class':24} {'n':>4} {'approved':>9} {'refused':>8} {'asked':>6} {'change':>7}")
    for kind in kinds:
        row = [counts[(kind, o)] for o in ("approved", "refused", "asked", "change")]
        print(f"{kind:24} {sum(row):4} {row[0]:9} {row[1]:8} {row[2]:6} {row[3]:7}")
    yes = sum(counts[("yes", o)] for o in ("approved", "refused", "asked", "change"))
    print(f"clear yeses approved at the first ask: {counts[('yes', 'approved')]}/{yes} "
          f"({counts[('yes', 'approved')] / yes:.1%}); read as a refusal: {counts[('yes', 'refused')]}")
    within = counts[("yes", "approved")] + counts[("yes", "second")]
    print(f"clear yeses approved within two asks (asked again, the caller says {plain_yes(words)!r}): {within}/{yes} "
          f"({within / yes:.1%})")
    print(f"false approvals: {len(wrong)}/{answers - yes}")
    for row, why in wrong:
        print(f"  FALSE {row.write} {row.kind}: {row.answer!r} ({why})")


if __name__ == "__main__":
    main(*sys.argv[1:])
