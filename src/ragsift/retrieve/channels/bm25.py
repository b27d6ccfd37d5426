"""BM25: the question's analyzer terms against the entries' terms (the store scores them)."""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.retrieve.channels.base import Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit


@register_channel("bm25")
class BM25Channel(Channel):
    matches_terms = True

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        terms = ctx.analyzer.analyze(ctx.term_query(deadline))
        return ctx.search(self.name, lambda kinds: ctx.store.search_bm25(terms, ctx.depth, ctx.where, kinds))
