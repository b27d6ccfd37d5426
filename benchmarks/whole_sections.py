"""What indexing whole sections beside chunks costs at ingest (``small_index = ["chunk", "parent"]``).

    .venv/bin/python benchmarks/whole_sections.py --set scifact=../shared/datasets/scifact --docs 600

Each set's first ``--docs`` documents are ingested into two fresh knowledge bases with the default
embedder, chunks alone and chunks with whole sections, in alternating order (twice each, so both
see the same machine), with a full ``KnowledgeBase.ingest``. A section held in one chunk shares that
chunk's vector; a longer one is embedded whole (e5-small reads a long text in windows of 510 tokens).
Reports wall seconds (the mean of the two runs), the small-index entries written, and the ratio.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from ragsift.kb import KnowledgeBase  # noqa: E402

KINDS = {"chunks": ["chunk"], "chunks + sections": ["chunk", "parent"]}


def subset(folder: Path, n: int, out: Path) -> Path:
    ds = load_dataset(folder)
    with open(ds.corpus, encoding="utf-8") as f:
        lines = [ln for ln in f if ln.strip()][:n]
    path = out / "corpus.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def ingest(corpus: Path, kinds: list[str], work: Path) -> tuple[float, dict]:
    path = work / f"kb-{len(kinds)}"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    kb = KnowledgeBase.open(path, small_index=kinds)
    kb.ingest(corpus)
    took = time.perf_counter() - t
    st = kb.stats()
    kb.close()
    shutil.rmtree(path, ignore_errors=True)
    return took, {k: st.get(k) for k in ("documents", "parents", "children")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", required=True, help="NAME=FOLDER (BEIR)")
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "whole_sections.json"))
    args = ap.parse_args()
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "docs": args.docs, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="whole-sections-") as tmp:
        work = Path(tmp)
        for spec in args.set:
            name, folder = spec.split("=", 1)
            corpus = subset(Path(folder), args.docs, work)
            times: dict[str, list[float]] = {k: [] for k in KINDS}
            stats: dict[str, dict] = {}
            for order in (list(KINDS), list(KINDS)[::-1]):
                for label in order:
                    took, stats[label] = ingest(corpus, KINDS[label], work)
                    times[label].append(took)
            r = result["sets"][name] = {
                label: {"seconds": sum(t) / len(t), "runs": t, **stats[label]} for label, t in times.items()}
            r["ratio"] = r["chunks + sections"]["seconds"] / r["chunks"]["seconds"]
            print(f"{name}: " + "; ".join(f"{k} {v['seconds']:.1f} s ({v['children']} entries)"
                                          for k, v in r.items() if k in KINDS) + f"; ratio {r['ratio']:.2f}", flush=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
