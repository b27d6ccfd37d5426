"""What the command line, the demo and evaluation print: progress bars, ingest reports and
results as text. Plain functions over the value objects in ``ragsift.types``; nothing here
opens a knowledge base."""
from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from ragsift.types import IngestReport, Result

# (total, description) -> object with update(n), close(); total None: not known (a checkpointed ingest)
ProgressFactory = Callable[[int | None, str], Any]


def progress_factory(enabled: bool, unit: str = "chunk") -> ProgressFactory | None:
    """A tqdm progress bar on stderr per task, or None when ``enabled`` is false."""
    if not enabled:
        return None
    from tqdm import tqdm

    def make(total: int | None, desc: str):
        return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)
    return make


def report_lines(report: IngestReport) -> list[str]:
    """An ingest report as lines: counts, then one line per skipped file and its reason."""
    lines = [f"generation {report.generation}: {len(report.added)} added, {len(report.updated)} updated, "
             f"{len(report.unchanged)} unchanged, {len(report.skipped)} skipped; "
             f"{report.parents} parents, {report.children} children in {report.seconds:.1f}s "
             f"(embedding {report.embed_seconds:.1f}s)"
             + (f"; {report.checkpoints} generations committed (checkpoints)" if report.checkpoints > 1 else "")]
    for s in report.skipped:
        lines.append(f"  skipped {s.path}: {s.reason}")
    return lines


def print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def format_result(result: Result, show_trace: bool = False, width: int = 100, max_chars: int = 0) -> str:
    """Passages (whole, or cut at ``max_chars``) and a summary of the trace, for a terminal."""
    out = []
    if not result.passages:
        out.append("no passages found")
    for p in result.passages:
        head = f"[{p.rank}] {p.source}"
        if p.heading_path:
            head += f" :: {' > '.join(p.heading_path)}"
        out.append(f"{head}  (score {p.score:.4f}, {p.tokens} tokens{', truncated' if p.truncated else ''})")
        body = p.text if not max_chars or len(p.text) <= max_chars else p.text[:max_chars] + " ..."
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
            out.append(f"  HyDE hypothesis {i + 1} ({hyde['mode']}): "
                       + textwrap.shorten(h, width if show_trace else 200))
        for e in hyde["errors"]:
            out.append(f"  HyDE error: {e}")
    mq = t.transforms.get("multi_query")
    if mq:
        out.append(f"  multi-query: {mq['queries']}" + (f" (error: {mq['error']})" if mq["error"] else ""))
    if t.rerank:
        r = t.rerank
        out.append(f"  rerank {r['model']}: judged {r['judged']} of the top {r['top_n']}"
                   + (f" (error: {r['error']})" if r["error"] else ""))
    if t.multihop:
        m = t.multihop
        out.append(f"  multi-hop ({m['mode']}): {len(m['hops'])} rounds, stopped: {m['stop']}"
                   + (f" ({m['error']})" if m["error"] else ""))
    return "\n".join(out)
