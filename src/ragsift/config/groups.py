"""The nine groups of settings (``GROUPS``), each a frozen pydantic model validating its own fields
and the rules within it; the flat names (``FLAT``, earlier spellings in ``DEPRECATED``) and how a
validation error is said in one line (``config_error``)."""
from __future__ import annotations

import warnings
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)

from ragsift.config.values import (
    Bool,
    EmbedPrefixes,
    EntryKind,
    Float,
    FusionMode,
    HydeMode,
    Int,
    MultiHop,
    Names,
    Normalization,
    Seconds,
    StoreFusion,
    StoreKind,
    Str,
    Strategy,
    Unit,
    UnitName,
    _as_tuple,
    _entry_kinds,
    parse_enum,
)
from ragsift.errors import ConfigError
from ragsift.names import did_you_mean, unknown
from ragsift.text.analyzer import ANALYZERS, DEFAULT_ANALYZER
from ragsift.text.prompts import validate_prompts


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
    unit: UnitName = Unit.PARENT
    """What comes back: parent (the section, default), child (the chunk), document, window
    (a sentence window), auto (auto-merged), or a unit a module registers (units are an open set:
    ragsift.retrieve.units checks the name and the unit's own rule)."""
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


class Grouped(BaseModel):
    """A model whose fields are the groups (``Settings``): its errors name a group's field by its
    flat name, and an unknown name with the nearest flat names and groups."""


def unknown_setting(loc: list[str], model: type[BaseModel]) -> str:
    """What to say of a name no setting has, with the nearest one: a flat name (``Settings(...)``,
    a query's overrides), a key in a group's table of ``ragsift.toml`` (``[ingest]
    chekpoint_documents``: the group's own keys), or a table no group has."""
    if issubclass(model, Grouped) and len(loc) >= 2 and loc[0] in GROUPS:
        return unknown("setting", ".".join(loc), [f"{loc[0]}.{f}" for f in GROUPS[loc[0]].model_fields])
    if issubclass(model, Group) and len(loc) == 1:
        return unknown("setting", loc[0], [model.flat_name(f) for f in model.model_fields])
    name = ".".join(loc) or "settings"
    return unknown("setting", name, [*FLAT, *GROUPS] if issubclass(model, Grouped) else list(model.model_fields))


def config_error(e: ValidationError, model: type[BaseModel]) -> ConfigError:
    """One readable line per problem, naming settings by their flat names."""
    lines = []
    named: set[str] = set()
    for err in e.errors(include_url=False):
        loc = [str(x) for x in err["loc"] if not isinstance(x, int)]
        if issubclass(model, Grouped) and len(loc) >= 2 and loc[0] in GROUPS:
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

