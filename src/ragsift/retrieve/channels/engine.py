"""``engine_hybrid``: dense and BM25 fused by the store's own engine (Milvus' hybrid search with
its RRFRanker or WeightedRanker over children), the seed design's path. A query runs it in place
of ``dense`` and ``bm25`` when ``store_fusion = "engine"`` on a Milvus knowledge base (the
query's fusion mode, ``rrf_k`` and the dense and bm25 weights are the engine's, and any
``normalization`` but "none" becomes the engine's arctan normalization); ragsift's own
fusion deduplicates each channel by unit first (``store_fusion = "ragsift"``, the default)."""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ragsift.cancel import Deadline
from ragsift.config import FusionMode, Settings, StoreKind
from ragsift.errors import ConfigError
from ragsift.retrieve.channels.base import ENGINE_HYBRID, NO_ENGINE, Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit

if TYPE_CHECKING:
    from ragsift.store.milvus import MilvusStore

REPLACES = ("dense", "bm25")


@register_channel(ENGINE_HYBRID)
class EngineHybridChannel(Channel):
    def check(self, settings: Settings) -> None:
        if settings.store.kind is not StoreKind.MILVUS:
            raise ConfigError("engine_hybrid (store_fusion = 'engine') needs a store that fuses in its engine: "
                              f"store = 'milvus' (this knowledge base is on {settings.store.kind.value})")

    def unavailable(self, settings: Settings) -> str | None:
        return NO_ENGINE.format(kind=settings.store.kind.value) if settings.store.kind is not StoreKind.MILVUS else None

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        q = ctx.settings.query
        text = ctx.plain_query(deadline)
        vector = ctx.embedder().embed_queries([text])[0]
        store = cast("MilvusStore", ctx.store)  # check() allows only a Milvus store
        return store.search_hybrid(vector, ctx.analyzer.analyze(text), ctx.depth, ctx.where,
                                   fusion=engine_fusion(q.fusion), rrf_k=q.rrf_k,
                                   weights=(q.weight("dense"), q.weight("bm25")), depth=ctx.depth,
                                   kinds=ctx.kinds, normalize=q.normalization.value != "none")


def engine_fusion(mode: FusionMode) -> str:
    """The fusion the engine runs: ``adaptive`` sets weights per query from each channel's own
    list, which the engine's one hybrid search does not give, so it fuses with the fixed weights."""
    return FusionMode.WEIGHTED.value if mode is FusionMode.ADAPTIVE else mode.value
