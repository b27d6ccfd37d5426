"""The ``ragsift`` command line: sixteen commands (``COMMANDS``, in the order ``ragsift --help``
lists them; tests/test_truthful_lists.py checks this list against it):

- a knowledge base's contents: ingest, query, stats, list, show, delete
- its upkeep: optimize, tune, check, migrate
- serving it: serve (HTTP: the API, the web page, MCP), mcp (MCP over stdio)
- the bundled sample and evaluation: sample, demo, eval, compare

Errors meant for users print as one line (``ragsift: error: ...``) with exit status 2, a
mistaken flag too (``ragsift query: error: argument ...; see 'ragsift query --help'``): every
argument is checked to be UTF-8, and a path to be one the system takes (and not a device or a
file where a directory goes) before anything loads; what the system refuses later (a folder
that cannot be made) is said with its reason and the path. The flags that set a setting take
their type, choices and help from the setting's definition (``ragsift.config``), so the valid
values live in one place.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from ragsift import __version__
from ragsift.errors import InputError, NotFound, RagsiftError, os_reason

DEFAULT_KB = "ragsift-kb"
NAME_MAX, PATH_MAX = 255, 4095  # bytes of one name in a path, and of a whole path (Linux)


def _kb_path(args: argparse.Namespace) -> Path:
    """The knowledge base's directory: ``--kb``, else $RAGSIFT_KB, else ./ragsift-kb; checked to
    be a path the system takes and, when it exists, a directory."""
    if args.kb is not None:
        return check_path(args.kb, "--kb", "dir", "knowledge-base directory", store=True)
    env = os.environ.get("RAGSIFT_KB")
    return check_path(env or DEFAULT_KB, "$RAGSIFT_KB" if env else "the default knowledge base", "dir",
                      "knowledge-base directory", store=True)


def _shown(text: str, limit: int = 60) -> str:
    """A user's text in a message: quoted, control characters and bytes that are not UTF-8
    escaped, cut at ``limit`` characters."""
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text.encode("utf-8", "surrogateescape")) if _undecodable(text) else repr(text)


def _undecodable(text: str) -> bool:
    """Text holding bytes that were not UTF-8 (Python keeps them as lone surrogates)."""
    return any("\ud800" <= c <= "\udfff" for c in text)


def check_text(text: str, what: str, path: bool = False) -> str:
    """An argument that must be UTF-8 text (``path``: a file or folder's name)."""
    if _undecodable(text):
        raise InputError(f"{what} {_shown(text)} is not valid UTF-8: ragsift takes its arguments in UTF-8"
                         + ("; rename the file or folder" if path else ""))
    return text


def check_path(text: str, what: str, want: str = "", noun: str = "", store: bool = False) -> Path:
    """A path argument the system can take: UTF-8, not empty, its names and itself within the
    length limits. ``want`` ("dir" or "file"): when something is there, it is that (``noun`` names
    what the path is for in the message, "knowledge-base directory"). ``store``: a directory
    knowledge bases are kept in, whose path LanceDB takes without control characters."""
    check_text(text, what, path=True)
    noun = noun or {"dir": "directory", "file": "file"}.get(want, "path")
    if not text:
        raise InputError(f"{what} is empty: give a {noun}")
    raw = os.fsencode(text)
    if len(raw) > PATH_MAX:
        raise InputError(f"{what} {_shown(text)} is {len(raw)} bytes long; a path may be at most {PATH_MAX}")
    long = next((n for n in raw.split(b"/") if len(n) > NAME_MAX), None)
    if long is not None:
        raise InputError(f"{what} {_shown(text)}: a name in it is {len(long)} bytes long; a file or folder name "
                         f"may be at most {NAME_MAX} bytes")
    if store and any(c < " " or c == "\x7f" for c in text):  # LanceDB refuses them in its folder's path
        raise InputError(f"{what} {_shown(text)} holds a control character; a knowledge base's directory cannot")
    path = Path(text)
    actual = _kind_of(path) if want else None
    if actual is not None and actual != {"dir": "a directory", "file": "a file"}[want]:
        raise InputError(f"{what} {_shown(text, 200)} is {actual}, not a {noun}")
    return path


def _kind_of(path: Path) -> str | None:
    """What is at ``path``: "a directory", "a file", "a device"... (None: nothing, or it cannot be told)."""
    import stat

    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    return ("a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a named pipe" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "neither a file nor a directory")


def _open(args: argparse.Namespace, create: bool = False, **overrides: Any):
    from ragsift.kb import KnowledgeBase

    return KnowledgeBase.open(_kb_path(args), create=create, **overrides)


def _progress(args: argparse.Namespace, what: str = "ingest"):
    """One progress line for every phase of an ingest or a copy, on a terminal (or asked for), a
    line every ``--progress-every`` seconds off one: a context manager ending it after its block."""
    from ragsift.console import ingest_progress

    if args.progress is None:  # by default: a bar on a terminal, a line every few seconds for a log
        return ingest_progress(True if sys.stderr.isatty() else None, args.progress_every, what)
    return ingest_progress(args.progress)


# ---------------------------------------------------------------- flags from the settings
def _whole(low: int) -> Callable[[str], int]:
    """An argument type: a whole number of at least ``low``."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid whole number: {_shown(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
        return value

    return whole


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _weights(text: str, flag: str = "--weights") -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(str.strip, text.split(",")):  # "" names none
        name, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"{flag} takes name=number pairs like dense=0.6,bm25=0.4; got {part!r}") from None
    return out


def _help(flat: str) -> str:
    """A setting's description, its valid values when they are a list of choices, and its default."""
    from enum import Enum
    from typing import get_args, get_origin

    from ragsift.config import Settings

    info = Settings.field_info(flat)
    text = " ".join((info.description or "").split())
    inner = get_args(info.annotation)
    if get_origin(info.annotation) is tuple and inner and isinstance(inner[0], type) and issubclass(inner[0], Enum):
        text += f" Comma-separated; valid: {', '.join(m.value for m in inner[0])}."
    default = info.get_default(call_default_factory=True)
    if isinstance(default, tuple):
        default = ",".join(str(v) for v in default)
    elif isinstance(default, dict):
        default = ",".join(f"{k}={v}" for k, v in default.items())
    return text + (f" (default: {default})" if default not in ("", None) else "")


def _setting(parser: argparse._ActionsContainer, flat: str, *flags: str, note: str = "") -> None:
    """A flag for a setting (``dest`` is its flat name): type, choices and help from its
    definition; ``note`` is added to the help."""
    from enum import Enum
    from typing import get_origin

    from ragsift.config import Settings

    info = Settings.field_info(flat)
    ann = info.annotation
    opts: dict[str, Any] = {"dest": flat, "help": _help(flat) + (f"; {note}" if note else "")}
    flags = tuple(f for f in flags if f) or ("--" + flat.replace("_", "-"),)
    if isinstance(ann, type) and issubclass(ann, Enum):
        opts["choices"] = [m.value for m in ann]
    elif ann is bool:
        opts["action"] = "store_const"
        opts["const"] = True
    elif ann is int or ann is float:
        opts["type"] = ann
    elif get_origin(ann) is tuple:
        opts["type"] = _csv
    parser.add_argument(*flags, **opts)


def _given(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """The settings among ``names`` that a flag set (a mapping given as name=number pairs)."""
    from typing import get_origin

    from ragsift.config import Settings

    out = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    for n, v in out.items():
        if get_origin(Settings.field_info(n).annotation) is dict:
            out[n] = _weights(v, "--" + n.replace("_", "-"))
    return out


STORE_SETTINGS = ["store_kind", "store_uri", "store_name", "store_index"]
INDEX_FLAGS = ["embedder", "small_index", "extra_embedders", "sparse_encoder"]
INGEST_FLAGS = ["checkpoint_documents", "checkpoint_seconds"]
FOLDER_FLAGS = ["follow_outside_links"]
RETRIEVAL_FLAGS = ["channels", "fusion", "adaptive_power", "rrf_k", "weights", "normalization", "strategy", "unit",
                   "index_kinds", "whole_weights", "window_sentences", "merge_threshold", "max_passages",
                   "token_budget", "channel_timeout_s", "min_similarity", "min_term_match", "min_standout"]
LLM_FLAGS = ["llm_model", "llm_base_url", "hyde_mode", "hyde_samples", "rewrite", "reranker", "rerank_top_n",
             "multihop_mode", "hops_max", "hop_min_gain"]
QUERY_FLAGS = RETRIEVAL_FLAGS + LLM_FLAGS
# flags shorter than --<flat-name>
SHORT_FLAGS = {"window_sentences": ("--window",), "token_budget": ("--budget",), "channel_timeout_s": ("--timeout",),
               "llm_model": ("--llm",), "reranker": ("--rerank",), "multihop_mode": ("--multihop",),
               "store_kind": ("--store",),
               "max_passages": ("--max-passages", "--max-parents")}  # --max-parents: the earlier spelling


def _store_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out = _given(args, STORE_SETTINGS)
    if out.get("store_uri") and "store_kind" not in out:
        out["store_kind"] = "milvus"
    return out


# ---------------------------------------------------------------- commands
def cmd_ingest(args: argparse.Namespace) -> int:
    # the arguments are checked before anything loads, and nothing is written when one is wrong
    missing = []
    for p in args.paths:
        if p == "-":
            continue
        check_path(p, "path")
        try:
            os.stat(p)
        except (FileNotFoundError, NotADirectoryError):
            missing.append(p)
        except OSError as e:
            raise InputError(f"cannot read {p}: {e.strerror}") from None
    if missing:
        raise InputError(f"no such file or directory: {', '.join(missing)}")
    if "-" in args.paths and args.paths != ["-"]:
        raise InputError("'-' (JSONL on standard input) cannot be mixed with paths")
    if args.sync and len(args.paths) != 1:
        raise InputError("--sync mirrors one folder: give exactly one path")
    if args.dry_run and not args.sync:
        raise InputError("--dry-run goes with --sync (what mirroring a folder would change)")
    kb = _open(args, create=True, **_given(args, INDEX_FLAGS), **_store_overrides(args))
    given = _given(args, INGEST_FLAGS + FOLDER_FLAGS)
    if given:  # for this ingest only: not saved with the knowledge base
        kb.settings = kb.settings.replace(**given)
    with _progress(args) as progress:
        if args.paths == ["-"]:  # JSONL documents on standard input, read as a JSONL file would be
            from ragsift.ingest.loaders import load_jsonl

            loaded = load_jsonl(sys.stdin.read(), args.prefix + "stdin")
            report = kb.add_documents(loaded.documents, progress=progress)
            report.skipped[:0] = loaded.skipped
        elif args.sync:
            report = kb.sync(args.paths[0], prefix=args.prefix, dry_run=args.dry_run, progress=progress)
        else:
            report = kb.ingest(args.paths, prefix=args.prefix, progress=progress)
    from ragsift.console import print_json, report_lines

    if args.json:
        print_json(report.to_dict())
    else:
        print("\n".join(report_lines(report)))
    if report.skipped and not (report.added or report.updated or report.unchanged or report.deleted
                               or report.renamed or report.relabeled):
        print("ragsift: error: nothing was ingested: every input was skipped (reasons above)", file=sys.stderr)
        return 1
    return 0


def _query_overrides(args: argparse.Namespace, kb_channels: tuple[str, ...], given: dict[str, Any]) -> dict[str, Any]:
    out = dict(given)
    extra = (["hyde", "hyde_bm25"] if args.hyde else []) + (["multi_query"] if args.multi_query else [])
    if extra:
        out["channels"] = list(dict.fromkeys([*out.get("channels", kb_channels), *extra]))
    if args.multi_query:
        out["multi_query_n"] = args.multi_query
    return out


def cmd_query(args: argparse.Namespace) -> int:
    import json

    from ragsift.console import format_result, print_json

    flt = None  # a malformed filter is told before the knowledge base and its models load
    if args.filter:
        try:
            flt = json.loads(args.filter)
        except json.JSONDecodeError as e:
            raise InputError(f"--filter is not valid JSON: {e.msg} at column {e.colno}") from None
        except RecursionError:
            raise InputError("--filter is nested too deeply (a filter may be 16 levels deep)") from None
    given = _given(args, QUERY_FLAGS)  # --weights too, before anything loads
    kb = _open(args)
    result = kb.query(args.question, filter=flt, trace=args.trace,
                      **_query_overrides(args, kb.settings.query.channels, given))
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print_json(result.to_dict(trace=args.trace))
    elif fmt == "context":
        print(result.to_context(args.context_tokens))
    else:
        print(format_result(result, show_trace=args.trace, max_chars=args.max_chars))
    from ragsift.types import EMPTY_KNOWLEDGE_BASE

    for w in result.warnings:  # why nothing was found, beside whatever format went to stdout
        print(f"ragsift: {_empty_kb(args) if w == EMPTY_KNOWLEDGE_BASE else w}", file=sys.stderr)
    return 1 if EMPTY_KNOWLEDGE_BASE in result.warnings else 0


def _empty_kb(args: argparse.Namespace) -> str:
    """An empty knowledge base, said with the command that fills it."""
    kb = f"--kb {args.kb} " if args.kb is not None else ""
    return f"the knowledge base at {_kb_path(args)} holds no documents: add some with `ragsift {kb}ingest PATH`"


def cmd_stats(args: argparse.Namespace) -> int:
    from ragsift.console import print_json
    from ragsift.kb import KnowledgeBase

    # an embedded store's counts are in its manifest: no table opened (LanceDB takes seconds to import)
    st = KnowledgeBase.committed_stats(_kb_path(args)) or _open(args).stats()
    if args.json:
        print_json(st)
    else:
        for k in ("path", "backend", "uri", "collections", "generation", "documents", "parents", "children",
                  "dim", "disk_bytes"):
            if k in st:
                print(f"{k:12} {st[k]}")
        print(f"{'embedder':12} {st['settings']['index']['embedder']}")
        an = st["analyzer"]
        print(f"{'analyzer':12} {an['name']}" + (f"  ({an['note']})" if "note" in an else ""))
        print(f"{'fields':12} {', '.join(st['fields'])}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ragsift.console import print_json

    docs = _open(args).documents()
    rows = sorted(docs.values(), key=lambda d: (d.source, d.doc_id))
    if args.json:
        print_json([d.__dict__ for d in rows])
    elif not rows:
        print(_empty_kb(args))
    else:
        for d in rows:
            print(f"{d.doc_id}\t{d.source}\t{d.parents} parents\t{d.children} children\t{d.title}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from ragsift.types import document_name

    kb = _open(args)
    with kb.reading() as store:  # the names to say, read before they go
        ids = args.doc_ids + ([d.doc_id for d in store.find_documents(args.source)] if args.source is not None else [])
        sources = {k: d.source for k, d in store.get_documents(ids).items()} if ids else {}
    deleted = kb.delete(args.doc_ids, source=args.source)
    print(f"deleted {len(deleted)} document(s): {', '.join(document_name(i, sources.get(i, '')) for i in deleted)}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from ragsift.console import print_json, view_lines

    kb = _open(args)
    doc_id = args.doc
    if kb.view(doc_id) is None:  # a source named instead of an id
        found = [d.doc_id for d in kb.documents().values() if d.source == args.doc]
        if not found:
            raise NotFound(f"no document {args.doc!r} (give a document id or a source; `ragsift list` lists them)")
        doc_id = found[0]
    view = kb.view(doc_id)
    if args.json:
        print_json(view)
    else:
        print("\n".join(view_lines(view, show_text=args.text)))
    return 0


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


def cmd_demo(args: argparse.Namespace) -> int:
    from ragsift.demo import run_demo

    return run_demo(_kb_path(args) if args.kb else None, progress=sys.stderr.isatty())


def cmd_sample(args: argparse.Namespace) -> int:
    from ragsift.demo import copy_sample, sample_dir

    dest = check_path(args.dest, "the folder", want="dir", noun="folder")
    copy_sample(dest)
    names = sorted(f.name for f in (sample_dir() / "kb").iterdir())
    print(f"copied the sample documents to {dest}: {', '.join(names)}")
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


def _check_port(host: str, port: int) -> None:
    """Refuse a port that cannot be listened on (another program's, a privileged one) before
    anything loads: bound and let go at once, as the server binds it (``SO_REUSEADDR``)."""
    import errno
    import socket

    if not 1 <= port <= 65535:  # the server's own check says it the same way (ServerConfig)
        raise InputError(f"--port must be from 1 to 65535; got {port}")
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        raise InputError(f"cannot serve on {host}: {os_reason(e)}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is busy (another program is listening on it): stop it, or "
                             f"serve on another port with --port") from None
        if e.errno == errno.EACCES:
            raise InputError(f"port {port} on {host} needs more privileges to be served on: choose a port above "
                             "1023 with --port") from None
        raise InputError(f"cannot serve on {host} port {port}: {os_reason(e)}") from None
    except (OverflowError, UnicodeError) as e:
        raise InputError(f"cannot serve on {host!r} port {port}: {e}") from None
    finally:
        sock.close()


def cmd_serve(args: argparse.Namespace) -> int:
    import math

    _check_port(args.host, args.port)  # a busy port told at once, not after the knowledge base and models load

    import uvicorn

    from ragsift.server import Limits, ServerConfig, create_app, load_keys

    given = {}
    for field, (_, _, flag) in Limits.BOUNDS.items():
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            given[field] = value * (1 << 20) if field.endswith("_bytes") else value
    for field in ("max_body_bytes", "max_upload_bytes"):  # whole bytes, once checked as finite
        if field in given and math.isfinite(given[field]):
            given[field] = int(given[field])
    limits = Limits(**given)
    sync_dirs = {}
    for spec in args.sync_dir or []:
        name, sep, folder = spec.partition("=") if "=" in spec else ("default" if not args.kb_root else
                                                                   args.default_kb, "=", spec)
        if _kind_of(check_path(folder, f"--sync-dir {name}=")) != "a directory":
            raise InputError(f"--sync-dir {spec!r}: {folder} is not a folder")
        sync_dirs[name] = Path(folder).resolve()
    cfg = ServerConfig(kb=None if args.kb_root else _kb_path(args),
                       kb_root=check_path(args.kb_root, "--kb-root", "dir", store=True) if args.kb_root is not None
                       else None,
                       default_kb=args.default_kb, host=args.host, port=args.port, keys=load_keys(args.keys_file),
                       insecure=args.insecure_no_auth, limits=limits, mcp=not args.no_mcp,
                       mcp_ingest=args.mcp_ingest, embedder=args.embedder or "", sync_dirs=sync_dirs,
                       workers=args.workers)
    cfg.check_bind()
    # the default knowledge base is opened (made when missing) before serving: what is wrong with it (a
    # folder that cannot be made, a damaged settings file, an embedder that does not load) is told in one
    # line here, not in the traceback of a server's failed startup
    app = None
    if cfg.workers > 1:  # nothing opened before the workers fork (LanceDB and the models run threads): its folder
        folder = cfg.kb if cfg.kb is not None else cfg.kb_root / cfg.default_kb  # type: ignore[operator]
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the knowledge base at {folder}: {os_reason(e, folder)}") from None
    else:
        app = create_app(cfg)
        try:
            app.state.server.start()  # the server's own startup then finds it open
        except BaseException:
            app.state.server.stop()
            raise
    where = f"{cfg.kb_root} (by name)" if cfg.kb_root else str(cfg.kb)
    print(f"ragsift serving {where} on http://{args.host}:{args.port}/ (API /v1, docs /docs"
          f"{', MCP /mcp' if cfg.mcp else ''}); {len(cfg.keys)} API key(s)"
          f"{f'; {cfg.workers} workers' if cfg.workers > 1 else ''}", file=sys.stderr)
    if app is None:
        from ragsift.server.workers import serve

        return serve(cfg, args.log_level)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from ragsift.mcp import serve_stdio

    serve_stdio(_open(args), allow_ingest=args.allow_ingest)
    return 0


def _quoted(argv: list[str]) -> list[str]:
    import shlex

    return [shlex.quote(a) for a in argv]


# ---------------------------------------------------------------- parser
def _add_progress_flags(parser: argparse.ArgumentParser, lines: bool = True) -> None:
    """--progress / --no-progress; by default a progress bar is shown on a terminal only, and
    (``lines``) a progress line every --progress-every seconds off one."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None)
    g.add_argument("--no-progress", dest="progress", action="store_false")
    if lines:
        parser.add_argument("--progress-every", type=_seconds, default=10.0, metavar="SECONDS",
                            help="off a terminal (a pipe, CI, a service): a progress line every SECONDS "
                                 "(default 10)")


def _seconds(text: str) -> float:
    """An argument type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {_shown(text)}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {_shown(text)}")
    return value


def _add_store_flags(parser: argparse.ArgumentParser, what: str) -> None:
    g = parser.add_argument_group(f"store ({what})")
    for flat in STORE_SETTINGS:
        _setting(g, flat, *SHORT_FLAGS.get(flat, ()),
                 note="implies --store milvus; credentials from $RAGSIFT_MILVUS_TOKEN or $MILVUS_TOKEN"
                 if flat == "store_uri" else "")


def _ingest_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("paths", nargs="+", help="files or directories; '-': JSONL on standard input "
                                            '({"id": ..., "text": ..., "title"?, "metadata"?} a line)')
    s.add_argument("--prefix", default="", help="prefix for the document sources (namespaces)")
    s.add_argument("--sync", action="store_true",
                   help="mirror the one folder given in one commit: new and changed files written, files gone "
                        "deleted, renamed files moved without re-embedding")
    s.add_argument("--dry-run", action="store_true", help="with --sync: list what would change, write nothing")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    g = s.add_argument_group("checkpoints (this ingest)")
    for flat in INGEST_FLAGS:
        _setting(g, flat, note="for this ingest; a kill loses only what came after the last checkpoint, and the "
                 "same command run again resumes")
    g = s.add_argument_group("folders (this ingest)")
    for flat in FOLDER_FLAGS:
        _setting(g, flat, note="for this ingest")
    g = s.add_argument_group("index (for a NEW knowledge base)")
    for flat in INDEX_FLAGS:
        _setting(g, flat)
    _add_store_flags(s, "for a NEW knowledge base")
    _add_progress_flags(s)
    s.set_defaults(func=cmd_ingest)


def _query_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("question")
    s.add_argument("--format", choices=["text", "json", "context"], default="text",
                   help="text (passages and a summary of the trace), json (passages; with --trace the trace), "
                        "context (the passages with numbered citations, ready for a prompt)")
    s.add_argument("--json", action="store_true", help="the same as --format json")
    s.add_argument("--trace", action="store_true", help="the trace: per-channel hits (text) or the whole trace (json)")
    s.add_argument("--max-chars", type=_whole(0), default=0,
                   help="text format: cut each passage at this many characters (0: whole)")
    s.add_argument("--context-tokens", type=_whole(1), help="context format: the token budget of the context")
    s.add_argument("--filter", help='metadata filter as JSON, e.g. \'{"source": "manual.md"}\'')
    g = s.add_argument_group("retrieval")
    for flat in RETRIEVAL_FLAGS:
        _setting(g, flat, *SHORT_FLAGS.get(flat, ()))
    g = s.add_argument_group("language model (HyDE, rewriting, multi-query, reranking, multi-hop)")
    g.add_argument("--hyde", action="store_true", help="add the HyDE channels (dense and BM25 over a hypothesis)")
    g.add_argument("--multi-query", type=_whole(1), metavar="N", help="add a channel that fuses N LLM-written queries")
    for flat in LLM_FLAGS:
        _setting(g, flat, *SHORT_FLAGS.get(flat, ()),
                 note="the key comes from RAGSIFT_LLM_API_KEY or OPENAI_API_KEY" if flat == "llm_base_url" else "")
    s.set_defaults(func=cmd_query)


def _stats_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_stats)


def _list_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_list)


def _delete_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("doc_ids", nargs="*")
    s.add_argument("--source", help="delete the document(s) ingested from this source path")
    s.set_defaults(func=cmd_delete)


def _show_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("doc", help="a document id or source (`ragsift list` lists them)")
    s.add_argument("--text", action="store_true", help="print each section's text too")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)


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


def _serve_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another address "
                                                      "needs API keys or --insecure-no-auth)")
    s.add_argument("--port", type=int, default=8321)
    s.add_argument("--workers", type=int, default=1, help="processes answering on the port, so queries use every "
                                                        "core (default 1; rate limits and /metrics are per worker)")
    s.add_argument("--kb-root", help="serve every knowledge base under this directory by name (/v1/kbs/NAME)")
    s.add_argument("--default-kb", default="default", help="with --kb-root: the one served at /v1")
    s.add_argument("--keys-file", help="API keys, one a line: KEY [read|write]; also $RAGSIFT_API_KEYS (write) "
                                       "and $RAGSIFT_READ_KEYS (read only)")
    s.add_argument("--insecure-no-auth", action="store_true", help="serve a non-loopback address without keys")
    s.add_argument("--no-mcp", action="store_true", help="do not mount the MCP server at /mcp")
    s.add_argument("--mcp-ingest", action="store_true", help="enable the MCP add_documents tool (write keys)")
    s.add_argument("--embedder", help="embedder of knowledge bases the server creates")
    s.add_argument("--sync-dir", action="append", metavar="[NAME=]FOLDER",
                   help="a folder POST /v1/sync (or /v1/kbs/NAME/sync) mirrors into the knowledge base (write keys); "
                        "repeat for several knowledge bases")
    g = s.add_argument_group("limits (each passed is a clear 4xx)")
    g.add_argument("--max-body-mb", type=float, help="largest JSON request (default 16)")
    g.add_argument("--max-upload-mb", type=float, help="largest upload request, all files (default 64)")
    g.add_argument("--max-batch", type=int, help="most queries in one batch (default 32)")
    g.add_argument("--max-files", type=int, help="most files in one upload (default 100)")
    g.add_argument("--max-documents", type=int, help="most documents in one JSON ingest request (default 1000)")
    g.add_argument("--max-page", type=int, help="most documents in one page of a listing (default 500)")
    g.add_argument("--max-query-seconds", type=float, help="a query's (or a batch's) whole time (default 120)")
    g.add_argument("--max-queued-jobs", type=int, help="writes (ingests, deletes) waiting per knowledge base; "
                                                      "past it a write is a 503 with Retry-After (default 64)")
    g.add_argument("--rate-limit", type=float, help="requests a second per API key, or per client address "
                                                   "without keys; past it a 429 with Retry-After (default 50)")
    g.add_argument("--rate-burst", type=int, help="requests a key may send at once (default 100)")
    g.add_argument("--max-inflight", type=int, help="requests of one key answered at once (default 8)")
    s.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    s.set_defaults(func=cmd_serve)


def _mcp_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--allow-ingest", action="store_true", help="enable the add_documents tool")
    s.set_defaults(func=cmd_mcp)


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


#: each command: its help line (all `ragsift --help` needs) and what adds its arguments, in the order
#: `ragsift --help` lists them
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "ingest": ("ingest files or directories (Markdown, text, HTML, PDF, Word, PowerPoint, "
              "Excel, CSV, EPUB, ODT, mail, images, ZIP, JSONL), or '-' for JSONL "
              "documents on standard input",
              _ingest_command),
    "query": ("ask a question",
              _query_command),
    "stats": ("show counts, generation and settings",
              _stats_command),
    "list": ("list documents",
              _list_command),
    "show": ("how a document was read: its heading tree, sections (pages, tables), chunks",
              _show_command),
    "delete": ("delete documents with all their parents and children",
              _delete_command),
    "optimize": ("compact the store and remove old table versions, keeping the last "
              "keep_generations generations",
              _optimize_command),
    "tune": ("learn the fusion settings of this knowledge base from labeled or "
              "model-written questions and save them as its query defaults",
              _tune_command),
    "check": ("verify the knowledge base (manifest, generations, rows, vectors); exit 1 "
              "on problems",
              _check_command),
    "migrate": ("copy the knowledge base to another store (LanceDB <-> Milvus) "
              "without re-embedding",
              _migrate_command),
    "serve": ("serve the knowledge base(s) over HTTP: API, web page, MCP",
              _serve_command),
    "mcp": ("serve the knowledge base to an MCP client over stdio",
              _mcp_command),
    "sample": ("copy the bundled sample documents (Chinese and English) into a folder, docs/ by default",
               _sample_command),
    "demo": ("ingest the bundled sample knowledge base and answer its questions",
              _demo_command),
    "eval": ("evaluate retrieval configurations on a BEIR-format dataset folder",
              _eval_command),
    "compare": ("compare two configs of an eval --out file query by query",
              _compare_command),
}


class _Commands(argparse._SubParsersAction):
    """Subcommands whose arguments are added when one is chosen: the flags drawn from the
    settings need ``ragsift.config`` (pydantic), which ``ragsift --version`` and ``--help`` do
    not."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unfilled: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def fill(self, name: str) -> None:
        add = self.unfilled.pop(name, None)
        if add is not None:
            add(self.choices[name])

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.fill(values[0])
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """A mistaken argument told in one line, with where help is (not the usage of every flag
    first, which buries it)."""

    def error(self, message: str) -> NoReturn:
        message = re.sub("[\udc80-\udcff]", lambda m: f"\\x{ord(m[0]) - 0xdc00:02x}", _one_line(message))
        near = self._near(message)
        see = f"{near} See" if near else "; see"
        self.exit(2, f"{self.prog}: error: {message}{see} '{self.prog} --help'\n")

    def _near(self, message: str) -> str:
        """The nearest flag to each one not known, the nearest command or value to one not
        among the choices (``ragsift.names``: one helper for every face)."""
        from ragsift.names import did_you_mean

        hints: list[str] = []
        if m := re.match(r"unrecognized arguments: (.*)", message):
            flags = [o for a in self._all_actions() for o in a.option_strings if o.startswith("--")]
            hints = [did_you_mean(w.split("=", 1)[0], flags) for w in m[1].split() if w.startswith("-")]
        elif m := re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)", message):
            hints = [did_you_mean(m[1], re.findall(r"'([^']*)'", m[2]))]
        hints = [h for h in hints if h]
        return f"; {' '.join(hints)}" if hints else ""

    def _all_actions(self) -> list[argparse.Action]:
        """This parser's arguments and those of the commands whose arguments were added (the
        one chosen, with ``main``'s lazy parser)."""
        out = list(self._actions)
        for a in self._actions:
            if isinstance(a, _Commands):
                out += [x for name, p in a.choices.items() if name not in a.unfilled for x in p._actions]
        return out


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The parser; ``lazy``: a command's arguments are added when it is chosen (what ``main`` does)."""
    p = _Parser(prog="ragsift", description="Hybrid parent-child retrieval for RAG.")
    p.add_argument("--version", action="version", version=f"ragsift {__version__}")
    p.add_argument("--kb", help=f"knowledge-base directory (default: $RAGSIFT_KB or ./{DEFAULT_KB})")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log more: -v what each step does, -vv details (warnings such as a failed channel always)")
    sub = p.add_subparsers(dest="command", required=True, action=_Commands)
    assert isinstance(sub, _Commands)
    for name, (text, add) in COMMANDS.items():
        sub.add_parser(name, help=text)
        sub.unfilled[name] = add
        if not lazy:
            sub.fill(name)
    return p


#: how a positional argument is named in a message
POSITIONAL_NAMES = {"paths": "path", "doc_ids": "document id", "doc": "document", "dest": "destination",
                    "results": "results file", "a": "config", "b": "config"}
#: the arguments that name files or folders
PATH_ARGS = {"kb", "paths", "dest", "dataset", "results", "kb_root", "keys_file", "sync_dir", "qrels", "config_file",
             "work_dir", "out", "report_dir"}


def _check_utf8(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every argument is UTF-8 text: bytes that are not (a file name in another encoding, a
    stray byte) are told here, not found by whatever first writes them (a settings file, a store)."""
    sub = next(a for a in parser._actions if isinstance(a, _Commands))
    for action in [*parser._actions, *sub.choices[args.command]._actions]:
        value = getattr(args, action.dest, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str):
                flags = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
                check_text(item, flags[0] if flags else POSITIONAL_NAMES.get(action.dest, action.dest),
                           path=action.dest in PATH_ARGS)


def _one_line(message: str) -> str:
    return " ".join(message.split("\n")).replace("\r", " ")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(lazy=True)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=max(logging.DEBUG, logging.WARNING - 10 * args.verbose), stream=sys.stderr,
                        format="ragsift: %(levelname)s: %(message)s")
    for stream in (sys.stdout, sys.stderr):  # a name that is not UTF-8 is printed escaped, never an error
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        _check_utf8(parser, args)
        return args.func(args)
    except RagsiftError as e:
        print(f"ragsift: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:  # what the system refused (a disk full, a folder not writable), said as such
        print(f"ragsift: error: {_one_line(os_reason(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragsift: interrupted; the knowledge base keeps its last committed state", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
