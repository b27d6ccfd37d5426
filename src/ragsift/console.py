"""What the command line, the demo and evaluation print: progress bars, ingest reports and
results as text. Plain functions over the value objects in ``ragsift.types``; nothing here
opens a knowledge base."""
from __future__ import annotations

import bisect
import json
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ragsift.types import IngestReport, Passage, Result, Span, cite_location

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


#: what each phase has done, said of it once it is over
PHASE_DONE = {"reading": "read", "splitting": "split", "embedding": "embedded", "writing": "wrote",
              "copying": "copied"}


def _plural(unit: str, n: int) -> str:
    return unit if n == 1 else unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class PlainProgress:
    """Progress for a log, not a terminal (a pipe, CI, a service): every ``every`` seconds one
    line on stderr saying the phase, what it has done of how many, its rate and the time left,
    for example ``ingest 1:05 embedding: 240/1200 entries, 18.5 entries/s, about 0:52 left``.
    Nothing is printed by an ingest shorter than ``every``; a phase of no known total (a
    checkpointed ingest) has no time left. The same calls as ``PhaseProgress``; the lines come
    from a timer thread, so a long file (OCR, a conversion) does not silence them."""

    phases = True

    def __init__(self, every: float = 10.0, file: Any = None, what: str = "ingest") -> None:
        import threading

        self.every, self.what = every, what
        self.file = file if file is not None else sys.stderr
        self.started = time.monotonic()
        self.desc = ""
        self.total: int | None = None
        self.n = 0
        self.phase_started = self.started
        self.before: dict[str, int] = {}  # what the phases before this one did
        self.starts: dict[str, float] = {}  # when each phase first started (its rate is counted from then)
        self._stop = threading.Event()
        self._thread: Any = None
        self._threading = threading

    def __call__(self, total: int | None, desc: str) -> PlainProgress:
        if desc != self.desc:  # a new phase (a checkpointed ingest goes back to embedding: its count goes on)
            if self.desc:
                self.before[self.desc] = self.n
            self.n = 0
            self.phase_started = self.starts.setdefault(desc, time.monotonic())
        self.desc, self.total = desc, total
        if self._thread is None:
            self._thread = self._threading.Thread(target=self._tick, name="ragsift-progress", daemon=True)
            self._thread.start()
        return self

    def update(self, n: int) -> None:
        self.n += n

    def close(self) -> None:
        """The end of a phase (the next one, or ``done``, follows)."""

    def done(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def line(self) -> str:
        """The line this moment gives."""
        now = time.monotonic()
        unit = PHASE_UNITS.get(self.desc, "item")
        done = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        past = [f"{PHASE_DONE.get(d, d)} {n} {_plural(PHASE_UNITS.get(d, 'item'), n)}"
                for d, n in self.before.items() if d != self.desc]
        out = f"{self.what} {_clock(now - self.started)} " + "".join(p + "; " for p in past) \
            + f"{self.desc}: {done} {_plural(unit, 2)}"
        spent = now - self.phase_started
        if self.n and spent > 0:
            rate = self.n / spent
            out += f", {rate:.3g} {_plural(unit, 2)}/s"
            if self.total is not None and self.total >= self.n:
                out += f", about {_clock((self.total - self.n) / rate)} left"
        return out

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            if self.desc:
                print(self.line(), file=self.file, flush=True)


@contextmanager
def ingest_progress(enabled: bool | None, every: float = 10.0,
                    what: str = "ingest") -> Iterator[PhaseProgress | PlainProgress | None]:
    """The progress of an ingest for the block, ended after it: a line on a terminal
    (``PhaseProgress``, ``enabled`` true), a line every ``every`` seconds for a log (``PlainProgress``,
    ``enabled`` None), nothing when ``enabled`` is false."""
    bar = PhaseProgress() if enabled else PlainProgress(every, what=what) if enabled is None else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.done()


def report_lines(report: IngestReport) -> list[str]:
    """An ingest report as lines (``IngestReport.lines``): counts, then every document renamed,
    deleted or skipped by its source (in a dry run, those to add and update too)."""
    return report.lines()


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


def unit_name(unit: dict[str, Any] | None, unit_id: str) -> str:
    """A section the trace names (``Trace.units``) as the web page names it: ``source › heading
    path (p. 3)``; its id when the trace did not name it."""
    if not unit:
        return unit_id
    name = unit["source"] + (f" › {' > '.join(unit['heading_path'])}" if unit.get("heading_path") else "")
    loc = unit.get("location")
    if loc:
        (kind, v), = loc.items()
        first, last = (v[0], v[1]) if isinstance(v, list) else (v, v)
        name += f" ({cite_location((kind.removesuffix('s') if isinstance(v, list) else kind, first, last))})"
    return name


def matched_places(text: str, spans: Sequence[Span]) -> str:
    """Where in a passage its matched spans are, as a reader counts: by line when the passage
    has several lines as printed (a table, a list, paragraphs), else by sentence; each with the
    channels that found it ("lines 3-5 (dense+bm25); line 9 (bm25)", "sentences 2-3 (dense)")."""
    from ragsift.text.sentences import sentence_spans

    if "\n" in text.strip():
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        unit = "line"
    else:
        starts = [s for s, _ in sentence_spans(text)] or [0]
        unit = "sentence"
    out = []
    for sp in spans:
        first = max(1, bisect.bisect_right(starts, sp.start))
        last = max(first, bisect.bisect_left(starts, sp.end))
        where = f"{unit} {first}" if first == last else f"{unit}s {first}-{last}"
        out.append(f"{where} ({'+'.join(sp.channels)})")
    return "; ".join(out)


def match_note(p: Passage) -> str:
    """How well a passage matches its question, as a result line says it: "similarity 0.873, terms 67%, "."""
    parts = ([f"similarity {p.similarity:.3f}"] if p.similarity is not None else []) + (
        [f"terms {p.term_match:.0%}"] if p.term_match is not None else [])
    return "".join(f"{x}, " for x in parts)


def format_result(result: Result, show_trace: bool = False, width: int = 100, max_chars: int = 0) -> str:
    """Passages (whole, or cut at ``max_chars``) and a summary of the trace, for a terminal."""
    out = []
    if result.no_good_match:
        out.append(f"no good match: {result.match.reason}"
                   + (" (the passages below are weak)" if result.passages else ""))
        out.append("")
    elif not result.passages:
        out.append("no passages found")
    for p in result.passages:
        head = f"[{p.rank}] {p.source}"
        if p.heading_path:
            head += f" › {' > '.join(p.heading_path)}"
        if p.location:
            head += f" ({cite_location(p.location)})"
        out.append(f"{head}  ({match_note(p)}score {p.score:.4f}, {p.tokens} tokens"
                   f"{', truncated' if p.truncated else ''})")
        body = p.text if not max_chars or len(p.text) <= max_chars else p.text[:max_chars] + " ..."
        out.append(textwrap.indent(body, "    "))
        if p.matched:
            out.append(f"    matched: {matched_places(p.text, p.matched[:6])}")
        out.append("")
    t = result.trace
    fusion = ", ".join(f"{k}={v}" for k, v in t.fusion.items())
    out.append(f"fusion: {fusion}; total {t.timings_ms['total']:.1f} ms; generation {t.generation}")
    for c in t.channels:
        status = f"error: {c.error}" if c.error else f"{len(c.hits)} parents from {c.raw_children} children"
        out.append(f"  channel {c.name}: {status} in {c.elapsed_ms:.1f} ms")
        if show_trace:
            for h in c.hits[:5]:
                out.append(f"    #{h.rank} {unit_name(t.units.get(h.parent_id), h.parent_id)}  raw score {h.score:.4f}")
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
