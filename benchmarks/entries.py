"""Whole entries beside chunks: how an entry (a section, or a short document) is best scored.

    .venv/bin/python benchmarks/entries.py collect --set insuranceqa-zh=benchmarks/data/insuranceqa-zh:e5-small
    .venv/bin/python benchmarks/entries.py report

``collect`` builds (once) each set's knowledge base with chunks and whole sections in its small
index (``small_index = ["chunk", "parent"]``) and stores, for every judged query, what the dense
and BM25 channels return at depth 100 over the chunks alone and over the whole sections alone
(entry, section, document, raw score). It also builds a *plain reference* the way a user without
ragsift would: each document embedded whole by the same embedder (exact cosine), an Okapi BM25
written here (k1 1.2, b 0.75, Lucene's idf; jieba words for Chinese, lower-cased word runs
otherwise; no stemming, no stop words), and the two fused by min-max (0.5 / 0.5).

``report`` replays, per query and channel, how a section's score is made from its entries:

- ``chunks``: its best chunk (what ragsift did);
- ``whole``: the whole-section entry alone;
- ``max``: the better of the two (what the store does when a query searches both kinds);
- ``mix a``: ``a * whole + (1 - a) * best chunk`` on each channel's min-max scaled scores (an
  entry missing from a list scores 0 there), for a in 0.25, 0.5, 0.75 (``mix 0.5`` ranks as
  their sum; the mix is learned in that it is chosen, leave-one-set-out, with the fusion);

then fuses dense and BM25 with ragsift's own ``fuse`` (RRF, or weighted min-max at several dense
weights, or ``adaptive``: those weights scaled per query by how far each channel's best hit stands
out of its list, the z-score of its top score among its first 50) and scores nDCG@10 of the documents. Settings are chosen leave-one-set-out: each set is reported (odd-numbered
judged queries) with the rule chosen on the even-numbered queries of the *other* sets.

``refresh-bm25`` (same ``--set`` and ``--work-dir`` as ``collect``) searches a collected set's BM25
lists again with the package as it is, keeping the earlier lists beside them: the report gives
today's defaults on the BM25 of their day (a query term asked twice counted twice) and the
package's defaults before and after BM25 counted each distinct query term once.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.retrieve.fusion import ADAPTIVE_DEPTH, adaptive_weights, fuse  # noqa: E402
from ragsift.text.lang import detect_language  # noqa: E402

DEPTH = 100
CROSS = Settings().query.cross_language_weight
CACHE = Path("/tmp/ragsift-eval/entries")


# --- the plain reference ------------------------------------------------------------------------

def ref_tokens(text: str, zh: bool) -> list[str]:
    if zh:
        import jieba

        return [w.lower() for w in jieba.lcut(text) if w.strip() and re.search(r"\w", w)]
    return re.findall(r"\w+", text.lower())


class PlainBM25:
    """Okapi BM25 over whole documents, written for this benchmark (independent of ragsift's)."""

    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.tf = [Counter(d) for d in docs]
        self.len = np.array([len(d) for d in docs], float)
        self.avg = float(self.len.mean()) if docs else 1.0
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.post: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.post.setdefault(t, []).append(i)
        self.k1, self.b = k1, b

    def search(self, query: list[str], k: int) -> list[tuple[int, float]]:
        scores: dict[int, float] = {}
        for t in set(query):
            for i in self.post.get(t, ()):
                f = self.tf[i][t]
                norm = self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + self.idf[t] * f * (self.k1 + 1) / (f + norm)
        return sorted(scores.items(), key=lambda x: -x[1])[:k]


def minmax(pairs: list[tuple[str, float]]) -> dict[str, float]:
    if not pairs:
        return {}
    lo, hi = min(s for _, s in pairs), max(s for _, s in pairs)
    return {d: (s - lo) / (hi - lo) if hi > lo else 1.0 for d, s in pairs}


def plain_fused(dense: list[tuple[str, float]], bm25: list[tuple[str, float]]) -> list[str]:
    a, b = minmax(dense), minmax(bm25)
    keys = set(a) | set(b)  # ties by id: a set's order changes from run to run
    return sorted(keys, key=lambda d: (-(0.5 * a.get(d, 0.0) + 0.5 * b.get(d, 0.0)), d))


# --- collect -----------------------------------------------------------------------------------

def corpus_rows(ds) -> list[dict]:
    return [json.loads(ln) for ln in open(ds.corpus, encoding="utf-8") if ln.strip()]


def reference_text(d: dict) -> str:
    """A document's text as the reference reads it (title line, then text)."""
    return ((d.get("title") or "") + "\n" + d["text"]).strip()


def languages(docs: list[dict]) -> dict[str, str]:
    """Each document's language, from the start of its text."""
    return {str(d["_id"]): detect_language(reference_text(d)[:2000]) for d in docs}


def load_set(name: str, folder: Path):
    """A BEIR folder, or (``FOLDER#PREFIX``) the part of it whose documents' ids start with PREFIX
    and whose queries are judged on those alone (L-Eval's NQ part: ``leval-longdoc-en#leval-nq-``;
    its other questions are asked within one document), written once to a folder beside the cache."""
    base, _, prefix = str(folder).partition("#")
    if not prefix:
        return load_dataset(base)
    ds = load_dataset(base)
    part = CACHE.parent / "subsets" / name
    (part / "qrels").mkdir(parents=True, exist_ok=True)
    with open(ds.corpus, encoding="utf-8") as f, open(part / "corpus.jsonl", "w", encoding="utf-8") as g:
        g.writelines(ln for ln in f if ln.strip() and str(json.loads(ln)["_id"]).startswith(prefix))
    qrels = {q: r for q, r in ds.qrels.items() if all(d.startswith(prefix) for d in r)}
    with open(part / "queries.jsonl", "w", encoding="utf-8") as g:
        g.writelines(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in ds.queries.items() if q in qrels)
    with open(part / "qrels" / "test.tsv", "w", encoding="utf-8") as g:
        g.write("query-id\tcorpus-id\tscore\n")
        g.writelines(f"{q}\t{d}\t{v}\n" for q, r in qrels.items() for d, v in r.items())
    return load_dataset(part)


def collect(name: str, folder: Path, embedder: str, work: Path) -> None:
    from ragsift.kb import KnowledgeBase

    out = CACHE / f"{name}.json"
    if out.exists():
        print(f"{name}: cached in {out}")
        return
    ds = load_set(name, folder)
    t0 = time.time()
    kb = KnowledgeBase.open(work / f"{name}-{embedder}-cp", embedder=embedder, small_index=["chunk", "parent"])
    kb.ingest(ds.corpus)
    t_ingest = time.time() - t0
    docs = corpus_rows(ds)
    ids, texts = [str(d["_id"]) for d in docs], [reference_text(d) for d in docs]
    zh = detect_language(" ".join(t[:200] for t in texts[:50])) == "zh"
    t0 = time.time()
    emb = kb.embedder()
    # a document stored as one section holding its whole text has, as its whole-section entry, the
    # very string the reference embeds (title line, then text; same model and prefix): its
    # reference score is that entry's (searched at full depth); every other document is embedded here
    with kb.reading() as store:
        sections = store.get_document_parents(ids)
    same = [len(sections.get(i, [])) == 1 and sections[i][0].parent.text == d["text"].strip() for i, d in zip(ids, docs)]
    own = [i for i, s in enumerate(same) if not s]
    own_vecs = (np.vstack([emb.embed_passages([texts[i] for i in own[j:j + 64]]) for j in range(0, len(own), 64)])
                if own else np.zeros((0, 1), np.float32))
    bm25 = PlainBM25([ref_tokens(t, zh) for t in texts])
    t_ref = time.time() - t0
    qids = [q for q in ds.queries if q in ds.qrels]
    rows = []
    with kb.reading() as store:
        qvecs = emb.embed_queries([ds.queries[q] for q in qids])
        for qid, vec in zip(qids, qvecs):
            q = ds.queries[qid]
            terms = kb.analyzer.analyze(q)
            lists = {}
            for kind in ("chunk", "parent"):
                lists[f"dense_{kind}"] = store.search_dense(vec, DEPTH, None, (kind,))
                lists[f"bm25_{kind}"] = store.search_bm25(terms, DEPTH, None, (kind,))
            whole = {h.doc_id: h.score for h in store.search_dense(vec, len(ids), None, ("parent",))}
            sims = np.array([whole.get(d, -1.0) for d in ids], np.float32)
            if own:
                sims[own] = own_vecs @ np.asarray(vec, np.float32)
            top = np.argsort(-sims)[:DEPTH]
            rows.append({"qid": qid, "rels": ds.qrels[qid], "qlang": detect_language(q),
                         "lists": {c: [[h.parent_id, h.doc_id, h.score] for h in hits] for c, hits in lists.items()},
                         "ref_dense": [[ids[i], float(sims[i])] for i in top],
                         "ref_bm25": [[ids[i], s] for i, s in bm25.search(ref_tokens(q, zh), DEPTH)]})
    st = kb.stats()
    stats = {k: st.get(k) for k in ("documents", "parents", "children")} | {"reference_embedded_here": len(own)}
    with kb.reading() as store:
        sizes = section_sizes(store, ids)
    kb.close()
    CACHE.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"name": name, "embedder": embedder, "ingest_s": round(t_ingest, 1),
                               "doc_lang": languages(docs), "bm25_query": "distinct terms",
                               "reference_s": round(t_ref, 1), "stats": stats, "sections": sizes,
                               "rows": rows}), encoding="utf-8")
    print(f"{name}: {len(rows)} queries; ingest {t_ingest:.0f} s, reference {t_ref:.0f} s")


def section_sizes(store, doc_ids: list[str]) -> dict[str, list[int]]:
    """Each section's [tokens of its chunks, chunks]: what a rule on which sections get a whole
    entry of their own reads (``whole_rule.py``)."""
    out: dict[str, list[int]] = {}
    for j in range(0, len(doc_ids), 256):
        for entries in store.get_entries(doc_ids[j:j + 256]).values():
            for c in entries:
                row = out.setdefault(c.parent_id, [0, 0])
                if c.kind == "chunk":
                    row[0] += c.tokens
                    row[1] += 1
    return out


def enrich(name: str, folder: Path) -> None:
    """Add the languages (each question's, each document's) to a set collected before they were stored."""
    out = CACHE / f"{name}.json"
    data = json.loads(out.read_text(encoding="utf-8"))
    ds = load_dataset(folder)
    data["doc_lang"] = languages(corpus_rows(ds))
    for r in data["rows"]:
        r["qlang"] = detect_language(ds.queries[r["qid"]])
    out.write_text(json.dumps(data), encoding="utf-8")
    print(f"{name}: languages added")


def refresh_bm25(name: str, folder: Path, embedder: str, work: Path) -> None:
    """Search a collected set's BM25 lists again with the package as it is now (its knowledge base
    kept from ``collect``); the lists searched before are kept beside them as ``NAME@counted``
    (collected when a term asked twice counted twice), so the report can set both side by side."""
    from ragsift.kb import KnowledgeBase

    out = CACHE / f"{name}.json"
    data = json.loads(out.read_text(encoding="utf-8"))
    queries = load_set(name, folder).queries
    kb = KnowledgeBase.open(work / f"{name}-{embedder}-cp", embedder=embedder)
    with kb.reading() as store:
        for row in data["rows"]:
            terms = kb.analyzer.analyze(queries[row["qid"]])
            for kind in ("chunk", "parent"):
                lists = row["lists"]
                lists.setdefault(f"bm25_{kind}@counted", lists[f"bm25_{kind}"])
                lists[f"bm25_{kind}"] = [[h.parent_id, h.doc_id, h.score]
                                         for h in store.search_bm25(terms, DEPTH, None, (kind,))]
    kb.close()
    data["bm25_query"] = "distinct terms"
    out.write_text(json.dumps(data), encoding="utf-8")
    print(f"{name}: BM25 lists searched again ({len(data['rows'])} queries)")


# --- report ------------------------------------------------------------------------------------

def section_scores(chunks: list, whole: list, rule: str) -> list[tuple[str, float, str]]:
    """(section, score, document), best first, under a rule of how a section's entries combine."""
    doc_of = {p: d for p, d, _ in chunks} | {p: d for p, d, _ in whole}
    best_c: dict[str, float] = {}
    for p, _, s in chunks:
        best_c.setdefault(p, s)
    best_w = {p: s for p, _, s in whole}
    if rule == "chunks":
        out = best_c
    elif rule == "whole":
        out = best_w
    elif rule == "max":
        out = {p: max(best_c.get(p, -math.inf), best_w.get(p, -math.inf)) for p in doc_of}
    else:
        nc, nw = minmax(list(best_c.items())), minmax(list(best_w.items()))
        a = float(rule.split()[1])  # an entry missing from a list scores 0 there
        out = {p: a * nw.get(p, 0.0) + (1 - a) * nc.get(p, 0.0) for p in doc_of}
    ranked = sorted(out.items(), key=lambda x: -x[1])
    return [(p, s, doc_of[p]) for p, s in ranked]


def doc_ranking(fused: list[tuple[str, float]], doc_of: dict[str, str]) -> list[str]:
    """Documents in the order of their best section."""
    return list(dict.fromkeys(doc_of[p] for p, _ in fused))


#: name -> (mode, dense weight, adaptive power, adaptive depth): RRF, weighted min-max, and adaptive
#: fusion with each channel's confidence (its best score's z among its first ``depth``) raised to
#: ``power`` (1: the confidence itself, as ragsift's ``fusion="adaptive"``; 0.5: its square root,
#: a damped variant measured beside it)
FUSIONS = ({"rrf k=60": ("rrf", 0.5, 1.0, ADAPTIVE_DEPTH)}
           | {f"minmax dense={w}": ("weighted", w, 1.0, ADAPTIVE_DEPTH) for w in (0.3, 0.4, 0.5, 0.6)}
           | {f"adaptive dense={w}": ("adaptive", w, 1.0, ADAPTIVE_DEPTH) for w in (0.4, 0.5, 0.6)}
           | {f"adaptive^{pw} dense={w}": ("adaptive", w, pw, ADAPTIVE_DEPTH) for pw in (0.5,) for w in (0.4, 0.5, 0.6)})


DENSE_RULES = ("chunks", "whole", "max", "mix 0.25", "mix 0.5", "mix 0.75")
BM25_RULES = ("chunks", "whole", "max", "mix 0.5")


class Prepared:
    """One query's channel lists under every rule (sections, best first), made once."""

    def __init__(self, row: dict, doc_lang: dict[str, str], counted: bool = False) -> None:
        li = row["lists"]
        if counted:  # BM25 as searched before ``refresh-bm25`` (a repeated query term counted again)
            li = li | {k: li.get(f"{k}@counted", li[k]) for k in ("bm25_chunk", "bm25_parent")}
        self.rels = row["rels"]
        self.dense = {r: section_scores(li["dense_chunk"], li["dense_parent"], r) for r in DENSE_RULES}
        self.bm25 = {r: section_scores(li["bm25_chunk"], li["bm25_parent"], r) for r in BM25_RULES}
        self.doc_of = {p: d for lists in (self.dense, self.bm25) for x in lists.values() for p, _, d in x}
        self.discounts = cross_language(((p, d) for x in self.bm25.values() for p, _, d in x), doc_lang, row["qlang"])

    def alone(self, channel: str, rule: str) -> float:
        lists = self.dense if channel == "dense" else self.bm25
        return ndcg_at_k(doc_ranking([(p, s) for p, s, _ in lists[rule]], self.doc_of), self.rels, 10)

    def hybrid(self, rule_dense: str, rule_bm25: str, fusion: str) -> float:
        dense, bm25 = self.dense[rule_dense], self.bm25[rule_bm25]
        rankings = {"dense": [(p, s) for p, s, _ in dense], "bm25": [(p, s) for p, s, _ in bm25]}
        return fused_ndcg(rankings, fusion, self.discounts, self.doc_of, self.rels)


def cross_language(hits: Iterable[tuple[str, str]], doc_lang: dict[str, str], qlang: str) -> dict | None:
    """Fusion's discounts for a question's BM25 hits (section, document): a hit in another language
    than the question's counts ``cross_language_weight`` (as a query does); None when there is none."""
    other = {p for p, d in hits if doc_lang.get(d, qlang) != qlang}
    return {"bm25": {p: CROSS for p in other}} if other else None


def fused_ndcg(rankings: dict[str, list[tuple[str, float]]], fusion: str, discounts: dict | None,
               doc_of: dict[str, str], rels: dict) -> float:
    """nDCG@10 of the documents once a query's dense and BM25 sections are fused by ``fusion`` (a
    name of ``FUSIONS``) with ragsift's own fusion (adaptive: its weights, then ``weighted``)."""
    mode, w, power, depth = FUSIONS[fusion]
    weights = {"dense": w, "bm25": 1 - w}
    if mode == "adaptive":
        mode, weights = "weighted", adaptive_weights(rankings, weights, power=power, depth=depth)
    fused = fuse(rankings, mode, k=60, weights=weights, normalization="minmax", discounts=discounts)
    return ndcg_at_k(doc_ranking(fused, doc_of), rels, 10)


def default_fusion() -> str:
    """The package's default fusion, by its name in ``FUSIONS``."""
    q = Settings().query
    fusion = next((f for f, (mode, w, power, depth) in FUSIONS.items()
                   if (mode, w, 1 - w) == (q.fusion.value, q.weights["dense"], q.weights["bm25"])
                   and (mode != "adaptive" or (power, depth) == (1.0, ADAPTIVE_DEPTH))), None)
    assert q.normalization == "minmax" and fusion is not None, "the package's defaults are not in the grid"
    return fusion


def reference(row: dict) -> dict[str, float]:
    rels = row["rels"]
    dense = [(d, s) for d, s in row["ref_dense"]]
    bm25 = [(d, s) for d, s in row["ref_bm25"]]
    return {"dense": ndcg_at_k([d for d, _ in dense], rels, 10), "bm25": ndcg_at_k([d for d, _ in bm25], rels, 10),
            "hybrid": ndcg_at_k(plain_fused(dense, bm25), rels, 10)}


#: the defaults a round judges ("today"): until 2026-12-03 weighted min-max dense 0.4 (the first round,
#: results/entries.json); since, adaptive from dense 0.5 (the second, results/entries_round2.json)
PREVIOUS = ("chunks", "chunks", "adaptive dense=0.5")


def report(out: Path) -> None:
    fusion = default_fusion()
    default = ("chunks", "chunks", fusion)
    today = PREVIOUS
    sets = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(CACHE.glob("*.json"))}
    combos = [(d, b, f) for d in DENSE_RULES for b in ("chunks", "max", "mix 0.5") for f in FUSIONS]
    per: dict[str, dict] = {}
    for name, data in sets.items():
        rows = data["rows"]
        per[name] = {}
        for part, start in (("even", 0), ("odd", 1)):
            prepared = [Prepared(r, data["doc_lang"]) for r in rows[start::2]]
            per[name][part] = {c: [p.hybrid(*c) for p in prepared] for c in combos}
            # today's defaults with today's BM25 (every repeat of a query term counted)
            counted = [Prepared(r, data["doc_lang"], counted=True) for r in rows[start::2]]
            per[name][part + " counted"] = {c: [p.hybrid(*c) for p in counted] for c in (today, default)}
            per[name][part + " bm25"] = {k: [p.alone("bm25", "chunks") for p in x]
                                         for k, x in (("counted", counted), ("distinct", prepared))}
            if part == "odd":
                per[name]["alone"] = {(ch, r): [p.alone(ch, r) for p in prepared]
                                      for ch, rules in (("dense", DENSE_RULES), ("bm25", BM25_RULES)) for r in rules}
        per[name]["ref"] = [reference(r) for r in rows[1::2]]
        print(f"{name}: {len(rows)} queries evaluated", flush=True)

    def mean(name: str, part: str, c: tuple) -> float:
        """A setting's mean on the BM25 of now."""
        return statistics.fmean(per[name][part][c])

    def today_mean(name: str, part: str) -> float:
        """Today's defaults on the BM25 of their day."""
        return statistics.fmean(per[name][part + " counted"][today])

    # NAME-today: the set collected with today's splitter (another checkout), compared, not chosen on
    main_sets = [n for n in per if not n.endswith("-today")]
    families = {"fusion": [c for c in combos if c[:2] == ("chunks", "chunks")],  # what a query setting can change
                "both kinds": [c for c in combos if c[:2] in (("chunks", "chunks"), ("max", "max"))],  # + index_kinds
                "every rule": combos}

    def choose(pool: list[str], family: list[tuple]) -> tuple:
        """The best mean over the pool's even queries, no set of the pool more than 0.5 points below
        today's rule there (else the best mean)."""
        fine = [c for c in family if all(mean(o, "even", c) >= today_mean(o, "even") - 0.005 for o in pool)]
        return max(fine or family, key=lambda c: statistics.fmean(mean(o, "even", c) for o in pool))

    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
                    "today": list(today), "default": list(default), "families": {f: len(v) for f, v in families.items()},
                    "chosen_on_all": {f: list(choose(main_sets, v)) for f, v in families.items()},
                    "sets": {}, "splitter": {}}
    print(f"chosen on every set's even queries: {result['chosen_on_all']}")
    for name in main_sets:
        others = [o for o in main_sets if o != name]
        a, now = np.array(per[name]["odd counted"][today]), np.array(per[name]["odd"][default])
        before = np.array(per[name]["odd counted"][default])
        bm_before, bm_now = np.array(per[name]["odd bm25"]["counted"]), np.array(per[name]["odd bm25"]["distinct"])
        ref = per[name]["ref"]
        best_single = max(("dense", "bm25"), key=lambda m: statistics.fmean(per[name]["alone"][(m, "chunks")]))
        single = np.array(per[name]["alone"][(best_single, "chunks")])
        refh = np.array([x["hybrid"] for x in ref])
        loso = {}
        for fam, family in families.items():
            chosen = choose(others, family)  # leave-one-set-out
            b = np.array(per[name]["odd"][chosen])
            loso[fam] = {"chosen": list(chosen), "ndcg": float(b.mean()), "p_vs_today": paired_randomization_test(a, b),
                         "p_vs_single": paired_randomization_test(single, b), "p_vs_reference": paired_randomization_test(refh, b)}
        counted = any("bm25_chunk@counted" in row["lists"] for row in sets[name]["rows"])
        result["sets"][name] = {
            "queries_odd": len(a), "today": float(a.mean()), "loso": loso, "today_on_counted_bm25": counted,
            "default": float(now.mean()), "p_default_vs_today": paired_randomization_test(a, now),
            "bm25_query": None if not counted else {
                "bm25_counted": float(bm_before.mean()), "bm25_distinct": float(bm_now.mean()),
                "p_bm25": paired_randomization_test(bm_before, bm_now),
                "default_counted": float(before.mean()), "default_distinct": float(now.mean()),
                "p_default": paired_randomization_test(before, now),
                "even": {"bm25_counted": statistics.fmean(per[name]["even bm25"]["counted"]),
                         "bm25_distinct": statistics.fmean(per[name]["even bm25"]["distinct"]),
                         "default_counted": statistics.fmean(per[name]["even counted"][default]),
                         "default_distinct": mean(name, "even", default)}},
            "all_queries": {k: float(np.mean(per[name][f"even{x}"][c] + per[name][f"odd{x}"][c]))
                            for k, c, x in (("today", today, " counted"), ("default", default, ""),
                                            ("default_counted", default, " counted"))},
            "fusions_odd": {f: mean(name, "odd", ("chunks", "chunks", f)) for f in FUSIONS},
            "best_single_channel": best_single, "best_single": float(single.mean()),
            "own": {f"{ch}: {r}": statistics.fmean(v) for (ch, r), v in per[name]["alone"].items()},
            "reference": {m: statistics.fmean(x[m] for x in ref) for m in ("dense", "bm25", "hybrid")},
            "top_on_even": [[*c, mean(name, "even", c)] for c in sorted(combos, key=lambda c: -mean(name, "even", c))[:5]],
            # the ceiling of the grid on this set: the best setting chosen on its own held-out queries (an oracle)
            "best_odd": [*max(combos, key=lambda c: mean(name, "odd", c)), max(mean(name, "odd", c) for c in combos)],
            "embedder": sets[name]["embedder"], "ingest_s": sets[name]["ingest_s"], "stats": sets[name]["stats"]}
        r = result["sets"][name]
        print(f"{name}: today {r['today']:.4f}; best single {best_single} {r['best_single']:.4f}; "
              f"reference {', '.join(f'{k} {v:.4f}' for k, v in r['reference'].items())}")
        for fam, v in loso.items():
            print(f"   {fam:10s} {v['chosen']} {v['ndcg']:.4f} (p vs today {v['p_vs_today']:.3f}, "
                  f"vs single {v['p_vs_single']:.3f}, vs reference {v['p_vs_reference']:.3f})")
        print(f"   best on its even queries: {r['top_on_even'][:2]}")
    for name in [n for n in per if n.endswith("-today") and n[:-6] in result["sets"]]:
        new_set = name[:-6]
        chosen = tuple(result["sets"][new_set]["loso"]["fusion"]["chosen"])
        a = np.array(per[name]["odd counted"][today])
        b = np.array(per[new_set]["odd counted"][today])
        c = np.array(per[new_set]["odd"][chosen])
        result["splitter"][new_set] = {
            "today_splitter": float(a.mean()), "new_splitter": float(b.mean()), "p_splitter": paired_randomization_test(a, b),
            "new_splitter_chosen": float(c.mean()), "p_all": paired_randomization_test(a, c),
            "stats_today": sets[name]["stats"], "stats_new": sets[new_set]["stats"],
            "ingest_s_today": sets[name]["ingest_s"], "ingest_s_new": sets[new_set]["ingest_s"]}
        print(f"{new_set} splitter: {result['splitter'][new_set]}")
    write_result(out, result)


def standout(out: Path) -> None:
    """Why a set stands below its plain reference: on each set's odd-numbered questions, the
    defaults, each channel alone and the plain reference's runs (nDCG@10), and per channel how often
    its first document is relevant and how well its standout (``fusion.confidence``, what adaptive
    fusion weighs a channel by) tells a right first document from a wrong one (AUC: the chance that
    a question whose first document is right has the higher standout), with the mean standout of
    each."""
    from ragsift.retrieve.fusion import confidence

    fusion = default_fusion()
    result: dict = {"fusion": fusion, "sets": {}}
    for path in sorted(CACHE.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["rows"][1::2]
        prepared = [Prepared(r, data["doc_lang"]) for r in rows]
        refs = [reference(r) for r in rows]
        r: dict = {"questions": len(rows),
                   "defaults": statistics.fmean(x.hybrid("chunks", "chunks", fusion) for x in prepared),
                   **{f"{c} alone": statistics.fmean(x.alone(c, "chunks") for x in prepared) for c in ("dense", "bm25")},
                   **{f"plain {k}": statistics.fmean(x[k] for x in refs) for k in ("dense", "bm25", "hybrid")}}
        for c in ("dense", "bm25"):
            right, wrong = [], []
            for x in prepared:
                hits = [(p, s) for p, s, _ in (x.dense if c == "dense" else x.bm25)["chunks"]]
                if len(hits) >= 3:
                    first = doc_ranking(hits, x.doc_of)[0]
                    (right if x.rels.get(first, 0) > 0 else wrong).append(confidence([s for _, s in hits]))
            auc = (sum((a > b) + 0.5 * (a == b) for a in right for b in wrong) / (len(right) * len(wrong))
                   if right and wrong else None)
            r[c] = {"first right": len(right) / max(1, len(right) + len(wrong)), "standout AUC": auc,
                    "standout right": statistics.fmean(right) if right else None,
                    "standout wrong": statistics.fmean(wrong) if wrong else None}
        result["sets"][path.stem] = r
        print(path.stem, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
    write_result(out, result)


def parse_set(spec: str) -> tuple[str, Path, str]:
    """A ``--set`` of ``collect``: NAME=FOLDER:EMBEDDER (the folder may hold a ``#PREFIX``)."""
    name, rest = spec.split("=", 1)
    folder, embedder = rest.rsplit(":", 1)
    return name, Path(folder), embedder


def summary(scores: dict[str, list[float]], against: str) -> dict[str, float]:
    """Each run's mean, and (``p RUN``) its paired randomization test against the run ``against``."""
    out = {}
    for c, v in scores.items():
        out[c] = round(statistics.fmean(v), 4)
        if c != against:
            out[f"p {c}"] = round(paired_randomization_test(v, scores[against], seed=0), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--set", action="append", required=True, help="name=folder:embedder")
    c.add_argument("--work-dir", default="/tmp/ragsift-eval/entries-kb")
    f = sub.add_parser("refresh-bm25")
    f.add_argument("--set", action="append", required=True, help="name=folder:embedder")
    f.add_argument("--work-dir", default="/tmp/ragsift-eval/entries-kb")
    e = sub.add_parser("enrich")
    e.add_argument("--set", action="append", required=True, help="name=folder")
    so = sub.add_parser("standout")
    so.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "standout.json"))
    r = sub.add_parser("report")
    r.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "entries.json"))
    args = ap.parse_args()
    if args.cmd in ("collect", "refresh-bm25"):
        for spec in args.set:
            name, folder, embedder = parse_set(spec)
            (collect if args.cmd == "collect" else refresh_bm25)(name, folder, embedder, Path(args.work_dir))
    elif args.cmd == "enrich":
        for spec in args.set:
            name, folder = spec.split("=", 1)
            enrich(name, Path(folder))
    elif args.cmd == "standout":
        standout(Path(args.out))
    else:
        report(Path(args.out))


if __name__ == "__main__":
    main()
