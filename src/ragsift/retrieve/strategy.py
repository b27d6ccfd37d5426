"""Named search strategies and the router (the ``strategy`` setting).

A strategy is a set of settings over the query's own:
- ``hybrid``: one round of the query channels that need no model, no multi-hop;
- ``hyde``: the same with the HyDE channels (``hyde``, ``hyde_bm25``) beside them;
- ``multihop``: multi-hop (the ``multihop`` mode if one is set, else ``keywords``), no HyDE;
- ``combined``: the seed design's three together: HyDE on the question, multi-hop from what it
  found (follow-up rounds without HyDE), parent expansion (``unit = "parent"``);
- ``auto`` (the default): the query's own settings, with multi-hop chosen per question by the
  router, the choice and its reason in the trace.

The router reads the question first (a title lookup): when it names a document of the knowledge
base by its title, multi-hop (a bridge starts from the named document, a comparison searches each
side). Otherwise one round is searched, and its top ``hop_top`` passages are read for titles of
documents it did not find: when they name one (a bridge the question does not name: "the woman
who played Corliss Archer" -> the film's passage names "Shirley Temple"), multi-hop continues from
that round (its first hop follows those links); when they name none, that round is the answer, so
a question no rule picks costs one round and one read of the passages found. The router also
chooses the depth: a question that chains relations ("Who is the brother of the friend of X?", "X的
朋友的哥哥是谁？", ``text.chains``) gets a round for each (``hops_max`` raised to the question's own
round plus one per relation, one fewer when it asks for a thing the last passage states, at most
``MAX_ROUNDS``); the chain still stops when a round adds nothing. A text that is not a
question (a claim, a statement of facts) and names no document is searched once. A ``multihop_mode``
set in the settings means multi-hop for every question. The trace gives the signals read
(language, length, entities, whether it is a question, the titles named and linked).

The rule was chosen on calibration questions and reported on held-out ones of seven sets
(``benchmarks/router.py``, docs/benchmarks.md): against the question-only rule it replaces, it
takes multi-hop on 51 of the 66 held-out HotpotQA questions that name no title and on every PhantomWiki
question (44% of which name no supporting title; the question-only rule took one round on them
and lost there: 0.578 against 0.598 held-out); it takes one round on every FAQ question (both
InsuranceQA languages), where multi-hop loses 2.4-2.6 points. Following links only from
questions (not claims or statements) was chosen over following them from any text by a hair on
LawBench's calibration statements (0.3562 against 0.3554; the sets' other questions all ask); since
BM25 counts a repeated query term once the hair goes the other way there (0.3560 against 0.3566,
held out 0.3485 against 0.3502), and the rule is kept: it agrees with what ``benchmarks/seed.py``
found on SciFact's claims (following links lost 3.2 points on the 13 claims where it fired). Tried
and not chosen: "the text is a question" alone (multi-hop on every FAQ question).
HyDE (one hypothesis by the packaged 1.5B model) lost on HotpotQA and SciFact (-2.2 and -1.2
points on 50 questions each) and at every question length, so the router never adds it;
``strategy="hyde"`` stays for models that write better hypotheses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import MultiHop, Settings, Strategy, Unit
from ragsift.retrieve.multihop import MultiHopSearch, model_free_channels
from ragsift.retrieve.search import Searcher, SearchRound
from ragsift.store.filters import Node
from ragsift.text.chains import relations, rounds
from ragsift.text.entities import entities
from ragsift.text.lang import detect_language
from ragsift.text.links import TitleIndex
from ragsift.text.tokens import count_tokens

HYDE_CHANNELS = ("hyde", "hyde_bm25")


def strategy_settings(strategy: Strategy, s: Settings) -> Settings:
    """The settings a named strategy searches with (``settings`` and ``auto``: ``s`` itself)."""
    if strategy in (Strategy.SETTINGS, Strategy.AUTO):
        return s
    free = model_free_channels(s)
    hyde = [*free, *(c for c in HYDE_CHANNELS if c not in free)]
    mode = s.multihop.mode if s.multihop.mode is not MultiHop.OFF else MultiHop.KEYWORDS
    changes_of: dict[Strategy, dict[str, Any]] = {
        Strategy.HYBRID: {"channels": free, "multihop_mode": MultiHop.OFF},
        Strategy.HYDE: {"channels": hyde, "multihop_mode": MultiHop.OFF},
        Strategy.MULTIHOP: {"channels": free, "multihop_mode": mode},
        Strategy.COMBINED: {"channels": hyde, "multihop_mode": mode, "unit": Unit.PARENT},
    }
    return s.replace(**changes_of[strategy])


@dataclass(frozen=True)
class Route:
    """The router's choice for one question, its reason and the signals it read."""

    strategy: Strategy
    reason: str
    signals: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": "auto", "chosen": str(self.strategy), "reason": self.reason, "signals": self.signals}


ASK_RE = re.compile(r"[?？]\s*$|^\s*(who|whom|whose|what|which|when|where|why|how|is|are|was|were|did|does|do|"
                    r"can|in which|on which)\b|谁|什么|哪|几|多少|怎么|为什么|吗[？?]?\s*$", re.IGNORECASE)


def asks(question: str) -> bool:
    """Whether the text is a question (not a claim or a phrase)."""
    return bool(ASK_RE.search(question))


#: the most retrieval rounds the router gives a question (its own and one per relation walked;
#: 4 and 5 were alike on PhantomWiki's calibration questions, whose chains have at most 3 relations)
MAX_ROUNDS = 5


def route(question: str, titles: TitleIndex, shown: bool = True, hops_max: int = 2) -> Route:
    """Choose a strategy for ``question`` from its words and the knowledge base's titles. The
    question's entities are a signal for a reader of the trace only (the choice never reads them):
    ``shown`` off leaves them out (in Chinese they cost jieba's part-of-speech tagger, 0.3-0.4 s to load)."""
    named = titles.documents_named([question], limit=4)
    tokens = count_tokens(question)
    signals: dict[str, Any] = {"language": detect_language(question), "tokens": tokens, "named": [t for t, _ in named]}
    if shown:
        signals["entities"] = [e for e, _ in entities(question)][:6]
    signals["asks"] = asks(question)
    signals["relations"] = relations(question)
    signals["rounds"] = max(hops_max, min(MAX_ROUNDS, rounds(question, signals["relations"])))
    if named:
        return Route(Strategy.MULTIHOP, f"the question names {len(named)} document(s) by title: "
                     + ", ".join(t for t, _ in named), signals)
    return Route(Strategy.HYBRID, "the question names no document", signals)


def search(searcher: Searcher, question: str, s: Settings, where: Node | None,
           deadline: Deadline | None = None, shown: bool = True) -> SearchRound:
    """The ranked units for a question: one round, or a multi-hop search, with the settings of
    ``s.query.strategy``. A named strategy's settings, or auto's choice and its reason, go in
    ``SearchRound.strategy`` (``settings``: none); ``shown`` off: for a caller that shows no trace
    (the router's signals without the question's entities, ``route``)."""
    strategy = s.query.strategy
    if strategy is Strategy.AUTO:
        return _auto(searcher, question, s, where, deadline, shown)
    info: dict[str, Any] | None = None
    t = strategy_settings(strategy, s)
    if strategy is not Strategy.SETTINGS:
        info = {"strategy": str(strategy), "channels": list(t.query.channels),
                "multihop": str(t.multihop.mode), "unit": str(t.query.unit)}
    r = (MultiHopSearch(searcher, question, t, where, deadline).run() if t.multihop.mode is not MultiHop.OFF
         else searcher.round(question, t, where, deadline))
    return r if info is None else replace(r, strategy=info)


def _auto(searcher: Searcher, question: str, s: Settings, where: Node | None,
          deadline: Deadline | None, shown: bool = True) -> SearchRound:
    """The router: multi-hop when the question names a document; else one round, followed, for a
    question (not a claim or statement), by multi-hop from it when its top passages name documents
    it did not find (a bridge). Multi-hop runs in keywords mode; a ``multihop_mode`` set in the
    settings means multi-hop for every question, in that mode."""
    choice = route(question, searcher.titles(), shown, s.multihop.hops_max)
    if s.multihop.mode is not MultiHop.OFF:  # asked for: every question gets it
        why = f"multihop_mode = {str(s.multihop.mode)!r} is set"
        return replace(MultiHopSearch(searcher, question, s, where, deadline).run(),
                       strategy=Route(Strategy.MULTIHOP, why, choice.signals).to_dict())
    # the query's own channels, unit and reranker; the router decides multi-hop and its depth only
    multi = s.replace(multihop_mode=MultiHop.KEYWORDS, hops_max=choice.signals["rounds"])
    if choice.strategy is Strategy.MULTIHOP:
        return replace(MultiHopSearch(searcher, question, multi, where, deadline).run(), strategy=choice.to_dict())
    first = searcher.round(question, s, where, deadline)  # s has no multi-hop mode here
    if not choice.signals["asks"]:  # a claim or a statement: what it says is searched once
        return replace(first, strategy=Route(Strategy.HYBRID, NOT_ASKED, {**choice.signals, "linked": []}).to_dict())
    # multi-hop's own first round is this one unless it reranks (multi-hop reranks once, at the end)
    hops = MultiHopSearch(searcher, question, multi, where, deadline, first=None if s.rerank.model else first)
    linked = hops.linked_titles(first)
    signals = {**choice.signals, "linked": linked}
    if not linked:
        return replace(first, strategy=Route(Strategy.HYBRID, NO_NAMES, signals).to_dict())
    why = f"the passages found name {len(linked)} document(s) by title: " + ", ".join(linked)
    return replace(hops.run(), strategy=Route(Strategy.MULTIHOP, why, signals).to_dict())


NO_NAMES = "neither the question nor the passages found name a document"
NOT_ASKED = "the text names no document and is not a question (a claim or a statement is searched once)"
