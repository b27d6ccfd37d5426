"""``engine_hybrid``: dense and BM25 fused by the store's own engine (Milvus' hybrid search with
its RRFRanker or WeightedRanker over children), the seed design's path. A query runs it in place
of ``dense`` and ``bm25`` when ``store_fusion = "engine"`` on a store that implements
``store.base.HybridSearch`` (its backend's registration says so: ``StoreBackend.provides``; the
query's fusion mode, ``rrf_k`` and the dense and bm25 weights are the engine's, and any
``normalization`` but "none" becomes the engine's arctan normalization); ragsift's own
fusion deduplicates each channel by unit first (``store_fusion = "ragsift"``, the default)."""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.config import FusionMode, Settings
from ragsift.errors import ConfigError
from ragsift.retrieve.channels.base import ENGINE_HYBRID, NO_ENGINE, Channel, ChannelContext, register_channel
from ragsift.store import backends_that, store_backend
from ragsift.store.base import HybridSearch, StoredHit

REPLACES = ("dense", "bm25")


def engine_unavailable(settings: Settings) -> str | None:
    """Why the engine's own fusion cannot run on a knowledge base with these settings, said for a
    caller (None: its store's backend provides ``HybridSearch``)."""
    kind = settings.store.kind.value
    return None if store_backend(kind).can(HybridSearch) else NO_ENGINE.format(kind=kind)


@register_channel(ENGINE_HYBRID)
class EngineHybridChannel(Channel):
    def check(self, settings: Settings) -> None:
        if not store_backend(settings.store.kind).can(HybridSearch):
            stores = " or ".join(f"store = {k!r}" for k in backends_that(HybridSearch))
            raise ConfigError("engine_hybrid (store_fusion = 'engine') needs a store that fuses in its engine: "
                              f"{stores} (this knowledge base is on {settings.store.kind.value})")

    def unavailable(self, settings: Settings) -> str | None:
        return engine_unavailable(settings)

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        q = ctx.settings.query
        store = ctx.store
        if not isinstance(store, HybridSearch):  # its backend said it was (check() allows no other)
            raise ConfigError(f"engine_hybrid: the {ctx.settings.store.kind.value} store does not fuse in its engine "
                              "(no search_hybrid), though its backend's registration says it does")
        text = ctx.plain_query(deadline)
        vector = ctx.embedder().embed_queries([text])[0]
        return store.search_hybrid(vector, ctx.analyzer.analyze(text), ctx.depth, ctx.where,
                                   fusion=engine_fusion(q.fusion), rrf_k=q.rrf_k,
                                   weights=(q.weight("dense"), q.weight("bm25")), depth=ctx.depth,
                                   kinds=ctx.kinds, normalize=q.normalization.value != "none")


def engine_fusion(mode: FusionMode) -> str:
    """The fusion the engine runs: ``adaptive`` sets weights per query from each channel's own
    list, which the engine's one hybrid search does not give, so it fuses with the fixed weights."""
    return FusionMode.WEIGHTED.value if mode is FusionMode.ADAPTIVE else mode.value
