"""`run_app`: run your own agent's module directly, as LiveKit users do (`python shop.py console`).

    from voice import run_app

    if __name__ == "__main__":
        run_app(build)          # python shop.py console | serve | call caller.wav | livekit start

It is `voiceloop COMMAND --agent shop.py:build ...`, with the rest of the command line passed on as given.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

COMMANDS = ("console", "serve", "call", "livekit")


def run_app(agent: Callable[..., Any] | str | Path, argv: Sequence[str] | None = None) -> NoReturn:
    """Run `voiceloop COMMAND` (from `argv`, default the script's command line) with `agent`: a function returning
    a `loop.Agent` (it may take call_id and data_dir), or an agent file (relative to the running script)."""
    sys.exit(app_main(agent, argv))


def app_main(agent: Callable[..., Any] | str | Path, argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = f"usage: python {Path(sys.argv[0]).name} {{{'|'.join(COMMANDS)}}} [options] (each: COMMAND --help)"
    if not args or args[0] in ("-h", "--help"):
        print(usage, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    if args[0] not in COMMANDS:
        print(f"{usage}; {args[0]!r} is not one of them", file=sys.stderr)
        return 2
    if "--agent" in args or any(a.startswith("--agent=") for a in args):
        print("run_app names the agent: leave --agent out (or run voiceloop itself)", file=sys.stderr)
        return 2
    try:
        ref = agent_ref(agent)
    except TypeError as exc:
        print(f"run_app: {exc}", file=sys.stderr)
        return 2
    from voice.cli import main

    return main([args[0], "--agent", ref, *args[1:]])


def agent_ref(agent: Callable[..., Any] | str | Path) -> str:
    """What `--agent` takes for `agent`: `path/file.py:name` for a module-level function, a path for a file."""
    if isinstance(agent, str | Path):
        main_file = getattr(sys.modules.get("__main__"), "__file__", None)
        path = Path(agent)
        if str(agent).endswith((".yaml", ".yml")) and not path.is_absolute() and main_file:
            path = Path(main_file).resolve().parent / path
        return str(path)
    source = inspect.getsourcefile(agent) if callable(agent) else None
    name = getattr(agent, "__qualname__", "")
    if source is None or not name or "<locals>" in name:
        raise TypeError(f"give run_app a function defined at the top of your module (def build(call_id): ...) or "
                        f"an agent file's path, not {type(agent).__name__}")
    path = Path(source).resolve()
    module = sys.modules.get(getattr(agent, "__module__", ""))
    if module is not None and getattr(module, "__file__", None) and Path(module.__file__).resolve() == path:
        from voice.agents.spec import file_module_name

        sys.modules.setdefault(file_module_name(path), module)  # the running script is not imported again
    return f"{path}:{name}"
