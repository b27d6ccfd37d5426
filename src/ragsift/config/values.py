"""The settings' value types: the enums of every closed set (fusion modes, units built in,
strategies, store kinds, entry kinds ...), strict numbers, names and seconds, and the parsers of
values written in earlier forms."""
from __future__ import annotations

from collections.abc import Iterator
from enum import Enum, EnumType, StrEnum
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    Strict,
)

from ragsift.errors import ConfigError
from ragsift.names import did_you_mean


class FusionMode(StrEnum):
    """How channel rankings are fused."""

    RRF = "rrf"  # reciprocal rank fusion
    WEIGHTED = "weighted"  # weighted sum of normalized scores
    ADAPTIVE = "adaptive"  # weighted, each channel's weight scaled per query by how far its best hit stands out


class Normalization(StrEnum):
    """How a channel's raw scores are scaled before weighted fusion."""

    MINMAX = "minmax"
    ZSCORE = "zscore"
    NONE = "none"


class Unit(StrEnum):
    """What a query returns: the parent section (small-to-big), the child chunk itself
    (flat chunks), the whole document, a sentence window, or auto-merged units."""

    PARENT = "parent"
    CHILD = "child"
    DOCUMENT = "document"
    WINDOW = "window"  # sentence window: the entry found with window_sentences on each side
    AUTO = "auto"  # auto-merging: entries, or their section, or their document, by the share hit


class MultiHop(StrEnum):
    OFF = "off"
    KEYWORDS = "keywords"  # follow-ups without a model: documents named (titles), else key terms
    LLM = "llm"  # follow-up queries written by the language model


class Strategy(StrEnum):
    """How a question is searched: as the settings say, or a named strategy over them."""

    SETTINGS = "settings"  # the channels, multi-hop mode and unit as set (default)
    HYBRID = "hybrid"  # one round of the query channels: no HyDE, no multi-hop
    HYDE = "hyde"  # one round, with the HyDE channels beside the query channels (needs llm)
    MULTIHOP = "multihop"  # multi-hop (keywords, or llm when multihop_mode = 'llm'), no HyDE
    COMBINED = "combined"  # HyDE on the question, multi-hop from what it found, parent expansion
    AUTO = "auto"  # chosen per question from cheap signals: hybrid, hyde (with llm) or multihop


class HydeMode(StrEnum):
    HYPOTHESIS = "hypothesis"
    QUERY_HYPOTHESIS = "query+hypothesis"
    MEAN = "mean"


class EmbedPrefixes(StrEnum):
    """Instructions an embedding model expects before queries and passages (endpoint and
    sentence-transformers embedders; the packaged ones add their own)."""

    NONE = "none"
    E5 = "e5"  # "query: " / "passage: "
    BGE = "bge"  # "Represent this sentence for searching relevant passages: " before queries
    QWEN3 = "qwen3"  # "Instruct: ...\nQuery: " before queries


#: store kinds that backends registered besides the built-in ones added (``StoreKind.add``)
_ADDED_STORE_KINDS: dict[str, StoreKind] = {}


class _StoreKindType(EnumType):
    """``StoreKind``'s type: iterating it gives the kinds registered backends added after its
    members, so every list of the valid kinds (the command line's choices, errors) names them."""

    def __iter__(cls) -> Iterator[Any]:
        return iter([*super().__iter__(), *_ADDED_STORE_KINDS.values()])


class StoreKind(StrEnum, metaclass=_StoreKindType):
    """Where the index lives: the kind of a store backend registered in ``ragsift.store.STORES``.
    The built-in kinds are members; a backend registered by an application adds its kind
    (``ragsift.store.register_store`` calls ``add``)."""

    LANCEDB = "lancedb"
    MILVUS = "milvus"

    @classmethod
    def add(cls, value: str) -> StoreKind:
        """The kind named ``value``, made one if it is not a member (a registered backend's)."""
        if value in cls._value2member_map_:
            return cls(value)
        if value not in _ADDED_STORE_KINDS:
            kind = str.__new__(cls, value)
            kind._name_, kind._value_ = value.upper(), value
            _ADDED_STORE_KINDS[value] = kind
        return _ADDED_STORE_KINDS[value]

    @classmethod
    def discard(cls, value: str) -> None:
        """Forget a kind ``add`` made (a backend unregistered); the members stay."""
        _ADDED_STORE_KINDS.pop(value, None)

    @classmethod
    def _missing_(cls, value: object) -> StoreKind | None:
        return _ADDED_STORE_KINDS.get(value) if isinstance(value, str) else None


class StoreFusion(StrEnum):
    """Where dense and BM25 are fused on a store that can do it itself (Milvus)."""

    RAGSIFT = "ragsift"  # each channel deduplicated by unit, then fused by ragsift (default)
    ENGINE = "engine"  # one hybrid search in the engine (RRFRanker / WeightedRanker over children)


class EntryKind(StrEnum):
    """The kind of a small-index entry, as stored: what a knowledge base's small index holds
    (``small_index``, fixed at creation; ``ragsift.ingest.small_index``) and what a query searches
    (``index_kinds``)."""

    CHUNK = "chunk"
    SENTENCE = "sentence"
    KEYS = "keys"
    SUMMARY = "summary"
    RAPTOR = "raptor"
    KEYWORDS = "keywords"
    ENTITIES = "entities"
    PARENT = "parent"


def shown_url(url: str) -> str:
    """A URL as it may be shown (a name in a trace, an error, a settings listing): without a user,
    password or query string, which may carry credentials."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if not (parts.username or parts.password or parts.query):
            return url
        netloc = ("***@" if parts.username or parts.password else "") + (parts.hostname or "") + \
            (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:  # not a URL one can parse: shown as its scheme only
        return url.split("://", 1)[0] + "://***"


#: the plural spellings ``small_index`` took before it shared ``EntryKind`` with ``index_kinds``
#: (still read, in files and arguments)
OLD_SMALL_INDEX = {"chunks": "chunk", "sentences": "sentence", "keysentences": "keys", "summaries": "summary",
                   "parents": "parent"}


def _entry_kinds(v: Any) -> Any:
    v = _as_tuple(v)
    return tuple(OLD_SMALL_INDEX.get(x, x) if isinstance(x, str) else x for x in v) if isinstance(v, tuple) else v


def parse_enum(enum_cls: type[Enum], value: Any, what: str) -> Enum:
    try:
        return enum_cls(value)
    except ValueError:
        values = [str(m.value) for m in enum_cls]  # type: ignore[attr-defined]
        hint = did_you_mean(value, values)
        raise ConfigError(f"unknown {what} {value!r}; {hint + ' ' if hint else ''}"
                          f"valid values: {', '.join(map(repr, values))}") from None


# steps besides channels that take a timeout of their own in ``channel_timeouts``
TIMED_STEPS = ("rewrite", "translate", "rerank", "follow_up", "summary")


def _as_tuple(v: Any) -> Any:
    """Lists become tuples; one string is a one-item tuple (``channels="dense"``)."""
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list):
        return tuple(v)
    return v


# value types: numbers and flags are strict (no "5" for 5, no 1 for True) and finite
Int = Annotated[int, Strict()]


Float = Annotated[float, Strict()]


Bool = Annotated[bool, Strict()]


Str = Annotated[str, Strict()]


Names = Annotated[tuple[Str, ...], BeforeValidator(_as_tuple)]


Seconds = Annotated[float, Strict(), Field(gt=0, le=86_400)]


#: a unit's name: a built-in one as its ``Unit`` member, any other as given (the unit registry checks it)
UnitName = Annotated[Unit | Str, Field(union_mode="left_to_right")]

