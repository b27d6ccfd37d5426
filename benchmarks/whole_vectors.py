"""Can a section's whole vector be had without embedding the section? The mean of its chunks'
vectors against the section embedded whole, in the mix of ``whole_weights``.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/whole_vectors.py --work-dir /tmp/ent \\
        --set scifact=../shared/datasets/scifact:e5-small ...

Whole sections cost 1.4-2.0x an ingest (``whole_sections.py``) because each section longer than
a chunk is embedded again. On the knowledge bases and cached lists of ``entries.py collect``,
this replays round 2's rule (``entries.py``'s ``Prepared.hybrid``, the default whole weights and
fusion) with the dense whole-section list taken three ways, on each set's odd-numbered judged
queries: ``chunks`` (no whole entries: the default), ``embedded`` (the section embedded whole, as
stored), ``mean of chunks`` (the normalised mean of the section's chunk vectors, exact cosine;
BM25's whole entries as stored, which cost no model). Paired randomization tests against
``embedded``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from entries import CACHE, DEPTH, PREVIOUS, Prepared, load_set, parse_set, summary  # noqa: E402

from ragsift.config import Settings  # noqa: E402


def section_means(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    """Each section's id, document and the normalised mean of its chunks' vectors."""
    import lancedb

    tbl = lancedb.connect(str(path / "lance")).open_table("children").to_arrow()
    tbl = tbl.filter(np.array(tbl["kind"].to_pylist()) == "chunk")
    vecs = tbl["vector"].combine_chunks().flatten().to_numpy().reshape(tbl.num_rows, -1)
    parents, docs = tbl["parent_id"].to_pylist(), tbl["doc_id"].to_pylist()
    index: dict[str, int] = {}
    doc_of: list[str] = []
    for p, d in zip(parents, docs):
        if p not in index:
            index[p] = len(index)
            doc_of.append(d)
    sums = np.zeros((len(index), vecs.shape[1]), np.float64)
    np.add.at(sums, np.array([index[p] for p in parents]), vecs)
    sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return list(index), doc_of, sums.astype(np.float32)


def run(name: str, folder: Path, embedder: str, work: Path) -> dict:
    from ragsift.kb import KnowledgeBase

    data = json.loads((CACHE / f"{name}.json").read_text(encoding="utf-8"))
    queries = load_set(name, folder).queries
    rows = data["rows"][1::2]
    path = work / f"{name}-{embedder}-cp"
    ids, doc_of, means = section_means(path)
    kb = KnowledgeBase.open(path)
    t0 = time.perf_counter()
    # every judged question in one call, as collect embedded them (MiniLM's int8 query graph scales
    # activations per batch: the same batches give the same vectors as the cached lists')
    qvecs = kb.embedder().embed_queries([queries[r["qid"]] for r in data["rows"]])[1::2]
    kb.close()
    w = Settings().query.whole_weights
    rule = (f"mix {w['dense']}", f"mix {w['bm25']}", PREVIOUS[2])
    scores: dict[str, list[float]] = {"chunks": [], "embedded": [], "mean of chunks": []}
    for row, vec in zip(rows, qvecs):
        sims = means @ np.asarray(vec, np.float32)
        top = np.argsort(-sims)[:DEPTH]
        mean_list = [[ids[i], doc_of[i], float(sims[i])] for i in top]
        prepared = Prepared(row, data["doc_lang"])
        scores["chunks"].append(prepared.hybrid("chunks", "chunks", PREVIOUS[2]))
        scores["embedded"].append(prepared.hybrid(*rule))
        swapped = dict(row, lists=dict(row["lists"], dense_parent=mean_list))
        scores["mean of chunks"].append(Prepared(swapped, data["doc_lang"]).hybrid(*rule))
    out = ({"queries": len(rows), "sections": len(ids), "seconds": round(time.perf_counter() - t0, 1)}
           | summary(scores, "embedded"))
    print(name, json.dumps(out), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", required=True, help="name=folder:embedder (as entries.py collect)")
    ap.add_argument("--work-dir", default="/tmp/ragsift-eval/entries-kb")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "whole_vectors.json"))
    args = ap.parse_args()
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
              "whole_weights": Settings().query.whole_weights, "sets": {}}
    for spec in args.set:
        name, folder, embedder = parse_set(spec)
        result["sets"][name] = run(name, folder, embedder, Path(args.work_dir))
    write_result(args.out, result)


if __name__ == "__main__":
    main()
