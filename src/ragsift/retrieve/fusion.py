"""Fusion of per-channel rankings into one ranking of units.

``fuse`` takes, per channel, a list of (unit id, raw score) best first, already deduplicated by
the query's unit within the channel (``units.UnitStrategy.key``: the parent by default, so the
chunks of one section cannot each add score), and returns (unit id, fused score) best first.
Ties break by unit id so results are deterministic. One channel alone keeps its own order and
raw scores, whatever the mode.

- ``rrf``, reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009):
  ``score(d) = sum over channels c of w_c / (k + rank_c(d))``, rank 1-based, ``k`` (``rrf_k``)
  default 60. The mode votes equally (``weights`` are weighted fusion's); the function ``rrf``
  takes weights for its other callers (multi-query, multi-hop). The score is a rank artefact:
  never threshold it.
- ``weighted``, weighted score fusion: ``score(d) = sum_c w_c * norm_c(raw_c(d))``, a channel
  that did not return ``d`` contributes 0; a channel ``weights`` does not name weighs
  ``unlisted`` (``config.UNLISTED_WEIGHT`` in a query). ``norm`` is explicit: ``minmax`` maps a
  channel's scores to [0, 1] (all-equal scores map to 1), ``zscore`` to (s - mean) / std
  (all-equal: 0), ``none`` leaves raw scores (only sensible when channels share a scale).
- ``adaptive`` (the default), weighted score fusion whose weights are set per query
  (``adaptive_weights``): each channel's weight is scaled by its *confidence* raised to
  ``power`` (``adaptive_power``); confidence is how far its best hit stands out of its list,
  (top - mean of the others) / their standard deviation over its first ``ADAPTIVE_DEPTH``
  scores (1, neutral, for fewer than three or a flat list). The weights are then rescaled to
  keep their sum. A channel whose best hit is far ahead of the rest counts more on that query;
  a flat list counts less. Needs no labels and no model. The query's trace calls
  ``adaptive_weights`` again to show the weights used (``retrieve.pipeline``).

Each mode also takes ``discounts``: per channel, unit id -> a factor on that hit's share (a term
channel's hit in another language than the question's, ``cross_language_weight``). The modes
are registered in ``FUSIONS``: a new one is a function, its registration and its member of
``config.FusionMode`` (``fuse`` checks the name against it).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ragsift.config import FusionMode, Normalization, parse_enum
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.types import Ranking

Discounts = Mapping[str, Mapping[str, float]]


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


#: fusion modes by name: ``fn(rankings, *, k, weights, normalization, discounts, unlisted, power)``
FUSIONS: Registry[Callable[..., Ranking]] = Registry("fusion mode", ConfigError)


@FUSIONS.register(FusionMode.RRF.value)
def _rrf_mode() -> Callable[..., Ranking]:
    # RRF votes equally (``weights`` are for weighted fusion)
    return lambda rankings, *, k, discounts, **_: rrf(rankings, k, None, discounts)


@FUSIONS.register(FusionMode.WEIGHTED.value)
def _weighted_mode() -> Callable[..., Ranking]:
    return lambda rankings, *, weights, normalization, discounts, unlisted, **_: weighted(
        rankings, weights or {}, normalization, discounts, unlisted)


@FUSIONS.register(FusionMode.ADAPTIVE.value)
def _adaptive_mode() -> Callable[..., Ranking]:
    return lambda rankings, *, weights, normalization, discounts, unlisted, power, **_: weighted(
        rankings, adaptive_weights(rankings, weights or {}, unlisted, power=power), normalization, discounts, unlisted)


def fuse(rankings: Mapping[str, Ranking], mode: str, *, k: int = 60,
         weights: Mapping[str, float] | None = None, normalization: str = "minmax",
         discounts: Discounts | None = None, unlisted: float = 0.0, power: float = 1.0) -> Ranking:
    """Fuse channel rankings by a mode of ``FUSIONS``; one channel keeps its own order and raw scores.
    ``power``: adaptive fusion's (``adaptive_weights``)."""
    m = parse_enum(FusionMode, mode, "fusion mode")
    if len(rankings) == 1:
        (ranking,) = rankings.values()
        return [(pid, float(s)) for pid, s in ranking]
    return FUSIONS.make(m.value)(rankings, k=k, weights=weights, normalization=normalization, discounts=discounts,
                                 unlisted=unlisted, power=power)
