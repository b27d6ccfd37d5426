"""Paired significance test for comparing two configurations query by query.

``paired_randomization_test`` is Fisher's two-sided randomization (permutation) test for paired
samples (Smucker, Allan and Carterette, CIKM 2007 recommend it for IR): under the null
hypothesis the two systems are exchangeable per query, so each per-query difference's sign is
flipped at random; the p-value is the share of resamples whose mean difference is at least as
extreme as the observed one, ``(count + 1) / (resamples + 1)``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Comparison:
    metric: str
    mean_a: float
    mean_b: float
    diff: float  # mean_b - mean_a
    p_value: float
    wins: int  # queries where b > a
    losses: int
    ties: int
    n: int


def paired_randomization_test(a: np.ndarray, b: np.ndarray, resamples: int = 10_000,
                              seed: int = 0) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("paired samples must be 1-d arrays of the same length")
    d = b - a
    observed = abs(d.mean()) if len(d) else 0.0
    if len(d) == 0 or np.allclose(d, 0):
        return 1.0
    rng = np.random.default_rng(seed)
    count = 0
    for start in range(0, resamples, 2000):
        m = min(2000, resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(m, len(d)))
        count += int((np.abs((signs * d).mean(axis=1)) >= observed - 1e-12).sum())
    return (count + 1) / (resamples + 1)


def compare(per_query_a: Mapping[str, Mapping[str, float]], per_query_b: Mapping[str, Mapping[str, float]],
            metric: str, resamples: int = 10_000, seed: int = 0) -> Comparison:
    qids = sorted(set(per_query_a) & set(per_query_b))
    a = np.array([per_query_a[q][metric] for q in qids])
    b = np.array([per_query_b[q][metric] for q in qids])
    return Comparison(metric, float(a.mean()) if len(a) else 0.0, float(b.mean()) if len(b) else 0.0,
                      float((b - a).mean()) if len(a) else 0.0,
                      paired_randomization_test(a, b, resamples, seed),
                      int((b > a).sum()), int((b < a).sum()), int((b == a).sum()), len(qids))
