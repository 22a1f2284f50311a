"""What `--agent` names: an agent file or a factory, and how a command gets one `loop.Agent` per call from it.

- `--agent path/agent.yaml` — an `AgentSpec` (voice/agents/spec.py): prompt, tools, policy, profile, greeting,
  model, engines.
- `--agent mypkg.agent:build` (or `agent.py:build`) — a callable returning a `loop.Agent`, called once per call
  with the keyword arguments it takes of `call_id` and `data_dir` (a folder for its own files). The attribute
  may also be an `AgentSpec` or the path of an agent file.

The agent's own model is used unless the command chooses one (`--llm`, `--script`, a call script's replies);
`--llm script` (scripted replies, no LLM) keeps an agent's own script, and gives the others the looping
acknowledgement. Without `--agent`, commands run the demo order desk (`voice/demo/`).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loop import Agent, ToolDefinitionError
from loop.store.db import open_journal
from loop.types import Model
from voice.agents.looping_script import DEFAULT_SCRIPT, LoopingScript, ScriptedReplies, is_scripted, load_script_turns
from voice.agents.spec import AgentConfigError, AgentSpec, call_with_accepted, resolve_ref

DEFAULT_AGENT = "voice.demo:AGENT_FILE"


@dataclass
class AgentSource:
    """An agent as declared by its author, ready to build per-call Agents (`maker`)."""

    ref: str
    spec: AgentSpec | None = None
    factory: Callable[..., Agent] | None = None
    _language: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name if self.spec else self.ref

    @property
    def greeting(self) -> str:
        return self.spec.greeting if self.spec else str(getattr(self.factory, "greeting", ""))

    @property
    def llm(self) -> str | None:
        return self.spec.model if self.spec else None

    @property
    def language(self) -> str:
        """What its callers speak and it says: the agent file's `language:`, else that of an agent its factory builds
        (built once, in a scratch folder, with no model)."""
        if self.spec is not None:
            return self.spec.language
        if self._language is None:
            from loop import ScriptedModel

            with tempfile.TemporaryDirectory(prefix="voiceloop-language-") as scratch:
                self._language = self.maker(scratch, lambda _id: ScriptedModel([]))("check").language
        return self._language

    def engine(self, kind: str, chosen: str | None, default: str) -> str:
        """The command's `--stt`/`--tts` if given, else the agent file's, else `default`."""
        return chosen or (getattr(self.spec, kind, None) if self.spec else None) or default

    def maker(self, data_dir: str | Path, model_for: Callable[[str], Model] | None = None) -> AgentMaker:
        return AgentMaker(self, Path(data_dir), model_for)

    def build(self, call_id: str = "try", data_dir: str | Path | None = None, model: Model | None = None) -> Agent:
        """One `loop.Agent`, as a call gets it, to try in a test or a shell: its toolset's data in `data_dir` (a
        new scratch folder when None), its own model unless `model` is given. `agent.tools` maps each tool's name
        to its `Tool`. Fails as `check` does, in one line naming what to fix."""
        folder = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="voiceloop-agent-"))
        return self.maker(folder, (lambda _id: model) if model is not None else None)(call_id)

    def check(self, model: Model | None = None) -> None:
        """Build one agent in a scratch folder, so a tool that cannot work as declared fails at load, in one line
        (AgentConfigError), not when the first call starts. `model`: the one the command chose, if any."""
        from loop import ScriptedModel

        with tempfile.TemporaryDirectory(prefix="voiceloop-check-") as scratch:
            self.maker(scratch, lambda _id: model or ScriptedModel([]))("check")


class AgentMaker:
    """`make_agent(call_id) -> Agent` for `CallFactory`: the toolset (and its database) is built once here,
    shared by every call; `state` is that toolset object, for tests and call scripts to inspect."""

    def __init__(self, source: AgentSource, data_dir: Path, model_for: Callable[[str], Model] | None) -> None:
        self.source, self.data_dir = source, data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.state: Any = None
        self.tools: list[Any] = []
        if source.spec is not None:
            self.tools, self.state = source.spec.build_tools(data_dir)
            self.prompt, self.config = source.spec.prompt(), source.spec.loop_config()  # read once, not per call
        self.model_for = model_for or self._own_models()

    @property
    def desk(self) -> Any:  # the order desk's old name for its state
        return self.state

    def _own_models(self) -> Callable[[str], Model] | None:
        spec = self.source.spec
        if spec is None:
            return None  # a factory's Agent brings its own model
        if spec.model and spec.model != "script":
            from voice.speech.engines import load_llm

            shared = load_llm(spec.model)
            return lambda _call_id: shared  # type: ignore[return-value]
        turns = load_script_turns(spec.script, spec.name) if spec.script else DEFAULT_SCRIPT
        return lambda call_id: LoopingScript(turns, call_id)

    def __call__(self, call_id: str) -> Agent:
        try:
            return self._agent(call_id)
        except ToolDefinitionError as exc:  # a tool the model cannot call as declared: one line, at load
            raise AgentConfigError(f"{self.source.ref}: {exc}") from None

    def _agent(self, call_id: str) -> Agent:
        spec = self.source.spec
        # `--llm script` (ScriptedReplies) asks for no LLM, not for another script: an agent's own script is kept
        if spec is not None:
            assert self.model_for is not None
            model = self.model_for(call_id)
            if isinstance(model, ScriptedReplies) and spec.script:
                model = LoopingScript(load_script_turns(spec.script, spec.name), call_id)
            return Agent(model=model, tools=self.tools, policy=spec.policy.to_policy(),
                         config=self.config, system_prompt=self.prompt, vocabulary=spec.vocabulary,
                         scope=spec.scope, language=spec.language, related=spec.related)
        assert self.source.factory is not None
        agent = call_with_accepted(self.source.factory, call_id=call_id, data_dir=self.data_dir)
        if not isinstance(agent, Agent):
            raise AgentConfigError(f"{self.source.ref} returned {type(agent).__name__}, not a loop.Agent")
        chosen = self.model_for(call_id) if self.model_for is not None else None
        if chosen is not None and not (isinstance(chosen, ScriptedReplies) and is_scripted(agent.model)):
            agent = agent.override(model=chosen)  # the factory's object is left as it built it
        return agent

    def with_journal(self, call_id: str, journal_path: str | Path) -> Agent:
        """An agent for one scripted call, journaling into `journal_path` (a SQLite path or a postgresql://
        URL) unless it has its own journal."""
        agent = self(call_id)
        if agent.journal is None:
            agent.journal = open_journal(journal_path)
        return agent


def load_agent(ref: str | None = None, base_dir: Path | None = None) -> AgentSource:
    """The agent `ref` names (see the module docstring); the demo order desk for None."""
    ref = ref or DEFAULT_AGENT
    path = Path(ref) if base_dir is None or Path(ref).is_absolute() else base_dir / ref
    if ref.endswith((".yaml", ".yml")):
        return AgentSource(ref, spec=AgentSpec.load(path))
    value = resolve_ref(ref, base_dir)
    if isinstance(value, AgentSpec):
        return AgentSource(ref, spec=value)
    if isinstance(value, str | Path) and str(value).endswith((".yaml", ".yml")):
        return AgentSource(ref, spec=AgentSpec.load(value))
    if callable(value):
        return AgentSource(ref, factory=value)
    raise AgentConfigError(f"{ref} is {type(value).__name__}: expected a callable returning a loop.Agent, "
                           "an AgentSpec or an agent file's path")


def add_agent_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", default=None, metavar="FILE.yaml|MODULE:FACTORY",
                        help="your agent: an agent file, or a callable returning a loop.Agent (it may take "
                             "call_id and data_dir); default: the demo order desk (voice/demo/)")
