"""Learned sparse (BGE-M3 / SPLADE style): the question's term weights, dot product with the
entries' sparse vectors. Needs a knowledge base built with ``sparse_encoder``."""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.retrieve.channels.base import Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit


@register_channel("sparse")
class SparseChannel(Channel):
    matches_terms = True

    def check(self, settings: Settings) -> None:
        if not settings.index.sparse_encoder:
            raise ConfigError("the sparse channel needs a knowledge base built with sparse_encoder "
                              "(e5-sparse, splade-tiny or splade:<model>)")

    def unavailable(self, settings: Settings) -> str | None:
        return None if settings.index.sparse_encoder else (
            "searches learned sparse vectors, and this knowledge base was created without them (sparse_encoder)")

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        from ragsift.models.sparse import load_sparse_encoder

        encoder = load_sparse_encoder(ctx.settings.index.sparse_encoder)
        query = encoder.encode_queries([ctx.term_query(deadline)])[0]
        return ctx.search(self.name, lambda kinds: ctx.store.search_sparse(query, ctx.depth, ctx.where, kinds))
