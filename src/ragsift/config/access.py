"""Who may set what: ``INDEX_KEYS`` fixed at creation, ``NOT_PER_QUERY``, the operator's
(``OPERATOR_KEYS``) and what a caller of the server may choose per query (``CALLER_KEYS``)."""
from __future__ import annotations

from collections.abc import Iterable

from ragsift.config.groups import (
    FLAT,
    GROUPS,
    EmbeddingSettings,
    IndexSettings,
    IngestSettings,
    StoreSettings,
    current_name,
)

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

