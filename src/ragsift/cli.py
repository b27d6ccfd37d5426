"""The ``ragsift`` command line: ingest, query, stats, list, delete, demo, eval.

Errors meant for users print as one line (``ragsift: error: ...``) with exit status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from ragsift.errors import RagsiftError

DEFAULT_KB = "ragsift-kb"


def _progress_factory(enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    def make(total: int, desc: str):
        return tqdm(total=total, desc=desc, unit="chunk", file=sys.stderr, dynamic_ncols=True)
    return make


def _kb_path(args: argparse.Namespace) -> Path:
    return Path(args.kb or os.environ.get("RAGSIFT_KB") or DEFAULT_KB)


def _open(args: argparse.Namespace, create: bool = False, **overrides: Any):
    from ragsift.kb import KnowledgeBase

    return KnowledgeBase.open(_kb_path(args), create=create, **overrides)


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def _report_lines(report) -> list[str]:
    lines = [f"generation {report.generation}: {len(report.added)} added, {len(report.updated)} updated, "
             f"{len(report.unchanged)} unchanged, {len(report.skipped)} skipped; "
             f"{report.parents} parents, {report.children} children in {report.seconds:.1f}s "
             f"(embedding {report.embed_seconds:.1f}s)"]
    for s in report.skipped:
        lines.append(f"  skipped {s.path}: {s.reason}")
    return lines


# ---------------------------------------------------------------- commands
def _store_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out = {"store": args.store, "store_uri": args.store_uri, "store_name": args.store_name,
           "store_index": args.store_index}
    if args.store_uri and not args.store:
        out["store"] = "milvus"
    return {k: v for k, v in out.items() if v}


def cmd_ingest(args: argparse.Namespace) -> int:
    index = {"small_index": args.small_index.split(",") if args.small_index else None,
             "extra_embedders": args.extra_embedders.split(",") if args.extra_embedders else None,
             "sparse_encoder": args.sparse_encoder}
    kb = _open(args, create=True, embedder=args.embedder, **_store_overrides(args), **index)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    report = kb.ingest(args.paths, prefix=args.prefix, progress=_progress_factory(progress))
    if args.json:
        _print_json(report.to_dict())
    else:
        print("\n".join(_report_lines(report)))
    return 0


def _parse_weights(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    out = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise RagsiftError(f"--weights takes name=number pairs like dense=0.6,bm25=0.4; got {part!r}") from None
        if not sep:
            raise RagsiftError(f"--weights takes name=number pairs like dense=0.6,bm25=0.4; got {part!r}")
    return out


def _query_overrides(args: argparse.Namespace, kb_channels: tuple[str, ...]) -> dict[str, Any]:
    channels = args.channels.split(",") if args.channels else None
    extra = (["hyde", "hyde_bm25"] if args.hyde else []) + (["multi_query"] if args.multi_query else [])
    if extra:
        channels = list(dict.fromkeys([*(channels or kb_channels), *extra]))
    return {"channels": channels, "fusion": args.fusion,
            "rrf_k": args.rrf_k, "weights": _parse_weights(args.weights),
            "normalization": args.normalization, "max_parents": args.max_parents, "unit": args.unit,
            "token_budget": args.budget, "llm": args.llm, "llm_base_url": args.llm_base_url,
            "hyde_mode": args.hyde_mode, "hyde_samples": args.hyde_samples,
            "rewrite": True if args.rewrite else None, "multi_query_n": args.multi_query,
            "rerank": args.rerank, "rerank_top_n": args.rerank_top_n, "channel_timeout_s": args.timeout,
            "index_kinds": args.index_kinds.split(",") if args.index_kinds else None,
            "window_sentences": args.window, "merge_threshold": args.merge_threshold}


def format_result(result, show_trace: bool = False, width: int = 100) -> str:
    out = []
    if not result.passages:
        out.append("no passages found")
    for p in result.passages:
        head = f"[{p.rank}] {p.source}"
        if p.heading_path:
            head += f" :: {' > '.join(p.heading_path)}"
        out.append(f"{head}  (score {p.score:.4f}, {p.tokens} tokens{', truncated' if p.truncated else ''})")
        body = p.text if len(p.text) <= 600 else p.text[:600] + " ..."
        out.append(textwrap.indent(body, "    "))
        spans = ", ".join(f"{s.start}-{s.end} via {'+'.join(s.channels)}" for s in p.matched[:6])
        out.append(f"    matched children: {spans}")
        out.append("")
    t = result.trace
    fusion = ", ".join(f"{k}={v}" for k, v in t.fusion.items())
    out.append(f"fusion: {fusion}; total {t.timings_ms['total']:.1f} ms; generation {t.generation}")
    for c in t.channels:
        status = f"error: {c.error}" if c.error else f"{len(c.hits)} parents from {c.raw_children} children"
        out.append(f"  channel {c.name}: {status} in {c.elapsed_ms:.1f} ms")
        if show_trace:
            for h in c.hits[:5]:
                out.append(f"    #{h.rank} {h.parent_id} raw score {h.score:.4f}")
    rw = t.transforms.get("rewrite")
    if rw:
        out.append(f"  rewrite: {rw['rewritten']!r}" if rw["rewritten"] else
                   f"  rewrite failed ({rw['error']}); searched the question as asked")
    hyde = t.transforms.get("hyde")
    if hyde:
        for i, h in enumerate(hyde["hypotheses"]):
            out.append(f"  HyDE hypothesis {i + 1} ({hyde['mode']}): " + textwrap.shorten(h, width if show_trace else 200))
        for e in hyde["errors"]:
            out.append(f"  HyDE error: {e}")
    mq = t.transforms.get("multi_query")
    if mq:
        out.append(f"  multi-query: {mq['queries']}" + (f" (error: {mq['error']})" if mq["error"] else ""))
    if t.rerank:
        r = t.rerank
        out.append(f"  rerank {r['model']}: judged {r['judged']} of the top {r['top_n']}"
                   + (f" (error: {r['error']})" if r["error"] else ""))
    return "\n".join(out)


def cmd_query(args: argparse.Namespace) -> int:
    kb = _open(args)
    flt = None
    if args.filter:
        try:
            flt = json.loads(args.filter)
        except json.JSONDecodeError as e:
            raise RagsiftError(f"--filter is not valid JSON: {e.msg} at column {e.colno}") from None
    result = kb.query(args.question, filter=flt, **_query_overrides(args, kb.settings.channels))
    if args.json:
        _print_json(result.to_dict())
    else:
        print(format_result(result, show_trace=args.trace))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    st = _open(args).stats()
    if args.json:
        _print_json(st)
    else:
        for k in ("path", "backend", "uri", "collections", "generation", "documents", "parents", "children",
                  "dim", "disk_bytes"):
            if k in st:
                print(f"{k:12} {st[k]}")
        print(f"{'embedder':12} {st['settings']['embedder']}")
        print(f"{'fields':12} {', '.join(st['fields'])}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    docs = _open(args).documents()
    rows = sorted(docs.values(), key=lambda d: (d.source, d.doc_id))
    if args.json:
        _print_json([d.__dict__ for d in rows])
    else:
        for d in rows:
            print(f"{d.doc_id}\t{d.source}\t{d.parents} parents\t{d.children} children\t{d.title}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    deleted = _open(args).delete(args.doc_ids, source=args.source)
    print(f"deleted {len(deleted)} document(s): {', '.join(deleted)}")
    return 0


def cmd_copy(args: argparse.Namespace) -> int:
    kb = _open(args)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    dest = kb.copy_to(args.dest, progress=_progress_factory(progress), **_store_overrides(args))
    st = dest.stats()
    where = f"Milvus {st['uri']} (collections {st['collections']}_*)" if st["backend"] == "milvus" else st["path"]
    print(f"copied {st['documents']} documents, {st['parents']} parents, {st['children']} children "
          f"to {args.dest} on {where}; no re-embedding")
    return 0


def _add_store_flags(parser: argparse.ArgumentParser, what: str) -> None:
    g = parser.add_argument_group(f"store ({what})")
    g.add_argument("--store", choices=["lancedb", "milvus"], help="lancedb (embedded, default) or milvus")
    g.add_argument("--store-uri", help="Milvus URI, e.g. http://127.0.0.1:19530 (implies --store milvus); "
                                       "credentials from $RAGSIFT_MILVUS_TOKEN or $MILVUS_TOKEN")
    g.add_argument("--store-name", help="Milvus collection prefix (default: from the directory name)")
    g.add_argument("--store-index", help="Milvus vector index type: FLAT (exact, default), HNSW, AUTOINDEX ...")


def cmd_demo(args: argparse.Namespace) -> int:
    from ragsift.demo import run_demo

    return run_demo(_kb_path(args) if args.kb else None, progress=sys.stderr.isatty())


def cmd_eval(args: argparse.Namespace) -> int:
    from ragsift.eval.runner import run_eval_cli

    return run_eval_cli(args)


def cmd_compare(args: argparse.Namespace) -> int:
    from ragsift.eval.runner import run_compare_cli

    return run_compare_cli(args)


# ---------------------------------------------------------------- parser
def _add_progress_flags(parser: argparse.ArgumentParser) -> None:
    """--progress / --no-progress; by default a progress bar is shown on a terminal only."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None)
    g.add_argument("--no-progress", dest="progress", action="store_false")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragsift", description="Hybrid parent-child retrieval for RAG.")
    p.add_argument("--kb", help=f"knowledge-base directory (default: $RAGSIFT_KB or ./{DEFAULT_KB})")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("ingest", help="ingest files or directories (md, txt, html, pdf, jsonl)")
    s.add_argument("paths", nargs="+")
    s.add_argument("--embedder", help="embedder for a NEW knowledge base: e5-small (default, zh+en), "
                                      "minilm (English, faster), st:<model>")
    s.add_argument("--prefix", default="", help="prefix for the document sources (namespaces)")
    s.add_argument("--small-index", help="for a NEW knowledge base, comma-separated: chunks (always), sentences, "
                                         "keysentences, summaries, raptor, keywords, entities")
    s.add_argument("--extra-embedders", help="for a NEW knowledge base: more embedders, comma-separated "
                                             "(channel dense:<name> each)")
    s.add_argument("--sparse-encoder", help="for a NEW knowledge base: e5-sparse, splade-tiny or splade:<model> "
                                            "(channel sparse)")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_store_flags(s, "for a NEW knowledge base")
    _add_progress_flags(s)
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("query", help="ask a question")
    s.add_argument("question")
    s.add_argument("--json", action="store_true", help="print passages and trace as JSON")
    s.add_argument("--trace", action="store_true", help="show per-channel hits")
    s.add_argument("--filter", help='metadata filter as JSON, e.g. \'{"source": "manual.md"}\'')
    s.add_argument("--channels", help="comma-separated: dense,bm25")
    s.add_argument("--fusion", choices=["rrf", "weighted"])
    s.add_argument("--rrf-k", type=int)
    s.add_argument("--weights", help="for weighted fusion, e.g. dense=0.6,bm25=0.4")
    s.add_argument("--normalization", choices=["minmax", "zscore", "none"])
    s.add_argument("--unit", choices=["parent", "child", "document", "window", "auto"],
                   help="what comes back: the parent section (default), the child chunk, the whole document, "
                        "a sentence window, auto-merged units")
    s.add_argument("--index-kinds", help="small-index entries searched, comma-separated: chunk (default), sentence, "
                                         "keys, summary, raptor, keywords, entities")
    s.add_argument("--window", type=int, help="sentences on each side for --unit window")
    s.add_argument("--merge-threshold", type=float, help="share of chunks found that merges a section (--unit auto)")
    s.add_argument("--max-parents", type=int, help="most passages returned")
    s.add_argument("--budget", type=int, help="token budget for the returned passages")
    s.add_argument("--timeout", type=float, help="seconds each channel may take (channel_timeout_s)")
    g = s.add_argument_group("language model (HyDE, rewriting, multi-query, LLM-judge reranking)")
    g.add_argument("--llm", help="local:qwen2.5-coder-1.5b (offline), local:FILE.gguf or openai:MODEL")
    g.add_argument("--llm-base-url", help="for openai:MODEL (else RAGSIFT_LLM_BASE_URL / OPENAI_BASE_URL); "
                   "the key comes from RAGSIFT_LLM_API_KEY or OPENAI_API_KEY")
    g.add_argument("--hyde", action="store_true", help="add the HyDE channels (dense and BM25 over a hypothesis)")
    g.add_argument("--hyde-mode", choices=["hypothesis", "query+hypothesis", "mean"])
    g.add_argument("--hyde-samples", type=int, help="hypotheses averaged in mean mode")
    g.add_argument("--rewrite", action="store_true", help="search an LLM rewrite of the question")
    g.add_argument("--multi-query", type=int, metavar="N", help="add a channel that fuses N LLM-written queries")
    g.add_argument("--rerank", help="llm-judge or cross-encoder:MODEL")
    g.add_argument("--rerank-top-n", type=int)
    s.set_defaults(func=cmd_query)

    s = sub.add_parser("stats", help="show counts, generation and settings")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_stats)

    s = sub.add_parser("list", help="list documents")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("delete", help="delete documents with all their parents and children")
    s.add_argument("doc_ids", nargs="*")
    s.add_argument("--source", help="delete the document(s) ingested from this source path")
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("migrate", help="copy the knowledge base to another store (LanceDB <-> Milvus) "
                                       "without re-embedding")
    s.add_argument("dest", help="directory for the copy's settings (and its data, on LanceDB)")
    _add_store_flags(s, "of the copy")
    _add_progress_flags(s)
    s.set_defaults(func=cmd_copy)

    s = sub.add_parser("demo", help="ingest the bundled sample knowledge base and answer its questions")
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("eval", help="evaluate retrieval configurations on a BEIR-format dataset folder")
    s.add_argument("dataset", help="folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    s.add_argument("--configs", default="bm25,dense,hybrid,hybrid-weighted",
                   help="comma-separated names: bm25, dense, hybrid (RRF), hybrid-weighted, or names "
                        "from --config-file")
    s.add_argument("--config-file", help='JSON: {"name": {query settings}} for more configurations')
    s.add_argument("--baseline", help="config the others are tested against (default: the first)")
    s.add_argument("--embedder", default="minilm")
    s.add_argument("--split", default="test")
    s.add_argument("--max-queries", type=int)
    s.add_argument("--skip-queries", type=int, default=0,
                   help="leave out the first N judged queries (e.g. to tune on one part and test on another)")
    s.add_argument("--work-dir", default=".cache/eval", help="where evaluation knowledge bases are kept")
    s.add_argument("--out", help="write metrics, runs and per-query results as JSON here")
    s.add_argument("--report-dir", help="write <dataset>.md, <dataset>.png and per-query JSONL here")
    _add_progress_flags(s)
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("compare", help="compare two configs of an eval --out file query by query")
    s.add_argument("results")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--metrics", help="comma-separated (default: all in the file)")
    s.set_defaults(func=cmd_compare)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RagsiftError as e:
        print(f"ragsift: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragsift: interrupted; the knowledge base keeps its last committed state", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
