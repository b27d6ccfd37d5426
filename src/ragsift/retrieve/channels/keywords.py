"""Keywords: the question's terms against the chunks' key words and phrases only (entries of
kind ``keywords``, built with ``small_index`` keywords)."""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.config import EntryKind
from ragsift.retrieve.channels.base import Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit


@register_channel("keywords")
class KeywordChannel(Channel):
    entries = EntryKind.KEYWORDS
    matches_terms = True
    searches_kinds = False  # its own entries only

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        terms = ctx.analyzer.analyze(ctx.term_query(deadline))
        return ctx.store.search_bm25(terms, ctx.depth, ctx.where, (EntryKind.KEYWORDS,))
