"""Settings, grouped by concern: frozen, typed, validated once, saved as TOML tables.

    Settings
      index       how documents are cut and indexed, by which models (fixed when a knowledge base
                  is created)
      store       where the index lives (the embedded LanceDB store, or a Milvus server), the
                  writers' lock, generations kept, where Milvus fuses
      embedding   how an embedder behind an endpoint (openai:<model>) is called
      ingest      limits of an ingest (file size, pages, reading time and memory, chunks per
                  document), OCR, its checkpoints
      query       channels, fusion, the strategy, the unit returned, budgets, deadlines and limits
      llm         the language model (HyDE, rewriting, translation, the judge, multi-hop,
                  summaries) and its client: endpoint, answer cache, retries, prompts
      transforms  HyDE, rewriting, translation and multi-query
      rerank      the reranker
      multihop    recursive retrieval

Every field has one *flat name*, unique across the groups: ``unit``, ``hyde_mode``,
``store_kind``, ``llm_model``, ``reranker``, ``multihop_mode`` (``FLAT``; a group's ``FLAT``
says where the flat name differs from the field's). Flat names are what
``KnowledgeBase.open(..., **settings)``, ``kb.query(..., **overrides)``, ``Settings.replace``
and old flat ``ragsift.toml`` files use; ``Settings(unit="auto")`` works too. Earlier spellings
(``store``, ``llm``, ``rerank``, ``multihop``, ``max_parents``) are still read (``DEPRECATED``).
The groups are what the code reads (``settings.query.unit``), what ``ragsift.toml`` holds (one
table per group) and what ``Settings.model_json_schema()`` exports.

Each group validates its own fields (types, ranges, enums, and rules within the group: auto
units need chunk entries); ``Settings`` checks what spans groups (a step or a strategy that needs
a language model, a small index that needs one, embedding prefixes for an embedder that takes
them). Who may set what: ``INDEX_KEYS`` are fixed at creation, ``NOT_PER_QUERY`` cannot change
per query, ``OPERATOR_KEYS`` only the operator sets (a caller of the server may not:
``check_caller_overrides``), ``CALLER_KEYS`` are the rest. Channel names are an open set: the
channel registry (``ragsift.retrieve.channels``) checks them, and the knowledge base runs that
check whenever it makes settings.
"""
from __future__ import annotations

import contextlib
import tomllib
import warnings
from collections.abc import Iterable, Iterator
from enum import Enum, EnumType, StrEnum
from pathlib import Path
from typing import Annotated, Any, ClassVar

import tomli_w
from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from ragsift.errors import ConfigError
from ragsift.names import did_you_mean, unknown
from ragsift.text.analyzer import ANALYZERS, DEFAULT_ANALYZER
from ragsift.text.prompts import validate_prompts


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


class Group(BaseModel):
    """A group of settings: frozen, no unknown fields, numbers finite. The docstring under each
    field is its description (the CLI's help and the JSON Schema)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True)
    #: field name -> flat name, where they differ
    FLAT: ClassVar[dict[str, str]] = {}
    #: fields only the operator sets (models, endpoints, files, prompts, limits): see OPERATOR_KEYS
    OPERATOR: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise config_error(e, type(self)) from None

    @classmethod
    def flat_name(cls, field: str) -> str:
        return cls.FLAT.get(field, field)


class IndexSettings(Group):
    """How documents are cut, what is indexed and by which models. Fixed when a knowledge base
    is created (changing them needs a new knowledge base)."""

    embedder: Str = "e5-small"
    """Dense embedding model: e5-small (zh+en, default), minilm (English, faster), use-multilingual
    (16 languages, fastest; needs ragsift[use]), st:<model>, or
    openai:<model> (any OpenAI-compatible /v1/embeddings endpoint: vLLM, Ollama, TEI, OpenAI)."""
    embed_prefixes: EmbedPrefixes = EmbedPrefixes.NONE
    """Query and passage instructions for openai:/st: embedders: none, e5, bge, qwen3."""
    parent_max_tokens: Int = Field(1500, gt=0, le=100_000)
    """Largest parent section, in approximate tokens."""
    child_tokens: Int = Field(200, gt=0, le=10_000)
    """Size of a child chunk (what is searched), in approximate tokens."""
    child_overlap_tokens: Int = Field(40, ge=0, le=10_000)
    """Overlap between neighbouring child chunks."""
    index_headings: Bool = True
    """Prepend the title and heading path to each child's indexed text."""
    analyzer: Str = DEFAULT_ANALYZER
    """The BM25 analyzer (the same at index and query time): ragsift-unicode-v2 (every script) or
    ragsift-zh-en-v1 (Chinese and ASCII words; what knowledge bases made before v2 keep)."""
    small_index: Annotated[tuple[EntryKind, ...], BeforeValidator(_entry_kinds)] = (EntryKind.CHUNK,)
    """What the small index holds: chunk (always) and more kinds of entries: sentence, keys (key
    sentences), summary (needs llm_model), raptor, keywords, entities, parent."""
    raptor_levels: Int = Field(3, gt=0, le=10)
    """Levels of the RAPTOR summary tree."""
    extra_embedders: Names = ()
    """More embedding models; the channel dense:<name> searches each."""
    sparse_encoder: Str = ""
    """Learned sparse vectors (e5-sparse, splade-tiny, splade:<model>); the channel sparse searches them."""

    @model_validator(mode="after")
    def _check(self) -> IndexSettings:
        if EntryKind.CHUNK not in self.small_index:
            raise ValueError(f"small_index must include 'chunk' and may add "
                             f"{', '.join(o.value for o in EntryKind if o is not EntryKind.CHUNK)}; "
                             f"got {[o.value for o in self.small_index]}")
        if self.child_overlap_tokens >= self.child_tokens:
            raise ValueError("child_overlap_tokens must be >= 0 and smaller than child_tokens")
        if self.child_tokens > self.parent_max_tokens:
            raise ValueError("child_tokens must not exceed parent_max_tokens")
        if self.analyzer not in ANALYZERS:
            raise ValueError(f"analyzer must be one of {', '.join(ANALYZERS)}; got {self.analyzer!r}")
        return self


FIRST_ANALYZER = "ragsift-zh-en-v1"  # what a settings file without an analyzer was made with


class StoreSettings(Group):
    """Where the index lives: the embedded LanceDB store in the directory, or a Milvus server."""

    FLAT: ClassVar[dict[str, str]] = {"kind": "store_kind", "uri": "store_uri", "name": "store_name",
                                      "index": "store_index", "fusion": "store_fusion"}
    kind: StoreKind = StoreKind.LANCEDB
    """lancedb (embedded, default) or milvus."""

    @field_validator("kind", mode="before")
    @classmethod
    def _registered_kind(cls, v: Any) -> Any:
        """A kind a registered backend added is valid too (its name is no member of the enum)."""
        if isinstance(v, str) and not isinstance(v, StoreKind):
            try:
                return parse_enum(StoreKind, v, "store_kind")
            except ConfigError as e:
                raise ValueError(str(e)) from None
        return v
    uri: Str = ""
    """Milvus: http(s)://host:19530; may change when the cluster moves."""
    name: Str = ""
    """Milvus: collection prefix (default: from the directory name)."""
    index: Str = "FLAT"
    """Milvus: vector index type at creation (FLAT exact; HNSW, AUTOINDEX ...)."""
    lock_timeout_s: Seconds = Field(10.0, ge=0)
    """Seconds a writer waits for another writer of the same knowledge base to finish."""
    keep_generations: Int = Field(2, ge=1, le=1000)
    """LanceDB: committed generations kept on disk, the newest included; ``ragsift check
    --restore`` can go back to any of them."""
    optimize_every: Int = Field(20, ge=0, le=1_000_000)
    """LanceDB: commits between automatic clean-ups of old table versions (0: only
    ``ragsift optimize``)."""
    fusion: StoreFusion = StoreFusion.RAGSIFT
    """Milvus: where dense and BM25 are fused when a query runs both: ragsift (after deduplicating
    each by unit, default) or engine (Milvus' own hybrid search over children, as the seed design
    does; the channel engine_hybrid in the trace). A query may choose."""


class EmbeddingSettings(Group):
    """How embedders behind an endpoint (openai:<model>) are called. The base URL may change
    when the server moves; the key comes from $RAGSIFT_EMBED_API_KEY or $OPENAI_API_KEY."""

    FLAT: ClassVar[dict[str, str]] = {"base_url": "embed_base_url", "batch_size": "embed_batch_size",
                                      "concurrency": "embed_concurrency", "timeout_s": "embed_timeout_s",
                                      "max_retries": "embed_max_retries"}
    base_url: Str = ""
    """openai:<model> embedders: the server, e.g. http://127.0.0.1:8080/v1 (else $RAGSIFT_EMBED_BASE_URL,
    $OPENAI_BASE_URL)."""
    batch_size: Int = Field(32, gt=0, le=2048)
    """Texts per request."""
    concurrency: Int = Field(4, gt=0, le=64)
    """Requests in flight at once (a big ingest scales with the embedding cluster)."""
    timeout_s: Seconds = 60.0
    """Seconds one request may take, retries included."""
    max_retries: Int = Field(2, ge=0, le=10)
    """Retries of a request on transient errors (connection errors, 429, 5xx), within its time."""


class IngestSettings(Group):
    """Limits of an ingest: a file or document past one is skipped with its reason; the rest of
    the ingest goes on. And checkpoints: by default an ingest is one commit; with a checkpoint
    setting it commits a generation of whole documents every so often, so that a kill loses only
    the work since the last one and the same ingest run again resumes there."""

    max_file_mb: Float = Field(50.0, gt=0, le=4096)
    """Largest file read, in megabytes."""
    max_file_pages: Int = Field(5000, gt=0, le=1_000_000)
    """Most pages (PDF) a file may have; past it the file is skipped with its reason."""
    max_file_chars: Int = Field(50_000_000, gt=0, le=2_000_000_000)
    """Most characters of text a packed file (PDF and other compressed formats) may make; it may
    also make at most a million plus 20 per byte of the file: a small file whose streams unpack
    to far more text (a bomb) is skipped, not read whole."""
    file_seconds: Seconds = 30.0
    """CPU seconds reading any file may take before its pages count (a file that loops or unpacks
    without making text is stopped here). Time is CPU time of the reading process, so a busy
    machine slows a file down without failing it."""
    file_seconds_per_page: Float = Field(2.0, ge=0, le=3600)
    """CPU seconds more for each page of work read: a PDF page, slide, chapter or sheet, 1,000 rows
    with values, 50,000 characters of text, an archive's member; a page read by OCR counts 30."""
    max_file_seconds: Seconds = 3600.0
    """Most CPU seconds reading one file may take, however long it is; past it the file is skipped
    with its reason."""
    max_reader_mb: Int = Field(2048, ge=64, le=1_048_576)
    """Memory the process that reads a file may allocate for it, in MB (files are read in a
    process of their own, ``ragsift.ingest.loaders.isolation``); past it the file is skipped."""
    ocr: Bool = True
    """Read scanned PDF pages and images by OCR (with ``pip install 'ragsift[ocr]'``); off: they
    are skipped (and named in the document's ``ocr_missing``)."""
    max_document_chunks: Int = Field(100_000, gt=0, le=10_000_000)
    """Most chunks one document may have (a 1,000-page book has about 10,000; e5-small embeds about
    5 a second on two cores, minilm about 30)."""
    checkpoint_documents: Int = Field(0, ge=0, le=100_000_000)
    """Commit a generation (a checkpoint) after every this many documents written (0: off, one commit
    per ingest). Unchanged documents do not count."""
    checkpoint_seconds: Float = Field(0.0, ge=0, le=7 * 86_400)
    """Commit a generation (a checkpoint) once this many seconds have passed since the last commit
    (0: off). Checked after each batch of documents is written."""
    follow_outside_links: Bool = False
    """Read a symbolic link in an ingested or synced folder whose target is outside the folder
    (off: it is skipped with its reason, so a folder never brings in a file from elsewhere on the
    server, such as /etc/passwd). On: it is read, known by where the link sits in the folder."""


class QuerySettings(Group):
    """What a query searches, how rankings are fused, what comes back and how long it may take.
    Defaults of the knowledge base; any query may override them."""

    OPERATOR: ClassVar[frozenset[str]] = frozenset({"tuned_by", "max_query_chars", "max_filter_nodes"})

    channels: Names = Field(("dense", "bm25"), min_length=1)
    """Retrieval channels run in parallel: dense, bm25, sparse, keywords, entities, hyde,
    hyde_bm25, multi_query, dense:<extra embedder>."""
    fusion: FusionMode = FusionMode.ADAPTIVE
    """How channel rankings are fused: adaptive (default: weighted, each channel's weight scaled per
    query by how far its best hit stands out of its list; chosen leave-one-set-out on nine sets, see
    docs/benchmarks.md), weighted (the weights as given) or rrf."""
    adaptive_power: Float = Field(1.0, ge=0, le=4)
    """Adaptive fusion: the power each channel's confidence is raised to (1: the confidence itself;
    0.5: its square root, damped; 0: the weights as given)."""
    rrf_k: Int = Field(60, ge=0, le=100_000)
    """k of reciprocal rank fusion: score = sum of 1 / (k + rank)."""
    weights: dict[Str, Annotated[float, Strict(), Field(ge=0, le=1_000)]] = Field(
        default_factory=lambda: {"dense": 0.5, "bm25": 0.5})
    """Weighted fusion: a weight per channel; a channel without one counts 0.5."""
    normalization: Normalization = Normalization.MINMAX
    """Weighted fusion: how a channel's raw scores are scaled (minmax, zscore, none)."""
    channel_depth: Int = Field(100, gt=0, le=10_000)
    """Entries each channel returns before deduplication and fusion."""
    tuned_by: Str = ""
    """What chose these fusion defaults (written by ragsift tune; shown in the trace)."""
    cross_language_weight: Float = Field(0.1, ge=0, le=1)
    """What a term channel's hit (bm25, hyde_bm25, keywords, entities, sparse) on an entry in
    another language than the question's counts in fusion, against 1 for a same-language hit: such
    a match can only come from shared names and numbers."""
    strategy: Strategy = Strategy.AUTO
    """auto (default: the settings as set, with multi-hop chosen per question by the router; the
    choice and its reason are in the trace), settings (as set, multi-hop as multihop_mode says),
    hybrid, hyde, multihop or combined (the seed's three: HyDE, then multi-hop, then parent
    expansion)."""
    unit: Unit = Unit.PARENT
    """What comes back: parent (the section, default), child (the chunk), document, window
    (a sentence window), auto (auto-merged)."""
    index_kinds: Annotated[tuple[EntryKind, ...], BeforeValidator(_as_tuple)] = Field(
        (EntryKind.CHUNK,), min_length=1)
    """Small-index entries the channels search."""
    whole_weights: dict[Str, Annotated[float, Strict(), Field(ge=0, le=1)]] = Field(
        default_factory=lambda: {"dense": 0.25, "bm25": 0.5, "hyde": 0.25, "hyde_bm25": 0.5, "sparse": 0.5})
    """When a query searches whole sections beside other kinds (index_kinds with parent): how much a
    section's whole entry counts against its parts, per channel; a channel named here searches both
    apart and scores a part by weight x its section's whole + (1 - weight) x itself (min-max scaled;
    ragsift.retrieve.whole). A channel not named takes the better raw score of the two (max).
    dense and bm25 chosen across ten sets (docs/benchmarks.md); hyde, hyde_bm25 and sparse
    follow the channel they resemble (not measured)."""
    window_sentences: Int = Field(2, ge=0, le=100)
    """Unit window: sentences on each side of the entry found."""
    merge_threshold: Float = Field(0.5, gt=0, le=1)
    """Unit auto: share of a section's chunks (or a document's sections) found that merges them."""
    max_passages: Int = Field(4, gt=0, le=1_000)
    """Most passages returned (formerly max_parents, still read)."""
    token_budget: Int = Field(3000, gt=0, le=1_000_000)
    """Token budget for the returned passages."""
    min_similarity: Float = Field(0.88, ge=-1, le=1)
    """A result is no good match (``no_good_match``) unless a passage reaches this cosine similarity
    to the question (dense channel), or ``min_term_match``, or (a best match in another language)
    ``min_standout``; the three chosen together on the shared sets against questions with no answer
    (docs/benchmarks.md, "Honest confidence")."""
    min_term_match: Float = Field(0.55, ge=0, le=1)
    """The share of the question's search terms a passage must hold to be a good match."""
    min_standout: Float = Field(0.045, ge=0, le=2)
    """When the dense channel's best is in another language than the question (where every
    similarity is lower): how far its similarity must stand out of the mean of the next 49 to be a
    good match (measured with at least 10 others)."""
    channel_timeout_s: Seconds = 30.0
    """Seconds each channel may take."""
    channel_timeouts: dict[Str, Seconds] = Field(default_factory=dict)
    """Timeouts of single channels or steps (rewrite, rerank, follow_up, summary), in seconds."""
    max_query_chars: Int = Field(4000, gt=0, le=1_000_000)
    """Longest query accepted, in characters."""
    max_filter_nodes: Int = Field(1000, gt=0, le=100_000)
    """Most comparisons and logical operators in one metadata filter."""

    @model_validator(mode="after")
    def _check(self) -> QuerySettings:
        if self.unit is Unit.AUTO and (EntryKind.CHUNK not in self.index_kinds
                                       or not set(self.index_kinds) <= {EntryKind.CHUNK, EntryKind.PARENT}):
            raise ValueError("auto-merging measures the share of a section's chunks that were found: "
                             "use it with index_kinds ['chunk'] (or ['chunk', 'parent'])")
        if (self.fusion in (FusionMode.WEIGHTED, FusionMode.ADAPTIVE) and len(self.channels) > 1
                and not any(self.weight(c) > 0 for c in self.channels)):
            raise ValueError("weighted fusion needs a weight above 0 for at least one channel")
        return self


    def whole_weight(self, channel: str) -> float | None:
        """A channel's whole weight (``whole_weights``), None when it takes the better of the two."""
        w = self.whole_weights.get(channel)
        return None if w is None else float(w)

    def weight(self, channel: str) -> float:
        """A channel's weight in weighted fusion (``UNLISTED_WEIGHT`` when ``weights`` has none)."""
        return float(self.weights.get(channel, UNLISTED_WEIGHT))


UNLISTED_WEIGHT = 0.5  # the weight of a channel that weighted fusion's ``weights`` do not name


class LLMSettings(Group):
    """The language model (optional) and its client."""

    FLAT: ClassVar[dict[str, str]] = {"model": "llm_model", "base_url": "llm_base_url", "cache": "llm_cache",
                                      "cache_max_entries": "llm_cache_max_entries",
                                      "cache_max_age_days": "llm_cache_max_age_days",
                                      "max_retries": "llm_max_retries", "max_concurrency": "llm_max_concurrency",
                                      "prompts": "prompts"}
    OPERATOR: ClassVar[frozenset[str]] = frozenset({"model", "base_url", "cache", "cache_max_entries",
                                                    "cache_max_age_days", "max_retries", "max_concurrency",
                                                    "prompts"})
    model: Str = ""
    """'' (none), local:<packaged name | file.gguf> or openai:<model>."""
    base_url: Str = ""
    """For openai:*; else RAGSIFT_LLM_BASE_URL / OPENAI_BASE_URL."""
    cache: Bool | Str = True
    """Answer cache: true ($RAGSIFT_CACHE_DIR/llm-cache.sqlite), a file path, or false."""
    cache_max_entries: Int = Field(100_000, gt=0, le=100_000_000)
    """Most answers the cache keeps; past it the least recently used go (100,000 answers take
    about 100 MB)."""
    cache_max_age_days: Float = Field(90.0, gt=0, le=36_500)
    """Answers not used for this many days are dropped."""
    max_retries: Int = Field(2, ge=0, le=10)
    """Retries of a call on transient errors, within its deadline."""
    max_concurrency: Int = Field(4, gt=0, le=256)
    """Calls in flight per endpoint."""
    prompts: dict[Str, dict[Str, Str]] = Field(default_factory=dict)
    """Prompt templates replaced, e.g. {"hyde.en": {"system": "...", "user": "Question: {question}"}}."""

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        kind, _, name = v.partition(":")
        if v and (kind not in ("local", "openai") or not name):
            raise ValueError(f"unknown llm {v!r}; use 'openai:<model>' or 'local:<name or file.gguf>'")
        return v

    @field_validator("prompts")
    @classmethod
    def _prompts(cls, v: dict[str, Any]) -> dict[str, Any]:
        validate_prompts(v)
        return v


class TransformSettings(Group):
    """Query transforms that call the language model: HyDE, rewriting, multi-query."""

    hyde_mode: HydeMode = HydeMode.HYPOTHESIS
    """HyDE: hypothesis, query+hypothesis, or mean (of several hypotheses and the question)."""
    hyde_samples: Int = Field(4, gt=0, le=16)
    """HyDE mean mode: hypotheses averaged."""
    hyde_temperature: Float = Field(0.7, ge=0, le=2)
    """HyDE mean mode: sampling temperature of the hypotheses after the first."""
    hyde_max_tokens: Int = Field(256, gt=0, le=4096)
    """HyDE: longest hypothesis, in model tokens."""
    rewrite: Bool = False
    """The plain channels search an LLM rewrite of the question."""
    translate: Bool = True
    """With a language model (llm): when the knowledge base holds chunks in another language than
    the question's (zh or en, at least a tenth of its chunks), the term channels also search the
    question translated into it, and HyDE writes its passage in the knowledge base's main language."""
    multi_query_n: Int = Field(3, gt=0, le=16)
    """Queries the multi_query channel asks the model for."""


class RerankSettings(Group):
    """The reranker of the top fused units."""

    FLAT: ClassVar[dict[str, str]] = {"model": "reranker", "top_n": "rerank_top_n", "max_tokens": "rerank_max_tokens",
                                      "base_url": "rerank_base_url"}
    OPERATOR: ClassVar[frozenset[str]] = frozenset({"base_url"})
    model: Str = ""
    """'' (none), llm-judge, cross-encoder:<model>, api:<model> (a /rerank endpoint: Cohere, Jina,
    vLLM) or tei:<model> (Text Embeddings Inference's /rerank)."""
    top_n: Int = Field(10, gt=0, le=1_000)
    """Fused units reranked; the rest keep their order."""
    max_tokens: Int = Field(256, gt=0, le=8192)
    """A passage is cut to this before it is judged."""
    base_url: Str = ""
    """api:/tei: rerankers: the server, e.g. http://127.0.0.1:8080/v1 (else $RAGSIFT_RERANK_BASE_URL); the
    key comes from $RAGSIFT_RERANK_API_KEY."""

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        kind, _, name = v.partition(":")
        if v and v != "llm-judge" and not (kind in ("cross-encoder", "api", "tei") and name):
            raise ValueError(f"unknown reranker {v!r}; use 'llm-judge', 'cross-encoder:<model>', 'api:<model>' "
                             "or 'tei:<model>'")
        return v


class MultiHopSettings(Group):
    """Recursive retrieval: retrieve, read, ask the next question, stop when nothing new comes."""

    FLAT: ClassVar[dict[str, str]] = {"mode": "multihop_mode"}
    mode: MultiHop = MultiHop.OFF
    """off, keywords (follow the documents that the question and the found passages name by title,
    else key terms) or llm (follow-ups by the model)."""
    hops_max: Int = Field(2, gt=0, le=10)
    """Retrieval rounds, the question's own included: 2, the best on HotpotQA's calibration
    questions (keywords mode, benchmarks/links.py)."""
    hop_queries: Int = Field(2, gt=0, le=10)
    """Follow-up queries per hop in keywords mode: per kind (named documents, linked documents, key
    terms), at most this many."""
    hop_top: Int = Field(5, gt=0, le=100)
    """Units per query that count as found, and over which gain is measured."""
    hop_min_gain: Float = Field(0.3, ge=0, le=1)
    """A hop's searches by words (key terms, the model's query) with less gain (new units / units
    they could add) are dropped; a hop left with nothing new ends the loop (measured on HotpotQA,
    benchmarks/multihop.py and benchmarks/links.py)."""
    hop_protect: Int = Field(2, ge=0, le=100)
    """The question's own top units that stay ahead of key-term and model follow-ups (named
    documents come first, linked ones after the passage that names them)."""
    hop_llm_calls: Int = Field(4, gt=0, le=100)
    """Budget of follow-up model calls per question."""
    hop_time_s: Seconds = 120.0
    """No new hop starts after this many seconds."""


GROUPS: dict[str, type[Group]] = {
    "index": IndexSettings, "store": StoreSettings, "embedding": EmbeddingSettings, "ingest": IngestSettings,
    "query": QuerySettings,
    "llm": LLMSettings,
    "transforms": TransformSettings, "rerank": RerankSettings, "multihop": MultiHopSettings,
}
#: flat name -> (group, field)
FLAT: dict[str, tuple[str, str]] = {cls.flat_name(f): (g, f) for g, cls in GROUPS.items() for f in cls.model_fields}
#: earlier spellings of flat names, still read (a DeprecationWarning from code; silently from
#: files): four were also the names of groups, one named passages "parents"
DEPRECATED: dict[str, str] = {"max_parents": "max_passages", "llm": "llm_model", "rerank": "reranker",
                              "multihop": "multihop_mode", "store": "store_kind"}


def current_name(name: str, warn: bool = True) -> str:
    """A flat name in its current spelling (an earlier one is mapped, with a DeprecationWarning
    when ``warn``)."""
    new = DEPRECATED.get(name)
    if new is None:
        return name
    if warn:
        warnings.warn(f"the setting {name!r} is now called {new!r}; {name!r} still works but will go",
                      DeprecationWarning, stacklevel=4)
    return new
#: settings fixed when a knowledge base is created (flat names)
INDEX_KEYS: tuple[str, ...] = tuple(IndexSettings.model_fields) + ("store_kind", "store_name", "store_index")
#: settings a single query may not change (flat names)
NOT_PER_QUERY: tuple[str, ...] = INDEX_KEYS + tuple(
    g.flat_name(f) for g in (StoreSettings, EmbeddingSettings, IngestSettings) for f in g.model_fields
    if g.flat_name(f) != "store_fusion")  # where a store fuses is how a query searches
#: the operator's settings among the query-time ones (flat names): what the server calls, reads
#: or writes (models, endpoints, cache files, prompts) and the limits it enforces. A Python
#: caller owns the process and may change them per query; a caller of the server (HTTP, MCP) may
#: not (``check_caller_overrides``).
OPERATOR_KEYS: tuple[str, ...] = tuple(
    g.flat_name(f) for g in GROUPS.values() for f in g.model_fields
    if g.flat_name(f) not in NOT_PER_QUERY and f in g.OPERATOR)
#: what a caller of the server may change per query: how to search (flat names)
CALLER_KEYS: tuple[str, ...] = tuple(n for n in FLAT if n not in NOT_PER_QUERY and n not in OPERATOR_KEYS)
#: rerankers a caller may ask for per query besides the operator's own: none, or the judge that
#: runs on the operator's language model
CALLER_RERANKERS = ("", "llm-judge")


def refused_per_query(names: Iterable[str]) -> str | None:
    """Why a caller of the server may not set these settings per query (None: it may): index and
    store settings are fixed at creation; the operator's (models, endpoints, cache paths, prompts,
    limits) are set when the server starts."""
    names = [current_name(n, warn=False) for n in names]
    fixed = sorted(n for n in names if n in NOT_PER_QUERY)
    if fixed:
        return f"index settings cannot change per query: {', '.join(fixed)}"
    operator = sorted(n for n in names if n in OPERATOR_KEYS)
    if operator:
        return (f"{', '.join(operator)}: set by the server's operator (the knowledge base's settings), not per "
                f"query; a query may choose how to search ({', '.join(CALLER_KEYS[:6])}, ...), not which models, "
                "endpoints, files or limits the server uses")
    return None


def check_caller_overrides(overrides: dict[str, Any], settings: Settings) -> None:
    """Refuse per-query settings that a caller of the server may not choose (ConfigError naming
    them, ``refused_per_query``). A caller may ask for ``reranker`` only as '' (off), 'llm-judge'
    (on the operator's language model) or the reranker the operator configured."""
    why = refused_per_query(overrides)
    if why:
        raise ConfigError(why)
    asked = overrides.get("reranker")
    if asked is not None and asked not in CALLER_RERANKERS and asked != settings.rerank.model:
        allowed = [repr(r) for r in dict.fromkeys((*CALLER_RERANKERS, settings.rerank.model))]
        raise ConfigError(f"reranker {asked!r}: a query may ask for {', '.join(allowed)}; other rerankers are "
                          "set by the server's operator")


def _route(data: dict[str, Any], warn: bool = True) -> dict[str, Any]:
    """Flat names into their groups; groups given whole are kept (and flat names added to them).
    Flat names are unique; four earlier spellings were also group names (``store``, ``llm``,
    ``rerank``, ``multihop``): there a table or a group object is the group, anything else the
    earlier flat name."""
    out: dict[str, Any] = {}
    flat: list[tuple[str, Any]] = []
    for key, value in data.items():
        if key in GROUPS and isinstance(value, (dict, Group)):
            out[key] = value.model_dump() if isinstance(value, Group) else dict(value)
        elif key in FLAT or key in DEPRECATED:
            flat.append((current_name(key, warn), value))
        else:
            out[key] = value  # unknown: rejected by the model, named in the error
    for key, value in flat:
        group, field = FLAT[key]
        out.setdefault(group, {})[field] = value
    return out


class Settings(BaseModel):
    """All settings of a knowledge base, one group per concern (see the module docstring).

    ``Settings(unit="auto", llm="openai:qwen")`` and ``Settings(query={"unit": "auto"})`` are the
    same; ``replace(**flat)`` returns a changed copy; ``flat()`` and ``to_dict()`` give the flat
    and the grouped form; ``save`` / ``load`` write and read ``ragsift.toml``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # the ignores below: pydantic's Field stubs reject these group classes as default_factory
    index: IndexSettings = Field(default_factory=IndexSettings)  # type: ignore[arg-type]
    store: StoreSettings = Field(default_factory=StoreSettings)  # type: ignore[arg-type]
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)  # type: ignore[arg-type]
    ingest: IngestSettings = Field(default_factory=IngestSettings)  # type: ignore[arg-type]
    query: QuerySettings = Field(default_factory=QuerySettings)  # type: ignore[arg-type]
    llm: LLMSettings = Field(default_factory=LLMSettings)  # type: ignore[arg-type]
    transforms: TransformSettings = Field(default_factory=TransformSettings)  # type: ignore[arg-type]
    rerank: RerankSettings = Field(default_factory=RerankSettings)  # type: ignore[arg-type]
    multihop: MultiHopSettings = Field(default_factory=MultiHopSettings)  # type: ignore[arg-type]

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise config_error(e, Settings) from None

    @model_validator(mode="before")
    @classmethod
    def _flat_names(cls, data: Any) -> Any:
        return _route(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _across_groups(self) -> Settings:
        needs = []
        if self.transforms.rewrite:
            needs.append("rewrite")
        if self.rerank.model == "llm-judge":
            needs.append("reranker = 'llm-judge'")
        if self.multihop.mode is MultiHop.LLM:
            needs.append("multihop_mode = 'llm'")
        if self.query.strategy in (Strategy.HYDE, Strategy.COMBINED):
            needs.append(f"strategy = '{self.query.strategy}'")
        if needs and not self.llm.model:
            raise ValueError(f"{', '.join(needs)} needs a language model: set llm_model to "
                             "'local:qwen2.5-coder-1.5b' (offline) or 'openai:<model>' (any compatible endpoint)")
        prefixed = self.index.embedder.startswith(("openai:", "st:"))
        if self.index.embed_prefixes is not EmbedPrefixes.NONE and not prefixed:
            raise ValueError(f"embed_prefixes applies to openai:<model> and st:<model> embedders; "
                             f"{self.index.embedder} adds its own")
        if EntryKind.SUMMARY in self.index.small_index and not self.llm.model:
            raise ValueError("small_index 'summary' needs a language model (llm_model) at ingest; "
                             "'keys' (key sentences) is the extractive index that needs none")
        return self

    # ------------------------------------------------------------------ reading
    def timeout(self, name: str) -> float:
        """The timeout of a channel or step: its own in ``channel_timeouts``, else
        ``channel_timeout_s`` (half of it for the rewrite and the translation, so that the channels
        waiting for them still have time to search the original question when they fail)."""
        q = self.query
        default = q.channel_timeout_s / 2 if name in ("rewrite", "translate") else q.channel_timeout_s
        return float(q.channel_timeouts.get(name, default))

    def get(self, flat_name: str) -> Any:
        """A setting by its flat name."""
        flat_name = current_name(flat_name)
        if flat_name not in FLAT:
            raise ConfigError(unknown("setting", flat_name, FLAT))
        group, field = FLAT[flat_name]
        return getattr(getattr(self, group), field)

    def flat(self) -> dict[str, Any]:
        """Every setting by its flat name, as JSON values."""
        grouped = self.to_dict()
        return {name: grouped[g][f] for name, (g, f) in FLAT.items()}

    def to_dict(self) -> dict[str, Any]:
        """The settings by group, as JSON values (what ``ragsift.toml`` holds)."""
        return self.model_dump(mode="json")

    def identity(self) -> dict[str, Any]:
        """The settings fixed at creation (``INDEX_KEYS``), by flat name, as JSON values: what a
        store records when it is made, and checks a settings file against when it is opened."""
        flat = self.flat()
        return {k: flat[k] for k in INDEX_KEYS}

    # ------------------------------------------------------------------ changing
    def replace(self, **changes: Any) -> Settings:
        """A copy with settings changed by flat name (``None`` leaves a setting as it is)."""
        changes = {current_name(k): v for k, v in changes.items() if v is not None}
        if not changes:
            return self
        wrong = sorted(set(changes) - set(FLAT))
        if wrong:
            raise ConfigError("; ".join(unknown("setting", k, FLAT) for k in wrong))
        data = {g: dict(getattr(self, g)) for g in GROUPS}
        for key, value in changes.items():
            group, field = FLAT[key]
            data[group][field] = value
        return Settings.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Settings from a grouped or a flat mapping (an old flat ``ragsift.toml``)."""
        if not isinstance(data, dict):
            raise ConfigError(f"settings must be a mapping, not {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise config_error(e, cls) from None

    # ------------------------------------------------------------------ TOML
    def save(self, path: Path) -> None:
        """Write ``ragsift.toml`` (one table per group) atomically."""
        text = ("# ragsift knowledge-base settings. [index] and the store kind, name and index are fixed\n"
                "# at creation; the rest are defaults that a query may override.\n\n"
                + tomli_w.dumps(self.to_dict()))
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        except OSError as e:  # a folder that cannot be written, a directory where the file goes
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise ConfigError(f"cannot write settings {path}: {e.strerror or e}") from None

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read ``ragsift.toml``: grouped tables, or the flat form of earlier versions."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read settings {path}: {e}") from None
        except RecursionError:  # arrays or tables nested thousands deep
            raise ConfigError(f"cannot read settings {path}: nested too deeply") from None
        index = data.get("index", data) if isinstance(data.get("index"), dict) else data
        if "analyzer" not in index:  # written before analyzers had versions: made with the first
            index["analyzer"] = FIRST_ANALYZER
        if isinstance(data.get("query"), dict) and "max_parents" in data["query"]:  # the earlier spelling
            data["query"]["max_passages"] = data["query"].pop("max_parents")
        if not isinstance(data.get("index"), dict):  # the flat form: earlier spellings read silently
            data = _route(data, warn=False)
        try:
            return cls.from_dict(data)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None

    # ------------------------------------------------------------------ schema
    @staticmethod
    def field_info(flat_name: str) -> FieldInfo:
        """The definition of a setting (type, default, constraints, description) by flat name."""
        group, field = FLAT[flat_name]
        return GROUPS[group].model_fields[field]

    @staticmethod
    def query_model() -> type[BaseModel]:
        """A flat model of the settings a caller of the server may override per query (how to
        search: ``CALLER_KEYS``), every field optional: the body schema of a query over HTTP."""
        return _query_model()


_QUERY_MODEL: type[BaseModel] | None = None


def _query_model() -> type[BaseModel]:
    global _QUERY_MODEL
    if _QUERY_MODEL is None:
        fields: dict[str, Any] = {}
        old = {new: o for o, new in DEPRECATED.items()}
        for name in CALLER_KEYS:
            info = Settings.field_info(name)
            typ: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
            alias = AliasChoices(name, old[name]) if name in old else None  # the earlier spelling still read
            fields[name] = (typ | None, Field(None, description=info.description, validation_alias=alias))
        _QUERY_MODEL = create_model("QueryOverrides", __config__=ConfigDict(extra="forbid", allow_inf_nan=False),
                                    **fields)
    return _QUERY_MODEL


def unknown_setting(loc: list[str], model: type[BaseModel]) -> str:
    """What to say of a name no setting has, with the nearest one: a flat name (``Settings(...)``,
    a query's overrides), a key in a group's table of ``ragsift.toml`` (``[ingest]
    chekpoint_documents``: the group's own keys), or a table no group has."""
    if model is Settings and len(loc) >= 2 and loc[0] in GROUPS:
        return unknown("setting", ".".join(loc), [f"{loc[0]}.{f}" for f in GROUPS[loc[0]].model_fields])
    if issubclass(model, Group) and len(loc) == 1:
        return unknown("setting", loc[0], [model.flat_name(f) for f in model.model_fields])
    name = ".".join(loc) or "settings"
    return unknown("setting", name, [*FLAT, *GROUPS] if model is Settings else list(model.model_fields))


def config_error(e: ValidationError, model: type[BaseModel]) -> ConfigError:
    """One readable line per problem, naming settings by their flat names."""
    lines = []
    named: set[str] = set()
    for err in e.errors(include_url=False):
        loc = [str(x) for x in err["loc"] if not isinstance(x, int)]
        if model is Settings and len(loc) >= 2 and loc[0] in GROUPS:
            name = GROUPS[loc[0]].flat_name(loc[1]) if loc[1] in GROUPS[loc[0]].model_fields else ".".join(loc)
        elif issubclass(model, Group) and loc and loc[0] in model.model_fields:
            name = model.flat_name(loc[0])
        else:
            name = ".".join(loc) or "settings"
        if name in named:  # one problem per setting: the first is the one to fix
            continue
        named.add(name)
        value = err.get("input")
        kind = err["type"]
        if kind == "enum":
            valid = err.get("ctx", {}).get("expected", "").replace(" or ", ", ")
            hint = did_you_mean(value, [v.strip("'") for v in valid.split(", ")])
            lines.append(f"unknown {name} {value!r}; {hint + ' ' if hint else ''}valid values: {valid}")
        elif kind == "extra_forbidden":
            lines.append(unknown_setting(loc, model))
        elif kind in ("value_error", "assertion_error"):
            lines.append(str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, "))
        else:
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            lines.append(f"{name}: {err['msg'][:1].lower() + err['msg'][1:]} (got {shown})")
    return ConfigError("; ".join(dict.fromkeys(lines)))

