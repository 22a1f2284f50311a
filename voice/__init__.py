"""voiceloop's voice side: audio in, user turns to the loop, streamed speech out.

The public names, imported on first use (so `import voice.audio` stays light):

    from voice import CallSession, SessionConfig, TurnConfig    # a call, its settings, its turn taking
    from voice import load_stack, SpeechStack                   # the speech engines (VAD, STT, TTS), loaded once
    from voice import load_agent, AgentSource, AgentSpec        # an agent file or factory -> one Agent per call
    from voice import run_audio_call, check_call_script         # testing your agent over audio
    from voice import run_app                                   # `python shop.py console`: your module runs itself
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "CallSession": "voice.runtime.session", "SessionConfig": "voice.call.state",
    "TurnRecord": "voice.runtime.session", "TurnConfig": "voice.call.turns",
    "SpeechStack": "voice.speech.stack", "load_stack": "voice.speech.stack",
    "AgentSource": "voice.agents.source", "load_agent": "voice.agents.source", "AgentSpec": "voice.agents.spec",
    "ServerConfig": "voice.hosting.config",
    "AudioCall": "voice.testing", "run_audio_call": "voice.testing", "check_call_script": "voice.testing",
    "run_app": "voice.cli._app",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'voice' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
