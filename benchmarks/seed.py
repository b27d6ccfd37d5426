"""The seed design's table (its section 5.2: base RAG, +HyDE, +parent-child, +recursion, all
three) on real data, and the router (``strategy="auto"``) against each fixed strategy.

    HF_HUB_OFFLINE=1 RAGSIFT_CACHE_DIR=/tmp/ragsift-bench/llmcache \\
        .venv/bin/python benchmarks/seed.py --out benchmarks/results/seed.json

1. The seed table. Each column is one strategy on the package's default fusion (weighted hybrid):
   - base: one hybrid round over flat chunks (``strategy="hybrid"``, ``unit="child"``);
   - +HyDE: the HyDE channels beside it (``strategy="hyde"``, one hypothesis by the packaged
     Qwen2.5-Coder-1.5B);
   - +parent-child: small-to-big (``unit="parent"``);
   - +recursion: multi-hop without a model (``strategy="multihop"``, keywords mode);
   - all three: ``strategy="combined"`` (HyDE on the question, multi-hop from what it found,
     parents).
   HotpotQA (the first ``--queries`` test questions) and SciFact (the first ``--queries``
   odd-numbered ones) score the document ranking (Recall@10, nDCG@10). L-Eval's Natural Questions
   score passages, where parent-child can matter: a passage is relevant when it holds the gold
   answer at its place (``benchmarks/longdoc.py``); Recall@10 is "an answer among the first 10
   passages", nDCG@10 is 1/log2(1 + rank) of the first passage that holds it (one gold passage).
2. The router on held-out questions (SciFact's odd-numbered, HotpotQA's first 300; its rules were
   chosen on SciFact's even-numbered and HotpotQA's last 200): ``auto`` against ``hybrid`` and
   ``multihop`` without a model on all of them, and against ``hybrid``, ``hyde``, ``multihop``
   and ``combined`` with the model on the first ``--queries`` of each set. Mean nDCG@10 over the
   mix (each question counts once), paired randomization p-values, cost per question.

Each model answer is cached (``RAGSIFT_CACHE_DIR``): a second run reuses the hypotheses, so the
time columns of the HyDE strategies are those of a warm cache (a cold hypothesis costs 3-4 s here,
see the language-model section of docs/benchmarks.md); ``llm_calls`` counts the model calls a
question needs (hypotheses and follow-up queries).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from longdoc import contains, gold_windows, load_answers  # noqa: E402

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from ragsift.eval.runner import build_kb, judged_queries  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

FUSION_KEYS = ("fusion", "rrf_k", "weights", "normalization", "channel_depth", "cross_language_weight")
COLUMNS = {
    "base": {"strategy": "hybrid", "unit": "child"},
    "+HyDE": {"strategy": "hyde", "unit": "child"},
    "+parent-child": {"strategy": "hybrid", "unit": "parent"},
    "+recursion": {"strategy": "multihop", "unit": "child"},
    "all three": {"strategy": "combined"},
}
HYDE = ("hyde", "combined")  # strategies that write one hypothesis per question
MODEL_FREE = ("hybrid", "multihop", "auto")
WITH_MODEL = ("hybrid", "hyde", "multihop", "combined", "auto")


def p_value(a: list[float], b: list[float]) -> float:
    return paired_randomization_test(np.array(a), np.array(b))


def doc_scores(kb, ds, qids, overrides) -> dict:
    """Per question: nDCG@10, Recall@10 of the document ranking, the time and the trace bits."""
    out = {}
    for q in qids:
        details: dict = {}
        t = time.perf_counter()
        ranked = [d for d, _ in kb.rank_documents(ds.queries[q], k=100, details=details, **overrides)]
        ms = (time.perf_counter() - t) * 1000
        mh = details.get("multihop") or {}
        st = details.get("strategy") or {}
        chosen = st.get("chosen", st.get("strategy"))
        out[q] = {"ndcg@10": ndcg_at_k(ranked, ds.qrels[q], 10), "recall@10": recall_at_k(ranked, ds.qrels[q], 10),
                  "ms": ms, "llm_calls": mh.get("llm_calls", 0) + (chosen in HYDE), "chosen": chosen}
    return out


def passage_scores(kb, docs, answers, overrides) -> dict:
    """Per L-Eval question: is the gold answer in the first 10 passages, and where first."""
    out = {}
    for a in answers:
        t = time.perf_counter()
        res = kb.query(a["question"], max_passages=10, token_budget=1_000_000, **overrides)
        ms = (time.perf_counter() - t) * 1000
        windows = gold_windows(docs[a["doc_id"]], a["answer_char_spans"])
        first = next((i for i, p in enumerate(res.passages[:10], 1) if contains(p.text, windows)), None)
        mh = res.trace.multihop or {}
        hyde = len((res.trace.transforms.get("hyde") or {}).get("hypotheses", ()))
        out[a["_id"]] = {"ndcg@10": 1 / math.log2(1 + first) if first else 0.0,
                         "recall@10": 1.0 if first else 0.0, "ms": ms, "llm_calls": mh.get("llm_calls", 0) + hyde,
                         "tokens": sum(p.tokens for p in res.passages[:10])}
    return out


def summary(per_q: dict, ref: dict | None) -> dict:
    qids = list(per_q)
    out = {k: statistics.fmean(per_q[q][k] for q in qids) for k in ("ndcg@10", "recall@10", "ms", "llm_calls")}
    if "tokens" in per_q[qids[0]]:
        out["tokens"] = statistics.fmean(per_q[q]["tokens"] for q in qids)
    if ref is not None:
        out["p"] = {k: p_value([ref[q][k] for q in qids], [per_q[q][k] for q in qids]) for k in ("ndcg@10", "recall@10")}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(SHARED_DATASETS))
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--queries", type=int, default=100, help="questions per set where the model runs")
    ap.add_argument("--leval", type=int, default=60, help="L-Eval Natural Questions with an answer span")
    ap.add_argument("--parts", default="seed,router")
    ap.add_argument("--kb", action="append", default=[], metavar="SET=PATH",
                    help="an existing knowledge base for hotpotqa, scifact or leval-nq (else built in --work-dir)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "seed.json"))
    args = ap.parse_args()
    d = Path(args.datasets)
    defaults = Settings()
    q = defaults.query.model_dump(mode="json")
    # the package's default fusion and multi-hop, whatever a knowledge base was saved with
    base = {k: q[k] for k in FUSION_KEYS} | {f: v for f, v in defaults.multihop.model_dump(mode="json").items()
                                             if f != "mode"}
    llm = {"llm_model": args.model, "channel_timeout_s": 600}
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "embedder": args.embedder,
                 "model": args.model, "fusion": base}
    if Path(args.out).exists():
        out = {**json.loads(Path(args.out).read_text()), **{k: out[k] for k in ("date", "command")}}

    given = dict(x.split("=", 1) for x in args.kb)
    hp, sf = load_dataset(d / "hotpotqa-ircot-dev500"), load_dataset(d / "scifact")
    kbs = {name: KnowledgeBase.open(Path(given[name])) if name in given
           else build_kb(ds, Path(args.work_dir), args.embedder, progress=False)[0]
           for name, ds in (("hotpotqa", hp), ("scifact", sf))}
    sets = {"hotpotqa": (hp, judged_queries(hp, 300)), "scifact": (sf, judged_queries(sf, None)[1::2])}

    if "seed" in args.parts:
        lv = load_dataset(d / "leval-longdoc-en")
        docs, answers = load_answers(lv)
        nq = [{**a, "question": lv.queries[a["_id"]]} for a in answers if a["task"] == "nq"][: args.leval]
        if "leval-nq" in given:
            kb_lv = KnowledgeBase.open(Path(given["leval-nq"]))
        else:  # a knowledge base of the Natural Questions documents only
            corpus = Path(args.work_dir) / "leval-nq" / "corpus.jsonl"
            corpus.parent.mkdir(parents=True, exist_ok=True)
            with open(lv.corpus, encoding="utf-8") as f:
                corpus.write_text("".join(ln for ln in f if json.loads(ln)["_id"].startswith("leval-nq-")),
                                  encoding="utf-8")
            kb_lv = KnowledgeBase.open(Path(args.work_dir) / f"leval-nq-{args.embedder}", embedder=args.embedder)
            kb_lv.ingest(corpus)
        table: dict = {}
        for name in ("hotpotqa", "scifact", "leval-nq"):
            table[name] = {}
            ref = None
            for col, cfg in COLUMNS.items():
                ov = {**base, **cfg, **(llm if cfg["strategy"] in ("hyde", "combined") else {})}
                if name == "leval-nq":
                    per_q = passage_scores(kb_lv, docs, nq, ov)
                else:
                    ds, qids = sets[name]
                    per_q = doc_scores(kbs[name], ds, qids[: args.queries], ov)
                ref = ref or per_q
                table[name][col] = summary(per_q, None if per_q is ref else ref)
                print(name, col, {k: round(v, 4) for k, v in table[name][col].items() if k != "p"},
                      table[name][col].get("p"), flush=True)
        out["seed_table"] = table
        out["seed_queries"] = {"hotpotqa": min(args.queries, 300), "scifact": args.queries, "leval-nq": len(nq)}

    if "router" in args.parts:
        router: dict = {}
        for label, strategies, n, extra in (("without a model", MODEL_FREE, None, {}),
                                            ("with the model", WITH_MODEL, args.queries, llm)):
            per: dict = {}
            for st in strategies:
                per[st] = {}
                for name, (ds, qids) in sets.items():
                    ov = {**base, "strategy": st, **extra}  # the model set: auto may choose HyDE
                    per[st].update({f"{name}/{k}": v for k, v in doc_scores(kbs[name], ds, qids[:n], ov).items()})
            rows = {}
            for st in strategies:
                pq = per[st]
                row = {"mix": statistics.fmean(v["ndcg@10"] for v in pq.values()),
                       "ms": statistics.fmean(v["ms"] for v in pq.values()),
                       "llm_calls": statistics.fmean(v["llm_calls"] for v in pq.values())}
                for name in sets:
                    row[name] = statistics.fmean(v["ndcg@10"] for k, v in pq.items() if k.startswith(name + "/"))
                if st != "auto":
                    row["p_auto_vs_this"] = p_value([pq[k]["ndcg@10"] for k in pq], [per["auto"][k]["ndcg@10"] for k in pq])
                rows[st] = row
            chosen: dict = {}
            for k, v in per["auto"].items():
                key = f"{k.split('/')[0]}: {v['chosen']}"
                chosen[key] = chosen.get(key, 0) + 1
            router[label] = {"questions": {name: len(qids[:n]) for name, (_, qids) in sets.items()}, "rows": rows,
                             "chosen": chosen}
            print(label, json.dumps(rows, indent=None), chosen, flush=True)
        out["router"] = router
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
