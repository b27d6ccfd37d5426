"""Ingest throughput against the embedding model's own raw throughput, in the same run.

The raw figure embeds exactly the texts ragsift indexes (the same children, the same batch
size) with nothing else; the ingest figure is a full ``KnowledgeBase.ingest`` (load, split,
analyze, embed, write, index, commit). The difference is the overhead ragsift adds.
Raw runs before and after the ingest, and the mean of the two is used, to spread machine noise.

    .venv/bin/python benchmarks/ingest_speed.py --docs 1000 --embedder minilm --out /tmp/ingest.json
"""
from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harness import write_result

from ragsift.ingest.loaders import load_file
from ragsift.ingest.pipeline import EMBED_BATCH  # noqa: E402
from ragsift.ingest.splitter import SplitSettings, index_text, split_document
from ragsift.kb import KnowledgeBase
from ragsift.models.embedders import load_embedder


def raw_embed_seconds(embedder, texts: list[str]) -> float:
    t = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH):
        embedder.embed_passages(texts[i:i + EMBED_BATCH])
    return time.perf_counter() - t


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ragsift-ingest-"))
    try:
        subset = work / "corpus.jsonl"
        with open(Path(args.dataset) / "corpus.jsonl", encoding="utf-8") as src, open(subset, "w") as dst:
            for n, line in enumerate(src):
                if n >= args.docs:
                    break
                dst.write(line)
        settings = KnowledgeBase.open(work / "probe", embedder=args.embedder).settings.index
        split = SplitSettings(settings.parent_max_tokens, settings.child_tokens, settings.child_overlap_tokens)
        texts = []
        for doc in load_file(subset, "corpus.jsonl").documents:
            parents, children = split_document(doc, split)
            pmap = {x.parent_id: x for x in parents}
            texts += [index_text(doc, pmap[c.parent_id], c, settings.index_headings) for c in children]
        embedder = load_embedder(args.embedder)
        embedder.embed_passages(texts[:8])  # warm-up
        raw_before = raw_embed_seconds(embedder, texts)
        kb = KnowledgeBase.open(work / "kb", embedder=args.embedder)
        t = time.perf_counter()
        report = kb.ingest(subset)
        ingest_s = time.perf_counter() - t
        raw_after = raw_embed_seconds(embedder, texts)
        raw = (raw_before + raw_after) / 2
        result = {
            "date": time.strftime("%Y-%m-%d"), "dataset": args.dataset, "docs": args.docs,
            "embedder": args.embedder, "children": report.children, "raw_embed_s": raw,
            "raw_embed_s_before": raw_before, "raw_embed_s_after": raw_after,
            "ingest_s": ingest_s, "ingest_embed_s": report.embed_seconds,
            "overhead": (ingest_s - raw) / raw,
            "children_per_s_raw": report.children / raw, "children_per_s_ingest": report.children / ingest_s,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_result(args.out, result)
    print(f"{result['children']} children: raw embedding {raw:.1f}s ({result['children_per_s_raw']:.1f}/s), "
          f"full ingest {ingest_s:.1f}s ({result['children_per_s_ingest']:.1f}/s): "
          f"overhead {100 * result['overhead']:.1f}%; max RSS {result['max_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
