"""Chains that go on: the defaults (``strategy="auto"``, nothing named) before and after a change
to multi-hop, by the number of hops a question needs, side by side in one run.

    git archive main src | tar -x -C /tmp/mh-before
    cp src/ragsift/store/*.so /tmp/mh-before/src/ragsift/store/
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/multihop_chains.py --before-src /tmp/mh-before/src

Each tree is measured in its own process (``worker``, with that tree first on ``sys.path``, as
``--src`` does in the other benchmarks): every judged question of each set is asked once through
``KnowledgeBase.rank_documents`` with the package's query defaults, on a knowledge base built with
the package's defaults (e5-small), and its document ranking (first 20) and multi-hop trace kept.
The knowledge bases are built once, by the first tree, and opened by the second (the index is the
same in both).

Sets and parts:
- HotpotQA (``../shared/datasets/hotpotqa-ircot-dev500``; every question two hops): the last 200
  judged questions choose, the first 300 report;
- PhantomWiki (``benchmarks/data/phantomwiki``, ``benchmarks/datasets/fetch_phantomwiki.py``):
  questions whose shortest proof has 2 to 4 hops (``hops`` in its queries_meta.jsonl); even-numbered
  questions (file order) choose, odd-numbered ones report.

Metrics per hop count (2, 3, 4, and all of a set's together): all-relevant@5 (every supporting document in the first five) and
nDCG@10, before and after, with paired randomization tests; and the rounds multi-hop ran.
Writes benchmarks/results/multihop_chains.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the source tree measured: this one's, or another's (``--src=DIR``, in a worker)
SRC = Path(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--src=")), ROOT / "src")).resolve()
sys.path.insert(0, str(SRC))
sys.path.insert(1, str(ROOT / "benchmarks"))
from harness import DATASETS, load_dataset, write_result  # noqa: E402

HOPS = (2, 3, 4)
K = 20


def parts(name: str, qids: list[str]) -> dict[str, list[str]]:
    """Questions that choose and questions that report: HotpotQA's last 200 / first 300, else
    even / odd in file order."""
    if name == "hotpotqa":
        return {"calibration": qids[300:], "report": qids[:300]}
    return {"calibration": qids[0::2], "report": qids[1::2]}


def hops_of(name: str, folder: Path, qids: list[str]) -> dict[str, int]:
    """Each question's hop count: HotpotQA's are two; PhantomWiki's from queries_meta.jsonl."""
    if name == "hotpotqa":
        return dict.fromkeys(qids, 2)
    meta = [json.loads(line) for line in (folder / "queries_meta.jsonl").read_text(encoding="utf-8").splitlines()]
    return {m["_id"]: int(m["hops"]) for m in meta}


def worker(args: argparse.Namespace) -> int:
    """Asks every question of each set with this tree's code; writes the rankings and traces."""
    from ragsift.kb import KnowledgeBase

    out: dict = {"src": str(SRC), "overrides": json.loads(args.overrides), "sets": {}}
    for spec in args.set:
        name, folder = spec.split("=", 1)
        ds = load_dataset(folder)
        kb = KnowledgeBase.open(Path(args.work_dir) / name)
        kb.ingest(ds.corpus)  # once; unchanged documents are kept
        qids = [q for q in ds.queries if q in ds.qrels]
        hops = hops_of(name, Path(folder), qids)
        qids = [q for q in qids if hops.get(q) in HOPS]
        rows = {}
        t0 = time.perf_counter()
        for i, qid in enumerate(qids):
            details: dict = {}
            t = time.perf_counter()
            ranked = kb.rank_documents(ds.queries[qid], k=K, details=details, **out["overrides"])
            mh = details.get("multihop") or {}
            rows[qid] = {"ranked": [d for d, _ in ranked], "ms": round((time.perf_counter() - t) * 1000, 1),
                         "rounds": len(mh.get("hops") or []) or 1, "stop": mh.get("stop"),
                         "chosen": (details.get("strategy") or {}).get("chosen")}
            if i % 100 == 0:
                print(f"[{args.tag}] {name}: {i}/{len(qids)} ({time.perf_counter() - t0:.0f} s)", flush=True)
        kb.close()
        out["sets"][name] = {"folder": folder, "rows": rows, "hops": {q: hops[q] for q in qids}}
    Path(args.out).write_text(json.dumps(out), encoding="utf-8")
    return 0


def _score(ranked: list[str], rels: dict[str, int]) -> tuple[float, float]:
    from ragsift.eval.metrics import all_relevant_at_k, ndcg_at_k

    return all_relevant_at_k(ranked, rels, 5), ndcg_at_k(ranked, rels, 10)


def table(runs: dict[str, dict], qrels: dict[str, dict[str, dict[str, int]]], part: str) -> tuple[list[dict], str]:
    """Rows per (set, hops): n, all-relevant@5 and nDCG@10 per tag with paired p against the first."""
    import numpy as np

    from ragsift.eval.stats import paired_randomization_test

    tags = list(runs)
    rows: list[dict] = []
    first = runs[tags[0]]
    for name, data in first["sets"].items():
        qids = parts(name, list(data["rows"]))[part]
        counts = sorted({data["hops"][q] for q in qids})
        groups = [(h, (h,)) for h in HOPS] + ([(f"{counts[0]}-{counts[-1]}", tuple(counts))] if len(counts) > 1 else [])
        for h, among in groups:
            sel = [q for q in qids if data["hops"][q] in among]
            if not sel:
                continue
            row: dict = {"set": name, "hops": h, "n": len(sel)}
            base = None
            for tag in tags:
                got = runs[tag]["sets"][name]["rows"]
                sc = np.array([_score(got[q]["ranked"], qrels[name][q]) for q in sel])
                row[tag] = {"all_relevant@5": round(float(sc[:, 0].mean()), 4), "ndcg@10": round(float(sc[:, 1].mean()), 4),
                            "rounds": round(statistics.fmean(got[q]["rounds"] for q in sel), 2),
                            "ms": round(statistics.fmean(got[q]["ms"] for q in sel), 1),
                            "multihop": round(sum(got[q]["chosen"] == "multihop" for q in sel) / len(sel), 3)}
                if base is None:
                    base = sc
                else:
                    row[tag]["p_all_relevant@5"] = round(paired_randomization_test(base[:, 0], sc[:, 0]), 4)
                    row[tag]["p_ndcg@10"] = round(paired_randomization_test(base[:, 1], sc[:, 1]), 4)
            rows.append(row)
    head = "| set | hops | n | " + " | ".join(f"all-relevant@5 {t}" for t in tags) + " | " + \
        " | ".join(f"nDCG@10 {t}" for t in tags) + " | " + " | ".join(f"rounds {t}" for t in tags) + " |"
    lines = [head, "|" + " --- |" * (3 + 3 * len(tags))]
    def cell(r: dict, t: str, m: str) -> str:
        p = r[t].get(f"p_{m}")
        return f"{r[t][m]:.4f}" + (f" (p={p:.3f})" if p is not None else "")

    for r in rows:
        lines.append(f"| {r['set']} | {r['hops']} | {r['n']} | " + " | ".join(cell(r, t, "all_relevant@5") for t in tags)
                     + " | " + " | ".join(cell(r, t, "ndcg@10") for t in tags) + " | "
                     + " | ".join(f"{r[t]['rounds']:.2f}" for t in tags) + " |")
    return rows, "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "worker"])
    ap.add_argument("--src", default=str(ROOT / "src"), help="=DIR: the ragsift source tree (worker)")
    ap.add_argument("--before-src", default="/tmp/mh-before/src", help="main's source tree, exported")
    ap.add_argument("--set", action="append", help="NAME=FOLDER (default: hotpotqa and phantomwiki)")
    ap.add_argument("--work-dir", default="/tmp/mh-chains")
    ap.add_argument("--tag", default="after")
    ap.add_argument("--overrides", default="{}", help="query settings (JSON), e.g. to try a variant")
    ap.add_argument("--variant", action="append", default=[],
                    help="TAG=JSON: also run this tree with these query settings (choosing)")
    ap.add_argument("--reuse", action="store_true", help="keep rankings already collected in --work-dir")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "multihop_chains.json"))
    args = ap.parse_args()
    args.set = args.set or [f"hotpotqa={DATASETS / 'hotpotqa-ircot-dev500'}",
                            f"phantomwiki={ROOT / 'benchmarks' / 'data' / 'phantomwiki'}"]
    if args.mode == "worker":
        return worker(args)

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    trees = [("before", args.before_src, "{}"), ("after", str(ROOT / "src"), "{}")]
    trees += [(t, str(ROOT / "src"), js) for t, js in (v.split("=", 1) for v in args.variant)]
    runs: dict[str, dict] = {}
    for tag, src, overrides in trees:
        path = work / f"rankings-{tag}.json"
        if not (args.reuse and path.exists()):
            cmd = [sys.executable, __file__, "worker", f"--src={src}", "--tag", tag, "--work-dir", str(work),
                   "--overrides", overrides, "--out", str(path), *(f"--set={s}" for s in args.set)]
            subprocess.run(cmd, check=True)
        runs[tag] = json.loads(path.read_text(encoding="utf-8"))
    qrels = {}
    for spec in args.set:
        name, folder = spec.split("=", 1)
        qrels[name] = load_dataset(folder).qrels
    result: dict = {"sets": {s.split("=", 1)[0]: s.split("=", 1)[1] for s in args.set}, "trees": {
        t: {"src": runs[t]["src"], "overrides": runs[t]["overrides"]} for t in runs}, "k": K}
    for part in ("calibration", "report"):
        rows, md = table(runs, qrels, part)
        result[part] = rows
        result[f"{part}_table"] = md
        print(f"\n{part}\n{md}", flush=True)
    result["stops"] = {t: {name: dict(sorted(_count(r["stop"] for r in d["rows"].values()).items()))
                           for name, d in runs[t]["sets"].items()} for t in runs}
    write_result(args.out, result)
    return 0


def _count(xs) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in xs:
        out[str(x)] = out.get(str(x), 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
