"""The fast multilingual embedder (use-multilingual) against the default (e5-small) and minilm:
quality on every shared set, from `ragsift eval` result files, and embedding speed on the same
chunks, measured here one model after the other.

    ragsift eval ../shared/datasets/<set> --embedder <model> --configs dense,bm25,hybrid,hybrid-weighted \\
        --work-dir /tmp/ragsift-eval --out <dir>/<set>-<model>.json         # for each set and model
    .venv/bin/python benchmarks/multilingual.py --evals <dir> --out benchmarks/results/multilingual.json

Speed: the children (~200 tokens) of the first ``--docs`` documents of SciFact (English) and
CMRC 2018 (Chinese), embedded in batches of 32 after one warm-up batch; chunks per second.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness import DATASETS as SHARED_DATASETS
from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.ingest.loaders import load_file  # noqa: E402
from ragsift.ingest.splitter import SplitSettings, split_document  # noqa: E402
from ragsift.models.embedders import load_embedder  # noqa: E402

SETS = ["scifact", "hotpotqa-ircot-dev500", "xquad-zh", "xquad-xling", "cmrc2018-dev"]
MODELS = ["minilm", "e5-small", "use-multilingual"]


def chunks(corpus: Path, docs: int) -> list[str]:
    out = []
    for i, d in enumerate(load_file(corpus, corpus.name, max_bytes=10**9).documents):
        if i >= docs:
            break
        _, children = split_document(d, SplitSettings(1500, 200, 40))
        out += [c.text for c in children]
    return out


def speed(model: str, texts: list[str]) -> float:
    emb = load_embedder(model)
    emb.embed_passages(texts[:32])  # warm-up
    t = time.perf_counter()
    for i in range(0, len(texts), 32):
        emb.embed_passages(texts[i:i + 32])
    return len(texts) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evals", required=True, help="folder of <set>-<model>.json files from ragsift eval --out")
    ap.add_argument("--datasets", default=str(SHARED_DATASETS))
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "multilingual.json"))
    args = ap.parse_args()
    quality: dict = {}
    for s in SETS:
        for m in MODELS:
            p = Path(args.evals) / f"{s}-{m}.json"
            if not p.exists():
                continue
            r = json.loads(p.read_text(encoding="utf-8"))
            quality.setdefault(s, {})[m] = {
                "queries": r["queries"], "command": r["command"],
                **{c: {"ndcg@10": v["metrics"]["ndcg@10"], "recall@10": v["metrics"]["recall@10"],
                       "p50_ms": v["p50_ms"]} for c, v in r["results"].items()}}
    datasets = Path(args.datasets)
    texts = {"en (SciFact)": chunks(datasets / "scifact" / "corpus.jsonl", args.docs),
             "zh (CMRC 2018)": chunks(datasets / "cmrc2018-dev" / "corpus.jsonl", args.docs)}
    speeds: dict = {}
    for m in MODELS:
        for lang, t in texts.items():
            speeds.setdefault(m, {})[lang] = round(speed(m, t), 1)
            print(m, lang, speeds[m][lang], "chunks/s", flush=True)
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
           "chunks": {k: len(v) for k, v in texts.items()}, "quality": quality, "chunks_per_second": speeds}
    write_result(args.out, out)


if __name__ == "__main__":
    main()
