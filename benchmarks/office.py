"""Office files read whole (issue 52): DOCX, PPTX and XLSX that nobody here wrote, read by ragsift
and by markitdown, scored against references made independently of both.

    # the files (kept outside the repository, never committed): docling's test data with its
    # reference Markdown, and Apache POI's OOXML test files (no references: a robustness set)
    #   /work/data-ext/docling-office/tests/data/{docx,pptx,xlsx}/{sources,groundtruth}
    #   /work/data-ext/poi-ooxml/test-data/...
    .venv/bin/python benchmarks/office.py --docling /work/data-ext/docling-office/tests/data \\
        --robust /work/data-ext/poi-ooxml --markitdown-python /work/venv-markitdown/bin/python \\
        --before-src /tmp/old-wt-d/src

1. **Scored set**: docling's (docling-project/docling, MIT) tests/data/{docx,pptx,xlsx}/sources,
   each with the Markdown docling wrote of it, checked by its maintainers
   (groundtruth/*.md). The references are docling's reading, not ragsift's nor markitdown's.
2. **Read** by ragsift's loaders (``load_file``, default limits), before and after a change
   (``--before-src``: an older source tree, read in a process of its own), and by markitdown
   (``benchmarks/readers.py markitdown FILE`` in its own venv: ``pip install
   'markitdown[docx,pptx,xlsx]==0.1.9'``).
3. **Scored**, the same way for every reader:
   - text F1: the characters of the output against the reference's, as multisets (reading.py's
     ``char_f1``), after the same normalization of both: HTML comments (docling's ``<!-- image
     -->``), Markdown marks and whitespace left out; LaTeX (docling writes equations as LaTeX) read
     as text: a symbol command as its character (``\\pi`` as π), other commands, braces, ``$``,
     ``^`` and ``_`` left out. Per file, then the mean of a format's files; a file a reader refuses
     scores 0.
   - table cells: the share of the reference tables' cells found in the best-matching row of any
     table in the output, pooled over a format's cells; a cell compared by its letters and digits
     (normalized as above, case, spacing, punctuation and markup left out), cells without any left
     out.
4. **Robustness**: every OOXML file of Apache POI's test-data (Apache-2.0; no references): read or
   refused with a one-line reason, never a crash (an exception out of ``load_file``), and how long
   the slowest took.

Writes benchmarks/results/office.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness import multiset_f1, write_result

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("docx", "pptx", "xlsx")
SUFFIXES = {".docx": "docx", ".docm": "docx", ".pptx": "pptx", ".pptm": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx"}

MARKS = re.compile(r"[#|*`>\-]|^\s*\d+\.\s", re.M)
COMMENT = re.compile(r"<!--.*?-->", re.S)
PAGE_MARK = re.compile("\ue000[^\ue001]*\ue001")
LATEX_SYMBOLS = {
    "pi": "π", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ",
    "lambda": "λ", "mu": "μ", "sigma": "σ", "omega": "ω", "phi": "φ", "Delta": "Δ", "Sigma": "Σ",
    "Omega": "Ω", "infty": "∞", "times": "×", "pm": "±", "mp": "∓", "cdot": "⋅", "div": "÷", "leq": "≤",
    "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sum": "∑", "prod": "∏",
    "int": "∫", "iint": "∬", "iiint": "∭", "oint": "∮", "oiint": "∯", "oiiint": "∰", "partial": "∂",
    "nabla": "∇", "sqrt": "√", "cap": "∩", "cup": "∪", "bigcup": "⋃", "bigcap": "⋂", "bigwedge": "⋀",
    "bigvee": "⋁", "in": "∈", "rightarrow": "→", "to": "→", "leftarrow": "←", "ldots": "…",
    "cdots": "⋯", "textellipsis": "…",
}
LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)")


def normal(text: str) -> str:
    """What is compared: the text without comments, page marks, LaTeX markup and Markdown marks."""
    text = PAGE_MARK.sub("", COMMENT.sub("", text))
    text = LATEX_COMMAND.sub(lambda m: LATEX_SYMBOLS.get(m.group(1), ""), text)
    text = re.sub(r"[{}$^_]", "", text)
    return text


def char_f1(reference: str, output: str) -> float:
    """reading.py's text F1 on the normalized texts."""
    a = Counter(re.sub(r"\s+", "", MARKS.sub("", normal(reference))))
    b = Counter(re.sub(r"\s+", "", MARKS.sub("", normal(output))))
    return multiset_f1(a, b)


def md_tables(markdown: str) -> list[list[list[str]]]:
    """The pipe tables of a Markdown text, each a list of rows of cells (rule rows left out)."""
    out: list[list[list[str]]] = []
    cur: list[list[str]] = []
    for line in markdown.split("\n"):
        s = line.strip()
        if s.startswith("|") and s.endswith("|") and len(s) > 1:
            if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", s):
                continue
            cur.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s[1:-1])])
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _cell(c: str) -> str:
    """A cell as compared: its letters and digits only (markup, spacing and punctuation left out)."""
    return "".join(ch for ch in normal(c).lower() if ch.isalnum())


def cells(reference: str, output: str) -> tuple[int, int]:
    """(cells of the reference's tables found in the best-matching output row, cells)."""
    rows = [{_cell(c) for c in r} for t in md_tables(output) for r in t]
    found = total = 0
    for t in md_tables(reference):
        for r in t:
            want = [x for x in (_cell(c) for c in r) if x]
            total += len(want)
            found += max((sum(1 for c in want if c in row) for row in rows), default=0)
    return found, total


# ------------------------------------------------------------------ reading
def read_ragsift(files: list[str], src: str | None) -> dict[str, dict[str, Any]]:
    """Each file read by ragsift's loaders from the source tree ``src`` (this one when None), in a
    process of its own: {file: {"text", "skipped", "seconds", "crash"}}."""
    env = dict(os.environ, PYTHONPATH=src or str(ROOT / "src"))
    proc = subprocess.run([sys.executable, __file__, "--read"], input=json.dumps(files), env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"reading failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def _read_here() -> None:
    from ragsift.ingest.loaders import LoadLimits, load_file

    out: dict[str, dict[str, Any]] = {}
    for f in json.loads(sys.stdin.read()):
        t = time.perf_counter()
        try:
            res = load_file(Path(f), Path(f).name, LoadLimits())
            text = "\n\n".join(d.text for d in res.documents)
            reason = "; ".join(s.reason for s in res.skipped)
            out[f] = {"text": text, "skipped": reason, "crash": ""}
        except Exception as e:  # a crash: what load_file must never do
            out[f] = {"text": "", "skipped": "", "crash": f"{type(e).__name__}: {e}"[:300]}
        out[f]["seconds"] = round(time.perf_counter() - t, 4)
    json.dump(out, sys.stdout)


def read_markitdown(files: list[str], python: str) -> dict[str, dict[str, Any]]:
    out = {}
    for f in files:
        proc = subprocess.run([python, str(ROOT / "benchmarks" / "readers.py"), "markitdown", f],
                              capture_output=True, text=True, check=False, timeout=600)
        try:
            r = json.loads(proc.stdout)
        except json.JSONDecodeError:
            r = {"ok": False, "error": proc.stderr[-300:], "text": "", "seconds": 0.0}
        out[f] = {"text": r.get("text") or "", "skipped": "" if r.get("ok") else (r.get("error") or "")[:300],
                  "seconds": r.get("seconds", 0.0), "crash": ""}
    return out


# ------------------------------------------------------------------ scoring
def scored_set(root: Path) -> list[tuple[str, str, str]]:
    """(format, source file, reference Markdown) of docling's test data."""
    out = []
    for fmt in FORMATS:
        for src in sorted((root / fmt / "sources").iterdir()):
            ref = root / fmt / "groundtruth" / (src.name + ".md")
            if ref.is_file() and src.suffix.lower() in SUFFIXES:
                out.append((fmt, str(src), ref.read_text(encoding="utf-8")))
    return out


def score(items: list[tuple[str, str, str]], read: dict[str, dict[str, Any]]) -> dict[str, Any]:
    per_format: dict[str, Any] = {}
    files: dict[str, Any] = {}
    for fmt in FORMATS:
        f1s, found, total, refused = [], 0, 0, 0
        for ff, src, ref in items:
            if ff != fmt:
                continue
            r = read[src]
            text = r["text"]
            f1 = char_f1(ref, text) if text else 0.0
            fd, tt = cells(ref, text)
            f1s.append(f1)
            found += fd
            total += tt
            refused += not text
            files[Path(src).name] = {"text_f1": round(f1, 4), "cells": [fd, tt],
                                     "refused": r["skipped"] or r["crash"] if not text else ""}
        per_format[fmt] = {"files": len(f1s), "text_f1": round(statistics.mean(f1s), 4) if f1s else None,
                           "table_cells": round(found / total, 4) if total else None, "cells": [found, total],
                           "refused": refused}
    return {"formats": per_format, "files": files}


def robustness(files: list[str], read: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fmt in FORMATS:
        mine = [f for f in files if SUFFIXES[Path(f).suffix.lower()] == fmt]
        rs = [read[f] for f in mine]
        slow = max(mine, key=lambda f: read[f]["seconds"], default=None)
        out[fmt] = {
            "files": len(mine),
            "read": sum(1 for r in rs if r["text"]),
            "refused": sum(1 for r in rs if not r["text"] and not r["crash"]),
            "crashes": sum(1 for r in rs if r["crash"]),
            "unexplained": sum(1 for r in rs if not r["text"] and not r["crash"] and not r["skipped"]),
            "seconds_total": round(sum(r["seconds"] for r in rs), 2),
            "slowest": [Path(slow).name, read[slow]["seconds"]] if slow else None,
        }
    out["refusals"] = {Path(f).name: read[f]["skipped"] or read[f]["crash"] for f in files if not read[f]["text"]}
    return out


def main() -> None:
    if "--read" in sys.argv:
        _read_here()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--docling", required=True, help="docling's tests/data (docx, pptx, xlsx with groundtruth)")
    ap.add_argument("--robust", help="a folder of OOXML files without references (Apache POI's test-data)")
    ap.add_argument("--markitdown-python", help="the python of a venv with markitdown[docx,pptx,xlsx]")
    ap.add_argument("--before-src", help="an older ragsift source tree (its src/), read beside this one")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "office.json"))
    args = ap.parse_args()
    items = scored_set(Path(args.docling))
    files = [i[1] for i in items]
    readers: dict[str, dict[str, dict[str, Any]]] = {}
    if args.before_src:
        readers["ragsift before"] = read_ragsift(files, args.before_src)
    readers["ragsift"] = read_ragsift(files, None)
    if args.markitdown_python:
        readers["markitdown"] = read_markitdown(files, args.markitdown_python)
    result: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True, check=False).stdout.strip(),
        "text_f1": "characters as multisets after normalization (see the docstring), mean per file",
        "table_cells": "reference cells found in the best-matching output row, pooled per format",
        "scored": {name: score(items, read) for name, read in readers.items()},
    }
    print(f"{'reader':16} " + " ".join(f"{fmt + ' F1':>9} {fmt + ' cells':>11}" for fmt in FORMATS))
    for name, s in result["scored"].items():
        row = [f"{name:16}"]
        for fmt in FORMATS:
            m = s["formats"][fmt]
            row.append(f"{m['text_f1'] if m['text_f1'] is not None else '-':>9} "
                       f"{m['table_cells'] if m['table_cells'] is not None else '-':>11}")
        print(" ".join(str(x) for x in row))
    if args.robust:
        rfiles = sorted(str(p) for p in Path(args.robust).rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        result["robustness"] = {}
        if args.before_src:
            result["robustness"]["ragsift before"] = robustness(rfiles, read_ragsift(rfiles, args.before_src))
        result["robustness"]["ragsift"] = robustness(rfiles, read_ragsift(rfiles, None))
        for name, r in result["robustness"].items():
            print(name, {fmt: {k: v for k, v in r[fmt].items()} for fmt in FORMATS})
    write_result(args.out, result)


if __name__ == "__main__":
    main()
