"""Fusion of per-channel rankings into one ranking of units.

A fusion mode takes one ``FusionInput``: per channel, a ranking (``types.Ranking``: unit id, raw
score, best first), already deduplicated by the query's unit within the channel
(``units.UnitStrategy.key``: the parent by default, so the chunks of one section cannot each add
score), with the query's fusion settings (``k``, ``weights``, ``normalization``, ``power``),
``discounts``, the question and its language. It returns ``Fused``: the fused ranking, best first,
and ``info``, what it did (its parameters, the weights it chose), which the query's trace shows as
it is (``Trace.fusion``, beside the mode and the channels). Ties break by unit id so results are
deterministic. One channel alone keeps its own order and raw scores, whatever the mode
(``run_fusion`` says so in ``info["note"]``).

- ``rrf``, reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009):
  ``score(d) = sum over channels c of w_c / (k + rank_c(d))``, rank 1-based, ``k`` (``rrf_k``)
  default 60. The mode votes equally (``weights`` are weighted fusion's); the function ``rrf``
  takes weights for its other callers (multi-query, multi-hop). The score is a rank artefact:
  never threshold it. Info: ``k``.
- ``weighted``, weighted score fusion: ``score(d) = sum_c w_c * norm_c(raw_c(d))``, a channel
  that did not return ``d`` contributes 0; a channel ``weights`` does not name weighs
  ``unlisted`` (``config.UNLISTED_WEIGHT`` in a query). ``norm`` is explicit: ``minmax`` maps a
  channel's scores to [0, 1] (all-equal scores map to 1), ``zscore`` to (s - mean) / std
  (all-equal: 0), ``none`` leaves raw scores (only sensible when channels share a scale).
  Info: ``weights`` (each channel's) and ``normalization``.
- ``adaptive`` (the default), weighted score fusion whose weights are set per query
  (``adaptive_weights``): each channel's weight is scaled by its *confidence* raised to
  ``power`` (``adaptive_power``); confidence is how far its best hit stands out of its list,
  (top - mean of the others) / their standard deviation over its first ``ADAPTIVE_DEPTH``
  scores (1, neutral, for fewer than three or a flat list). The weights are then rescaled to
  keep their sum. A channel whose best hit is far ahead of the rest counts more on that query;
  a flat list counts less. Needs no labels and no model. Info: weighted's, and the weights it
  fused with (``adapted_weights``) and ``adaptive_power``; where the store's engine fused dense
  and BM25 into one list (``engine_hybrid``), a note (``engine``) instead: the engine used the
  fixed weights.

``discounts``: per channel, unit id -> a factor on that hit's share (a term channel's hit in
another language than the question's, ``cross_language_weight``); every mode applies them. The
modes are registered in ``FUSIONS``: a new one is a function from ``FusionInput`` to ``Fused``,
its registration (``@FUSIONS.register``) and its member of ``config.FusionMode`` (``run_fusion``
checks the name against it); its ``info`` reaches the trace with no other module edited.
``fuse`` gives the ranking alone, for callers that fuse lists of their own (tuning, benchmarks).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragsift.config import UNLISTED_WEIGHT, FusionMode, Normalization, QuerySettings, parse_enum
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.types import Ranking

#: per channel, unit id -> a factor on that hit's share in fusion
Discounts = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class FusionInput:
    """What a fusion mode reads: the channels' rankings and the query's fusion settings.

    ``fused_by_store``: channels whose list the store's engine already fused (``engine_hybrid``:
    dense and BM25 with the fixed weights), whose inner lists no mode can read."""

    rankings: Mapping[str, Ranking]  # per channel that succeeded, best first
    k: int = 60  # rrf_k
    weights: Mapping[str, float] = field(default_factory=dict)
    normalization: str = "minmax"
    discounts: Discounts | None = None
    unlisted: float = 0.0  # the weight of a channel ``weights`` does not name
    power: float = 1.0  # adaptive_power
    query: str = ""
    language: str = ""
    fused_by_store: tuple[str, ...] = ()

    @classmethod
    def of_query(cls, rankings: Mapping[str, Ranking], q: QuerySettings, *, query: str = "", language: str = "",
                 discounts: Discounts | None = None, fused_by_store: tuple[str, ...] = ()) -> FusionInput:
        """The input of a query's fusion: its rankings with the query's settings."""
        return cls(rankings, k=q.rrf_k, weights=q.weights, normalization=q.normalization, discounts=discounts,
                   unlisted=UNLISTED_WEIGHT, power=q.adaptive_power, query=query, language=language,
                   fused_by_store=fused_by_store)

    def channel_weights(self) -> dict[str, float]:
        """Each channel's weight as given (``unlisted`` for one ``weights`` does not name)."""
        return {c: float(self.weights.get(c, self.unlisted)) for c in self.rankings}


@dataclass(frozen=True)
class Fused:
    """A fusion's ranking, best first, and what it did (``info``: JSON-ready; the trace's ``fusion``)."""

    ranking: Ranking
    info: dict[str, Any] = field(default_factory=dict)


def rrf(rankings: Mapping[str, Ranking], k: int = 60, weights: Mapping[str, float] | None = None,
        discounts: Discounts | None = None) -> Ranking:
    if k < 0:
        raise ConfigError("rrf k must be >= 0")
    scores: dict[str, float] = {}
    for channel, ranking in rankings.items():
        w = 1.0 if weights is None else float(weights.get(channel, 1.0))
        off = (discounts or {}).get(channel) or {}
        for rank, (pid, _) in enumerate(ranking, 1):
            scores[pid] = scores.get(pid, 0.0) + w * off.get(pid, 1.0) / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def normalize(scores: Sequence[float], method: str) -> list[float]:
    m = parse_enum(Normalization, method, "normalization")
    if not scores:
        return []
    if m is Normalization.NONE:
        return [float(s) for s in scores]
    if m is Normalization.MINMAX:
        lo, hi = min(scores), max(scores)
        if hi == lo:
            return [1.0] * len(scores)
        return [(s - lo) / (hi - lo) for s in scores]
    mean = sum(scores) / len(scores)
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    if std == 0:
        return [0.0] * len(scores)
    return [(s - mean) / std for s in scores]


def weighted(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
             normalization: str = "minmax", discounts: Discounts | None = None,
             unlisted: float = 0.0) -> Ranking:
    scores: dict[str, float] = {}
    for channel, ranking in rankings.items():
        w = float(weights.get(channel, unlisted))
        if w == 0 or not ranking:
            continue
        off = (discounts or {}).get(channel) or {}
        normed = normalize([s for _, s in ranking], normalization)
        for (pid, _), s in zip(ranking, normed):
            scores[pid] = scores.get(pid, 0.0) + w * off.get(pid, 1.0) * s
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


ADAPTIVE_DEPTH = 50  # a channel's confidence reads its first 50 scores


def confidence(scores: Sequence[float], depth: int = ADAPTIVE_DEPTH) -> float:
    """How far the best of a channel's scores (best first) stands out of the rest of its first
    ``depth``: (top - mean of the others) / their standard deviation, at least 1e-6; 1 (neutral)
    for a list of fewer than 3 scores or a flat one."""
    s = [float(x) for x in scores[:depth]]
    if len(s) < 3:
        return 1.0
    rest = s[1:]
    mean = sum(rest) / len(rest)
    std = math.sqrt(sum((x - mean) ** 2 for x in rest) / len(rest))
    if std == 0 or not math.isfinite(std):
        return 1.0
    return max((s[0] - mean) / std, 1e-6)


def adaptive_weights(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                     unlisted: float = 0.0, *, power: float = 1.0, depth: int = ADAPTIVE_DEPTH) -> dict[str, float]:
    """The weights adaptive fusion uses on this query: each channel's weight times its
    ``confidence`` (read from its first ``depth`` scores) raised to ``power``, rescaled to the sum
    of the weights (a channel with no hits keeps its own). Queries use the defaults; the
    benchmarks measure other powers and depths through this same function."""
    base = {c: float(weights.get(c, unlisted)) for c in rankings}
    scaled = {c: base[c] * confidence([s for _, s in r], depth) ** power for c, r in rankings.items() if r}
    total, z = sum(base[c] for c in scaled), sum(scaled.values())
    return {c: (scaled[c] / z * total if c in scaled and z > 0 else base[c]) for c in rankings}


#: fusion modes by name: ``mode(inp: FusionInput) -> Fused``
FUSIONS: Registry[Fused] = Registry("fusion mode", ConfigError)


@FUSIONS.register(FusionMode.RRF.value)
def rrf_mode(inp: FusionInput) -> Fused:
    """RRF votes equally (``weights`` are weighted fusion's)."""
    return Fused(rrf(inp.rankings, inp.k, None, inp.discounts), {"k": inp.k})


@FUSIONS.register(FusionMode.WEIGHTED.value)
def weighted_mode(inp: FusionInput) -> Fused:
    return Fused(weighted(inp.rankings, inp.weights, inp.normalization, inp.discounts, inp.unlisted),
                 {"weights": inp.channel_weights(), "normalization": inp.normalization})


@FUSIONS.register(FusionMode.ADAPTIVE.value)
def adaptive_mode(inp: FusionInput) -> Fused:
    adapted = adaptive_weights(inp.rankings, inp.weights, inp.unlisted, power=inp.power)
    info: dict[str, Any] = {"weights": inp.channel_weights(), "normalization": inp.normalization}
    if inp.fused_by_store:
        info["engine"] = (f"{inp.fused_by_store[0]} fused dense and BM25 with the fixed weights "
                          "(adaptive needs each channel's own list)")
    else:  # the weights this query was fused with
        info.update(adapted_weights=adapted, adaptive_power=inp.power)
    return Fused(weighted(inp.rankings, adapted, inp.normalization, inp.discounts, inp.unlisted), info)


SINGLE_CHANNEL = "single channel: its own order and raw scores"


def run_fusion(mode: str, inp: FusionInput) -> Fused:
    """Fuse by a mode of ``FUSIONS``; ``info`` is the mode's, after the mode and the channels. One
    channel keeps its own order and raw scores (the mode's info kept, with a ``note`` that says so)."""
    m = parse_enum(FusionMode, mode, "fusion mode")
    done = FUSIONS.make(m.value, inp)
    info = {"mode": m, "channels": list(inp.rankings), **done.info}
    if len(inp.rankings) != 1:
        return Fused(done.ranking, info)
    (ranking,) = inp.rankings.values()
    return Fused([(pid, float(s)) for pid, s in ranking], {**info, "note": SINGLE_CHANNEL})


def fuse(rankings: Mapping[str, Ranking], mode: str, *, k: int = 60,
         weights: Mapping[str, float] | None = None, normalization: str = "minmax",
         discounts: Discounts | None = None, unlisted: float = 0.0, power: float = 1.0) -> Ranking:
    """The ranking alone of ``run_fusion`` (for callers that fuse lists of their own: tuning, the
    benchmarks). ``power``: adaptive fusion's (``adaptive_weights``)."""
    return run_fusion(mode, FusionInput(rankings, k=k, weights=weights or {}, normalization=normalization,
                                        discounts=discounts, unlisted=unlisted, power=power)).ranking
