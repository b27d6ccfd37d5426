"""Typed settings. Index settings are fixed when a knowledge base is created and saved in
its ``ragsift.toml``; query settings are defaults that any single query may override.
"""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from ragsift.errors import ConfigError


class FusionMode(str, Enum):
    RRF = "rrf"
    WEIGHTED = "weighted"


class Unit(str, Enum):
    """What a query returns: the parent section (small-to-big), the child chunk itself
    (flat chunks), or the whole document."""

    PARENT = "parent"
    CHILD = "child"
    DOCUMENT = "document"


class Normalization(str, Enum):
    MINMAX = "minmax"
    ZSCORE = "zscore"
    NONE = "none"


def parse_enum(enum_cls: type[Enum], value: Any, what: str) -> Enum:
    try:
        return enum_cls(value)
    except ValueError:
        valid = ", ".join(repr(m.value) for m in enum_cls)  # type: ignore[attr-defined]
        raise ConfigError(f"unknown {what} {value!r}; valid values: {valid}") from None


# Settings that shape the index: changing them needs a new knowledge base (or a re-ingest).
INDEX_KEYS = ("embedder", "parent_max_tokens", "child_tokens", "child_overlap_tokens",
              "index_headings", "analyzer")

KNOWN_CHANNELS = ("dense", "bm25")


@dataclass(frozen=True)
class Settings:
    # --- index settings (saved with the knowledge base) ---
    embedder: str = "e5-small"
    parent_max_tokens: int = 1500
    child_tokens: int = 200
    child_overlap_tokens: int = 40
    index_headings: bool = True
    analyzer: str = "ragsift-zh-en-v1"
    # --- query settings (defaults; each query may override) ---
    channels: tuple[str, ...] = ("dense", "bm25")
    fusion: str = "rrf"
    rrf_k: int = 60
    weights: dict[str, float] = field(default_factory=lambda: {"dense": 0.5, "bm25": 0.5})
    normalization: str = "minmax"
    channel_depth: int = 100
    unit: str = "parent"
    max_parents: int = 4
    token_budget: int = 3000
    channel_timeout_s: float = 30.0
    max_query_chars: int = 4000

    def __post_init__(self) -> None:
        parse_enum(FusionMode, self.fusion, "fusion mode")
        parse_enum(Normalization, self.normalization, "normalization")
        parse_enum(Unit, self.unit, "unit")
        for name in ("parent_max_tokens", "child_tokens", "channel_depth", "max_parents",
                     "token_budget", "max_query_chars"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.rrf_k, int) or self.rrf_k < 0:
            raise ConfigError(f"rrf_k must be an integer >= 0, got {self.rrf_k!r}")
        if not 0 <= self.child_overlap_tokens < self.child_tokens:
            raise ConfigError("child_overlap_tokens must be >= 0 and smaller than child_tokens")
        if self.child_tokens > self.parent_max_tokens:
            raise ConfigError("child_tokens must not exceed parent_max_tokens")
        if self.channel_timeout_s <= 0:
            raise ConfigError("channel_timeout_s must be positive")
        if not self.channels:
            raise ConfigError("at least one channel is needed")
        for ch in self.channels:
            if ch not in KNOWN_CHANNELS:
                raise ConfigError(f"unknown channel {ch!r}; valid channels: {', '.join(KNOWN_CHANNELS)}")
        for ch, w in self.weights.items():
            if ch not in KNOWN_CHANNELS:
                raise ConfigError(f"weight for unknown channel {ch!r}")
            if not isinstance(w, (int, float)) or w < 0:
                raise ConfigError(f"weight for {ch!r} must be a number >= 0")

    def replace(self, **changes: Any) -> "Settings":
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        if "channels" in changes and changes["channels"] is not None:
            changes["channels"] = tuple(changes["channels"])
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def index_settings(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in INDEX_KEYS}

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["channels"] = list(self.channels)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Settings":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        data = dict(data)
        if "channels" in data:
            data["channels"] = tuple(data["channels"])
        try:
            return cls(**data)
        except TypeError as e:
            raise ConfigError(str(e)) from None

    # --- TOML persistence ---
    def save(self, path: Path) -> None:
        lines = ["# ragsift knowledge-base settings. Index settings are fixed at creation;",
                 "# query settings are defaults that a query may override.", ""]
        for k, v in self.to_dict().items():
            lines.append(f"{k} = {_toml_value(v)}")
        tmp = path.with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> "Settings":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read settings {path}: {e}") from None
        return cls.from_dict(data)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ConfigError(f"cannot write setting value {v!r}")


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else _toml_value(k)
