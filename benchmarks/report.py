"""Render docs/benchmarks.md from the result files in benchmarks/results/.

    python benchmarks/report.py            # after benchmarks/run_all.sh (or any part of it)
    python benchmarks/report.py --check    # write nothing; exit 1 when a page is not what it renders

It writes benchmarks/README.md too: ``INDEX`` below (script, result files, sections, run by
run_all.sh or not) as a table.

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
  ``paths``, ``source``, ``host_of``, ``fmt``, ``opened``, ``written``) is in ``render/common.py``; or
- written by hand in ``benchmarks/sections/NAME.md`` (a name in ``PAGE``): prose around a few
  figures, where a renderer would be longer than the text.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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
    whole_rule,
    whole_sections,
    whole_vectors,
    whole_weights,
    writer_load,
)
from render.common import ROOT, written

OUT = ROOT / "docs" / "benchmarks.md"
README = ROOT / "benchmarks" / "README.md"

class Bench(NamedTuple):
    """A row of the index: what a script in benchmarks/ writes that this page reads, and where it shows."""
    results: tuple[str, ...] | str  # files in benchmarks/results/ (the page reads them), or NOT_RUN
    sections: tuple[str, ...]  # the page's headings (without "## ") that show them, Targets included
    run_all: bool  # run by run_all.sh (or llm.sh, which it runs); otherwise its header says why not


WHOLE_RULE = "Whole sections by default? (`benchmarks/whole_rule.py`)"
ENTRY_LANGUAGE = "An entry's language: its own text's or its document's? (`benchmarks/entry_language.py`)"
NOT_RUN = "not run"  # a script whose section says "Not run yet": no result file stored
TARGETS = "Targets"
SPEED = "Speed and memory"
LANGUAGES = "Languages: the fast multilingual embedder, translation, a mixed knowledge base"
FILTERED = "Filtered search (`benchmarks/filtered.py`)"
COMMITS = "Small commits into a large store (segments; `benchmarks/commit_cost.py`)"
WORKERS = "The server on every core (`ragsift serve --workers N`)"
LLM = tuple(f"llm/{ds}-{part}-{cache}.json" for ds in ("hotpotqa-ircot-dev500", "scifact") for part in "AB"
            for cache in ("cold", "warm"))

# every script in benchmarks/ (tests/project/test_benchmarks.py checks this against the tree, the results folder,
# this page's headings and run_all.sh); run_all.sh's own row is `ragsift eval`'s ablation tables
INDEX: dict[str, Bench] = {
    "run_all.sh": Bench(("scifact.json", "scifact.md", "scifact.png", "scifact-per-query.jsonl",
                         "hotpotqa-ircot-dev500.json", "hotpotqa-ircot-dev500.md", "hotpotqa-ircot-dev500.png",
                         "hotpotqa-ircot-dev500-per-query.jsonl"),
                        (TARGETS, "Ablation: BEIR SciFact", "Ablation: HotpotQA (IRCoT dev 500, multi-hop)"), True),
    "anchors.py": Bench(("anchors-scifact.json", "anchors-scale.json"),
                        (TARGETS, "Side by side: ragsift, LangChain and LlamaIndex"), True),
    "ann_recall.py": Bench(("ann_recall.json",), (TARGETS, SPEED), True),
    "bm25_engines.py": Bench(("bm25_engines.json",), ("BM25 engines on the same chunks: ragsift's, LanceDB's, a "
                                                      "one-byte length (`benchmarks/bm25_engines.py`)",), False),
    "bm25_languages.py": Bench(("bm25_languages.json",),
                               ("BM25's statistics in a mixed-language base (`benchmarks/bm25_languages.py`)",), False),
    "bm25_query.py": Bench(("bm25_query.json",),
                           ("BM25: a repeated query term, and the analyzers (`benchmarks/bm25_query.py`)",), False),
    "cli_start.py": Bench(("cli_start.json",), ("CLI start-up (`benchmarks/cli_start.py`)",), False),
    "commit_cost.py": Bench(("commit_cost.json", "commit_cost_after.json", "steady_ingest.json"), (TARGETS, COMMITS),
                            False),
    "confidence.py": Bench(("confidence.json",), ("Honest confidence: does `no_good_match` tell answered questions "
                                                  "from unanswerable ones? (`benchmarks/confidence.py`)",), False),
    "e5_engine.py": Bench(("e5_engine.json",), ("The default embedder's two engines (`benchmarks/e5_engine.py`)",),
                          False),
    "entry_language.py": Bench(("entry_language.json",), (ENTRY_LANGUAGE,), False),
    "entries.py": Bench(("entries.json", "entries_round2.json", "standout.json"),
                        ("Whole entries beside chunks, chosen leave-one-set-out (`benchmarks/entries.py`)",
                         "Whole entries beside chunks, round 2: the default embedder on SciFact, damped adaptive "
                         "fusion (`benchmarks/entries.py`)", ENTRY_LANGUAGE), False),
    "exact_pass.py": Bench(("exact_pass.json",), (FILTERED,), False),
    "expansion.py": Bench(("expansion.json",), ("Index expansion on SciFact: keywords, entities, learned sparse, a "
                                                "second embedder",), False),
    "filtered.py": Bench(("filtered.json", "filtered_1m.json"), (TARGETS, FILTERED), False),
    "first_query.py": Bench(("first_query.json",), (TARGETS, COMMITS), False),
    "fusion.py": Bench(("fusion.json",), ("Default fusion chosen by measurement, in every language pair "
                                          "(`benchmarks/fusion.py`)", LANGUAGES), True),
    "graph_width.py": Bench(("graph_width.json",), (FILTERED, "BM25 at a million children (`benchmarks/scale.py "
                                                               "--before`)"), False),
    "harness.py": Bench((), (), True),  # shared code, not a benchmark; run_all.sh runs its `stamp` command
    "hostile.py": Bench(("hostile.json",), ("Hostile files and long documents (`benchmarks/hostile.py`)",), False),
    "ingest_speed.py": Bench(("ingest.json",), (TARGETS, SPEED), True),
    "kill_ingest.py": Bench(("kill_ingest.json",), (TARGETS, "Long ingests that survive a kill -9"), True),
    "lance_cache.py": Bench(("lance_cache.json",),
                            ("LanceDB's caches in a long-running process (`benchmarks/lance_cache.py`)",), False),
    "legacy_formats.py": Bench(("legacy_formats.json", "legacy_formats_no_soffice.json"),
                               ("Formats that need LibreOffice or OLE parsing, on Apache POI's test files "
                                "(`benchmarks/legacy_formats.py`)",), False),
    "links.py": Bench(("links.json",), (TARGETS, "Multi-hop that follows names (HotpotQA, IRCoT dev 500; without "
                                                 "and with the model)"), True),
    "llm.sh": Bench(LLM, ("Language models: HyDE, rewriting, LLM-judge reranking",), True),
    "longdoc.py": Bench(("longdoc.json",), ("Long documents: flat chunks, parent-child, whole documents (L-Eval)",),
                        False),
    "milvus.py": Bench(("milvus.json",), ("The same knowledge base on LanceDB and on Milvus (SciFact)",), False),
    "mixed.py": Bench(("mixed.json",), (LANGUAGES,), True),
    "multihop.py": Bench(("multihop.json",), ("Multi-hop retrieval (HotpotQA, IRCoT dev 500)",), True),
    "multihop_chains.py": Bench(("multihop_chains.json", "multihop_chains_first.json", "multihop_chains_walk.json"), ("Chains that go on: multi-hop by hop count "
                                                           "(`benchmarks/multihop_chains.py`)",), False),
    "multilingual.py": Bench(("multilingual.json",), (LANGUAGES,), True),
    "office.py": Bench(("office.json",), ("Office files read whole (`benchmarks/office.py`)",), False),
    "query_int8.py": Bench(("query_int8.json",), ("MiniLM's questions in int8 arithmetic "
                                                  "(`benchmarks/query_int8.py`)",), False),
    "query_path.py": Bench(("query_path.json",), (TARGETS, "The user's path against the core "
                                                           "(`benchmarks/query_path.py`)"), False),
    "readers.py": Bench((), (), False),  # the anchors' readers, run by reading.py (their figures: reading.json)
    "reading.py": Bench(("reading.json", "reading-rerun.json", "reading-scan-rerun.json"), ("Reading documents (`benchmarks/reading.py`)",), True),
    "real_reading.py": Bench(("real_reading.json",), ("Reading real documents (`benchmarks/real_reading.py`)",),
                             False),
    "real_questions.py": Bench(("real_questions.json",),
                               ("Reading real documents (`benchmarks/real_reading.py`)",), False),
    "layout_model_cost.py": Bench(("layout_model_cost.json",),
                                  ("Reading real documents (`benchmarks/real_reading.py`)",), False),
    "rtl_reading.py": Bench(("rtl_reading.json",), ("Reading real documents (`benchmarks/real_reading.py`)",),
                            False),
    "report.py": Bench((), (), True),  # renders this page
    "router.py": Bench(("router.json",), ("The router as the default, on every set's held-out questions "
                                          "(`benchmarks/router.py`)",), False),
    "same_rankings.py": Bench(("same_rankings.json", "same_rankings_bm25.json"),
                              ("Refactoring: the same rankings before and after (`benchmarks/same_rankings.py`)",),
                              False),
    "scale.py": Bench(("scale.json", "bm25_1m.json", "scale_segments.json", "segments_ab.json"),
                      (TARGETS, SPEED, "BM25 at a million children (`benchmarks/scale.py --before`)", COMMITS), True),
    "scans.py": Bench(("scans.json", "scans-before.json"), ("Scans upright and spaced (`benchmarks/scans.py`)",),
                      False),
    "seed.py": Bench(("seed.json",), (TARGETS, "The seed's combination and the router (`benchmarks/seed.py`)"), True),
    "serve_cpu.py": Bench(("serve_cpu.json",), (TARGETS, WORKERS), False),
    "serve_load.py": Bench(("serve_load.json", "serve_workers.json"),
                           (TARGETS, "The server under load (`ragsift serve`)", WORKERS), True),
    "sign_bits.py": Bench(("sign_bits.json",), (FILTERED,), False),
    "small_to_big.py": Bench(("small_to_big.json",), ("The small-to-big family on long documents (L-Eval)",), False),
    "soak.py": Bench(("soak.json",), (TARGETS, "Long life: 100 re-ingests with queries between "
                                               "(`benchmarks/soak.py`)"), True),
    "throughput.py": Bench(("throughput.json",), (SPEED,), True),
    "translate.py": Bench(("translate.json",), (LANGUAGES,), True),
    "tune.py": Bench(("tune.json", "tune_lawbench.json"), (LANGUAGES,), True),
    "two_embedders.py": Bench(("two_embedders.json",),
                              ("A second embedder as a third channel (`benchmarks/two_embedders.py`)",), False),
    "web_screenshots.py": Bench((), (), False),  # the README's pictures (docs/img/web-*.png), not a benchmark
    "whole_sections.py": Bench(("whole_sections.json",), ("What whole sections beside chunks cost at ingest "
                                                          "(`benchmarks/whole_sections.py`)",), False),
    "whole_vectors.py": Bench(("whole_vectors.json",), ("A section's whole vector without embedding it? "
                                                        "(`benchmarks/whole_vectors.py`)",), False),
    "whole_rule.py": Bench(("whole_rule.json",), (WHOLE_RULE,), False),
    "whole_weights.py": Bench(("whole_weights.json",),
                              ("Whole weights through the package (`benchmarks/whole_weights.py`)",), False),
    "writer_load.py": Bench(("writer_load.json",), ("Readers beside writers: queries while an ingest and 50 deletes "
                                                    "run (`benchmarks/writer_load.py`)",), True),
}

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
            "`src/ragsift/eval/metrics.py` and checked against ranx on real runs (`tests/eval/test_metrics.py`).", "",
            "BM25 changed on 2026-12-01: it ran in LanceDB's full-text index and now runs on ragsift's "
            "in-memory inverted index. "
            "On SciFact the two runs of that day gave BM25 nDCG@10 0.6878 before and 0.6820 after, hybrid 0.7016 and 0.7001, weighted "
            "hybrid 0.7245 and 0.7214 (`benchmarks/results/scifact.json` as d7c3558 stored it, and as it is now: the "
            "SciFact table below). Tables dated earlier were "
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
    router.render, "multihop_chains", fusion.render, entries.render, entries.second_round, whole_sections.render, whole_weights.render,
    whole_rule.render,
    whole_vectors.render, two_embedders.render, bm25_query.render, bm25_engines.render, languages.render,
    bm25_languages.render, "entry_language", milvus.render, serve_load.render, serve_load.workers, writer_load.render, soak.render,
    lance_cache.render, same_rankings.render, reading.render, "reading_rerun", "real_reading", "hostile", "office",
    "legacy_formats", "scans", "cli_start", query_path.render, query_int8.render, e5_engine.render, filtered.render,
    scale.bm25_at_a_million, commit_cost.render, "confidence",
]


def page() -> str:
    """docs/benchmarks.md as the result files give it."""
    doc = [line for section in PAGE for line in (written(section) if isinstance(section, str) else section())]
    return "\n".join(doc).rstrip() + "\n"


def readme() -> str:
    """benchmarks/README.md: the index as a table."""
    lines = ["# Benchmarks", "",
             "_Written by `python benchmarks/report.py` from its `INDEX` (edit that, not this file)._", "",
             "Each script measures one thing and writes its figures to `benchmarks/results/` through "
             "`harness.write_result` (command, commit, date and host stamped); its docstring has its command line. "
             "`python benchmarks/report.py` renders `docs/benchmarks.md` from those files: the page's sections in the "
             "order of `report.PAGE`, each rendered by `benchmarks/render/<script>.py` (what every renderer shares: "
             "`render/common.py`) or written by hand in `benchmarks/sections/NAME.md`. `benchmarks/run_all.sh` runs "
             "the scripts that need only the shared datasets; its header says why each of the others is not run "
             "there.", "",
             "| script | result files (`benchmarks/results/`) | sections of `docs/benchmarks.md` | rendered by | "
             "run by `run_all.sh` |", "|---|---|---|---|---|"]
    for script, b in INDEX.items():
        results = b.results if isinstance(b.results, str) else ", ".join(f"`{r}`" for r in b.results) or "—"
        stem = "ablation" if script == "run_all.sh" else script.rsplit(".", 1)[0]
        by = [f"`{f}`" for f in (f"render/{stem}.py", f"sections/{stem}.md") if (ROOT / "benchmarks" / f).exists()]
        lines.append(f"| `{script}` | {results} | {'; '.join(b.sections) or '—'} | {', '.join(by) or '—'} | "
                     f"{'yes' if b.run_all else 'no'} |")
    return "\n".join(lines) + "\n"


OUTPUTS: dict[Path, Callable[[], str]] = {OUT: page, README: readme}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if docs/benchmarks.md or benchmarks/README.md differs")
    check = ap.parse_args().check
    differ = 0
    for out, render in OUTPUTS.items():
        text = render()
        if check:
            same = out.exists() and out.read_text(encoding="utf-8") == text
            differ += not same
            print(f"{out} {'is' if same else 'is not'} what {'the result files render' if out == OUT else 'the index renders'}")
        else:
            out.write_text(text, encoding="utf-8")
            print(f"wrote {out}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
