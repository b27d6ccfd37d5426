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

Each group validates its own fields (types, ranges, enums, and rules within the group: weighted
fusion needs a weight); ``Settings`` checks what spans groups (a step or a strategy that needs
a language model, a small index that needs one, embedding prefixes for an embedder that takes
them). Who may set what: ``INDEX_KEYS`` are fixed at creation, ``NOT_PER_QUERY`` cannot change
per query, ``OPERATOR_KEYS`` only the operator sets (a caller of the server may not:
``check_caller_overrides``), ``CALLER_KEYS`` are the rest. Channel names are an open set: the
channel registry (``ragsift.retrieve.channels``) checks them, and the knowledge base runs that
check whenever it makes settings; so are units (``ragsift.retrieve.units``: the name, and each
unit's own rule, as ``auto``'s need for chunk entries).

One module a part: ``values`` (the enums and value types), ``groups`` (the groups, flat names,
errors), ``access`` (who may set what), ``settings`` (``Settings`` and the per-query model); every
name is importable from ``ragsift.config``.
"""
from ragsift.config.access import (
    CALLER_KEYS,
    CALLER_RERANKERS,
    INDEX_KEYS,
    NOT_PER_QUERY,
    OPERATOR_KEYS,
    refused_per_query,
)
from ragsift.config.groups import (
    DEPRECATED,
    FIRST_ANALYZER,
    FLAT,
    GROUPS,
    UNLISTED_WEIGHT,
    EmbeddingSettings,
    Group,
    Grouped,
    IndexSettings,
    IngestSettings,
    LLMSettings,
    MultiHopSettings,
    QuerySettings,
    RerankSettings,
    StoreSettings,
    TransformSettings,
    config_error,
    current_name,
    unknown_setting,
)
from ragsift.config.settings import (
    Settings,
    check_caller_overrides,
)
from ragsift.config.values import (
    OLD_SMALL_INDEX,
    TIMED_STEPS,
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
    parse_enum,
    shown_url,
)

__all__ = ["FusionMode", "Normalization", "Unit", "MultiHop", "Strategy", "HydeMode", "EmbedPrefixes", "StoreKind",
           "StoreFusion", "EntryKind", "shown_url", "OLD_SMALL_INDEX", "parse_enum", "TIMED_STEPS", "Int", "Float",
           "Bool", "Str", "Names", "Seconds", "UnitName", "Group", "IndexSettings", "FIRST_ANALYZER",
           "StoreSettings", "EmbeddingSettings", "IngestSettings", "QuerySettings", "UNLISTED_WEIGHT",
           "LLMSettings", "TransformSettings", "RerankSettings", "MultiHopSettings", "GROUPS", "FLAT", "DEPRECATED",
           "current_name", "Grouped", "unknown_setting", "config_error", "INDEX_KEYS", "NOT_PER_QUERY",
           "OPERATOR_KEYS", "CALLER_KEYS", "CALLER_RERANKERS", "refused_per_query", "check_caller_overrides",
           "Settings"]
