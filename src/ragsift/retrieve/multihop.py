"""Multi-hop (recursive) retrieval: retrieve, read what was found, ask the next question,
retrieve again; stop when new searches stop bringing new information.

Each hop's follow-up queries come from the language model (``multihop = "llm"``: the question
and the passages found last; the model may answer DONE) or, without one (``"keywords"``),
from the entities and key terms of the passages found last that the question does not already
contain: one query per term, the term followed by the question's words that nothing found so
far contains (``"Shirley Temple government position held"``).

The loop stops, with the reason in the trace, when
- ``depth``: ``hops_max`` rounds have run;
- ``repeated_query``: every follow-up query was asked before;
- ``nothing_new``: a hop found no unit that earlier hops had not;
- ``low_gain``: a hop's gain (new units in its top ``hop_top`` / units looked at) was under
  ``hop_min_gain``; that hop is dropped;
- ``no_follow_up``: no new term to ask about (keywords mode);
- ``llm_done``: the model said the passages answer the question;
- ``llm_error``: the model failed (the results found so far are returned);
- ``llm_budget`` / ``time_budget``: ``hop_llm_calls`` or ``hop_time_s`` is spent;
- ``cancelled``: the query's deadline was cancelled (a client went away).

Hops are merged by ``merge_hops``: the question's own top ``hop_protect`` units stay first, then
the question's ranking and the follow-ups' new units (RRF over the follow-ups, earlier hops
weighing more) are taken in turn, so a passage the question found is not pushed out by what a
follow-up found.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import MultiHop, Settings
from ragsift.errors import RagsiftError
from ragsift.models.llm import LLMError
from ragsift.retrieve.fusion import rrf
from ragsift.retrieve.packing import Found, hits_by_unit
from ragsift.retrieve.rerank import rerank
from ragsift.retrieve.search import Searcher, SearchRound
from ragsift.store.filters import Node
from ragsift.text.entities import new_terms, residual_words
from ragsift.text.prompts import answer_lines, get_prompt
from ragsift.text.tokens import cut_to_tokens

FOUND_IN_PROMPT = 3  # passages shown to the model when it writes the next query
TOKENS_PER_PASSAGE = 120


@dataclass
class Hop:
    hop: int
    queries: list[str]
    source: str  # question | keywords | llm
    new_units: list[str] = field(default_factory=list)
    gain: float | None = None
    merged: bool = True
    elapsed_ms: float = 0.0
    top: list[list[str]] = field(default_factory=list)  # each query's top units

    def to_dict(self) -> dict[str, Any]:
        return {"hop": self.hop, "queries": self.queries, "source": self.source, "new_units": self.new_units,
                "gain": None if self.gain is None else round(self.gain, 4), "merged": self.merged,
                "elapsed_ms": round(self.elapsed_ms, 3), "top": self.top}


def _norm(q: str) -> str:
    return " ".join(q.lower().split())


class MultiHopSearch:
    """One question's multi-hop search: rounds on a ``Searcher``, merged into one ``SearchRound``."""

    def __init__(self, searcher: Searcher, question: str, s: Settings, where: Node | None,
                 deadline: Deadline | None = None) -> None:
        self.searcher, self.question, self.s, self.where = searcher, question, s, where
        self.deadline = deadline
        # each hop is a plain search; reranking, if any, runs once on the merged result
        self.hop_settings = s.replace(multihop="off", rerank="")

    def _texts(self, r: SearchRound, units: list[str]) -> list[str]:
        """Title and text of units (best first), for reading them."""
        hit_of = hits_by_unit(r.found, r.unit.key)
        hits = [hit_of[u] for u in units if u in hit_of]
        parents = self.searcher.store.get_parents(h.parent_id for h in hits)
        out = []
        for h in hits:
            sp = parents.get(h.parent_id)
            if sp is not None:
                text = r.unit.read(h, sp, self.s.query)
                out.append(f"{sp.title}: {text}" if sp.title and sp.title not in text[:200] else text)
        return out

    def _follow_up(self, found: list[str], deadline: Deadline) -> str:
        shown = "\n".join(f"- {cut_to_tokens(t, TOKENS_PER_PASSAGE, ' …')}" for t in found[:FOUND_IN_PROMPT])
        msgs = get_prompt("follow_up", self.language, self.s.llm.prompts).messages(question=self.question, found=shown)
        text = self.searcher.llm(self.s).generate(msgs, temperature=0.0, max_tokens=64, deadline=deadline)
        lines = answer_lines(text)
        if not lines:
            raise LLMError("empty follow-up query")
        return lines[0]

    def run(self) -> SearchRound:
        s, m, t0 = self.s, self.s.multihop, time.perf_counter()
        first = self.searcher.search(self.question, self.hop_settings, self.where, self.deadline)
        self.language = first.language
        hops = [Hop(0, [self.question], "question", elapsed_ms=(time.perf_counter() - t0) * 1000,
                    top=[[u for u, _ in first.ranked[: m.hop_top]]])]
        hops[0].new_units = hops[0].top[0]
        rankings: dict[str, list[tuple[str, float]]] = {}  # the follow-ups' rankings
        weights: dict[str, float] = {}
        found: set[str] = set(hops[0].new_units)
        hop0_top = set(hops[0].new_units)
        last_found = self._texts(first, hops[0].new_units)
        all_found = list(last_found)
        asked = {_norm(self.question)}
        spans = {pid: dict(v) for pid, v in first.spans.items()}
        entries: dict[str, Found] = dict(first.found)
        provenance: dict[str, list[dict[str, Any]]] = {}
        self._provenance(provenance, first.ranked, 0, self.question)
        llm_calls, stop, error = 0, "depth", None
        for h in range(1, m.hops_max):
            t_hop = time.perf_counter()
            if t_hop - t0 > m.hop_time_s:
                stop = "time_budget"
                break
            if self.deadline is not None and self.deadline.expired:
                stop = "cancelled"
                break
            if m.mode is MultiHop.LLM:
                if llm_calls >= m.hop_llm_calls:
                    stop = "llm_budget"
                    break
                llm_calls += 1
                try:
                    q = self._follow_up(last_found, Deadline(min(s.timeout("follow_up"),
                                                                  max(0.1, m.hop_time_s - (t_hop - t0)))))
                except RagsiftError as e:
                    stop, error = "llm_error", f"{type(e).__name__}: {e}"
                    break
                if q.strip().upper().startswith("DONE"):
                    stop = "llm_done"
                    break
                queries, source = [q], "llm"
            else:
                terms = new_terms(self.question, last_found, limit=m.hop_queries)
                if not terms:
                    stop = "no_follow_up"
                    break
                rest = residual_words(self.question, all_found)
                queries, source = [" ".join([t, *rest]) for t in terms], "keywords"
            queries = [q for q in queries if _norm(q) not in asked]
            if not queries:
                stop = "repeated_query"
                break
            asked.update(_norm(q) for q in queries)
            hop = Hop(h, queries, source)
            results = [self.searcher.search(q, self.hop_settings, self.where, self.deadline) for q in queries]
            new: list[str] = []
            for r in results:
                top = [u for u, _ in r.ranked[: m.hop_top]]
                hop.top.append(top)
                new += [u for u in top if u not in found and u not in new]
            hop.new_units = new
            hop.gain = len(new) / (m.hop_top * len(queries))
            hop.elapsed_ms = (time.perf_counter() - t_hop) * 1000
            hops.append(hop)
            if not new:
                hop.merged, stop = False, "nothing_new"
                break
            if hop.gain < m.hop_min_gain:
                hop.merged, stop = False, "low_gain"
                break
            for i, (q, r) in enumerate(zip(queries, results)):
                name = f"hop{h}.{i}"
                # a follow-up adds what is new: units the question's own search already ranked in
                # its top hop_top keep that credit only, so a follow-up that repeats them cannot
                # push out the new ones; and only its top hop_top count (deeper, its noise adds up)
                rankings[name] = [(u, v) for u, v in r.ranked[: m.hop_top] if u not in hop0_top]
                weights[name] = 1.0 / h  # earlier hops first
                self._provenance(provenance, r.ranked, h, q)
                for pid, sp in r.spans.items():
                    mine = spans.setdefault(pid, {})
                    for cid, v in sp.items():
                        mine.setdefault(cid, v)
                for cid, v in r.found.items():
                    entries.setdefault(cid, v)
            found.update(new)
            # read what this hop found: its new units, best first across its queries
            last_found = []
            for r in results:
                last_found += self._texts(r, [u for u in new if u in dict(r.ranked[: m.hop_top])])
            all_found += last_found
        merged = merge_hops(first.ranked, rankings, weights, m.hop_protect, s.query.rrf_k)
        t_hops = time.perf_counter()
        info = {"mode": m.mode, "hops": [hp.to_dict() for hp in hops], "stop": stop, "error": error,
                "llm_calls": llm_calls, "elapsed_ms": round((t_hops - t0) * 1000, 3)}
        timings = {"multihop": (t_hops - t0) * 1000}
        ranked, rerank_info = merged, None
        if s.rerank.model and merged:
            ranked, rerank_info = rerank(self.question, merged, s, entries, first.unit, self.searcher.store,
                                         lambda: self.searcher.llm(s), self.deadline)
            timings["rerank"] = (time.perf_counter() - t_hops) * 1000
        return replace(first, found=entries, spans=spans, fused=merged, ranked=ranked, rerank=rerank_info,
                       timings_ms=timings, multihop=info, provenance=provenance)

    @staticmethod
    def _provenance(prov: dict[str, list[dict[str, Any]]], ranked: list[tuple[str, float]], hop: int,
                    query: str, depth: int = 20) -> None:
        for rank, (u, _) in enumerate(ranked[:depth], 1):
            prov.setdefault(u, []).append({"hop": hop, "query": query, "rank": rank})


def merge_hops(question_ranking: list[tuple[str, float]], follow_ups: dict[str, list[tuple[str, float]]],
               weights: dict[str, float], protect: int, k: int) -> list[tuple[str, float]]:
    """The question's own top ``protect`` units first, then its ranking and the follow-ups'
    (fused by weighted RRF) taken in turn, one each, without repeats. Scores are 1/(k + rank)."""
    ours = [u for u, _ in question_ranking]
    theirs = [u for u, _ in rrf(follow_ups, k=k, weights=weights)] if follow_ups else []
    out: list[str] = list(dict.fromkeys(ours[:protect]))
    seen = set(out)
    queues = [iter(theirs), iter(ours[protect:])]  # a follow-up's unit, then one of ours, in turn
    while queues:
        for q in list(queues):
            u = next((x for x in q if x not in seen), None)
            if u is None:
                queues.remove(q)
                continue
            out.append(u)
            seen.add(u)
    return [(u, 1.0 / (k + r)) for r, u in enumerate(out, 1)]
