"""``ragsift tune``: learn one knowledge base's fusion settings from questions whose answers are
known, and save them as its query defaults.

The questions come from BEIR qrels (``--qrels``: a folder with queries.jsonl and
qrels/<split>.tsv whose document ids are the knowledge base's), or, with no labels, from the
language model: it writes one question for each of a sample of the knowledge base's sections,
and that section's document is the answer (``--generate N``).

Each question is searched once per channel depth; the channels' rankings are kept, and every
fusion setting of the grid (RRF k; weighted fusion with min-max or z-score normalization and the
dense share of the weight; the depth; the weight of a cross-language term hit) is replayed over
them with ``ragsift.retrieve.fusion.fuse``: no question is searched twice for the same depth.
The questions at even positions choose, the odd ones validate: the chosen settings are saved
only when they are at least as good as the knowledge base's current ones on the odd questions.
"""
from __future__ import annotations

import itertools
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragsift.cancel import Deadline
from ragsift.config import UNLISTED_WEIGHT
from ragsift.errors import InputError, RagsiftError
from ragsift.eval.metrics import ndcg_at_k
from ragsift.eval.stats import paired_randomization_test
from ragsift.models.llm import llm_for
from ragsift.retrieve.fusion import fuse
from ragsift.text.lang import detect_language
from ragsift.text.prompts import answer_lines, get_prompt
from ragsift.text.tokens import cut_to_tokens

if TYPE_CHECKING:
    from ragsift.types import Parent

DEPTHS = (50, 100)
RRF_K = (10, 20, 40, 60, 100)
DENSE_SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
CROSS = (1.0, 0.5, 0.25, 0.1)
DENSE_FAMILY = ("dense", "hyde")  # channels whose weight is the dense share; the rest share the remainder


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    rels: dict[str, int]  # document id -> graded relevance


@dataclass
class Captured:
    """One question's search at one depth: per channel (unit, score), the unit's document, and
    the units each term channel found in another language."""

    rankings: dict[str, list[tuple[str, float]]]
    doc_of: dict[str, str]
    cross: dict[str, frozenset[str]]


@dataclass
class TuneReport:
    source: str  # "labels" or "generated"
    questions: int
    current: dict[str, Any]
    chosen: dict[str, Any]
    train: dict[str, float]  # mean nDCG@10 on the choosing questions: current, chosen
    validation: dict[str, float]  # the same on the held-out questions
    p_value: float
    applied: bool
    seconds: float
    generated: list[dict[str, Any]] = field(default_factory=list)  # label-free: the questions written

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _weights(channels: Sequence[str], dense_share: float) -> dict[str, float]:
    dense = [c for c in channels if c.split(":")[0] in DENSE_FAMILY]
    rest = [c for c in channels if c not in dense]
    if not dense or not rest:
        return {c: 1.0 for c in channels}
    return {**{c: dense_share / len(dense) for c in dense}, **{c: (1 - dense_share) / len(rest) for c in rest}}


def grid(channels: Sequence[str], with_cross: bool) -> list[dict[str, Any]]:
    """The settings tried, as flat setting names."""
    out = []
    for depth, cross in itertools.product(DEPTHS, CROSS if with_cross else (1.0,)):
        base = {"channel_depth": depth, "cross_language_weight": cross}
        out += [{**base, "fusion": "rrf", "rrf_k": k} for k in RRF_K]
        out += [{**base, "fusion": "weighted", "normalization": n, "weights": _weights(channels, w)}
                for n, w in itertools.product(("minmax", "zscore"), DENSE_SHARES)]
    return out


def capture(kb, questions: Sequence[Question], depths: Sequence[int] = DEPTHS) -> dict[int, list[Captured]]:
    """Every question searched once per depth (one round, no fusion choice yet)."""
    out: dict[int, list[Captured]] = {}
    for depth in depths:
        rows = []
        for q in questions:
            r = kb.search(q.text, channel_depth=depth, strategy="settings", multihop_mode="off", reranker="")
            doc_of = {r.unit.key(f.hit): f.hit.doc_id for f in r.found.values()}
            rows.append(Captured({c: list(v) for c, v in r.rankings.items()}, doc_of, dict(r.cross_language)))
        out[depth] = rows
    return out


def _docs(c: Captured, setting: dict[str, Any]) -> list[str]:
    w = float(setting.get("cross_language_weight", 1.0))
    discounts = {ch: {u: w for u in units} for ch, units in c.cross.items()} if w != 1.0 else None
    fused = fuse(c.rankings, setting["fusion"], k=int(setting.get("rrf_k", 60)), weights=setting.get("weights"),
                 normalization=setting.get("normalization", "minmax"), discounts=discounts, unlisted=UNLISTED_WEIGHT)
    return list(dict.fromkeys(c.doc_of[u] for u, _ in fused))


def scores(captured: dict[int, list[Captured]], questions: Sequence[Question], setting: dict[str, Any]) -> list[float]:
    rows = captured[int(setting["channel_depth"])]
    return [ndcg_at_k(_docs(c, setting), q.rels, 10) for c, q in zip(rows, questions)]


def current_setting(kb) -> dict[str, Any]:
    q = kb.settings.query
    return {"channel_depth": q.channel_depth, "cross_language_weight": q.cross_language_weight,
            "fusion": q.fusion.value, "rrf_k": q.rrf_k, "normalization": q.normalization.value,
            "weights": dict(q.weights)}


def tune(kb, questions: Sequence[Question], *, source: str, apply: bool = True,
         progress: Callable[[str], None] | None = None) -> TuneReport:
    """Choose on the even-positioned questions, validate on the odd ones, save when not worse."""
    if len(questions) < 10:
        raise InputError("tuning needs at least 10 questions with answers in the knowledge base; "
                           f"got {len(questions)}")
    t0 = time.perf_counter()
    current = current_setting(kb)
    depths = sorted(set(DEPTHS) | {current["channel_depth"]})
    captured = capture(kb, questions, depths)
    channels = list(kb.settings.query.channels)
    with_cross = any(c.cross for rows in captured.values() for c in rows)
    candidates = [current] + grid(channels, with_cross)
    train_idx, val_idx = range(0, len(questions), 2), range(1, len(questions), 2)

    def split(xs: list[float], idx: range) -> list[float]:
        return [xs[i] for i in idx]

    best, best_train = current, -1.0
    cur_scores = scores(captured, questions, current)
    for setting in candidates:
        s = scores(captured, questions, setting)
        m = statistics.fmean(split(s, train_idx))
        if m > best_train + 1e-12:
            best, best_train, best_scores = setting, m, s
    if progress:
        progress(f"tried {len(candidates)} settings on {len(train_idx)} questions")
    cur_val, new_val = split(cur_scores, val_idx), split(best_scores, val_idx)
    validation = {"current": statistics.fmean(cur_val), "chosen": statistics.fmean(new_val)}
    applied = apply and best is not current and validation["chosen"] >= validation["current"]
    report = TuneReport(source, len(questions), current, best,
                        {"current": statistics.fmean(split(cur_scores, train_idx)), "chosen": best_train},
                        validation, paired_randomization_test(np.array(cur_val), np.array(new_val)), applied,
                        time.perf_counter() - t0)
    if applied:
        note = (f"ragsift tune on {len(questions)} {'labeled' if source == 'labels' else 'generated'} questions, "
                f"{time.strftime('%Y-%m-%d')}: held-out nDCG@10 {validation['current']:.3f} -> "
                f"{validation['chosen']:.3f}")
        kb.set_defaults(**{k: v for k, v in best.items() if k != "weights" or best["fusion"] == "weighted"},
                        tuned_by=note)
    return report


def labeled_questions(kb, path: str, split: str = "test") -> list[Question]:
    """The BEIR questions whose relevant documents are in the knowledge base (file order)."""
    from ragsift.eval.datasets import load_beir

    ds = load_beir(path, split)
    stored = set(kb.documents())
    out = []
    for qid, text in ds.queries.items():
        rels = {d: g for d, g in ds.qrels.get(qid, {}).items() if g > 0 and d in stored}
        if rels:
            out.append(Question(qid, text, rels))
    return out


def generated_questions(kb, n: int, *, seed: int = 0, max_tokens: int = 300,
                        timeout_s: float = 120.0) -> tuple[list[Question], list[dict[str, Any]]]:
    """``n`` questions written by the knowledge base's language model, one for each of ``n``
    sections sampled at random (seeded); a section's document is its question's answer."""
    llm = llm_for(kb.settings.llm)
    docs = sorted(kb.documents())
    rng = random.Random(seed)
    parents: list[Parent] = []
    for part in range(0, len(docs), 200):
        for ps in kb.store.get_document_parents(docs[part:part + 200]).values():
            parents.extend(sp.parent for sp in ps if sp.parent.text.strip())
    rng.shuffle(parents)
    out: list[Question] = []
    log: list[dict[str, Any]] = []
    for p in parents:
        if len(out) >= n:
            break
        text = cut_to_tokens(p.text, max_tokens)
        lang = detect_language(text)
        msgs = get_prompt("question", lang, kb.settings.llm.prompts).messages(text=text)
        try:
            lines = answer_lines(llm.generate(msgs, temperature=0.0, max_tokens=64, deadline=Deadline(timeout_s)))
        except RagsiftError as e:
            log.append({"parent": p.parent_id, "error": str(e)})
            continue
        q = lines[0] if lines else ""
        if 8 <= len(q) <= 400:
            out.append(Question(f"g{len(out)}", q, {p.doc_id: 1}))
            log.append({"parent": p.parent_id, "question": q})
    return out, log
