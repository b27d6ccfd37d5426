"""Named search strategies and the router (the ``strategy`` setting).

A strategy is a set of settings over the query's own:
- ``hybrid``: one round of the query channels that need no model, no multi-hop;
- ``hyde``: the same with the HyDE channels (``hyde``, ``hyde_bm25``) beside them;
- ``multihop``: multi-hop (the ``multihop`` mode if one is set, else ``keywords``), no HyDE;
- ``combined``: the seed design's three together: HyDE on the question, multi-hop from what it
  found (follow-up rounds without HyDE), parent expansion (``unit = "parent"``);
- ``auto``: chosen per question by ``route`` from cheap signals, with the reason in the trace.

The router reads only the question (a title lookup): when it names a document of the knowledge
base by its title, ``multihop`` (a bridge starts from the named document, a comparison searches
each side); otherwise ``hybrid``. The trace also gives the other signals it read (language,
length, entities, whether it is a question). The rule was chosen on calibration questions
(HotpotQA's last 200, SciFact's even-numbered; measured with ``benchmarks/seed.py``'s settings):
- every HotpotQA question there names a title, and multi-hop gains 6.5 points of nDCG@10 on them
  (0.905 -> 0.971);
- no SciFact claim does, and multi-hop loses 0.9 points on them (0.734 -> 0.725); a rule that also
  took multi-hop when the passages found name a document (without the question naming any) fired
  on 13 claims and lost 3.2 points on them (measured with three rounds);
- HyDE (one hypothesis by the packaged 1.5B model) lost on both (-2.2 and -1.2 points on 50
  questions each) and at every question length, so the router never chooses it; ``strategy="hyde"``
  stays for models that write better hypotheses.
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


def route(question: str, titles: TitleIndex) -> Route:
    """Choose a strategy for ``question`` from its words and the knowledge base's titles."""
    named = titles.documents_named([question], limit=4)
    tokens = count_tokens(question)
    signals = {"language": detect_language(question), "tokens": tokens, "named": [t for t, _ in named],
               "entities": [e for e, _ in entities(question)][:6], "asks": asks(question)}
    if named:
        return Route(Strategy.MULTIHOP, f"the question names {len(named)} document(s) by title: "
                     + ", ".join(t for t, _ in named), signals)
    return Route(Strategy.HYBRID, "the question names no document", signals)


def search(searcher: Searcher, question: str, s: Settings, where: Node | None,
           deadline: Deadline | None = None) -> SearchRound:
    """The ranked units for a question: one round, or a multi-hop search, with the settings of
    ``s.query.strategy``. A named strategy's settings, or auto's choice and its reason, go in
    ``SearchRound.strategy`` (``settings``: none)."""
    strategy = s.query.strategy
    info: dict[str, Any] | None = None
    if strategy is Strategy.AUTO:
        choice = route(question, searcher.titles())
        t, info = strategy_settings(choice.strategy, s), choice.to_dict()
    else:
        t = strategy_settings(strategy, s)
        if strategy is not Strategy.SETTINGS:
            info = {"strategy": str(strategy), "channels": list(t.query.channels),
                    "multihop": str(t.multihop.mode), "unit": str(t.query.unit)}
    r = (MultiHopSearch(searcher, question, t, where, deadline).run() if t.multihop.mode is not MultiHop.OFF
         else searcher.round(question, t, where, deadline))
    return r if info is None else replace(r, strategy=info)
