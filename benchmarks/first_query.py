"""The first question a reader asks after a commit, with the package's default settings (the
router's strategy, which finds the documents a question names by their titles), side by side
for this code and another checkout (``--before``).

    .venv/bin/python benchmarks/first_query.py --kb /tmp/ragsift-filtered/filtered-1000000 \\
        --dataset ../shared/datasets/scifact --before /tmp/s43/before --out benchmarks/results/first_query.json

Each round runs in a process of its own, the two sides alternating: a reader opens the knowledge
base and answers a question (the model loaded, the indexes read, the title index built), a writer
in the same process commits 10 SciFact documents (their titles included), then the reader's next
question is timed (``first_s``: it sees the new generation and builds what a generation needs,
the title index among them), and one more (``second_s``). The store grows by 10 documents a round.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import write_result

HERE = Path(__file__).resolve().parent
DOCS_PER_COMMIT = 10


def one_round(kb_path: Path, dataset: Path, tag: str) -> dict:
    from ragsift.kb import KnowledgeBase

    docs = [json.loads(line) for line in open(dataset / "corpus.jsonl", encoding="utf-8")]
    qs = [json.loads(line)["text"] for line in open(dataset / "queries.jsonl", encoding="utf-8")]
    reader = KnowledgeBase.open(kb_path, create=False)
    reader.query(qs[0])
    writer = KnowledgeBase.open(kb_path, create=False)
    start = sum(map(ord, tag)) % len(docs)
    batch = [{"id": f"fq-{tag}-{j}", "title": docs[(start + j) % len(docs)].get("title", ""),
              "text": docs[(start + j) % len(docs)]["text"]} for j in range(DOCS_PER_COMMIT)]
    t = time.perf_counter()
    writer.add_documents(batch)
    commit_s = time.perf_counter() - t
    t = time.perf_counter()
    reader.query(qs[1])
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    reader.query(qs[2])
    second_s = time.perf_counter() - t
    return {"commit_s": commit_s, "first_s": first_s, "second_s": second_s,
            "titled_documents": len(reader.store.document_titles()) if hasattr(reader.store, "document_titles") else None,
            "generation": reader.store.generation}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--before", help="a checkout of the code to compare with (its src/ is used)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", required=True)
    p.add_argument("--phase", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phase:
        print(json.dumps(one_round(Path(args.kb), Path(args.dataset), args.phase)))
        return 0
    sides = {"after": HERE.parent / "src"}
    if args.before:
        sides = {"before": Path(args.before) / "src", **sides}
    stamp = time.strftime("%H%M%S")
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for r in range(args.rounds):
        for side, src in sides.items():
            env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
            proc = subprocess.run([sys.executable, __file__, "--kb", args.kb, "--dataset", args.dataset, "--out",
                                   args.out, "--phase", f"{stamp}-{side}-{r}"], env=env, capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(proc.stderr[-3000:])
            runs[side].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(side, runs[side][-1], flush=True)
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/first_query.py " + " ".join(sys.argv[1:]),
           "kb": args.kb, "documents_per_commit": DOCS_PER_COMMIT, "runs": runs,
           "p50": {side: {k: statistics.median(x[k] for x in xs) for k in ("commit_s", "first_s", "second_s")}
                   for side, xs in runs.items()}}
    write_result(args.out, out)
    print(json.dumps(out["p50"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
