"""Entities: the question's named entities against the chunks' entities (entries of kind
``entities``, built with ``small_index`` entities). A question without an entity adds nothing."""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.config import EntryKind
from ragsift.retrieve.channels.base import Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit
from ragsift.text.entities import entities


@register_channel("entities")
class EntityChannel(Channel):
    entries = EntryKind.ENTITIES
    matches_terms = True
    searches_kinds = False  # its own entries only

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        names = [name for name, _ in entities(ctx.term_query(deadline))]
        terms = " ".join(dict.fromkeys(ctx.analyzer.terms(" ".join(names))))  # the knowledge base's analyzer
        return ctx.store.search_bm25(terms, ctx.depth, ctx.where, (EntryKind.ENTITIES,)) if terms else []
