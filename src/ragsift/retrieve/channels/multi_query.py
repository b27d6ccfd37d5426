"""Multi-query: the language model writes ``multi_query_n`` queries (one shared step); each is
searched by vector and by BM25, and the lists are fused by RRF into this channel's one list."""
from __future__ import annotations

from functools import partial

from ragsift.cancel import Deadline
from ragsift.retrieve.channels.base import ChannelContext, LLMChannel, register_channel
from ragsift.retrieve.fusion import rrf
from ragsift.retrieve.steps import StepInput, error_text, register_step
from ragsift.retrieve.transforms import multi_queries
from ragsift.store.base import StoredHit
from ragsift.types import Ranking


@register_step("multi_query", trace=lambda queries, err, s: {"queries": queries or [], "error": error_text(err)})
def _queries(inp: StepInput, deadline: Deadline) -> list[str]:
    return multi_queries(inp.llm(), inp.query, inp.language, inp.settings.transforms.multi_query_n,
                         prompts=inp.settings.llm.prompts, deadline=deadline)


@register_channel("multi_query")
class MultiQueryChannel(LLMChannel):
    steps = ("multi_query",)

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        queries = ctx.step("multi_query", deadline)
        vectors = ctx.embedder().embed_queries(queries)
        lists: dict[str, Ranking] = {}
        by_id: dict[str, StoredHit] = {}
        for i, q in enumerate(queries):
            # each completed with the kinds searched (whole sections and their parts apart when mixed)
            dense = ctx.search(self.name, partial(ctx.store.search_dense, vectors[i], ctx.depth, ctx.where))
            bm25 = ctx.search(self.name, partial(ctx.store.search_bm25, ctx.analyzer.analyze(q), ctx.depth, ctx.where))
            for name, hits in ((f"dense{i}", dense), (f"bm25{i}", bm25)):
                lists[name] = [(h.child_id, h.score) for h in hits]
                for h in hits:
                    by_id.setdefault(h.child_id, h)
        return [StoredHit(cid, by_id[cid].parent_id, by_id[cid].doc_id, score, by_id[cid].start, by_id[cid].end)
                for cid, score in rrf(lists, k=ctx.settings.query.rrf_k)[:ctx.depth]]
