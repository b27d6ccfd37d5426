"""What the command line, the demo and evaluation print: progress bars, ingest reports and
results as text. Plain functions over the value objects in ``ragsift.types``; nothing here
opens a knowledge base."""
from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


#: what an ingest counts in each of its phases
PHASE_UNITS = {"reading": "file", "splitting": "doc", "embedding": "entry", "writing": "commit", "copying": "doc"}


class PhaseProgress:
    """One progress line on stderr for every phase of an ingest: reading the files (OCR among
    them), splitting the documents, embedding the entries, writing the commit. A progress
    factory (``ProgressFactory``) that says so (``phases``): the ingest calls it at the start of
    each phase with the phase's total and name, and the one line (a tqdm bar) goes over to it."""

    phases = True

    def __init__(self, file: Any = None) -> None:
        self.file = file if file is not None else sys.stderr
        self.bar: Any = None

    def __call__(self, total: int | None, desc: str) -> PhaseProgress:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=PHASE_UNITS.get(desc, "item"), file=self.file,
                            dynamic_ncols=True)
        else:
            self.bar.set_description(desc, refresh=False)
            self.bar.unit = PHASE_UNITS.get(desc, "item")
            self.bar.reset(total=total)
        return self

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        """The end of a phase: the line stays for the next one (``done`` ends it)."""
        if self.bar is not None:
            self.bar.refresh()

    def done(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextmanager
def ingest_progress(enabled: bool) -> Iterator[PhaseProgress | None]:
    """The progress line of an ingest (``PhaseProgress``) for the block, ended after it; None
    when ``enabled`` is false."""
    bar = PhaseProgress() if enabled else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.done()


def report_lines(report: IngestReport) -> list[str]:
    """An ingest report as lines: counts, then one line per skipped file and its reason."""
    lines = [f"generation {report.generation}: {len(report.added)} added, {len(report.updated)} updated, "
             f"{len(report.unchanged)} unchanged, {len(report.skipped)} skipped; "
             f"{report.parents} parents, {report.children} children in {report.seconds:.1f}s "
             f"(embedding {report.embed_seconds:.1f}s)"
             + (f"; {report.checkpoints} generations committed (checkpoints)" if report.checkpoints > 1 else "")]
    if report.dry_run:
        lines[0] = (f"dry run (nothing written): {len(report.added)} to add, {len(report.updated)} to update, "
                    f"{len(report.unchanged)} unchanged, {len(report.renamed)} renamed, "
                    f"{len(report.deleted)} to delete, {len(report.skipped)} skipped")
    elif report.deleted or report.renamed:
        lines[0] += f"; {len(report.renamed)} renamed (not re-embedded), {len(report.deleted)} deleted"
    if report.ocr_pages:
        lines[0] += f"; {report.ocr_pages} pages read by OCR"
    for r in report.renamed:
        lines.append(f"  renamed {r['from']} -> {r['source']}")
    for d in report.deleted:
        lines.append(f"  deleted {d}")
    for s in report.skipped:
        lines.append(f"  skipped {s.path}: {s.reason}")
    return lines


def view_lines(view: dict[str, Any], show_text: bool = False) -> list[str]:
    """How a document was read (``KnowledgeBase.view``), for a terminal."""
    d = view["document"]
    pages = f", {view['pages']} pages" if view["pages"] else ""
    lines = [f"{d['doc_id']}  {d['source']}  ({d['format']})", f"title: {d['title']}",
             f"{d['parents']} sections, {d['children']} entries{pages}"]
    lines += scan_lines(view.get("scanned_pages") or [])
    if view["outline"]:
        lines.append("headings:")
        lines += ["  " * h["level"] + h["heading"] for h in view["outline"]]
    lines.append("sections:")
    for p in view["parents"]:
        where = ""
        if p["location"]:
            (k, v), = p["location"].items()
            where = f" [{k} {v if not isinstance(v, list) else f'{v[0]}-{v[1]}'}]"
        kinds: dict[str, int] = {}
        for e in p["entries"]:
            kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
        heading = " > ".join(p["heading_path"]) or "(no heading)"
        lines.append(f"  {p['parent_id']}{where} {heading}: {p['tokens']} tokens"
                     + (f", {p['tables']} table(s)" if p["tables"] else "")
                     + ", " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
        if show_text:
            lines += ["    " + ln for ln in p["text"].split("\n")]
    return lines


SCAN_STATES = {"ocr": "read by OCR", "rotated": "found turned {rotated} degrees counterclockwise, read upright by OCR",
               "empty": "read by OCR, no text found",
               "ocr_missing": "left out: OCR is not installed (ocr_missing; pip install 'ragsift[ocr]')"}


def scan_lines(pages: list[dict[str, Any]]) -> list[str]:
    """What became of each scanned page (``kb.files.scanned_pages``), a line a run of pages that
    fared alike: "pages 1-3: read by OCR", "page 4: found turned 90 degrees ...". """
    runs: list[tuple[int, int, str]] = []
    for p in pages:
        what = SCAN_STATES.get(p["state"], p["state"]).format(rotated=p.get("rotated", 0))
        if runs and runs[-1][1] == p["page"] - 1 and runs[-1][2] == what:
            runs[-1] = (runs[-1][0], p["page"], what)
        else:
            runs.append((p["page"], p["page"], what))
    if not runs:
        return []
    return ["scanned pages:"] + [f"  page {a}: {what}" if a == b else f"  pages {a}-{b}: {what}" for a, b, what in runs]


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
