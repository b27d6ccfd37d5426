"""Typed settings. Index settings are fixed when a knowledge base is created and saved in
its ``ragsift.toml``; query settings are defaults that any single query may override.
"""
from __future__ import annotations

import dataclasses
import json
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
    (flat chunks), the whole document, a sentence window, or auto-merged units."""

    PARENT = "parent"
    CHILD = "child"
    DOCUMENT = "document"
    WINDOW = "window"  # sentence window: the entry found with window_sentences on each side
    AUTO = "auto"  # auto-merging: entries, or their section, or their document, by the share hit


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
              "index_headings", "analyzer", "small_index", "raptor_levels", "extra_embedders",
              "sparse_encoder", "store", "store_name", "store_index")
SMALL_INDEX = ("chunks", "sentences", "keysentences", "summaries", "raptor", "keywords", "entities")
ENTRY_KINDS = ("chunk", "sentence", "keys", "summary", "raptor", "keywords", "entities")
STORES = ("lancedb", "milvus")

TUPLE_KEYS = ("channels", "small_index", "index_kinds", "extra_embedders")
KNOWN_CHANNELS = ("dense", "bm25", "hyde", "hyde_bm25", "multi_query", "keywords", "entities")
LLM_CHANNELS = ("hyde", "hyde_bm25", "multi_query")
# steps besides channels that take a timeout of their own in ``channel_timeouts``
TIMED_STEPS = ("rewrite", "rerank", "follow_up", "summary")


class MultiHop(str, Enum):
    OFF = "off"
    KEYWORDS = "keywords"  # follow-up queries from entities and key terms of what was found
    LLM = "llm"  # follow-up queries written by the language model


class HydeMode(str, Enum):
    HYPOTHESIS = "hypothesis"
    QUERY_HYPOTHESIS = "query+hypothesis"
    MEAN = "mean"


@dataclass(frozen=True)
class Settings:
    # --- index settings (saved with the knowledge base) ---
    embedder: str = "e5-small"
    parent_max_tokens: int = 1500
    child_tokens: int = 200
    child_overlap_tokens: int = 40
    index_headings: bool = True
    analyzer: str = "ragsift-zh-en-v1"
    # what the small index holds (ragsift.ingest.small_index): chunks always; sentences,
    # keysentences (extractive), summaries (needs llm), raptor (summary tree; llm or extractive),
    # keywords and entities (for the keywords / entities channels)
    small_index: tuple[str, ...] = ("chunks",)
    raptor_levels: int = 3
    extra_embedders: tuple[str, ...] = ()  # more embedding models; channel "dense:<name>" for each
    sparse_encoder: str = ""  # learned sparse vectors (e5-sparse, splade-tiny, splade:<model>); channel "sparse"
    # --- where the index lives: the embedded store in the directory, or a Milvus server ---
    store: str = "lancedb"  # lancedb | milvus
    store_uri: str = ""  # milvus: http(s)://host:19530; may change when the cluster moves
    store_name: str = ""  # milvus: collection prefix (default: from the directory name)
    store_index: str = "FLAT"  # milvus: vector index type at creation (FLAT exact; HNSW, AUTOINDEX ...)
    # --- query settings (defaults; each query may override) ---
    channels: tuple[str, ...] = ("dense", "bm25")
    fusion: str = "rrf"
    rrf_k: int = 60
    weights: dict[str, float] = field(default_factory=lambda: {"dense": 0.5, "bm25": 0.5})
    normalization: str = "minmax"
    channel_depth: int = 100
    unit: str = "parent"
    index_kinds: tuple[str, ...] = ("chunk",)  # entry kinds the channels search
    window_sentences: int = 2  # unit "window": sentences on each side of the entry found
    merge_threshold: float = 0.5  # unit "auto": share of a section's chunks (or a document's sections) hit
    max_parents: int = 4
    token_budget: int = 3000
    channel_timeout_s: float = 30.0
    channel_timeouts: dict[str, float] = field(default_factory=dict)  # per channel / step
    max_query_chars: int = 4000
    # --- language model (HyDE, rewriting, multi-query, LLM-judge reranking) ---
    llm: str = ""  # "" (none), "local:<packaged name | file.gguf>" or "openai:<model>"
    llm_base_url: str = ""  # for openai:*; else RAGSIFT_LLM_BASE_URL / OPENAI_BASE_URL
    llm_cache: bool | str = True  # True: $RAGSIFT_CACHE_DIR/llm-cache.sqlite; a path; False: off
    llm_max_retries: int = 2
    llm_max_concurrency: int = 4
    prompts: dict[str, Any] = field(default_factory=dict)  # e.g. {"hyde.en": {system=..., user=...}}
    hyde_mode: str = "hypothesis"
    hyde_samples: int = 4  # hypotheses in "mean" mode
    hyde_temperature: float = 0.7
    hyde_max_tokens: int = 256
    rewrite: bool = False  # plain channels search an LLM rewrite of the question
    multi_query_n: int = 3  # queries the multi_query channel asks for
    rerank: str = ""  # "" (none), "llm-judge" or "cross-encoder:<model>"
    rerank_top_n: int = 10
    rerank_max_tokens: int = 256  # a passage is cut to this before it is judged
    # --- multi-hop retrieval (retrieve, read, ask the next question, stop when nothing new) ---
    multihop: str = "off"  # off | keywords | llm
    hops_max: int = 3  # retrieval rounds, the question's own included
    hop_queries: int = 2  # follow-up queries per hop in keywords mode (one per new term)
    hop_top: int = 5  # units per query that count as found, and over which gain is measured
    hop_min_gain: float = 0.3  # measured on HotpotQA (benchmarks/multihop.py); a hop with less is dropped, the loop stops
    hop_protect: int = 2  # the question's own top units stay first
    hop_llm_calls: int = 4  # budget of follow-up LLM calls per question
    hop_time_s: float = 120.0  # no new hop starts after this many seconds

    def __post_init__(self) -> None:
        parse_enum(FusionMode, self.fusion, "fusion mode")
        parse_enum(Normalization, self.normalization, "normalization")
        parse_enum(Unit, self.unit, "unit")
        parse_enum(HydeMode, self.hyde_mode, "hyde_mode")
        parse_enum(MultiHop, self.multihop, "multihop mode")
        if "chunks" not in self.small_index or set(self.small_index) - set(SMALL_INDEX):
            raise ConfigError(f"small_index must include 'chunks' and may add {', '.join(SMALL_INDEX[1:])}; "
                              f"got {list(self.small_index)}")
        if not self.index_kinds or set(self.index_kinds) - set(ENTRY_KINDS):
            raise ConfigError(f"index_kinds must be a non-empty selection of {', '.join(ENTRY_KINDS)}; "
                              f"got {list(self.index_kinds)}")
        if self.unit == "auto" and set(self.index_kinds) != {"chunk"}:
            raise ConfigError("auto-merging measures the share of a section's chunks that were found: "
                              "use it with index_kinds ['chunk']")
        if not 0 < self.merge_threshold <= 1:
            raise ConfigError("merge_threshold must be in (0, 1]")
        if not isinstance(self.window_sentences, int) or self.window_sentences < 0:
            raise ConfigError("window_sentences must be an integer >= 0")
        if "sparse" in self.channels and not self.sparse_encoder:
            raise ConfigError("the sparse channel needs a knowledge base built with sparse_encoder "
                              "(e5-sparse, splade-tiny or splade:<model>)")
        if "summaries" in self.small_index and not self.llm:
            raise ConfigError("small_index 'summaries' needs a language model (llm) at ingest; "
                              "'keysentences' is the extractive index that needs none")
        if self.store not in STORES:
            raise ConfigError(f"unknown store {self.store!r}; valid stores: {', '.join(STORES)}")
        for name in ("parent_max_tokens", "child_tokens", "channel_depth", "max_parents",
                     "token_budget", "max_query_chars", "hyde_samples", "hyde_max_tokens",
                     "multi_query_n", "rerank_top_n", "rerank_max_tokens", "llm_max_concurrency",
                     "hops_max", "hop_queries", "hop_top", "hop_llm_calls", "raptor_levels"):
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
        known = self.known_channels()
        for ch in self.channels:
            if ch not in known:
                raise ConfigError(f"unknown channel {ch!r}; valid channels: {', '.join(known)}")
        for ch, w in self.weights.items():
            if ch not in known:
                raise ConfigError(f"weight for unknown channel {ch!r}")
            if not isinstance(w, (int, float)) or w < 0:
                raise ConfigError(f"weight for {ch!r} must be a number >= 0")
        if self.fusion == FusionMode.WEIGHTED.value:
            missing = [c for c in self.channels if c not in self.weights]
            if missing:
                raise ConfigError(f"weighted fusion needs a weight for every channel; missing: {', '.join(missing)}")
        for name, t in self.channel_timeouts.items():
            if name not in known + TIMED_STEPS:
                raise ConfigError(f"timeout for unknown channel or step {name!r}; valid: "
                                  f"{', '.join(known + TIMED_STEPS)}")
            if not isinstance(t, (int, float)) or isinstance(t, bool) or t <= 0:
                raise ConfigError(f"timeout for {name!r} must be a positive number of seconds")
        if not isinstance(self.llm_max_retries, int) or self.llm_max_retries < 0:
            raise ConfigError("llm_max_retries must be an integer >= 0")
        if not 0 <= self.hyde_temperature <= 2:
            raise ConfigError("hyde_temperature must be between 0 and 2")
        needs_llm = [c for c in self.channels if c in LLM_CHANNELS]
        needs_llm += ["rewrite"] if self.rewrite else []
        needs_llm += ["rerank = 'llm-judge'"] if self.rerank == "llm-judge" else []
        needs_llm += ["multihop = 'llm'"] if self.multihop == "llm" else []
        if not 0 <= self.hop_min_gain <= 1:
            raise ConfigError("hop_min_gain must be between 0 and 1")
        if not isinstance(self.hop_protect, int) or self.hop_protect < 0 or self.hop_time_s <= 0:
            raise ConfigError("hop_protect must be >= 0 and hop_time_s positive")
        if needs_llm and not self.llm:
            raise ConfigError(f"{', '.join(needs_llm)} needs a language model: set llm to "
                              "'local:qwen2.5-coder-1.5b' (offline) or 'openai:<model>' (any compatible endpoint)")
        if self.rerank and self.rerank != "llm-judge" and not self.rerank.startswith("cross-encoder:"):
            raise ConfigError(f"unknown reranker {self.rerank!r}; use 'llm-judge' or 'cross-encoder:<model>'")
        from ragsift.models.prompts import validate_prompts
        validate_prompts(self.prompts)

    def known_channels(self) -> tuple[str, ...]:
        """The built-in channels, "sparse", and "dense:<name>" for each extra embedder."""
        return KNOWN_CHANNELS + ("sparse",) + tuple(f"dense:{e}" for e in self.extra_embedders)

    def timeout(self, name: str) -> float:
        """The timeout of a channel or step: its own in ``channel_timeouts``, else
        ``channel_timeout_s`` (half of it for the rewrite, so that the channels waiting for it
        still have time to search the original question when it fails)."""
        default = self.channel_timeout_s / 2 if name == "rewrite" else self.channel_timeout_s
        return float(self.channel_timeouts.get(name, default))

    def replace(self, **changes: Any) -> "Settings":
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        for key in TUPLE_KEYS:
            if key in changes and changes[key] is not None:
                changes[key] = (changes[key],) if isinstance(changes[key], str) else tuple(changes[key])
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def index_settings(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in INDEX_KEYS}

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for key in TUPLE_KEYS:
            d[key] = list(getattr(self, key))
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Settings":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        data = dict(data)
        for key in TUPLE_KEYS:
            if key in data:
                data[key] = tuple(data[key])
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
        # a JSON string is a valid TOML basic string (control characters escaped), but for DEL
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ConfigError(f"cannot write setting value {v!r}")


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else _toml_value(k)
