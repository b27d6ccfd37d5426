"""A knowledge base's contents: ingest, query, stats, list, show, delete (each command's function
and the parser function that adds its arguments)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ragsift.cli.args import (
    FOLDER_FLAGS,
    INDEX_FLAGS,
    INGEST_FLAGS,
    LLM_FLAGS,
    QUERY_FLAGS,
    RETRIEVAL_FLAGS,
    SHORT_FLAGS,
    _add_progress_flags,
    _add_store_flags,
    _given,
    _kb_path,
    _open,
    _progress,
    _setting,
    _store_overrides,
    _whole,
    check_path,
)
from ragsift.errors import InputError, NotFound


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

