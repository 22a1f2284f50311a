"""The embedded model's warmed KV cache on disk: a new process restores a prefix it has evaluated before in
~10 ms instead of seconds of prompt evaluation. Files are keyed by the model file, llama.cpp's version, the
context size and the exact tokens; the 8 newest per model are kept."""

from __future__ import annotations

import array
import ctypes
import hashlib
import os
from pathlib import Path
from typing import Any


def kv_state_path(state_dir: Path, model_path: Path, name: str, n_ctx: int, tokens: list[int]) -> Path:
    import llama_cpp

    st = model_path.stat()
    key = hashlib.sha256(f"{model_path.name}:{st.st_size}:{llama_cpp.__version__}:{n_ctx}:".encode()
                         + array.array("i", tokens).tobytes()).hexdigest()[:24]
    return state_dir / f"{name}-{key}.kv"


def load_kv_state(llm: Any, path: Path, tokens: list[int]) -> bool:
    """Restore `llm`'s KV cache for exactly `tokens` from `path`; False (cache left empty) if it cannot."""
    import llama_cpp

    if not path.is_file():
        return False
    data = path.read_bytes()
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if llama_cpp.llama_state_set_data(llm._ctx.ctx, buf, len(data)) != len(data):
        llm.reset()
        llm._ctx.kv_cache_clear()
        return False
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)
    return True


def save_kv_state(llm: Any, path: Path, name: str) -> None:
    """Write `llm`'s whole KV state to `path` (atomically), dropping all but the newest 8 files of model `name`."""
    import llama_cpp

    try:
        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(ctx, buf, size)
        path.parent.mkdir(parents=True, exist_ok=True)
        old = sorted(path.parent.glob(f"{name}-*.kv"), key=lambda p: p.stat().st_mtime)
        for stale in old[:-7]:  # keep the 8 newest prefixes per model
            stale.unlink(missing_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(ctypes.string_at(buf, written))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the next process a cold start
