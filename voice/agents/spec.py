"""An agent declared in one YAML file, validated into `AgentSpec` before anything is loaded.

    name: front_desk
    system_prompt: |                      # or prompt_file: prompt.md (relative to this file)
      You answer the phone for a dental practice. One or two short sentences.
    greeting: Hello, Smile Dental, how can I help?
    toolset: dental_book:open_book        # optional: called once with data_dir, gives Tools or an object with .tools()
    mcp: [{command: [python, stock_server.py], reads: [check_stock], confirm: {hold_item: "hold a {item}"}}]
    tools:                                # import paths: a loop.Tool, a list of Tools, or a plain function
      - dental_book:free_slots
      - {use: dental_book:book, mutates: true, confirm: "book {day} at {time}"}
    vocabulary: [Margherita, Quattro Formaggi, Wickham Road]  # words callers say: speech-to-text leans to them
    policy: {default: ALLOW, rules: [...]} # as in loop/policy/config.py
    profile: voice                        # a LoopConfig profile ...
    loop: {max_output_tokens: 120}        # ... and overrides of its fields
    model: local                          # an --llm engine; with none (or `script`), the `script:` replies
    script: ["Hello!"]                    # scripted replies, as in `voiceloop serve --script`
    stt: tiny.en                          # and the engines the commands load unless told otherwise
    tts: piper

Import paths are `module:attribute` (or `module.attribute`) or `path/to/file.py:attribute`. The working directory
and the file's own folder are searched after the installed packages, so a `dental_book.py` beside the YAML is
`dental_book:...` (a module named like a standard one, e.g. `calendar.py`, is not: give it its own name or use the
file path).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from loop import LoopConfig, Tool, ToolDefinitionError
from loop.kinds import parse_kind
from loop.policy.config import PolicyConfig


class AgentConfigError(ValueError):
    """An agent file or import path that cannot be used; the message names the file and what to fix."""


class ToolEntry(BaseModel):
    """A tool by import path, with the risk metadata the harness needs when the target is a plain function."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    use: str
    """`module:attribute` of a function, a `loop.Tool` or a list of Tools."""
    name: str = ""
    """The name the model calls it by; default: the function's."""
    description: str = ""
    """What the model reads about it; default: the function's docstring."""
    confirm: str = ""
    """How a caller is asked before it runs: "book {day} at {time}"."""
    mutates: bool | None = None
    """It changes something (a write): asked aloud before it runs in the `voice` profile."""
    reversible: bool | None = None
    """False: an irreversible write, which policy can only tighten to ASK."""
    timeout_s: float | None = None
    """How long a call may take (default: the profile's `default_tool_timeout_s`)."""
    answers: bool | None = None
    """Its result is what the caller hears as the answer (`loop.Tool.answers`)."""
    cues: list[str] | None = None
    """Words one of which the caller must have said before the embedded model may call it (`loop.Tool.cues`)."""
    kinds: dict[str, str] | None = None
    """What each argument holds, declared: `{last_four: "id:4", pet: name, dish: item}` (`loop.kinds`)."""

    def overrides(self) -> dict[str, Any]:
        fields = ("name", "description", "confirm", "mutates", "reversible", "timeout_s", "answers")
        found = {k: getattr(self, k) for k in fields if getattr(self, k) not in (None, "")}
        return found | ({"cues": tuple(self.cues)} if self.cues else {})


class MCPEntry(BaseModel):
    """One MCP server: `command` (stdio, started as a subprocess from the agent file's folder) or `url`
    (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    command: list[str] = Field(default_factory=list)
    """A stdio server started as a subprocess from the agent file's folder: `[python, stock_server.py]`."""
    url: str = ""
    """A streamable-HTTP server's address: `http://inventory.internal:8000/mcp`."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the subprocess."""
    reads: list[str] = Field(default_factory=list)
    """Its tools that change nothing (run without asking, and speculatively); every other one is a write."""
    only: list[str] | None = None
    """Use just these of its tools."""
    confirm: dict[str, str] = Field(default_factory=dict)
    """How the caller is asked before a write runs, per tool, as `confirm:` of a Python tool:
    `{hold_item: "hold a {item} for {name}"}`; without it, the question is made from the tool's description."""
    timeout_s: float = Field(15.0, gt=0)
    """How long starting the server and each of its calls may take."""

    @model_validator(mode="after")
    def _one_way_in(self) -> MCPEntry:
        if bool(self.command) == bool(self.url):
            raise ValueError("an mcp entry is a command (stdio) or a url (streamable HTTP): give exactly one")
        return self

    def toolset(self, base_dir: Path) -> Any:
        from loop.toolsets.mcp import MCPToolset

        return MCPToolset(command=self.command or None, url=self.url or None, env=self.env or None,
                          cwd=str(base_dir), reads=self.reads, only=self.only, timeout_s=self.timeout_s,
                          confirm=self.confirm)


class AgentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = "agent"
    """How commands and errors name it; an agent file without one is named after the file (`_name_from`)."""
    system_prompt: str = ""
    """What the model is told it is and does; a line it quotes (`"..."`), or the facts a line lists to tell
    after a colon, one per semicolon ("What you may tell callers: ...; ..."), may be said without generating."""
    prompt_file: str = ""
    """A file holding the system prompt, relative to the YAML file (instead of `system_prompt`)."""
    greeting: str = ""
    """Said when a call starts (the commands' `--greeting` wins)."""
    language: str = "en"
    """The language of its fixed sentences and word lists (`loop.locale`; `en` is the one shipped)."""
    scope: str = ""
    """What the agent is for, said to a caller who asks about anything else ("I can help with bookings and opening
    hours here."); empty: built from the tools' names."""
    toolset: str = ""
    """`module:callable` built once per server (or scripted call) with the keyword arguments it takes of
    `data_dir`; returns a list of Tools or an object whose `.tools()` does (its state: e.g. a database)."""
    tools: list[str | ToolEntry] = Field(default_factory=list)
    """Tools by import path, or entries with their metadata (below)."""
    mcp: list[MCPEntry] = Field(default_factory=list)
    """MCP servers whose tools the agent uses (`loop.toolsets.mcp`): writes that need a yes unless listed in
    `reads`."""
    vocabulary: list[str] = Field(default_factory=list)
    """Words and names the agent's callers say (dishes, products, streets, staff): speech-to-text is biased towards
    them, and towards the string values of its tools' enums, which are added without being listed here."""
    related: list[list[str]] = Field(default_factory=list)
    """Groups of words the agent's callers use for the same thing (`[[repair, fix, garage, car], [room, suite,
    stay]]`): a caller who says "fix" asks about what the tools call a repair, and is not out of scope."""
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    """Who may do what: rules ALLOW, DENY or ASK per tool and argument (below)."""
    profile: str = "voice"
    """A `LoopConfig` profile: `voice`, `chat`, `task` or `long_horizon`."""
    loop: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the profile's `LoopConfig` fields."""
    model: str | None = None
    """The `--llm` engine this agent uses unless the command names one."""
    script: list[str | dict[str, Any]] = Field(default_factory=list)
    """Scripted replies (`- text: ...` / `- tool_calls: [...]`) when no real model is chosen."""
    stt: str | None = None
    """The speech-to-text engine (`--stt` names) unless the command names one."""
    tts: str | None = None
    """The text-to-speech engine (`--tts` names) unless the command names one."""
    base_dir: Path = Field(default=Path("."), exclude=True)
    """Where relative paths are resolved (the YAML file's folder)."""

    @model_validator(mode="after")
    def _check(self) -> AgentSpec:
        from voice.speech.engines import LLM_ENGINES, STT_ENGINES, TTS_ENGINES

        if self.system_prompt and self.prompt_file:
            raise ValueError("give system_prompt or prompt_file, not both")
        if self.prompt_file and not (self.base_dir / self.prompt_file).is_file():
            raise ValueError(f"prompt_file {self.prompt_file} is not a file in {self.base_dir}")
        self.loop_config()  # an unknown profile or a mistyped override fails here, not on the first call
        from loop import locale

        locale.get(self.language)  # so does a language voiceloop does not speak
        for registry, value in ((LLM_ENGINES, self.model), (STT_ENGINES, self.stt), (TTS_ENGINES, self.tts)):
            if value is not None:
                registry.spec(value)
        return self

    @classmethod
    def load(cls, path: str | Path) -> AgentSpec:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise AgentConfigError(f"{path}: {exc}") from exc
        if not isinstance(data, dict):
            raise AgentConfigError(f"{path}: an agent file is a YAML mapping (system_prompt, tools, policy, ...)")
        try:
            return cls.model_validate({**data, "name": data.get("name") or _name_from(path),
                                       "base_dir": path.resolve().parent})
        except ValidationError as exc:
            raise AgentConfigError(f"{path}: {_validation_lines(exc)}") from None
        except ValueError as exc:
            raise AgentConfigError(f"{path}: {exc}") from None

    def prompt(self) -> str:
        if self.prompt_file:
            return (self.base_dir / self.prompt_file).read_text().strip()
        return self.system_prompt.strip() or "You are a helpful voice assistant. Answer in one or two short sentences."

    def loop_config(self) -> LoopConfig:
        return LoopConfig.profile(self.profile, **self.loop)

    def build_tools(self, data_dir: Path) -> tuple[list[Tool], Any]:
        """The agent's tools, and the toolset object that owns their state (None without a `toolset`)."""
        try:
            return self._build_tools(data_dir)
        except ToolDefinitionError as exc:  # an untyped parameter: one line at load, naming the tool and the fix
            raise AgentConfigError(f"agent {self.name}: {exc}") from None

    def _build_tools(self, data_dir: Path) -> tuple[list[Tool], Any]:
        tools: list[Tool] = []
        state: Any = None
        if self.toolset:
            maker = resolve_ref(self.toolset, self.base_dir)
            state = call_with_accepted(maker, data_dir=Path(data_dir))
            tools.extend(_as_tools(state.tools() if hasattr(state, "tools") else state, self.toolset))
        for entry in self.tools:
            entry = entry if isinstance(entry, ToolEntry) else ToolEntry(use=entry)
            made = _as_tools(resolve_ref(entry.use, self.base_dir), entry.use, entry.overrides())
            tools.extend(_with_kinds(t, entry.kinds, self.name) for t in made)
        for server in self.mcp:
            try:
                tools.extend(server.toolset(self.base_dir).tools())
            except Exception as exc:  # a server that is down, or not MCP: the agent file names it
                raise AgentConfigError(f"agent {self.name}: {exc}") from exc
        names = [t.name for t in tools]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise AgentConfigError(f"agent {self.name}: two tools are named {', '.join(dupes)}")
        return tools, state


def _name_from(path: Path) -> str:
    """A file without `name:` is named after itself: `shop.yaml` is shop, `garage/agent.yaml` is garage."""
    path = path.resolve()
    return path.parent.name if path.stem == "agent" and path.parent.name else path.stem


def _as_tools(value: Any, ref: str, overrides: dict[str, Any] | None = None) -> list[Tool]:
    overrides = overrides or {}
    if isinstance(value, Tool):
        return [Tool(**{**_tool_fields(value), **overrides})] if overrides else [value]
    if isinstance(value, list | tuple) and all(isinstance(v, Tool) for v in value):
        return list(value)
    if callable(value):
        return [Tool(value, **overrides)]
    raise AgentConfigError(f"{ref} is {type(value).__name__}: expected a function, a loop.Tool or a list of Tools")


def _with_kinds(tool: Tool, kinds: dict[str, str] | None, agent: str) -> Tool:
    """The tool's schema with the agent file's declared argument kinds (`loop.kinds`)."""
    properties = tool.schema.get("properties") or {}
    for arg, kind in (kinds or {}).items():
        if arg not in properties:
            raise AgentConfigError(f"agent {agent}: tool {tool.name!r} has no argument {arg!r} to declare a kind for "
                                   f"(it has {', '.join(properties) or 'none'})")
        try:
            properties[arg] = {**properties[arg], **parse_kind(str(kind))}
        except ValueError as exc:
            raise AgentConfigError(f"agent {agent}: tool {tool.name!r}, argument {arg!r}: {exc}") from None
    return tool


def _tool_fields(tool: Tool) -> dict[str, Any]:
    return {k: getattr(tool, k) for k in ("fn", "name", "description", "args", "mutates", "reversible",
                                          "timeout_s", "max_cost_usd", "confirm", "answers", "reconcile", "cues")}


def resolve_ref(ref: str, base_dir: Path | None = None) -> Any:
    """`module:attr.attr`, `module.attr` or `path/to/file.py:attr`, importable from `base_dir` and the working
    directory."""
    candidates = _splits(ref)
    if not candidates:
        raise AgentConfigError(f"{ref!r} is not an import path: write module:attribute (mypkg.agent:build) or "
                               "module.attribute")
    for folder in (Path.cwd(), base_dir):  # after the installed packages: a user's file never shadows them
        if folder is not None and str(folder) not in sys.path:
            sys.path.append(str(folder))
    for i, (target, attr) in enumerate(candidates):
        try:
            module = _import_file(target, base_dir) if target.endswith(".py") else _import_module(target, base_dir)
        except ImportError as exc:
            missing = getattr(exc, "name", None)
            if i + 1 < len(candidates) and missing and (target == missing or target.startswith(missing + ".")):
                continue  # `a.b.c`: not module a.b, perhaps module a with attribute b.c
            raise AgentConfigError(f"{ref}: cannot import {target}: {exc}") from exc
        value: Any = module
        for part in attr.split("."):
            if not hasattr(value, part):
                raise AgentConfigError(f"{ref}: {target} has no attribute {part!r}")
            value = getattr(value, part)
        return value
    raise AssertionError("unreachable: the last candidate returns or raises")


def _import_module(target: str, base_dir: Path | None) -> Any:
    """`target` imported; when the agent file's folder holds that module itself, its own copy, even if another
    agent's folder gave a module of the same name first (two agents' `cards.py` in one process)."""
    top = target.split(".")[0]
    own = None if base_dir is None else next(
        (f.resolve() for f in (base_dir / f"{top}.py", base_dir / top / "__init__.py") if f.exists()), None)
    loaded = sys.modules.get(top)
    if own is None or (loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == own):
        return importlib.import_module(target)
    # not loaded yet, or loaded from elsewhere: from this folder first (a folder earlier on sys.path may hold one)
    importlib.invalidate_caches()
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]  # the other agent keeps the functions it already resolved
    sys.path.insert(0, str(base_dir))
    try:
        return importlib.import_module(target)
    finally:
        sys.path.remove(str(base_dir))


def _splits(ref: str) -> list[tuple[str, str]]:
    """(module, attribute) readings of `ref`: the one `module:attr` means, or for `a.b.c` each dot from the right."""
    target, sep, attr = ref.partition(":")
    if sep:
        return [(target, attr)] if target and attr else []
    parts = ref.split(".")
    if ref.endswith(".py") or not all(parts):
        return []
    return [(".".join(parts[:i]), ".".join(parts[i:])) for i in range(len(parts) - 1, 0, -1)]


def _import_file(target: str, base_dir: Path | None) -> Any:
    path = Path(target) if Path(target).is_absolute() or base_dir is None else base_dir / target
    if not path.exists():
        path = Path(target).resolve()
    if not path.exists():
        raise ImportError(f"no such file {target}")
    name = file_module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def file_module_name(path: Path) -> str:
    """The name a user's `file.py` is imported under (`voice.cli.run_app` registers a running script by it, so it
    is not imported a second time)."""
    return f"voiceloop_user_{path.stem}_{abs(hash(str(path.resolve())))}"


def call_with_accepted(fn: Callable[..., Any], **available: Any) -> Any:
    """Call `fn` with the keyword arguments of `available` its signature takes (all of them for **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return fn(**available)
    return fn(**{k: v for k, v in available.items() if k in params})


def _validation_lines(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()[:5])
