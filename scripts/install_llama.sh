#!/usr/bin/env bash
# Build llama-cpp-python 0.3.36 once (sdist only on the registry), cache the wheel, install it.
#
# Usage: scripts/install_llama.sh [VENV]        (default VENV: .venv)
# Cache: ${VOICELOOP_CACHE:-$HOME/.cache/voiceloop}/wheels/llama_cpp_python-0.3.36-*.whl
# A cached wheel is reused; otherwise it is compiled (7-16 min on 2 cores) with portable
# x86-64 flags (AVX2/FMA/F16C, no -march=native) so the wheel runs on any machine of this kind.
set -euo pipefail

VERSION=0.3.36
VENV=${1:-.venv}
CACHE=${VOICELOOP_CACHE:-$HOME/.cache/voiceloop}
WHEELS=$CACHE/wheels
LOG=$WHEELS/llama_cpp_python-$VERSION-build.log
PY=$VENV/bin/python

[ -x "$PY" ] || { echo "install_llama: no python at $PY (pass the venv as \$1)" >&2; exit 2; }
mkdir -p "$WHEELS"

find_wheel() { ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl 2>/dev/null | head -n1 || true; }

if "$PY" -c "import llama_cpp, sys; sys.exit(0 if llama_cpp.__version__ == '$VERSION' else 1)" 2>/dev/null; then
    echo "install_llama: llama-cpp-python $VERSION already installed in $VENV"
    exit 0
fi

WHEEL=$(find_wheel)
if [ -z "$WHEEL" ]; then
    echo "install_llama: no cached wheel; building llama-cpp-python $VERSION (log: $LOG)"
    if ! command -v c++ >/dev/null 2>&1 || ! command -v cmake >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ]; then
            echo "install_llama: installing a C/C++ toolchain and cmake with apt-get"
            (apt-get update -qq && apt-get install -y -qq build-essential cmake ninja-build) >/dev/null
        else
            echo "install_llama: needs a C++ compiler and cmake: sudo apt-get install build-essential cmake" >&2
            exit 1
        fi
    fi
    export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
    start=$(date +%s)
    "$PY" -m pip wheel --no-deps -v "llama-cpp-python==$VERSION" -w "$WHEELS" >"$LOG" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        if kill -0 "$pid" 2>/dev/null; then
            step=$(grep -o '\[[0-9]*/[0-9]*\]' "$LOG" | tail -n1 || true)
            echo "install_llama: compiling... $(( $(date +%s) - start ))s elapsed ${step}"
        fi
    done
    if ! wait "$pid"; then
        echo "install_llama: build FAILED after $(( $(date +%s) - start ))s; last lines of $LOG:" >&2
        tail -n 40 "$LOG" >&2
        exit 1
    fi
    echo "install_llama: built in $(( $(date +%s) - start ))s"
    WHEEL=$(find_wheel)
    [ -n "$WHEEL" ] || { echo "install_llama: build finished but no wheel in $WHEELS" >&2; exit 1; }
else
    echo "install_llama: using cached wheel $WHEEL"
fi

# Runtime deps (numpy, typing-extensions, diskcache, jinja2) come from the registry as usual.
"$PY" -m pip install --quiet "$WHEEL"
"$PY" -c "import llama_cpp; print('install_llama: llama_cpp', llama_cpp.__version__, 'OK')"
