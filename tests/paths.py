"""The repository's folders, for tests at any depth of tests/ (they mirror the source tree: tests/voice/speech/ tests
voice/speech/). A test names these instead of counting `parents[N]` up from its own file, so moving it is safe.

`AUDIO_FIXTURES` is the repository's audio_fixtures/ whatever the working directory;
`voice.testing.scripted_call.FIXTURES` is the one a run uses (the working directory's, or `VOICELOOP_FIXTURES`)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
AUDIO_FIXTURES = ROOT / "audio_fixtures"
RECORDINGS = AUDIO_FIXTURES / "recordings"
