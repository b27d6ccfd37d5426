"""Reading real documents (issue 52): PDFs nobody here wrote, scored against a reference that no
reader compared here produced: the HTML edition of the same manual, published beside the PDF.

    .venv/bin/python benchmarks/real_reading.py --work-dir /work/data-ext/real-reading \
        [--anchor markitdown=/work/venv-markitdown/bin/python] [--only R-intro] [--tag after]
    # the code before, for comparison: its own source tree (and the compiled parts) measured
    git archive <rev> src | tar -x -C /tmp/old && cp src/ragsift/store/*.so /tmp/old/src/ragsift/store/
    .venv/bin/python benchmarks/real_reading.py --src=/tmp/old/src --tag before

**The documents.** Debian ships manuals as PDF and as HTML built from one source: R's manuals
(texinfo: pdfTeX for the PDF, makeinfo for the HTML; English; packages r-doc-pdf and r-doc-html),
and the Debian Edu manual in English and Simplified Chinese (DocBook: dblatex for the PDF, the
XSL stylesheets for the HTML; debian-edu-doc-en, debian-edu-doc-zh-cn). The script fetches the
packages with ``apt-get download`` and unpacks them with ``dpkg-deb -x`` into the work folder.

**The reference.** From each HTML file, with lxml (not any reader scored here): its headings
(``h1``-``h6`` of the body, the table of contents, navigation and title page left out) and its
text (the same parts left out), and its tables' cells.

**Scores**, for ragsift and each anchor:
- heading recall and precision: a reference heading is found when an output heading (a ``#``
  line) says the same after numbering, case, punctuation and spaces are taken away; precision is
  the share of output headings that are reference headings;
- text F1 over words (lower-cased runs of letters and digits; each CJK character a word), and
  over characters (spaces left out, as ``reading.py`` scores);
- glued words: the share of the output's words that are not reference words but split into two or
  more of them ("Recentadvancesin...");
- table cell recall: the share of reference cells (non-empty, normalized) found in output tables;
- pages a second (the PDF's pages over the reading time, one process, in this run), by the wall
  clock and by the CPU time of the reading (``pages_per_cpu_s``: what the code costs on a shared
  machine whose load varies).

Writes benchmarks/results/real_reading.json (with the command and the commit measured).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from harness import glued, multiset_f1, write_result

ROOT = Path(__file__).resolve().parent.parent
#: the source tree measured: this one's, or another's (``--src=DIR``: the code before, exported with
#: ``git archive``), put first on the path before anything of ragsift is imported
SRC = Path(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--src=")), ROOT / "src")).resolve()
sys.path.insert(0, str(SRC))
sys.path.insert(1, str(ROOT / "benchmarks"))

OUT = ROOT / "benchmarks" / "results" / "real_reading.json"
PACKAGES = ["r-doc-pdf", "r-doc-html", "debian-edu-doc-en", "debian-edu-doc-zh-cn"]
R_MANUALS = ["R-intro", "R-data", "R-admin", "R-FAQ", "R-lang", "R-ints", "R-exts"]


def documents(root: Path) -> list[dict[str, Any]]:
    out = [{"name": m, "lang": "en", "kind": "texinfo", "pdf": root / f"usr/share/R/doc/manual/{m}.pdf",
            "html": root / f"usr/share/R/doc/manual/{m}.html"} for m in R_MANUALS]
    for lang in ("en", "zh-cn"):
        d = root / f"usr/share/doc/debian-edu-doc-{lang}"
        out.append({"name": f"debian-edu-{lang}", "lang": "zh" if lang == "zh-cn" else "en", "kind": "docbook",
                    "pdf": d / "debian-edu-bookworm-manual.pdf", "html": d / "debian-edu-bookworm-manual.html"})
    for tex in sorted((root.parent / "papers").glob("*.tex")):  # two-column papers and their LaTeX source
        out.append({"name": tex.stem, "lang": "en", "kind": "latex-2col", "pdf": tex.with_suffix(".pdf"), "tex": tex})
    return out


def fetch(work: Path, packages: list[str] = PACKAGES, marker: str = "usr/share/R/doc/manual/R-intro.pdf") -> Path:
    """Debian packages (``packages``; these manuals by default), downloaded and unpacked once into
    ``work``/root: again only when the file ``marker`` names is not there."""
    root = work / "root"
    debs = work / "debs"
    if not (root / marker).exists():
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", *packages], cwd=debs, check=True, capture_output=True)
        for deb in debs.glob("*.deb"):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


# ------------------------------------------------------------------ the reference
# navigation, the table of contents and the repeated title (texinfo; DocBook), not the manual's text
SKIP_CLASSES = {"header", "nav-panel", "contents", "shortcontents", "Contents_element", "contents-heading", "settitle",
                "navheader", "navfooter", "toc", "footnotes-heading"}


def reference_of(doc: dict[str, Any]) -> dict[str, Any]:
    return latex_reference(doc["tex"]) if "tex" in doc else reference(doc["html"])


LATEX_HEADING = re.compile(r"\\(?:section|subsection|subsubsection)\*?\{((?:[^{}]|\{[^{}]*\})*)\}")


def latex_reference(tex: Path) -> dict[str, Any]:
    """A paper's headings and text from its LaTeX source: the sectioning commands' titles; the text
    with comments, environments' names, math and commands taken out (their braced arguments kept)."""
    src = re.sub(r"(?<!\\)%.*", "", tex.read_text(encoding="utf-8", errors="replace"))
    body = src[src.find("\\begin{document}"):] if "\\begin{document}" in src else src
    headings = [_detex(m.group(1)) for m in LATEX_HEADING.finditer(body)]
    if "\\begin{abstract}" in body:
        headings.insert(0, "Abstract")
    if "\\bibliography{" in body or "\\begin{thebibliography}" in body:
        headings.append("References")
    title = re.search(r"\\title\{((?:[^{}]|\{[^{}]*\})*)\}", src)
    text = _detex(body)
    return {"headings": ([_detex(title.group(1))] if title else []) + headings, "text": text, "tables": []}


def _detex(s: str) -> str:
    s = re.sub(r"\$[^$]*\$", " ", s)
    s = re.sub(r"\\(?:begin|end)\{[^}]*\}(?:\[[^]]*\])?(?:\{[^}]*\})?", " ", s)
    s = re.sub(r"\\(?:cite|citep|citet|ref|label|url|bibliography|bibliographystyle|usepackage|documentclass)"
               r"\*?(?:\[[^]]*\])?\{[^}]*\}", " ", s)
    s = re.sub(r"\\[A-Za-z]+\*?(?:\[[^]]*\])?", " ", s)
    s = re.sub(r"\\.", " ", s)
    return " ".join(s.replace("{", " ").replace("}", " ").replace("~", " ").split())


def reference(html: Path) -> dict[str, Any]:
    import lxml.html

    tree = lxml.html.fromstring(html.read_bytes())
    body = tree.find("body") if tree.find("body") is not None else tree
    for el in list(body.iter()):
        cls = set((el.get("class") or "").split())
        if el.tag in ("script", "style") or cls & SKIP_CLASSES:
            if el.getparent() is not None:
                el.drop_tree()
    headings = [" ".join(h.text_content().split()) for h in body.iter("h1", "h2", "h3", "h4", "h5", "h6")]
    tables = []
    for t in body.iter("table"):
        if any(c.startswith("index") or c == "menu" for c in (t.get("class") or "").split()):
            continue  # the index and the node menus are the HTML edition's navigation
        rows = [[" ".join(c.text_content().split()) for c in tr.iter("td", "th")] for tr in t.iter("tr")]
        if any(r and r[0] == "Jump to:" for r in rows):
            continue  # an index's letter bar (texinfo), navigation too
        tables.append([r for r in rows if any(r)])
    # a heading of no letters is a footnote's mark ("(1)": texinfo's footnotes are h5 headings)
    return {"headings": [h for h in headings if any(c.isalpha() for c in h)], "text": body.text_content(),
            "tables": tables}


# ------------------------------------------------------------------ scoring
# "2.1", "A.3", "IV.", "Chapter 3", "第3章" before a heading's words (not "The" in "The Ruler")
NUMBERING = re.compile(r"^\s*(?:(?i:chapter|appendix|section)\s*)?(?:\d{1,3}(?:\.\d{1,3})*\.?|[A-Z](?:\.\d{1,3})*\.?"
                       r"|[IVX]{1,5}\.|第\s*\d+\s*[章节])\s+")


def norm_heading(h: str) -> str:
    h = h.replace("\xa0", " ").strip().lstrip("#").strip()
    h = NUMBERING.sub("", h)
    return re.sub(r"[\W_]+", "", h.casefold())


WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


def words(text: str) -> list[str]:
    return [w.casefold() for w in WORD.findall(text)]


def md_headings(markdown: str) -> list[str]:
    out, fence = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6}\s+\S", line):
            out.append(line)
    return out


def md_cells(markdown: str) -> set[str]:
    cells = set()
    for line in markdown.split("\n"):
        s = line.strip()
        if s.startswith("|") and s.endswith("|") and not re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", s):
            cells |= {re.sub(r"\s+", "", c.lower()) for c in s.strip("|").split("|") if c.strip()}
    return cells


def score(ref: dict[str, Any], markdown: str) -> dict[str, float]:
    want = [norm_heading(h) for h in ref["headings"] if norm_heading(h)]
    got = [norm_heading(h) for h in md_headings(markdown) if norm_heading(h)]
    want_set, got_set = set(want), set(got)
    rw, ow = Counter(words(ref["text"])), words(re.sub(r"(?m)^#+\s|\|", " ", markdown))
    ref_chars = Counter(re.sub(r"\s+", "", ref["text"]))
    out_chars = Counter(re.sub(r"\s+", "", re.sub(r"(?m)^#+\s|\||^-{3,}$", "", markdown)))
    cells = [re.sub(r"\s+", "", c.lower()) for t in ref["tables"] for r in t for c in r if c.strip()]
    found = md_cells(markdown)
    return {"heading_recall": round(sum(1 for h in want_set if h in got_set) / max(1, len(want_set)), 3),
            "heading_precision": round(sum(1 for h in got if h in want_set) / max(1, len(got)), 3),
            "headings": len(got), "reference_headings": len(want_set),
            "word_f1": round(multiset_f1(rw, Counter(ow)), 3), "char_f1": round(multiset_f1(ref_chars, out_chars), 3),
            "glued": round(glued(ow, set(rw)), 4),
            "cell_recall": round(sum(1 for c in cells if c in found) / len(cells), 3) if cells else None}


# ------------------------------------------------------------------ readers
class Read(NamedTuple):
    """A PDF as ragsift's loader reads it: its Markdown, the wall and CPU seconds of the reading (in
    this process: the machine is shared, wall time is its load's), its pages."""

    markdown: str
    seconds: float
    cpu_seconds: float
    pages: int


def read_ragsift(pdf: Path) -> Read:
    from ragsift.ingest.loaders import LoadLimits, load_file
    from ragsift.ingest.splitter import take_marks

    t, cpu = time.perf_counter(), time.process_time()
    res = load_file(pdf, pdf.name, LoadLimits(max_seconds=3600))  # in this process: its CPU is ours
    took, cpu = time.perf_counter() - t, time.process_time() - cpu
    if not res.documents:
        raise RuntimeError(res.skipped[0].reason if res.skipped else "nothing read")
    doc = res.documents[0]
    text, _ = take_marks(doc.text)
    return Read((f"# {doc.title}\n\n" if doc.title else "") + text, took, cpu, int(doc.metadata.get("page_count") or 0))


def read_anchor(python: str, reader: str, pdfs: list[Path]) -> dict[str, tuple[str, float, str | None]]:
    from reading import read_anchor as run

    return run(python, reader, pdfs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work-dir", type=Path, default=ROOT.parent / "data-ext" / "real-reading")
    ap.add_argument("--anchor", action="append", default=[], help="NAME=PYTHON: an anchor reader in its own venv")
    ap.add_argument("--only", default="", help="names of documents, comma-separated")
    ap.add_argument("--tag", default="ragsift", help="the name ragsift's rows are stored under (before/after)")
    ap.add_argument("--src", default=str(ROOT / "src"), help="=DIR: the ragsift source tree to measure")
    ap.add_argument("--rescore", action="store_true", help="score the texts kept by the last run (no reading)")
    args = ap.parse_args()
    root = fetch(args.work_dir)
    docs = [d for d in documents(root) if not args.only or d["name"] in args.only.split(",")]
    result: dict[str, Any] = json.loads(OUT.read_text()) if OUT.exists() else {}
    rows = result.setdefault("rows", {})
    saved = args.work_dir / "out"  # each reader's text, kept to rescore (--rescore) without reading again
    for d in docs:
        ref = reference_of(d)
        kept = saved / args.tag / f"{d['name']}.md"
        if args.rescore:
            old = rows[d["name"]][args.tag]
            md, took, pages = kept.read_text(encoding="utf-8"), old["seconds"], old["pages"]
        else:
            read = read_ragsift(d["pdf"])
            md, took, pages = read.markdown, read.seconds, read.pages
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(md, encoding="utf-8")
        row = {"lang": d["lang"], "kind": d["kind"], "pages": pages, "seconds": round(took, 2),
               "pages_per_s": round(pages / took, 2), **score(ref, md)}
        if not args.rescore:
            row["cpu_seconds"] = round(read.cpu_seconds, 2)
            row["pages_per_cpu_s"] = round(pages / max(1e-9, read.cpu_seconds), 2)
        elif "cpu_seconds" in rows.get(d["name"], {}).get(args.tag, {}):
            old_row = rows[d["name"]][args.tag]
            row.update(cpu_seconds=old_row["cpu_seconds"], pages_per_cpu_s=old_row["pages_per_cpu_s"])
        rows.setdefault(d["name"], {})[args.tag] = row
        print(d["name"], args.tag, row, flush=True)
    for spec in args.anchor:
        name, python = spec.split("=", 1)
        if args.rescore:
            got = {str(d["pdf"]): (f.read_text(encoding="utf-8"), rows[d["name"]][name].get("seconds", 0.0), None)
                   if (f := saved / name / f"{d['name']}.md").exists() else ("", 0.0, rows[d["name"]][name].get("error"))
                   for d in docs}
        else:
            got = read_anchor(python, name, [d["pdf"] for d in docs])
        for d in docs:
            text, took, err = got[str(d["pdf"])]
            if not err and not args.rescore:
                (saved / name).mkdir(parents=True, exist_ok=True)
                (saved / name / f"{d['name']}.md").write_text(text, encoding="utf-8")
            row = {"error": err} if err else {"seconds": round(took, 2), **score(reference_of(d), text)}
            rows.setdefault(d["name"], {})[name] = row
            print(d["name"], name, row, flush=True)
    import ragsift

    assert Path(ragsift.__file__).resolve().is_relative_to(SRC), (ragsift.__file__, SRC)  # the code meant
    result.setdefault("runs", []).append({"tag": args.tag, "src": str(SRC),
                                          "anchors": [a.split("=")[0] for a in args.anchor],
                                          "command": "python benchmarks/real_reading.py " + " ".join(sys.argv[1:]),
                                          "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                                                    "HEAD"], capture_output=True,
                                                                   text=True).stdout.strip(),
                                          "date": time.strftime("%Y-%m-%d")})
    write_result(OUT, result)


if __name__ == "__main__":
    main()
