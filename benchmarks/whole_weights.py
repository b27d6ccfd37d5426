"""Whole weights through the package: a section scored by a mix of its whole entry and its best
chunk (``whole_weights``), measured with ``KnowledgeBase.rank_documents`` on the knowledge bases
``entries.py collect`` built (chunks and whole sections in each small index).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/whole_weights.py --work-dir /tmp/ent \\
        --set scifact=../shared/datasets/scifact:e5-small ...

For every set, on its odd-numbered judged queries (the half ``entries.py`` reports; the weights
were chosen on the other sets' even halves), nDCG@10 of the documents, single shot
(``strategy = "settings"``), the package's default fusion:

- ``chunks``: ``index_kinds = ["chunk"]`` (the default);
- ``max``: ``index_kinds = ["chunk", "parent"]`` with no whole weights (the better raw score);
- ``mix``: ``index_kinds = ["chunk", "parent"]`` with the default whole weights;
- ``mix, damped``: the same with ``adaptive_power = 0.5`` (round 2's rule of ``entries.py``);

and beside the mixes their replays from ``entries.py``'s cached lists (``replay ...``), which the
package should match up to its query vectors: a question embedded alone here, in batches there
(MiniLM's int8 query graph scales its activations per batch). Paired randomization tests against
``chunks``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from entries import CACHE, PREVIOUS, Prepared, load_set, parse_set, summary  # noqa: E402

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402

SINGLE = {"strategy": "settings"}
CONFIGS = {"chunks": {"index_kinds": ["chunk"]},
           "max": {"index_kinds": ["chunk", "parent"], "whole_weights": {}},
           "mix": {"index_kinds": ["chunk", "parent"]},
           "mix, damped": {"index_kinds": ["chunk", "parent"], "adaptive_power": 0.5}}


def replay_rules() -> dict[str, tuple[str, str, str]]:
    """``mix`` and ``mix, damped`` as ``entries.py`` names its rules (the default whole weights,
    the default fusion with the confidence itself or its square root)."""
    w = Settings().query.whole_weights
    rules = (f"mix {w['dense']}", f"mix {w['bm25']}")
    return {"replay mix": (*rules, PREVIOUS[2]), "replay mix, damped": (*rules, "adaptive^0.5 dense=0.5")}


def run(name: str, folder: Path, embedder: str, work: Path) -> dict:
    from ragsift.kb import KnowledgeBase

    data = json.loads((CACHE / f"{name}.json").read_text(encoding="utf-8"))
    queries = load_set(name, folder).queries
    rows = data["rows"][1::2]
    # a set's longest question is let in (LawBench's statements run past the default max_query_chars)
    longest = max(len(queries[r["qid"]]) for r in rows)
    kb = KnowledgeBase.open(work / f"{name}-{embedder}-cp", max_query_chars=max(4000, longest))
    scores: dict[str, list[float]] = {c: [] for c in CONFIGS}
    seconds = dict.fromkeys(CONFIGS, 0.0)
    for row in rows:
        for c, over in CONFIGS.items():
            t0 = time.perf_counter()
            ranked = kb.rank_documents(queries[row["qid"]], k=10, **SINGLE, **over)
            seconds[c] += time.perf_counter() - t0
            scores[c].append(ndcg_at_k([d for d, _ in ranked], row["rels"], 10))
    kb.close()
    prepared = [Prepared(r, data["doc_lang"]) for r in rows]
    for c, rule in replay_rules().items():
        scores[c] = [p.hybrid(*rule) for p in prepared]
    out = {"queries": len(rows), "embedder": embedder,
           "ms_per_query": {c: round(1000 * s / len(rows), 1) for c, s in seconds.items()}} | summary(scores, "chunks")
    print(name, json.dumps(out), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", required=True, help="name=folder:embedder (as entries.py collect)")
    ap.add_argument("--work-dir", default="/tmp/ragsift-eval/entries-kb")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "whole_weights.json"))
    args = ap.parse_args()
    q = Settings().query
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
              "whole_weights": q.whole_weights, "fusion": q.fusion.value, "weights": q.weights, "sets": {}}
    for spec in args.set:
        name, folder, embedder = parse_set(spec)
        result["sets"][name] = run(name, folder, embedder, Path(args.work_dir))
    write_result(args.out, result)


if __name__ == "__main__":
    main()
