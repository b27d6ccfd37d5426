"""A second embedder as a third channel: e5-small (the default) and MiniLM beside BM25, fused.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/two_embedders.py collect --set scifact=../shared/datasets/scifact
    .venv/bin/python benchmarks/two_embedders.py report

``collect`` builds (once) a MiniLM knowledge base of a set ``entries.py collect`` has collected with
e5-small (chunks only, the same splitter: the same sections; HotpotQA and L-Eval's part were collected
with MiniLM, and their second embedder would be e5-small: not run) and stores, for every judged query,
MiniLM's dense list over the chunks (depth 100; every question embedded in one call, in the cached
rows' order). ``report`` replays, per query, ragsift's own ``fuse`` over the sections (each
channel deduplicated by section): e5 dense + BM25 (the default), MiniLM dense + BM25, and all
three, each with adaptive fusion from equal weights and with weighted min-max; nDCG@10 of the
documents on the odd-numbered judged queries (HotpotQA: the same 250), p against the default.
What a knowledge base made with ``extra_embedders=["minilm"]`` and the channel ``dense:minilm``
would search, without building one per set.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from entries import CACHE, DEPTH, Prepared, doc_ranking, load_set, section_scores, summary  # noqa: E402

from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.retrieve.fusion import adaptive_weights, fuse  # noqa: E402

SECOND = "minilm"


def collect(name: str, folder: Path, work: Path) -> None:
    from ragsift.kb import KnowledgeBase

    out = CACHE / f"{name}.{SECOND}.json"
    if out.exists():
        print(f"{name}: cached in {out}")
        return
    data = json.loads((CACHE / f"{name}.json").read_text(encoding="utf-8"))
    ds = load_set(name, folder)
    t0 = time.time()
    kb = KnowledgeBase.open(work / f"{name}-{SECOND}", embedder=SECOND)
    if not kb.stats().get("documents"):
        kb.ingest(ds.corpus)
    t_ingest = time.time() - t0
    vecs = kb.embedder().embed_queries([ds.queries[r["qid"]] for r in data["rows"]])
    lists = {}
    with kb.reading() as store:
        for row, vec in zip(data["rows"], vecs):
            lists[row["qid"]] = [[h.parent_id, h.doc_id, h.score] for h in store.search_dense(vec, DEPTH, None, ("chunk",))]
    kb.close()
    out.write_text(json.dumps({"name": name, "embedder": SECOND, "ingest_s": round(t_ingest, 1), "lists": lists}),
                   encoding="utf-8")
    print(f"{name}: {len(lists)} queries; ingest {t_ingest:.0f} s")


COMBOS = {"e5 + bm25": ("dense", "bm25"), f"{SECOND} + bm25": (SECOND, "bm25"),
          f"e5 + {SECOND} + bm25": ("dense", SECOND, "bm25")}


def score(p: Prepared, second: list, channels: tuple[str, ...], mode: str) -> float:
    lists = {"dense": [(s, x) for s, x, _ in p.dense["chunks"]], "bm25": [(s, x) for s, x, _ in p.bm25["chunks"]],
             SECOND: [(s, x) for s, x, _ in section_scores(second, [], "chunks")]}
    doc_of = dict(p.doc_of) | {s: d for s, d, _ in second}
    rankings = {c: lists[c] for c in channels}
    weights = dict.fromkeys(channels, 1 / len(channels))
    if mode == "adaptive":
        weights = adaptive_weights(rankings, weights)
    fused = fuse(rankings, "weighted", weights=weights, normalization="minmax", discounts=p.discounts)
    return ndcg_at_k(doc_ranking(fused, doc_of), p.rels, 10)


def report(out: Path) -> None:
    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "sets": {}}
    for path in sorted(CACHE.glob(f"*.{SECOND}.json")):
        name = path.name[:-len(f".{SECOND}.json")]
        data = json.loads((CACHE / f"{name}.json").read_text(encoding="utf-8"))
        cached = json.loads(path.read_text(encoding="utf-8"))
        second = cached["lists"]
        part: dict[str, dict[str, list[float]]] = {}
        for half, rows in (("even", data["rows"][0::2]), ("odd", data["rows"][1::2])):
            prepared = [(Prepared(r, data["doc_lang"]), second[r["qid"]]) for r in rows]
            part[half] = {f"{c}, {m}": [score(p, s, ch, m) for p, s in prepared] for c, ch in COMBOS.items()
                          for m in ("adaptive", "weighted")}
        result["sets"][name] = {"queries": len(part["odd"]["e5 + bm25, adaptive"]), "ingest_s": cached["ingest_s"],
                                **summary(part["odd"], "e5 + bm25, adaptive"),
                                "even": {k: round(statistics.fmean(v), 4) for k, v in part["even"].items()}}
        print(name, json.dumps(result["sets"][name]), flush=True)
    write_result(out, result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--set", action="append", required=True, help="name=folder (collected by entries.py)")
    c.add_argument("--work-dir", default="/tmp/ent")
    r = sub.add_parser("report")
    r.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "two_embedders.json"))
    args = ap.parse_args()
    if args.cmd == "collect":
        for spec in args.set:
            name, folder = spec.split("=", 1)
            collect(name, Path(folder), Path(args.work_dir))
    else:
        report(Path(args.out))


if __name__ == "__main__":
    main()
