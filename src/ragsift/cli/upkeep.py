"""A knowledge base's upkeep: optimize, tune, check, migrate (each command's function and the
parser function that adds its arguments)."""
from __future__ import annotations

import argparse
import sys

from ragsift.cli.args import (
    _add_progress_flags,
    _add_store_flags,
    _kb_path,
    _open,
    _progress,
    _store_overrides,
    _whole,
    check_path,
)
from ragsift.errors import InputError


def cmd_optimize(args: argparse.Namespace) -> int:
    from ragsift.console import print_json

    done = _open(args).optimize()
    if args.json:
        print_json(done)
    elif "disk_bytes" in done:
        print(f"generation {done['generation']}: {done['disk_bytes_before'] / 1e6:.1f} MB -> "
              f"{done['disk_bytes'] / 1e6:.1f} MB on disk; generations kept: "
              f"{', '.join(map(str, done['kept_generations']))}")
    else:
        print(f"generation {done['generation']}: compaction asked for {', '.join(done['compacted']) or 'nothing'}")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from ragsift.console import print_json
    from ragsift.eval.tune import generated_questions, labeled_questions, tune

    if args.qrels is not None:
        check_path(args.qrels, "--qrels", "dir", "BEIR folder")
    overrides = {"llm_model": args.llm} if args.llm else {}
    kb = _open(args, **overrides)
    generated: list = []
    if args.qrels:
        questions, source = labeled_questions(kb, args.qrels, args.split), "labels"
    else:
        questions, generated = generated_questions(kb, args.generate)
        source = "generated"
    report = tune(kb, questions, source=source, apply=not args.dry_run,
                  progress=(lambda m: print(m, file=sys.stderr)) if sys.stderr.isatty() else None)
    report.generated = generated
    if args.json:
        print_json(report.to_dict())
        return 0
    v = report.validation
    print(f"{report.questions} {source} questions ({report.seconds:.0f} s); held-out nDCG@10 "
          f"{v['current']:.4f} (current) -> {v['chosen']:.4f} (chosen), p={report.p_value:.3f}")
    print("chosen: " + ", ".join(f"{k}={val}" for k, val in report.chosen.items()))
    print("saved as the knowledge base's query defaults" if report.applied else
          "not saved (" + ("--dry-run" if args.dry_run else "no better than the current settings on held-out questions")
          + ")")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from ragsift.console import print_json
    from ragsift.kb import check_knowledge_base, restore_knowledge_base, rewrite_settings

    path = _kb_path(args)
    if args.rewrite_settings:
        written = rewrite_settings(path)
        print(f"wrote {path / 'ragsift.toml'} from the settings the store recorded (embedder "
              f"{written.index.embedder}, analyzer {written.index.analyzer}); query defaults are the package's")
    if args.restore is not None:
        asked = None if args.restore == "last" else _generation(args.restore)
        before = check_knowledge_base(path)
        new = restore_knowledge_base(path, asked)
        if before.ok and new == before.generation:
            print(f"nothing to restore: generation {new} checks out and stays the newest (no new generation)")
        else:
            print(f"restored: generation {new} is now the newest")
    report = check_knowledge_base(path)
    if args.json:
        print_json(report.to_dict())
    else:
        counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
        print(f"generation {report.generation if report.generation is not None else '?'}"
              f"{': ' + counts if counts else ''}")
        for p in report.problems:
            print(f"problem: {p}")
        print(f"restorable generations: {', '.join(map(str, report.restorable)) or 'none'}")
        print("ok" if report.ok else f"{len(report.problems)} problem(s); `ragsift check --restore` commits "
              "the newest restorable generation again")
    return 0 if report.ok else 1


def _generation(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise InputError(f"--restore takes a generation number (or nothing for the newest good one), not {text!r}")
    return int(text)


def cmd_copy(args: argparse.Namespace) -> int:
    check_path(args.dest, "destination", "dir", "directory for the copy", store=True)
    kb = _open(args)
    with _progress(args, "copy") as progress:
        dest = kb.copy_to(args.dest, progress=progress, **_store_overrides(args))
    st = dest.stats()
    where = f"Milvus {st['uri']} (collections {st['collections']}_*)" if st["backend"] == "milvus" else st["path"]
    print(f"copied {st['documents']} documents, {st['parents']} parents, {st['children']} children "
          f"to {args.dest} on {where}; no re-embedding")
    return 0


def _optimize_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_optimize)


def _tune_command(s: argparse.ArgumentParser) -> None:
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--qrels", help="BEIR folder (queries.jsonl, qrels/<split>.tsv) with this knowledge base's "
                                   "document ids")
    g.add_argument("--generate", type=_whole(1), metavar="N",
                   help="no labels: the language model writes N questions from sampled sections")
    s.add_argument("--split", default="test")
    s.add_argument("--llm", help="language model for --generate (default: the knowledge base's llm setting)")
    s.add_argument("--dry-run", action="store_true", help="report, do not save")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_tune)


def _check_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--restore", nargs="?", const="last", metavar="GENERATION",
                   help="first commit a kept generation again (default: the newest that checks out; never the "
                        "empty generation 0); on a healthy knowledge base, nothing to do: it says so")
    s.add_argument("--rewrite-settings", action="store_true",
                   help="first write ragsift.toml from the index settings the store recorded at creation (a lost, "
                        "emptied or edited settings file)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_check)


def _migrate_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("dest", help="directory for the copy's settings (and its data, on LanceDB)")
    _add_store_flags(s, "of the copy")
    _add_progress_flags(s)
    s.set_defaults(func=cmd_copy)

