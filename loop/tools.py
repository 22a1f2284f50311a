"""Tools the model may call, with harness-owned risk metadata (`mutates`, `reversible`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError, create_model

# Filled in by the loop, never by the model: not part of an inferred schema.
INJECTED_PARAMS = frozenset({"idempotency_key"})


class ArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema; the message is written for the model."""


class ToolDefinitionError(ValueError):
    """A tool that cannot work as declared, found when it is made: one line naming the tool, the parameter and
    the fix."""


@dataclass
class ToolOutput:
    """What a tool may return when it wants to report its actual cost alongside the value."""

    value: Any
    cost_usd: float = 0.0


@dataclass
class Tool:
    """A callable the model may request. Metadata is declared here, never inferred from the name."""

    fn: Callable[..., Any]
    name: str = ""
    description: str = ""
    args: type[BaseModel] | dict[str, Any] | None = None
    mutates: bool = False
    reversible: bool = True
    timeout_s: float | None = None
    max_cost_usd: float = 0.0
    # How to ask a caller before running it, e.g. "refund {amount} on order {order_id}" (arguments by name);
    # empty: voice.call.approval derives the question from the description and the arguments.
    confirm: str = ""
    # Its result is already what a person would say to the caller ("Order 4567 has shipped..."): when every call
    # of a batch is such a tool and all ran fine, the results are said at once as the answer, and the model is
    # asked only whether anything else needs doing (its words are never said: it need not reword the result).
    answers: bool = False
    # For a write keyed by its call id (`idempotency_key`): the call id -> the result it committed, or None if it
    # never committed. Lets a resumed run (or a restarted server) say what a write cut off by a kill really did.
    reconcile: Callable[[str], str | None] | None = None
    # Words (or phrases) one of which the caller must have said since the agent last spoke before the embedded
    # model may name this tool, e.g. ("person", "human", "manager") for a hand-over: a small model reaches for a
    # free-text tool on any stray remark. A decoding aid of `loop.models.llama.model`; hosted models see the tool as
    # usual.
    cues: tuple[str, ...] = ()
    schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.name or self.fn.__name__
        self.description = self.description or inspect.getdoc(self.fn) or self.name
        if self.args is None:
            self.args = args_from_signature(self.fn, self.name)
        if isinstance(self.args, type) and issubclass(self.args, BaseModel):
            self.schema = self.args.model_json_schema()
        else:
            self.schema = dict(self.args or {"type": "object", "properties": {}})
        jsonschema.Draft202012Validator.check_schema(self.schema)

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def openai_schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.schema}}

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Return keyword arguments for `fn`, or raise ArgumentError naming what to fix."""
        if "__invalid_json__" in arguments:
            raw = str(arguments["__invalid_json__"])[:120]
            raise ArgumentError(f"Your arguments for {self.name} were not valid JSON ({raw!r}). "
                                f"Send a JSON object matching the schema; retrying unchanged will fail.")
        if isinstance(self.args, type) and issubclass(self.args, BaseModel):
            try:
                return self.args.model_validate(arguments).model_dump()
            except ValidationError as exc:
                raise ArgumentError(_describe_pydantic(self.name, exc)) from None
        errors = sorted(jsonschema.Draft202012Validator(self.schema).iter_errors(arguments), key=str)
        if errors:
            err = errors[0]
            where = ".".join(str(p) for p in err.absolute_path) or "arguments"
            raise ArgumentError(f"Invalid arguments for {self.name}: {where}: {err.message}. "
                                f"Fix that argument and call again; retrying unchanged will fail.")
        return arguments


def args_from_signature(fn: Callable[..., Any], name: str) -> type[BaseModel] | None:
    """A pydantic model of `fn`'s annotated keyword parameters (`def book(day: str, slots: int = 1)`), so a
    plain function is a tool without writing an argument class; None when it takes no arguments."""
    try:
        params = inspect.signature(fn, eval_str=True).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return None
    except NameError as exc:  # an annotation that names what its module cannot see (a local import, a typo)
        raise ToolDefinitionError(f"tool {name!r}: a type annotation cannot be resolved ({exc}): import what it "
                                  f"names at the top of the tool's module") from None
    fields: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in INJECTED_PARAMS or p.name == "self":
            continue
        if p.annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {p.name!r} has no type: annotate it ({p.name}: str, int, ...) so a model "
                f"knows what to fill in, or pass args= a pydantic model or JSON schema")
        annotation = p.annotation
        fields[p.name] = (annotation, ... if p.default is inspect.Parameter.empty else p.default)
    if not fields:
        return None
    model_name = "".join(part.title() for part in name.split("_")) + "Args"
    return create_model(model_name, __module__=getattr(fn, "__module__", __name__), **fields)


def _describe_pydantic(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']} (got {err.get('input')!r})")
    return (f"Invalid arguments for {tool}: " + "; ".join(parts)
            + ". Fix these and call again; retrying unchanged will fail.")


def check_tools(model: Any, tools: Sequence[Tool]) -> None:
    """A model that can tell, at load, that it cannot call a tool as declared says so (`ToolDefinitionError`, from
    its `check_tools`), not on every turn."""
    check = getattr(model, "check_tools", None)
    if check is not None and tools:
        check([t.openai_schema() for t in tools])


def tool_name(tool: dict[str, Any]) -> str:
    """The name in a tool's schema, in either shape (OpenAI's `{"function": {...}}` or the bare function)."""
    return str((tool.get("function") or tool).get("name", ""))
