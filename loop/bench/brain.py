"""`voiceloop bench brain`: the embedded LLM's load time, time to first token cold vs warm, tokens/s, and
tool-choice accuracy + latency on an eval set of cases for one agent.

Which agent is the caller's choice (a `BrainSetup`: system prompt, tools, policy text, eval set); requests are
assembled by the loop's own PromptAssembler from it, so the model sees exactly the bytes an Agent would send.
The loop knows no particular agent: the voice CLI builds the setup from `--agent` (the demo order desk's,
`voice.demo.order_desk.order_desk_brain`, without it).
Progress goes to stderr, the result to stdout (text or --json).

Wiring: `add_loop_commands(sub, bench_targets={"brain": brain_command(make_setup)})`, with `make_setup(args) ->
BrainSetup`, and `add_brain_arguments(bench)`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loop import locale
from loop.grounding.arguments import words_to_number
from loop.models.llama.weights import DEFAULT_MODEL, MODELS
from loop.prompt import PromptAssembler
from loop.tools import Tool
from loop.types import Message, ModelRequest, ModelResponse, TextDelta, ToolCallDelta


@dataclass(frozen=True)
class BrainSetup:
    """The agent a model is measured as: what its prompt holds, and the cases it is scored on."""

    system_prompt: str
    tools: Sequence[Tool]
    policy_text: str = ""
    eval_set: Path | None = None  # YAML with a `cases:` list; `--eval-set` overrides it
    context_tokens: int = 4096
    name: str = ""  # the agent's name, for the report
    scope: str = ""  # the agent's scope sentence, as its calls hand it to the model
    language: str = "en"  # the agent's language: its requests are read in it, as its calls' are
    related: tuple[tuple[str, ...], ...] = ()  # the agent's words for the same thing, as its calls hand them on

    def assembler(self, count_tokens: Callable[[str], int]) -> PromptAssembler:
        return PromptAssembler(self.system_prompt, list(self.tools), count_tokens, self.context_tokens,
                               self.policy_text, scope=self.scope, language=self.language, related=self.related)

# ---- scoring ---------------------------------------------------------------------------------


def _norm_text(value: Any) -> str:
    """Case, punctuation and spacing aside: "10 a.m." and "10 am", "Ford-Focus" and "ford focus" are the same."""
    text = re.sub(r"[.']", "", str(value).casefold())
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def _arg_matches(expected: Any, actual: Any) -> bool:
    if expected == "*":
        return actual not in (None, "") and not isinstance(actual, dict)
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        got = actual if isinstance(actual, int | float) else words_to_number(str(actual))
        return got is not None and abs(float(got) - float(expected)) < 0.005
    return _norm_text(expected) == _norm_text(actual)


def score(expect: Any, response: ModelResponse) -> tuple[bool, str]:
    """(correct, what the model did). `expect` is "text" or {"tool": name, "args": {...}}."""
    calls = response.tool_calls
    got = "text: " + " ".join(response.text.split())[:100] if not calls else "; ".join(
        f"{c.name}({json.dumps(c.arguments)})" for c in calls)
    if expect == "text":
        return not calls and bool(response.text.strip()), got
    if len(calls) != 1 or calls[0].name != expect["tool"]:
        return False, got
    args = calls[0].arguments
    wanted = expect.get("args") or {}
    ok = set(args) == set(wanted) and all(_arg_matches(v, args.get(k)) for k, v in wanted.items())
    return ok, got


# ---- requests --------------------------------------------------------------------------------


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    import yaml

    return list(yaml.safe_load(Path(path).read_text())["cases"])


def case_request(assembler: PromptAssembler, case: dict[str, Any], max_output: int = 96) -> ModelRequest:
    """The request a call makes for this case: the caller's words as a call writes them in the agent's language
    (its numbers in digits where its readers need them: "cuatro cinco uno dos siete" -> 45127)."""
    in_digits = locale.get(assembler.language).numbers_in_digits
    history = [Message.from_dict(m) for m in case.get("history") or []]
    history = [replace(m, content=in_digits(m.content)) if m.role == "user" else m for m in history]
    if case.get("say"):
        history.append(Message("user", in_digits(case["say"])))
    request, _ = assembler.build(history, 0, max_output)
    return request


async def run_request(model: Any, request: ModelRequest) -> tuple[ModelResponse, float, float]:
    """(response, seconds to the first streamed event, seconds to the response)."""
    started = time.perf_counter()
    first = 0.0
    response = None
    async for event in model.stream(request):
        if isinstance(event, TextDelta | ToolCallDelta) and not first:
            first = time.perf_counter() - started
        if isinstance(event, ModelResponse):
            response = event
    total = time.perf_counter() - started
    assert response is not None
    return response, first or total, total


# ---- measurements ----------------------------------------------------------------------------


def _say(msg: str) -> None:
    print(f"bench brain: {msg}", file=sys.stderr, flush=True)


async def measure_speed(model: Any, assembler: PromptAssembler) -> dict[str, Any]:
    """Time to first token cold (empty KV cache, no saved state) vs after warm(); warm() itself by prompt eval
    and from the state saved on disk; generation speed on a plain text reply."""
    hello = case_request(assembler, {"say": "Hello!"}, max_output=24)
    state_dir, model.state_dir = model.state_dir, None
    model.reset_cache()
    await run_request(model, hello)
    cold = model.last
    model.reset_cache()
    model.state_dir = state_dir if state_dir is None else Path(tempfile.mkdtemp(prefix="brainbench-kv-"))
    started = time.perf_counter()
    prefix_tokens = await model.warm(hello)  # prompt eval (+ saving the state when there is a state dir)
    warm_eval_s = time.perf_counter() - started
    await run_request(model, hello)
    warm = model.last
    warm_disk_s = None
    if model.state_dir is not None:
        model.reset_cache()
        started = time.perf_counter()
        if await model.warm(hello) == 0:
            warm_disk_s = round(time.perf_counter() - started, 3)
        shutil.rmtree(model.state_dir, ignore_errors=True)
    model.state_dir = state_dir
    story = ModelRequest([Message("system", "You tell stories."), Message("user", "Tell a story about a lighthouse.")],
                         [], 96)
    await run_request(model, story)
    gen = model.last
    return {"prompt_tokens": cold.prompt_tokens, "prefix_tokens": prefix_tokens,
            "ttft_cold_s": round(cold.ttft_s, 3), "ttft_warm_s": round(warm.ttft_s, 3),
            "evaluated_cold": cold.evaluated_tokens, "evaluated_warm": warm.evaluated_tokens,
            "warm_eval_s": round(warm_eval_s, 2), "warm_from_disk_s": warm_disk_s,
            "gen_tokens": gen.output_tokens, "tokens_per_s": round(gen.tokens_per_s, 1)}


async def evaluate(model: Any, assembler: PromptAssembler, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and latency over the eval set; every failure listed with what the model did instead."""
    await model.warm(case_request(assembler, {"say": "hi"}))
    rows = []
    for i, case in enumerate(cases, 1):
        response, first, total = await run_request(model, case_request(assembler, case))
        ok, got = score(case["expect"], response)
        rows.append({"id": case["id"], "ok": ok, "got": got, "first_s": first, "total_s": total,
                     "expect": case["expect"]})
        line = " ".join(got.split())[:90]
        _say(f"[{model.name}] {i}/{len(cases)} {case['id']}: {'ok' if ok else 'FAIL'} {total:.2f}s  {line}")
    totals = [r["total_s"] for r in rows]
    return {"cases": len(rows), "correct": sum(r["ok"] for r in rows),
            "accuracy": round(sum(r["ok"] for r in rows) / max(1, len(rows)), 3),
            "latency_median_s": round(statistics.median(totals), 3) if totals else None,
            "latency_max_s": round(max(totals), 3) if totals else None,
            "failures": [{k: r[k] for k in ("id", "expect", "got")} for r in rows if not r["ok"]]}


def bench_model(name: str, cases: list[dict[str, Any]], setup: BrainSetup, grammar: bool = True,
                ground: bool = True) -> dict[str, Any]:
    from loop.models.llama.model import LlamaModel

    _say(f"loading {name}")
    model = LlamaModel(name=name, grammar=grammar, ground=ground)
    _say(f"{name} loaded in {model.load_s:.2f}s")
    assembler = setup.assembler(model.count_tokens)
    result: dict[str, Any] = {"model": name, "agent": setup.name, "load_s": round(model.load_s, 2),
                              "grammar": grammar, "ground": ground}
    result.update(asyncio.run(measure_speed(model, assembler)))
    _say(f"{name}: TTFT cold {result['ttft_cold_s']}s, warm {result['ttft_warm_s']}s, {result['tokens_per_s']} tok/s")
    if cases:
        result["eval"] = asyncio.run(evaluate(model, assembler, cases))
    return result


def format_brain(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        disk = f", {r['warm_from_disk_s']}s from the saved state" if r.get("warm_from_disk_s") is not None else ""
        mode = "grammar + grounding" if r.get("grammar", True) and r.get("ground", True) else (
            "grammar only" if r.get("grammar", True) else "no grammar")
        agent = f" as the agent {r['agent']}" if r.get("agent") else ""
        lines += [f"{r['model']} ({mode}){agent}: load {r['load_s']}s; {r['tokens_per_s']} tok/s generating",
                  f"  TTFT cold {r['ttft_cold_s']}s ({r['evaluated_cold']} prompt tokens evaluated) vs warm "
                  f"{r['ttft_warm_s']}s ({r['evaluated_warm']} evaluated); warm() of the {r['prefix_tokens']}-token "
                  f"prefix: {r['warm_eval_s']}s by prompt eval{disk}"]
        if ev := r.get("eval"):
            lines.append(f"  tool choice: {ev['correct']}/{ev['cases']} = {ev['accuracy']:.0%}; latency to the full "
                         f"response median {ev['latency_median_s']}s, max {ev['latency_max_s']}s")
            lines += [f"  FAIL {f['id']}: expected {json.dumps(f['expect'])}, got {f['got']}" for f in ev["failures"]]
    return "\n".join(lines)


def add_brain_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `bench brain`, on its own parser."""
    parser.add_argument("--models", default=DEFAULT_MODEL,
                        help=f"comma-separated models (known: {', '.join(MODELS)})")
    parser.add_argument("--eval-set", default=None, help="tool-choice cases (YAML; default: the agent's own)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases (0 = all; -1 = none)")
    parser.add_argument("--no-grammar", action="store_true", help="generate without the GBNF grammar")
    parser.add_argument("--no-ground", action="store_true",
                        help="grammar from the tool schemas only, arguments not grounded in the conversation")


def cmd_bench_brain(args: argparse.Namespace, setup: BrainSetup) -> int:
    """Measure each model as `setup`'s agent; exit 2 when weights or llama-cpp-python are missing."""
    names = [n.strip() for n in str(getattr(args, "models", DEFAULT_MODEL)).split(",") if n.strip()]
    limit = int(getattr(args, "limit", 0) or 0)
    eval_set = getattr(args, "eval_set", None) or setup.eval_set
    if not eval_set and limit >= 0:
        _say(f"no eval set for the agent {setup.name or '(unnamed)'}: measuring speed only (give --eval-set)")
    cases = load_cases(eval_set) if eval_set and limit >= 0 else []
    cases = cases[:limit] if limit > 0 else cases
    results = []
    try:
        for name in names:
            results.append(bench_model(name, cases, setup, grammar=not getattr(args, "no_grammar", False),
                                       ground=not getattr(args, "no_ground", False)))
    except (ImportError, FileNotFoundError, KeyError) as exc:
        _say(f"cannot run: {exc}")
        return 2
    print(json.dumps(results, indent=2) if getattr(args, "json", False) else format_brain(results))
    return 0


def brain_command(make_setup: Callable[[argparse.Namespace], BrainSetup]) -> Callable[[argparse.Namespace], int]:
    """The `brain` bench target; `make_setup(args)` gives the agent to measure (e.g. from `--agent`) and runs only
    when the target does. A ValueError from it (an agent that cannot be loaded) exits 2 with its message."""
    def run(args: argparse.Namespace) -> int:
        try:
            setup = make_setup(args)
        except ValueError as exc:
            _say(f"cannot run: {exc}")
            return 2
        return cmd_bench_brain(args, setup)

    return run
