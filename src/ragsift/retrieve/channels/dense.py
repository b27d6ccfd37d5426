"""Dense channels: the question's vector against the entries' vectors (cosine similarity).

- ``dense``: the knowledge base's own embedder.
- ``dense:<name>``: an extra embedder the knowledge base was built with (``extra_embedders``),
  searched on its own vector column.
"""
from __future__ import annotations

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.models.embedders import load_embedder
from ragsift.retrieve.channels.base import CHANNELS, Channel, ChannelContext, register_channel
from ragsift.store.base import StoredHit


@register_channel("dense")
class DenseChannel(Channel):
    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        vector = ctx.embedder().embed_queries([ctx.plain_query(deadline)])[0]
        return ctx.search(self.name, lambda kinds: ctx.store.search_dense(vector, ctx.depth, ctx.where, kinds))


class ExtraDenseChannel(Channel):
    """``dense:<name>``: the vectors of an extra embedder."""

    PREFIX = "dense:"

    @property
    def embedder_name(self) -> str:
        return self.name[len(self.PREFIX):]

    def check(self, settings: Settings) -> None:
        if self.embedder_name not in settings.index.extra_embedders:
            raise ConfigError(f"unknown channel {self.name!r}: this knowledge base has no extra embedder "
                              f"{self.embedder_name!r} (extra_embedders: {list(settings.index.extra_embedders)})")

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        vector = load_embedder(self.embedder_name, ctx.settings.embedding).embed_queries([ctx.plain_query(deadline)])[0]
        return ctx.search(self.name, lambda kinds: ctx.store.search_dense(vector, ctx.depth, ctx.where, kinds,
                                                                          using=self.embedder_name))


CHANNELS.add_family(ExtraDenseChannel.PREFIX, lambda rest: ExtraDenseChannel(ExtraDenseChannel.PREFIX + rest),
                    lambda s: [ExtraDenseChannel.PREFIX + e for e in s.index.extra_embedders])
