"""HyDE (Gao et al., 2022): the language model writes a hypothetical answer passage, which is
searched instead of the question. One shared step (``hyde``) feeds two channels:

- ``hyde``: the passage's vector (or, in ``mean`` mode, the mean of several passages' vectors
  and the question's) against the entries' vectors;
- ``hyde_bm25``: the passage's terms against the entries' terms.
"""
from __future__ import annotations

from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import HydeMode, Settings
from ragsift.retrieve.channels.base import ChannelContext, LLMChannel, register_channel
from ragsift.retrieve.steps import StepInput, error_text, register_step
from ragsift.retrieve.transforms import Hypotheses, generate_hypotheses, hyde_text, hyde_vector
from ragsift.store.base import StoredHit


def _trace(value: Hypotheses | None, err: BaseException | None, settings: Settings) -> dict[str, Any]:
    return {"mode": settings.transforms.hyde_mode, "hypotheses": value.texts if value else [],
            "errors": (value.errors if value else []) + ([error_text(err)] if err else []),
            "elapsed_ms": round(value.elapsed_ms, 3) if value else None}


@register_step("hyde", trace=_trace)
def _hypotheses(inp: StepInput, deadline: Deadline) -> Hypotheses:
    """One hypothesis, or ``hyde_samples`` of them in mean mode (the first greedy)."""
    t = inp.settings.transforms
    n = t.hyde_samples if t.hyde_mode is HydeMode.MEAN else 1
    # in the knowledge base's main language when it differs from the question's (``translate``)
    return generate_hypotheses(inp.llm(), inp.query, inp.corpus_language or inp.language, n,
                               temperature=t.hyde_temperature,
                               max_tokens=t.hyde_max_tokens, prompts=inp.settings.llm.prompts, deadline=deadline)


@register_channel("hyde")
class HydeChannel(LLMChannel):
    steps = ("hyde",)

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        hyp = ctx.step("hyde", deadline)
        vector = hyde_vector(ctx.embedder(), ctx.query, hyp, ctx.settings.transforms.hyde_mode)
        return ctx.search(self.name, lambda kinds: ctx.store.search_dense(vector, ctx.depth, ctx.where, kinds))


@register_channel("hyde_bm25")
class HydeBM25Channel(LLMChannel):
    matches_terms = True
    steps = ("hyde",)

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        text = hyde_text(ctx.query, ctx.step("hyde", deadline), ctx.settings.transforms.hyde_mode)
        terms = ctx.analyzer.analyze(text)
        return ctx.search(self.name, lambda kinds: ctx.store.search_bm25(terms, ctx.depth, ctx.where, kinds))
