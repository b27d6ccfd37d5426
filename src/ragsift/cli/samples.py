"""The bundled sample and evaluation: sample, demo, eval, compare (each command's function and the
parser function that adds its arguments)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragsift.cli.args import _add_progress_flags, _csv, _kb_path, _quoted, _whole, check_path
from ragsift.errors import InputError


def cmd_sample(args: argparse.Namespace) -> int:
    from ragsift.demo import copy_sample, sample_dir

    dest = check_path(args.dest, "the folder", want="dir", noun="folder")
    copy_sample(dest)
    names = sorted(f.name for f in (sample_dir() / "kb").iterdir())
    print(f"copied the sample documents to {dest}: {', '.join(names)}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ragsift.demo import run_demo

    return run_demo(_kb_path(args) if args.kb else None, progress=sys.stderr.isatty())


def cmd_eval(args: argparse.Namespace) -> int:
    from ragsift.eval.runner import load_configs, run_eval

    # what it reads and where it writes, checked before the knowledge base is built and the queries run
    check_path(args.dataset, "dataset", "dir", "BEIR folder")
    for flag, value, want in (("--config-file", args.config_file, "file"), ("--work-dir", args.work_dir, "store"),
                              ("--out", args.out, "file"), ("--report-dir", args.report_dir, "dir")):
        if value is not None:
            check_path(value, flag, "dir" if want == "store" else want, store=want == "store")
    names = _csv(args.configs)
    if not names:
        raise InputError("--configs names no configuration (bm25, dense, hybrid, hybrid-weighted, or names from "
                         "--config-file)")
    report = run_eval(args.dataset, load_configs(names, args.config_file), baseline=args.baseline,
                      embedder=args.embedder, split=args.split, max_queries=args.max_queries,
                      skip_queries=args.skip_queries, work_dir=Path(args.work_dir),
                      out=Path(args.out) if args.out else None,
                      report_dir=Path(args.report_dir) if args.report_dir else None,
                      progress=sys.stderr.isatty() if args.progress is None else args.progress,
                      command="ragsift " + " ".join(_quoted(sys.argv[1:])))
    print(report.summary)
    print(report.table)
    if report.chart_skipped:
        print("matplotlib is not installed: chart skipped (pip install 'ragsift[bench]')", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ragsift.eval.runner import compare_configs

    check_path(args.results, "results file", "file")
    print(compare_configs(Path(args.results), args.a, args.b, _csv(args.metrics) if args.metrics else None))
    return 0


def _sample_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("dest", nargs="?", default="docs", help="the folder to copy them into (default: docs)")
    s.set_defaults(func=cmd_sample)


def _demo_command(s: argparse.ArgumentParser) -> None:
    s.set_defaults(func=cmd_demo)


def _eval_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("dataset", help="folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    s.add_argument("--configs", default="bm25,dense,hybrid,hybrid-weighted",
                   help="comma-separated names: bm25, dense, hybrid (RRF), hybrid-weighted, or names "
                        "from --config-file")
    s.add_argument("--config-file", help='JSON: {"name": {query settings}} for more configurations')
    s.add_argument("--baseline", help="config the others are tested against (default: the first)")
    s.add_argument("--embedder", default="minilm")
    s.add_argument("--split", default="test")
    s.add_argument("--max-queries", type=_whole(1))
    s.add_argument("--skip-queries", type=_whole(0), default=0,
                   help="leave out the first N judged queries (e.g. to tune on one part and test on another)")
    s.add_argument("--work-dir", default=".cache/eval", help="where evaluation knowledge bases are kept")
    s.add_argument("--out", help="write metrics, runs and per-query results as JSON here")
    s.add_argument("--report-dir", help="write <dataset>.md, <dataset>.png and per-query JSONL here")
    _add_progress_flags(s, lines=False)
    s.set_defaults(func=cmd_eval)


def _compare_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("results")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--metrics", help="comma-separated (default: all in the file)")
    s.set_defaults(func=cmd_compare)

