"""Render docs/benchmarks.md from the result files in benchmarks/results/.

    python benchmarks/report.py            # after benchmarks/run_all.sh (or any part of it)
    python benchmarks/report.py --check    # write nothing; exit 1 when docs/benchmarks.md is not what it renders

Every table names the command that produced it; targets are checked from the numbers, and a
missed target is said as missed.

The page is a list of sections in order (``PAGE`` below); this file holds that order and the
writing and checking of the page, nothing else. A section is either:

- rendered from its script's result files by ``benchmarks/render/<script>.py`` (the module named
  after the benchmark script that writes those results): its ``render()`` returns the section's
  Markdown lines; a script with more than one section, or a part of another script's section, has
  functions named for them (``entries.second_round``, ``scale.speed_part``). A section that gathers
  several scripts' parts under one heading has a module named for the section that calls their
  parts (``speed.py``, ``languages.py``, ``targets.py``); ``ablation.py`` renders ``ragsift eval``'s
  tables and ``llm.py`` ``benchmarks/llm.sh``'s. What every renderer shares (``load``, ``ran``,
  ``host_of``, ``fmt``, ``opened``, ``written``) is in ``render/common.py``; or
- written by hand in ``benchmarks/sections/NAME.md`` (a name in ``PAGE``): prose around a few
  figures, where a renderer would be longer than the text.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from render import (
    ablation,
    anchors,
    bm25_engines,
    bm25_languages,
    bm25_query,
    commit_cost,
    e5_engine,
    entries,
    expansion,
    filtered,
    fusion,
    kill_ingest,
    lance_cache,
    languages,
    links,
    llm,
    longdoc,
    milvus,
    multihop,
    query_int8,
    query_path,
    reading,
    router,
    same_rankings,
    scale,
    seed,
    serve_load,
    small_to_big,
    soak,
    speed,
    targets,
    two_embedders,
    whole_sections,
    whole_vectors,
    whole_weights,
    writer_load,
)
from render.common import ROOT, written

OUT = ROOT / "docs" / "benchmarks.md"

MACHINE = ("2 shared CPU cores (Intel Xeon), 24 GB RAM, no GPU. The machine is shared and noisy: "
           "latencies are indicative; comparisons are made side by side in one run and given as ratios.")


def intro() -> list[str]:
    """The page's title and what holds for every section."""
    return ["# ragsift benchmarks", "",
            "Regenerate with `benchmarks/run_all.sh` (runs the benchmarks that need only the shared datasets, then "
            "this renderer; its header lists the others and why) or `python benchmarks/report.py` (renders the stored "
            "results in `benchmarks/results/`; `--check` says whether this page is what they render). Each result "
            "file names the command that wrote it; those written since the benchmarks' harness "
            "(`benchmarks/harness.py`) also name the commit measured, the date and the host.", "",
            f"Machine: {MACHINE}", "",
            "Metrics are document level with graded relevance as in the qrels, defined in "
            "`src/ragsift/eval/metrics.py` and checked against ranx on real runs (`tests/test_metrics.py`).", "",
            "BM25 changed on 2026-12-01: it ran in LanceDB's full-text index and now runs on ragsift's "
            "in-memory inverted index. "
            "On SciFact the two runs of that day gave BM25 nDCG@10 0.6878 before and 0.6820 after, hybrid 0.7016 and 0.7001, weighted "
            "hybrid 0.7245 and 0.7214 (the SciFact table below is the new run). Tables dated earlier were "
            "measured with the old BM25. The engine is not the cause (`benchmarks/bm25_engines.py`, below): on the same "
            "chunks and terms LanceDB's index scores as ragsift's does (the same nDCG@10 on every set but one, where they "
            "break ties differently), and the one-byte document length this page once suspected moves SciFact by "
            "-0.17 points held out, +0.03 over all questions, not -0.58: the move came from something else "
            "that differed between those two runs (not reproduced here), not from the engine.", ""]


# the page, in order: a renderer (benchmarks/render/), or the name of a section written by hand
# (benchmarks/sections/NAME.md)
PAGE: list[Callable[[], list[str]] | str] = [
    intro, targets.render, ablation.scifact, ablation.hotpotqa, anchors.render, speed.render, kill_ingest.render,
    longdoc.render, small_to_big.render, expansion.render, llm.render, multihop.render, links.render, seed.render,
    router.render, fusion.render, entries.render, entries.second_round, whole_sections.render, whole_weights.render,
    whole_vectors.render, two_embedders.render, bm25_query.render, bm25_engines.render, languages.render,
    bm25_languages.render, milvus.render, serve_load.render, serve_load.workers, writer_load.render, soak.render,
    lance_cache.render, same_rankings.render, reading.render, "reading_rerun", "real_reading", "hostile", "office",
    "legacy_formats", "scans", "cli_start", query_path.render, query_int8.render, e5_engine.render, filtered.render,
    scale.bm25_at_a_million, commit_cost.render, "confidence",
]


def page() -> str:
    """docs/benchmarks.md as the result files give it."""
    doc = [line for section in PAGE for line in (written(section) if isinstance(section, str) else section())]
    return "\n".join(doc).rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if docs/benchmarks.md differs")
    text = page()
    if ap.parse_args().check:
        same = OUT.read_text(encoding="utf-8") == text
        print(f"{OUT} {'is' if same else 'is not'} what the result files render")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
