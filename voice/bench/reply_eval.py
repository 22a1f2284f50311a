"""Spoken-reply evaluation of a brain over the demo order desk, text only (no audio: fast).

Each case of `voice/demo/reply_eval.yaml` is a short call run through the real `loop.Agent` with the demo tools
(a fresh database per case), policy, system prompt and the `voice` loop profile; approvals are answered as the
case says. The spoken reply of every turn is checked by machine (`loop.grounding.speakable.check_reply`: the facts
from the
tool results, no leaks, at most two sentences), and every model call is timed.

    python -m voice.bench.reply_eval [--models qwen2.5-coder-0.5b-instruct,qwen2.5-coder-1.5b-instruct] [--only ID,..]
                               [--limit N] [--json] [--no-guard]

`evaluate(model_for, cases)` takes any `Model` factory, so the scripted model runs the same harness in tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

import voice.demo
from loop import Agent, Budget, LoopConfig, Message, RunOutcome, TextDelta, ToolCall, locale
from loop.bench.stats import percentile
from loop.grounding.speakable import check_reply
from loop.types import Model, ModelEvent, ModelRequest, ModelResponse
from voice.demo.order_desk import OrderDesk, demo_config, order_policy

EVAL_SET = Path(voice.demo.__file__).resolve().with_name("reply_eval.yaml")  # the demo's cases, package data
# the voice profile, with time enough that a busy machine shows up in the timings, not as failed calls
EVAL_CONFIG = LoopConfig.profile("voice", model_timeout_s=30.0, budget=Budget.of(
    turns=4, tokens=16_000, wall_clock_s=120, cost_usd=0.10, tool_calls=8))
_CALL = re.compile(r"^(\w+)(?:\((.*)\))?$")


def load_cases(path: str | Path = EVAL_SET) -> list[dict[str, Any]]:
    return list(yaml.safe_load(Path(path).read_text())["cases"])


class Timed:
    """Wraps a model: the time of each call's first text and end, and the local model's own counters."""

    def __init__(self, model: Model) -> None:
        self.model, self.name, self.pricing = model, model.name, model.pricing
        self.calls: list[dict[str, Any]] = []
        self.turn_started = 0.0

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def __getattr__(self, name: str) -> Any:  # warm() and the rest, as the wrapped model has them
        return getattr(self.model, name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        started = time.perf_counter()
        first = None
        async for event in self.model.stream(request):
            if isinstance(event, TextDelta) and first is None and event.text.strip():
                first = time.perf_counter()
            if isinstance(event, ModelResponse):
                stats = getattr(self.model, "last", None)
                self.calls.append({
                    "kind": "tools" if event.tool_calls else "text", "text": event.text,
                    "first_text_s": None if first is None else round(first - self.turn_started, 3),
                    "ttft_s": round(stats.ttft_s, 3) if stats else None,
                    "total_s": round(time.perf_counter() - started, 3),
                    "prompt_tokens": event.usage.input_tokens, "reused_tokens": event.usage.cached_input_tokens,
                    "output_tokens": event.usage.output_tokens, "guard": getattr(stats, "guard", None)})
            yield event


def _parse_call(spec: str) -> tuple[str, dict[str, str]]:
    m = _CALL.match(spec.strip())
    if not m:
        raise ValueError(f"bad call spec {spec!r}")
    args = dict(kv.split("=", 1) for kv in m.group(2).split(",")) if m.group(2) else {}
    return m.group(1), {k.strip(): v.strip() for k, v in args.items()}


def _ran(spec: str, calls: list[ToolCall]) -> bool:
    name, args = _parse_call(spec)
    return any(c.name == name and all(str(c.arguments.get(k, "")).strip() == v for k, v in args.items())
               for c in calls)


def spoken_reply(outcome: RunOutcome, answer: str, words: ModuleType = locale.DEFAULT_WORDS) -> str:
    """What the caller hears from one run (as voice.runtime.session says it, in the agent's language `words`): the
    answer, the hand-over on ESCALATED, and that it could not finish on any other outcome."""
    if outcome is RunOutcome.COMPLETED:
        return answer
    return words.HAND_OVER if outcome is RunOutcome.ESCALATED else words.COULD_NOT_FINISH


async def run_case(model: Timed, case: dict[str, Any], system: str, tool_names: list[str]) -> dict[str, Any]:
    """One call: every turn through a fresh Agent over a fresh database, history carried between turns."""
    history: list[Message] = []
    turns = []
    with tempfile.TemporaryDirectory(prefix="reply-eval-") as tmp:
        desk = OrderDesk(Path(tmp) / "orders.db")
        for turn in case["turns"]:
            asked: list[str] = []

            def approver(call: ToolCall, _verdict: Any, turn: dict[str, Any] = turn, asked: list[str] = asked) -> bool:
                asked.append(call.name)
                return bool(turn.get("approve", False))

            agent = Agent(model=model, tools=desk.tools(), policy=order_policy(),  # type: ignore[arg-type]
                          config=EVAL_CONFIG, system_prompt=system, approver=approver)
            model.calls = []
            model.turn_started = time.perf_counter()
            result = await agent.run(turn["say"], history=history)
            took = time.perf_counter() - model.turn_started
            history = result.messages
            said = spoken_reply(result.outcome, result.answer, locale.get(agent.language))
            ran = [o.call for o in result.trajectory]
            problems = []
            want_outcome = turn.get("outcome", "COMPLETED")
            if result.outcome.value != want_outcome:
                problems.append(f"outcome {result.outcome.value} ({result.reason}), expected {want_outcome}")
            if ("approve" in turn) != bool(asked):
                problems.append("was asked for approval" if asked else "never asked for approval")
            problems += [f"did not run {spec}" for spec in turn.get("calls") or [] if not _ran(spec, ran)]
            if want_outcome == "COMPLETED":
                problems += check_reply(said, turn.get("says") or [], turn.get("never") or [],
                                        tool_names=tool_names, prompt=system)
            answer_calls = [c for c in model.calls if c["kind"] == "text"]
            turns.append({"say": turn["say"], "said": said, "ok": not problems, "problems": problems,
                          "ran": [f"{c.name}({json.dumps(c.arguments)})" for c in ran],
                          "outcome": result.outcome.value, "took_s": round(took, 3),
                          "answer_first_s": answer_calls[-1]["first_text_s"] if answer_calls else None,
                          "with_tools": any(c["kind"] == "tools" for c in model.calls),
                          "model_calls": list(model.calls)})
    return {"id": case["id"], "ok": all(t["ok"] for t in turns), "turns": turns}


def _say(msg: str) -> None:
    print(f"reply eval: {msg}", file=sys.stderr, flush=True)


async def evaluate(model_for: Callable[[], Model], cases: list[dict[str, Any]], system: str | None = None,
                   verbose: bool = False) -> dict[str, Any]:
    """Run every case with one model; pass rate, failures with what was said, and timings."""
    system = system if system is not None else demo_config()["system_prompt"]
    model = Timed(model_for())
    tool_names = [t.name for t in OrderDesk(":memory:").tools()]
    warm = getattr(model.model, "warm", None)
    if warm is not None:
        agent = Agent(model=model, tools=OrderDesk(":memory:").tools(), policy=order_policy(),  # type: ignore[arg-type]
                      config=LoopConfig.profile("voice"), system_prompt=system)
        await agent.warm()
    results = []
    for i, case in enumerate(cases, 1):
        res = await run_case(model, case, system, tool_names)
        results.append(res)
        if verbose:
            for t in res["turns"]:
                _say(f"[{model.name}] {i}/{len(cases)} {res['id']}: {'ok' if t['ok'] else 'FAIL'} "
                     f"{t['took_s']:.2f}s {t['ran']} -> {t['said']!r} {'; '.join(t['problems'])}")
    return summarize(model.name, results)


def _stats(values: list[float]) -> dict[str, float | None]:
    return {"n": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95),
            "mean": round(statistics.fmean(values), 3) if values else None}


def summarize(name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [t for r in results for t in r["turns"]]
    calls = [c for t in turns for c in t["model_calls"]]
    answered = [t for t in turns if t["answer_first_s"] is not None]
    return {
        "model": name, "cases": len(results), "passed": sum(r["ok"] for r in results),
        "pass_rate": round(sum(r["ok"] for r in results) / max(1, len(results)), 3),
        "turns": len(turns), "turns_passed": sum(t["ok"] for t in turns),
        "guard_fired": sum(1 for c in calls if c.get("guard")),
        "answer_first_s": {"all": _stats([t["answer_first_s"] for t in answered]),
                           "with_tools": _stats([t["answer_first_s"] for t in answered if t["with_tools"]]),
                           "without_tools": _stats([t["answer_first_s"] for t in answered if not t["with_tools"]])},
        "model_ttft_s": {"after_tool_result": _stats([c["ttft_s"] for t in turns for i, c in enumerate(t["model_calls"])
                                                      if i and c["ttft_s"] is not None]),
                         "first_call": _stats([t["model_calls"][0]["ttft_s"] for t in turns
                                               if t["model_calls"] and t["model_calls"][0]["ttft_s"] is not None])},
        "model_call_s": _stats([c["total_s"] for c in calls]),
        "output_tokens": _stats([c["output_tokens"] for c in calls if c["kind"] == "text"]),
        "evaluated_tokens": _stats([c["prompt_tokens"] - c["reused_tokens"] for c in calls]),
        "failures": [{"id": r["id"], "turns": [{k: t[k] for k in ("say", "ran", "said", "problems")}
                                               for t in r["turns"] if not t["ok"]]} for r in results if not r["ok"]],
        "results": results,
    }


def format_summary(s: dict[str, Any]) -> str:
    def fmt(st: dict[str, Any]) -> str:
        return f"p50 {st['p50']}s p95 {st['p95']}s (n={st['n']})" if st["n"] else "-"

    lines = [f"{s['model']}: {s['passed']}/{s['cases']} calls pass ({s['pass_rate']:.0%}), "
             f"{s['turns_passed']}/{s['turns']} turns; spoken guard fired {s['guard_fired']}x",
             f"  answer's first text from the turn's start: all {fmt(s['answer_first_s']['all'])}; "
             f"with tools {fmt(s['answer_first_s']['with_tools'])}; "
             f"without {fmt(s['answer_first_s']['without_tools'])}",
             f"  model first token: first call {fmt(s['model_ttft_s']['first_call'])}; after a tool result "
             f"{fmt(s['model_ttft_s']['after_tool_result'])}; whole call {fmt(s['model_call_s'])}",
             f"  reply tokens {s['output_tokens']}; prompt tokens evaluated per call {s['evaluated_tokens']}"]
    for f in s["failures"]:
        for t in f["turns"]:
            lines.append(f"  FAIL {f['id']}: {t['say']!r} ran {t['ran']} said {t['said']!r}: "
                         + "; ".join(t["problems"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m voice.bench.reply_eval", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--eval-set", default=str(EVAL_SET))
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--no-guard", action="store_true", help="let the model's text through unguarded")
    parser.add_argument("--json", default="", help="also write the full results here")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    cases = load_cases(args.eval_set)
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c["id"] in wanted]
    cases = cases[: args.limit] if args.limit else cases
    from loop.models.llama.model import LlamaModel

    options = {"guard": False} if args.no_guard else {}
    summaries = []
    for name in [n.strip() for n in args.models.split(",") if n.strip()]:
        _say(f"loading {name}")
        summary = asyncio.run(evaluate(lambda name=name: LlamaModel(name=name, **options), cases,
                                       verbose=not args.quiet))
        summaries.append(summary)
        print(format_summary(summary), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
