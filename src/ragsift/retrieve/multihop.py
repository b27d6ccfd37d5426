"""Multi-hop (recursive) retrieval: retrieve, read what was found, ask the next question,
retrieve again; stop when new searches stop bringing new information.

Each hop's follow-up queries come from names, in this order:
- ``named``: documents whose title the question names (first hop only), not found yet: each
  side of a comparison ("Which is older, X or Y?") gets its own search;
- ``link``: documents whose title the passages found last name (best passage first), not found
  yet: the bridge ("the film Kiss and Tell" → the document "Kiss and Tell"). When the question
  chains relations ("the hobby of the brother of the friend of X", ``text.chains``), a passage's
  links are the names in its sentences that state the relation this hop walks (hop 1 the first,
  hop 2 the second: "The friend of X is Y" over "The mother of X is Z"; every name of "The sons of
  X are A, B", up to ``hop_queries`` a hop), so the chain goes on past the second document, one
  hop per relation; else the first name it gives. The names of those sentences that earlier
  rounds found already are not asked about: the next hop reads their passages (the hop's
  ``walked``), so a chain whose first documents the question's own search found goes on from
  them instead of turning to a name off the chain; and a passage that states none of the chain's
  current relation gives a name only when no passage read does;
- ``term`` (keywords mode): when no title is named, the entities and key terms of the passages
  found last that the question does not already contain;
- ``llm`` (``multihop = "llm"``): the model's query, from the question and the passages found
  last, after the named and linked ones; the model may answer DONE (the hop then runs only the
  named and linked follow-ups, and stops if there are none).
One query per name, the name followed by the question's words that nothing found so far
contains (``"Shirley Temple government position held"``); a ``named`` or ``link`` query ranks
the units of the documents it names first. Titles are found by ``TitleIndex``
(``text/links.py``): whole words, case-folded, any script.

The first round searches with the query's channels, HyDE included if set (HyDE on the question);
follow-up rounds with the channels that need no model, so a follow-up costs no model call.

The loop stops, with the reason in the trace, when
- ``depth``: ``hops_max`` rounds have run;
- ``repeated_query``: every follow-up query was asked before;
- ``nothing_new``: a hop found no unit that earlier hops had not (and walked through none);
- ``low_gain``: a hop's searches by words (key terms, the model's query) had a gain (new units
  in their top ``hop_top`` / units looked at) under ``hop_min_gain`` and its searches by name
  added nothing; that hop is dropped (searches by name keep what they add; weak searches by
  words beside them are dropped, listed in the hop's ``dropped``);
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
from enum import StrEnum
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import MultiHop, Settings
from ragsift.errors import RagsiftError
from ragsift.models.llm import LLMError
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.found import Found, hits_by_unit
from ragsift.retrieve.fusion import rrf
from ragsift.retrieve.rerank import rerank
from ragsift.retrieve.search import Searcher, SearchRound
from ragsift.store.filters import Node
from ragsift.text.chains import mentions, relations
from ragsift.text.entities import new_terms, residual_words
from ragsift.text.prompts import answer_lines, get_prompt
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import cut_to_tokens
from ragsift.types import Ranking

FOUND_IN_PROMPT = 3  # passages shown to the model when it writes the next query
TOKENS_PER_PASSAGE = 120


class Stop(StrEnum):
    """Why a multi-hop search stopped (the module docstring says when each applies)."""

    DEPTH = "depth"
    REPEATED_QUERY = "repeated_query"
    NOTHING_NEW = "nothing_new"
    LOW_GAIN = "low_gain"
    NO_FOLLOW_UP = "no_follow_up"
    LLM_DONE = "llm_done"
    LLM_ERROR = "llm_error"
    LLM_BUDGET = "llm_budget"
    TIME_BUDGET = "time_budget"
    CANCELLED = "cancelled"


class FollowUpKind(StrEnum):
    """What a follow-up asks about."""

    NAMED = "named"  # a document the question names by title (first hop)
    LINK = "link"  # a document a passage found last names
    TERM = "term"  # an entity or key term of the passages found last (keywords mode)
    LLM = "llm"  # the model's query


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
    kinds: list[str] = field(default_factory=list)  # per query: named | link | term | llm
    names: list[str] = field(default_factory=list)  # per query: the title or term it asks about
    channels: list[str] = field(default_factory=list)  # the channels the hop searched
    dropped: list[str] = field(default_factory=list)  # queries by words whose gain was too low
    # documents the hop's relation led to that earlier rounds had found: the chain goes on from
    # them without a search
    walked: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {"hop": self.hop, "queries": self.queries, "source": self.source, "new_units": self.new_units,
               "gain": None if self.gain is None else round(self.gain, 4), "merged": self.merged,
               "elapsed_ms": round(self.elapsed_ms, 3), "top": self.top, "channels": self.channels,
               "dropped": self.dropped}
        if self.kinds:
            out["kinds"], out["names"] = self.kinds, self.names
        if self.walked:
            out["walked"] = self.walked
        return out


@dataclass(frozen=True)
class FollowUp:
    """A follow-up: the query, what it asks about, and the documents it names."""

    query: str
    kind: FollowUpKind
    name: str
    docs: frozenset[str] = frozenset()
    anchor: str | None = None  # a link: the unit whose passage names the documents


@dataclass
class _State:
    """A multi-hop search under way: the question's round, the hops so far, what was found and
    read, and the follow-ups' rankings and links to merge at the end."""

    t0: float
    first: SearchRound
    hops: list[Hop]
    found: set[str]  # units found by any hop
    found_docs: set[str]
    last_read: list[tuple[str, str]]  # (unit, title and text) of what the last hop found
    all_found: list[str]  # every text read so far
    asked: set[str]  # normalized queries asked
    spans: dict[str, dict[str, Any]]
    entries: dict[str, Found]
    provenance: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rankings: dict[str, Ranking] = field(default_factory=dict)  # the follow-ups' rankings
    weights: dict[str, float] = field(default_factory=dict)
    question_names: list[tuple[str, list[str]]] = field(default_factory=list)
    named: list[str] = field(default_factory=list)  # units of the documents the question names
    linked: dict[str, list[str]] = field(default_factory=dict)  # unit -> units of the documents its passage names
    read: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # document -> its passages read
    doc_of: dict[str, str] = field(default_factory=dict)  # unit read -> its document
    llm_calls: int = 0
    stop: Stop = Stop.DEPTH
    error: str | None = None


def _norm(q: str) -> str:
    return " ".join(q.lower().split())


def model_free_channels(s: Settings) -> list[str]:
    """The query's channels that need no language model (all of them if every one needs one)."""
    free = [c for c in s.query.channels if not CHANNELS.make(c).needs_llm]
    return free or list(s.query.channels)


class MultiHopSearch:
    """One question's multi-hop search: rounds on a ``Searcher``, merged into one ``SearchRound``."""

    def __init__(self, searcher: Searcher, question: str, s: Settings, where: Node | None,
                 deadline: Deadline | None = None, first: SearchRound | None = None) -> None:
        """``first``: the question's own round, when it was searched already with the settings of
        the first round here (the router's)."""
        self.searcher, self.question, self.s, self.where = searcher, question, s, where
        self.deadline, self._first = deadline, first
        self._first_read: list[tuple[str, str]] | None = None  # what linked_titles read of ``first``
        # each hop is a plain search; reranking, if any, runs once on the merged result; HyDE and
        # the other model channels run on the question only
        self.first_settings = s.replace(multihop_mode="off", reranker="")
        self.hop_settings = self.first_settings.replace(channels=model_free_channels(s))
        self._hits: dict[int, tuple[SearchRound, dict[str, Any]]] = {}
        self.relations = relations(question)  # the chain the links walk, from the question's structure

    def _hit_of(self, r: SearchRound) -> dict[str, Any]:
        """Unit id -> its best hit, for one round (built once per round; the round is kept with it,
        so its id cannot be reused by another)."""
        if id(r) not in self._hits:
            self._hits[id(r)] = (r, hits_by_unit(r.found, r.unit.key))
        return self._hits[id(r)][1]

    def _docs_of(self, r: SearchRound, units: list[str]) -> set[str]:
        hit_of = self._hit_of(r)
        return {hit_of[u].doc_id for u in units if u in hit_of}

    def _read(self, r: SearchRound, units: list[str]) -> list[tuple[str, str]]:
        """(unit, title and text) of units (best first), for reading them."""
        hit_of = self._hit_of(r)
        hits = [(u, hit_of[u]) for u in units if u in hit_of]
        parents = self.searcher.store.get_parents(h.parent_id for _, h in hits)
        out = []
        for u, h in hits:
            sp = parents.get(h.parent_id)
            if sp is not None:
                text = r.unit.read(h, sp, self.s.query)
                out.append((u, f"{sp.title}: {text}" if sp.title and sp.title not in text[:200] else text))
        return out

    def _keyword_follow_ups(self, h: int, last_read: list[tuple[str, str]], all_found: list[str],
                            found_docs: set[str], question_names: list[tuple[str, list[str]]],
                            terms: bool = True, walked: list[str] | None = None,
                            doc_of: dict[str, str] | None = None) -> list[FollowUp]:
        """Follow-ups without a model: documents the question names (first hop), documents the
        passages found last name (each after the passage that names it), else (``terms``) the
        passages' new terms. ``walked`` receives the documents found before that the sentences
        stating this hop's relation name (the chain goes on from them), but for the document of the
        passage read (``doc_of`` its unit's)."""
        m = self.s.multihop
        rest = residual_words(self.question, all_found)
        out: list[FollowUp] = []
        taken = set(found_docs)
        if h == 1:  # documents the question names and the first search did not find
            for title, docs in question_names:
                if not taken.intersection(docs) and len(out) < m.hop_queries:
                    out.append(FollowUp(" ".join([title, *rest]), FollowUpKind.NAMED, title, frozenset(docs)))
                    taken.update(docs)
        links = 0
        titles = self.searcher.titles()
        # per passage, its sentences stating the hop's relation and the documents they name (found or not)
        stating = [self._stating(text, h) if self.relations else [] for _, text in last_read]
        named = [titles.documents_named(x) if x else [] for x in stating]
        stating = [x if n else [] for x, n in zip(stating, named)]  # kept when they name a document
        fallback = not any(stating)  # a passage without them gives a name only when none read has them
        for (unit, text), mine, names in zip(last_read, stating, named):
            if walked is not None and names:
                own = (doc_of or {}).get(unit)
                walked += [d for _, docs in names for d in docs if d in found_docs and d != own and d not in walked]
            for title, docs in self._bridges(text, taken, m.hop_queries - links, mine, fallback):
                out.append(FollowUp(" ".join([title, *rest]), FollowUpKind.LINK, title, frozenset(docs), unit))
                taken.update(docs)
                links += 1
            if links >= m.hop_queries:
                break
        if not out and terms and not walked:  # a chain going on through what it found asks nothing
            out = [FollowUp(" ".join([t, *rest]), FollowUpKind.TERM, t)
                   for t in new_terms(self.question, [t for _, t in last_read], limit=m.hop_queries)]
        return out

    def _stating(self, text: str, h: int) -> list[str]:
        """The sentences of a passage that state the relation hop ``h`` walks."""
        want = self.relations[min(h, len(self.relations)) - 1]
        return [x for x in (text[a:b] for a, b in sentence_spans(text)) if mentions(x, want)]

    def _bridges(self, text: str, exclude: set[str], limit: int, stating: list[str],
                 fallback: bool) -> list[tuple[str, list[str]]]:
        """The titles a passage names to follow. When the question chains relations
        (``text.chains``): the names of ``stating``, its sentences that state the relation this
        hop walks and name a document (up to ``limit``: "The sons of X are A, B" gives both; when
        every one was found already, none: the chain goes on from those); when it has none and
        ``fallback`` (no passage read has), one name, from a sentence that states another of the
        chain's relations before the others. Else the first name the passage gives."""
        titles = self.searcher.titles()
        if not self.relations:
            return titles.documents_named([text], exclude=exclude, limit=1)
        if stating:
            return titles.documents_named(stating, exclude=exclude, limit=limit)
        if not fallback:
            return []
        sentences = [text[a:b] for a, b in sentence_spans(text)]
        ordered = sorted(sentences, key=lambda x: not any(mentions(x, r) for r in self.relations))
        return titles.documents_named(ordered, exclude=exclude, limit=1)

    def linked_titles(self, first: SearchRound) -> list[str]:
        """The titles of the documents that the question's round's top ``hop_top`` passages name,
        among those it did not find there: what the first hop would follow as links."""
        units = [u for u, _ in first.ranked[: self.s.multihop.hop_top]]
        read = self._read(first, units)
        if first is self._first:  # the search that continues from it starts from what was read
            self._first_read = read
        follow = self._keyword_follow_ups(1, read, [t for _, t in read], self._docs_of(first, units), [], terms=False)
        return [f.name for f in follow if f.kind is FollowUpKind.LINK]

    def _named_unit(self, r: SearchRound, docs: frozenset[str], depth: int) -> str | None:
        """The best unit of the documents a follow-up names, in its top ``depth``."""
        hit_of = self._hit_of(r)
        return next((u for u, _ in r.ranked[:depth] if u in hit_of and hit_of[u].doc_id in docs), None)

    def _follow_up(self, found: list[str], deadline: Deadline) -> str:
        shown = "\n".join(f"- {cut_to_tokens(t, TOKENS_PER_PASSAGE, ' …')}" for t in found[:FOUND_IN_PROMPT])
        msgs = get_prompt("follow_up", self.language, self.s.llm.prompts).messages(question=self.question, found=shown)
        text = self.searcher.llm(self.s).generate(msgs, temperature=0.0, max_tokens=64, deadline=deadline)
        lines = answer_lines(text)
        if not lines:
            raise LLMError("empty follow-up query")
        return lines[0]

    def run(self) -> SearchRound:
        st = self._start()
        for h in range(1, self.s.multihop.hops_max):
            stop = self._hop(st, h)
            if stop is not None:
                st.stop = stop
                break
        return self._finish(st)

    def _start(self) -> _State:
        """The question's own round (hop 0), and what the follow-ups start from."""
        m, t0 = self.s.multihop, time.perf_counter()
        first = self._first or self.searcher.round(self.question, self.first_settings, self.where, self.deadline)
        self.language = first.language
        hop0 = Hop(0, [self.question], "question", elapsed_ms=(time.perf_counter() - t0) * 1000,
                   top=[[u for u, _ in first.ranked[: m.hop_top]]], channels=list(self.first_settings.query.channels))
        hop0.new_units = hop0.top[0]
        last_read = self._first_read if self._first_read is not None else self._read(first, hop0.new_units)
        st = _State(t0=t0, first=first, hops=[hop0], found=set(hop0.new_units),
                    found_docs=self._docs_of(first, hop0.new_units), last_read=last_read,
                    all_found=[t for _, t in last_read], asked={_norm(self.question)},
                    spans={pid: dict(v) for pid, v in first.spans.items()}, entries=dict(first.found))
        self._provenance(st.provenance, first.ranked, 0, self.question)
        # units of the documents the question names: those the first search found, now; the others
        # when a follow-up finds them (more than hop_queries: those the first round found are not asked about)
        self._remember(st, first, last_read)
        st.question_names = self.searcher.titles().documents_named([self.question], limit=4 * m.hop_queries)
        st.named = [u for u in (self._named_unit(first, frozenset(docs), m.hop_top) for _, docs in st.question_names)
                    if u is not None]
        return st

    def _remember(self, st: _State, r: SearchRound, read: list[tuple[str, str]]) -> None:
        hit_of = self._hit_of(r)
        for u, text in read:
            if u in hit_of:
                st.doc_of[u] = hit_of[u].doc_id
                mine = st.read.setdefault(hit_of[u].doc_id, [])
                if all(u != x for x, _ in mine):
                    mine.append((u, text))

    def _walk_on(self, st: _State, hop: Hop, walked: list[str], new_read: list[tuple[str, str]]) -> None:
        """The next hop reads what this one found and the documents found before that its
        relation led to (``walked``), so a chain goes on through documents it has already."""
        hop.walked = walked
        units = {u for u, _ in new_read}
        st.last_read = new_read + [x for d in walked for x in st.read.get(d, []) if x[0] not in units]

    def _hop(self, st: _State, h: int) -> Stop | None:
        """One hop: its follow-ups asked, what they add kept; why the search stops, if it does.
        A hop whose relation leads only to documents found before asks nothing and goes on from
        them."""
        m, t_hop = self.s.multihop, time.perf_counter()
        if t_hop - st.t0 > m.hop_time_s:
            return Stop.TIME_BUDGET
        if self.deadline is not None and self.deadline.expired:
            return Stop.CANCELLED
        walked: list[str] = []
        follow_or_stop = self._follow_ups(st, h, t_hop, walked)
        if isinstance(follow_or_stop, Stop) and not (follow_or_stop is Stop.NO_FOLLOW_UP and walked):
            return follow_or_stop
        follow = [] if isinstance(follow_or_stop, Stop) else \
            list({_norm(f.query): f for f in follow_or_stop if _norm(f.query) not in st.asked}.values())
        if not follow:
            if not walked:
                return Stop.REPEATED_QUERY
            hop = Hop(h, [], "keywords", elapsed_ms=(time.perf_counter() - t_hop) * 1000, merged=False)
            st.hops.append(hop)
            self._walk_on(st, hop, walked, [])
            return None
        queries = [f.query for f in follow]
        st.asked.update(_norm(q) for q in queries)
        hop = Hop(h, queries, "llm" if m.mode is MultiHop.LLM else "keywords",
                  channels=list(self.hop_settings.query.channels))
        hop.kinds, hop.names = [f.kind.value for f in follow], [f.name for f in follow]
        results = [self.searcher.round(q, self.hop_settings, self.where, self.deadline) for q in queries]
        adds = self._adds(st, follow, results, hop)
        hop.elapsed_ms = (time.perf_counter() - t_hop) * 1000
        st.hops.append(hop)
        dropped: set[int] = set()
        if not hop.new_units:
            stop: Stop | None = Stop.NOTHING_NEW
        else:
            dropped = self._drop_weak(follow, adds, hop)
            stop = None if hop.new_units else Stop.LOW_GAIN
        if stop is not None:
            hop.merged = False
            if not walked:
                return stop
            self._walk_on(st, hop, walked, [])  # nothing new, but the chain goes on through what it has
            return None
        self._keep(st, h, follow, results, adds, dropped)
        self._walk_on(st, hop, walked, st.last_read)
        return None

    def _follow_ups(self, st: _State, h: int, t_hop: float, walked: list[str]) -> list[FollowUp] | Stop:
        """This hop's follow-ups: by name, and in llm mode the model's query (or why it stops);
        ``walked`` receives the documents found before that this hop's relation leads to."""
        m = self.s.multihop
        llm = m.mode is MultiHop.LLM
        follow = self._keyword_follow_ups(h, st.last_read, st.all_found, st.found_docs, st.question_names,
                                          terms=not llm, walked=walked, doc_of=st.doc_of)
        if llm:
            if st.llm_calls >= m.hop_llm_calls:
                return Stop.LLM_BUDGET
            st.llm_calls += 1
            try:
                left = max(0.1, m.hop_time_s - (t_hop - st.t0))
                q = self._follow_up([t for _, t in st.last_read], Deadline(min(self.s.timeout("follow_up"), left)))
            except RagsiftError as e:
                st.error = f"{type(e).__name__}: {e}"
                return Stop.LLM_ERROR
            if not q.strip().upper().startswith("DONE"):
                follow.append(FollowUp(q, FollowUpKind.LLM, q))
            elif not follow:
                return Stop.LLM_DONE
        return follow if follow else Stop.NO_FOLLOW_UP

    def _adds(self, st: _State, follow: list[FollowUp], results: list[SearchRound], hop: Hop) -> list[list[str]]:
        """What each follow-up adds: a named or linked document's best unit; a term's or the
        model's query, its top hop_top units. Sets the hop's top, new units and gain."""
        m = self.s.multihop
        adds: list[list[str]] = []
        for f, r in zip(follow, results):
            hop.top.append([u for u, _ in r.ranked[: m.hop_top]])
            if f.docs:
                u = self._named_unit(r, f.docs, self.s.query.channel_depth)
                adds.append([u] if u is not None and u not in st.found else [])
            else:
                adds.append([u for u in hop.top[-1] if u not in st.found])
        hop.new_units = list(dict.fromkeys(u for a in adds for u in a))
        hop.gain = len(hop.new_units) / sum(1 if f.docs else m.hop_top for f in follow)
        return adds

    def _drop_weak(self, follow: list[FollowUp], adds: list[list[str]], hop: Hop) -> set[int]:
        """A search for a named document is precise: what it adds is kept; searches by words (key
        terms, the model's query) are kept when together they bring enough new units, so a weak
        one cannot take a hop's links down with it. Returns the follow-ups dropped (their adds
        emptied in place, the hop's new units recounted)."""
        m = self.s.multihop
        loose = [i for i, f in enumerate(follow) if not f.docs]
        if not loose or len({u for i in loose for u in adds[i]}) / (m.hop_top * len(loose)) >= m.hop_min_gain:
            return set()
        hop.dropped = [follow[i].query for i in loose]
        for i in loose:
            adds[i] = []
        hop.new_units = list(dict.fromkeys(u for a in adds for u in a))
        return set(loose)

    def _keep(self, st: _State, h: int, follow: list[FollowUp], results: list[SearchRound], adds: list[list[str]],
              dropped: set[int]) -> None:
        """What a hop's kept follow-ups found joins the search: named and linked units in their
        places, the others as rankings fused after the question's; then what it found is read."""
        m = self.s.multihop
        for i, (f, r, a) in enumerate(zip(follow, results, adds)):
            if i in dropped:
                continue
            if f.kind is FollowUpKind.NAMED:
                st.named += [u for u in a if u not in st.named]
            elif f.kind is FollowUpKind.LINK and f.anchor is not None:
                st.linked.setdefault(f.anchor, []).extend(a)
            else:
                # a follow-up adds what is new: units found before keep that credit only, so a
                # follow-up that repeats them cannot push out the new ones; and only its top
                # hop_top count (deeper, its noise adds up)
                st.rankings[f"hop{h}.{i}"] = [(u, v) for u, v in r.ranked[: m.hop_top] if u in a]
                st.weights[f"hop{h}.{i}"] = (1.0 - 0.01 * i) / h  # earlier hops first, then the order asked
            self._provenance(st.provenance, r.ranked, h, f.query)
            for pid, sp in r.spans.items():
                mine = st.spans.setdefault(pid, {})
                for cid, v in sp.items():
                    mine.setdefault(cid, v)
            for cid, entry in r.found.items():
                st.entries.setdefault(cid, entry)
        new = st.hops[-1].new_units
        st.found.update(new)
        # read what this hop found: its new units, best first across its queries
        st.last_read = []
        for r, a in zip(results, adds):
            read = self._read(r, [u for u in new if u in a])
            self._remember(st, r, read)
            st.last_read += read
            st.found_docs |= self._docs_of(r, a)
        st.all_found += [t for _, t in st.last_read]

    def _finish(self, st: _State) -> SearchRound:
        """The hops merged into one round (reranked once, when the settings rerank)."""
        s, m = self.s, self.s.multihop
        merged = with_links(merge_hops(st.first.ranked, st.rankings, st.weights, m.hop_protect, s.query.rrf_k),
                            st.named, st.linked, s.query.rrf_k)
        t_hops = time.perf_counter()
        info = {"mode": m.mode, "hops": [hp.to_dict() for hp in st.hops], "stop": st.stop.value, "error": st.error,
                "llm_calls": st.llm_calls, "elapsed_ms": round((t_hops - st.t0) * 1000, 3)}
        timings = {"multihop": (t_hops - st.t0) * 1000}
        ranked, rerank_info = merged, None
        if s.rerank.model and merged:
            ranked, rerank_info = rerank(self.question, merged, s, st.entries, st.first.unit, self.searcher.store,
                                         lambda: self.searcher.llm(s), self.deadline)
            timings["rerank"] = (time.perf_counter() - t_hops) * 1000
        # the question's round's fusion (what the trace shows) with the hops' merged ranking
        return replace(st.first, found=st.entries, spans=st.spans, fused=replace(st.first.fused, ranking=merged),
                       ranked=ranked, rerank=rerank_info, timings_ms=timings, multihop=info, provenance=st.provenance)

    @staticmethod
    def _provenance(prov: dict[str, list[dict[str, Any]]], ranked: Ranking, hop: int,
                    query: str, depth: int = 20) -> None:
        for rank, (u, _) in enumerate(ranked[:depth], 1):
            prov.setdefault(u, []).append({"hop": hop, "query": query, "rank": rank})


def merge_hops(question_ranking: Ranking, follow_ups: dict[str, Ranking], weights: dict[str, float],
               protect: int, k: int) -> Ranking:
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


def with_links(ranking: Ranking, named: list[str], linked: dict[str, list[str]], k: int) -> Ranking:
    """The documents the question names first, then ``ranking`` with each unit followed by the
    units of the documents its passage names (and theirs, in turn). Scores are 1/(k + rank)."""
    if not named and not linked:
        return ranking
    out: list[str] = []
    seen: set[str] = set()

    def emit(u: str) -> None:
        stack = [u]
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            out.append(x)
            stack.extend(reversed(linked.get(x, [])))

    for u in [*named, *(u for u, _ in ranking), *(u for us in linked.values() for u in us)]:
        emit(u)
    return [(u, 1.0 / (k + r)) for r, u in enumerate(out, 1)]
