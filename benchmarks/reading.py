"""Reading documents: how faithfully ragsift's loaders read what real writers write, side by side
with the readers other tools use (issue 28).

    .venv/bin/python benchmarks/reading.py --datasets ../shared/datasets --work-dir /tmp/ragsift-reading
    # anchors (markitdown, Unstructured fast, LlamaIndex SimpleDirectoryReader, LangChain loaders),
    # when benchmarks/requirements-readers.txt is installed in /work/venv-readers:
    .venv/bin/python benchmarks/reading.py ... --readers-python /work/venv-readers/bin/python

1. **Documents whose structure is known.** English: L-Eval's Qasper papers (section headings on
   their own lines, "A ::: B" for a subsection) and Natural Questions Wikipedia pages (their HTML
   headings, lists and tables); Chinese: CMRC 2018 paragraphs grouped into their Wikipedia
   articles (the article's title, a heading per paragraph). Each is written as Markdown, the
   ground truth, then by pandoc into DOCX, ODT, EPUB and PPTX, by LibreOffice into PDF (from the
   DOCX) and XLSX (every table), by Chromium into two-column PDFs with running heads, feet and
   page numbers, and rendered at 150 dpi into scanned PDFs (a subset of pages).
2. **Read** by ragsift's loaders and by each anchor (``benchmarks/readers.py``, in their own venv).
3. **Scored.** Heading-path accuracy: the share of the ground truth's sections whose text lands
   (by character overlap) in a section of the output with the same heading path. Text F1: the
   characters of the output against the ground truth's (multisets; whitespace and Markdown marks
   left out). Table cells: the share of the ground truth's cells found in the matching row of a
   table in the output. OCR character error rate: edit distance of the scanned page's text to
   the born-digital page's text, over its length (whitespace left out), per language.
4. **Retrieval on what was read.** SciFact abstracts (English) and CMRC 2018 paragraphs (Chinese)
   grouped into documents, a section each; the knowledge base of the Markdown source against the
   one of the DOCX and PDF written from it and of that PDF scanned: nDCG@10 of the sections (a passage
   counts as the source section it holds most of), on the odd-numbered judged questions.

Writes benchmarks/results/reading.json.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness import cer, multiset_f1, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import documents as D  # noqa: E402

from ragsift.ingest.loaders import LoadLimits, load_file  # noqa: E402
from ragsift.ingest.splitter import sections, take_marks  # noqa: E402

MARKS = re.compile(r"[#|*`>\-]|^\s*\d+\.\s", re.M)


# ------------------------------------------------------------------ ground truth
class Doc:
    """A document whose structure is known: sections (heading path, paragraphs, tables)."""

    def __init__(self, name: str, title: str, lang: str) -> None:
        self.name, self.title, self.lang = name, title, lang
        self.sections: list[tuple[tuple[str, ...], list[str], list[list[list[str]]]]] = []

    def markdown(self) -> str:
        out = [f"---\ntitle: \"{self.title}\"\n---\n"]
        prev: tuple[str, ...] = ()
        for path, paras, tables in self.sections:
            for level, h in enumerate(path, 1):
                if prev[:level] != path[:level]:
                    out.append("#" * level + " " + h + "\n")
            prev = path
            out += [p + "\n" for p in paras]
            for t in tables:
                out.append(_md_table(t) + "\n")
        return "\n".join(out)

    def text(self) -> str:
        parts = [self.title]
        for path, paras, tables in self.sections:
            parts += list(path) + paras + [c for t in tables for r in t for c in r]
        return "\n".join(parts)

    def tables(self) -> list[list[list[str]]]:
        return [t for _, _, ts in self.sections for t in ts]


def _md_table(rows: list[list[str]]) -> str:
    w = max(len(r) for r in rows)
    rows = [[c.replace("|", "/") for c in r] + [""] * (w - len(r)) for r in rows]
    return "\n".join(["| " + " | ".join(rows[0]) + " |", "|" + "---|" * w] + ["| " + " | ".join(r) + " |" for r in rows[1:]])


def qasper_docs(folder: Path, n: int) -> list[Doc]:
    out = []
    for row in _rows(folder / "corpus.jsonl"):
        if not row["_id"].startswith("leval-qasper") or len(out) >= n:
            continue
        doc = Doc(row["_id"], row.get("title") or row["_id"], "en")
        path: tuple[str, ...] = ()
        paras: list[str] = []
        for line in row["text"].split("\n"):
            line = line.strip()
            if not line:
                continue
            if len(line) <= 90 and not line.endswith((".", ":", ";", ",", "?")) and len(line.split()) <= 12:
                if paras:
                    doc.sections.append((path, paras, []))
                path = tuple(p.strip() for p in line.split(":::") if p.strip())[:3]
                paras = []
            else:
                paras.append(line)
        if paras:
            doc.sections.append((path, paras, []))
        doc.title = doc.sections[0][0][0] if not row.get("title") and doc.sections and doc.sections[0][0] else doc.title
        if len(doc.sections) >= 4:
            out.append(doc)
    return out


NQ_TAG = re.compile(r"<(/?)(H[1-6]|P|Table|Tr|Td|Th|Ul|Ol|Li|Dl|Dd|Dt)(?:_colspan=\"\d+\"|_rowspan=\"\d+\")*>")


def nq_docs(folder: Path, n: int, max_chars: int = 20_000) -> list[Doc]:
    """NQ pages: headings, paragraphs and tables from their tokens (lists as paragraphs)."""
    out = []
    for row in _rows(folder / "corpus.jsonl"):
        if not row["_id"].startswith("leval-nq") or len(out) >= n:
            continue
        doc = Doc(row["_id"], row.get("title") or row["_id"], "en")
        text = row["text"][:max_chars]
        path: tuple[str, ...] = ()
        paras: list[str] = []
        tables: list[list[list[str]]] = []
        stack: list[str] = []
        buf: list[str] = []
        table: list[list[str]] | None = None
        row_cells: list[str] | None = None
        level = 0
        for tok in re.split(r"(<[^>]+>)", text):
            m = NQ_TAG.fullmatch(tok.strip()) if tok.startswith("<") else None
            if m is None:
                buf.append(tok)
                continue
            closing, tag = m.group(1) == "/", m.group(2)
            chunk = " ".join("".join(buf).split())
            buf = []
            if tag.startswith("H") and tag[1:].isdigit():
                if closing:
                    if chunk:
                        if paras or tables:
                            doc.sections.append((path, paras, tables))
                            paras, tables = [], []
                        level = int(tag[1])
                        stack = stack[: level - 1] + [chunk]
                        path = tuple(stack[1:]) if stack and stack[0] == doc.title else tuple(stack)
                continue
            if tag == "Table" and not closing:
                table = []
            elif tag == "Table" and closing and table is not None:
                if len(table) >= 2 and max(len(r) for r in table) >= 2:
                    tables.append(table)
                table = None
            elif tag == "Tr" and table is not None:
                if not closing:
                    row_cells = []
                elif row_cells is not None:
                    if any(row_cells):
                        table.append(row_cells)
                    row_cells = None
            elif tag in ("Td", "Th") and closing and row_cells is not None:
                row_cells.append(chunk)
            elif tag in ("P", "Li", "Dd", "Dt") and closing and table is None and chunk:
                paras.append(chunk)
        if paras or tables:
            doc.sections.append((path, paras, tables))
        doc.sections = [(p, pa, t) for p, pa, t in doc.sections if p]
        if len(doc.sections) >= 3:
            out.append(doc)
    return out


def cmrc_docs(folder: Path, n: int, per_doc: int = 6) -> list[Doc]:
    """CMRC 2018 paragraphs (one per Wikipedia article) grouped into documents of ``per_doc``
    articles in two parts: heading paths ("第一部分", the article's title)."""
    rows = [r for r in _rows(folder / "corpus.jsonl") if r.get("title")]
    out = []
    for i in range(0, len(rows), per_doc):
        if len(out) >= n:
            break
        group = rows[i:i + per_doc]
        doc = Doc(f"cmrc-{group[0]['_id']}", f"百科文选 第{i // per_doc + 1}辑", "zh")
        for j, r in enumerate(group):
            part = "第一部分" if j < per_doc // 2 else "第二部分"
            doc.sections.append(((part, r["title"]), [r["text"]], []))
        out.append(doc)
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------ writing
def write_all(docs: list[Doc], out: Path, formats: list[str]) -> dict[str, dict[str, Path]]:
    files: dict[str, dict[str, Path]] = {}
    for doc in docs:
        d = out / doc.name
        d.mkdir(parents=True, exist_ok=True)
        md = d / "source.md"
        md.write_text(doc.markdown(), encoding="utf-8")
        got: dict[str, Path] = {"md": md}
        for fmt in ("docx", "odt", "epub", "pptx"):
            if fmt in formats:
                got[fmt] = D.pandoc(doc.markdown(), d / f"doc.{fmt}")
        if "pdf" in formats:
            docx = got.get("docx") or D.pandoc(doc.markdown(), d / "doc.docx")
            got["pdf"] = D.soffice(docx, "pdf", d)
        if "xlsx" in formats and doc.tables():
            got["xlsx"] = _workbook(doc, d)
        files[doc.name] = got
    return files


def _workbook(doc: Doc, d: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for i, t in enumerate(doc.tables(), 1):
        ws = wb.create_sheet(f"Table {i}")
        for r in t:
            ws.append(r)
    path = d / "tables.xlsx"
    wb.save(path)
    # re-saved by LibreOffice Calc: the file read is one an office suite wrote
    return D.soffice(path, "xlsx", d / "lo")


def two_column_pdfs(docs: list[Doc], files: dict[str, dict[str, Path]]) -> None:
    """The same documents printed by Chromium from HTML with two columns, a running head and a
    running foot with the page number."""
    import shutil as sh

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=sh.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page()
        for doc in docs:
            d = files[doc.name]["md"].parent
            html = d / "doc.html"
            subprocess.run(["pandoc", str(files[doc.name]["md"]), "-s", "-o", str(html), "--metadata",
                            "pagetitle=" + doc.title], check=True, timeout=120)
            css = ("<style>body{column-count:2;column-gap:2em;font-family:'Noto Serif CJK SC',serif;font-size:10pt}"
                   "h1,h2,h3{column-span:none;font-family:'Noto Sans CJK SC',sans-serif}"
                   "table{border-collapse:collapse}td,th{border:1px solid #444;padding:2px}</style>")
            html.write_text(html.read_text(encoding="utf-8").replace("</head>", css + "</head>"), encoding="utf-8")
            page.goto(html.as_uri())
            out = d / "doc-2col.pdf"
            page.pdf(path=str(out), format="A4", margin={"top": "2cm", "bottom": "2cm", "left": "1.5cm", "right": "1.5cm"},
                     display_header_footer=True,
                     header_template=f"<div style='font-size:8px;width:100%;text-align:center'>{doc.title}</div>",
                     footer_template="<div style='font-size:8px;width:100%;text-align:center'>"
                                     "<span class='pageNumber'></span></div>")
            files[doc.name]["pdf-2col"] = out
        browser.close()


# ------------------------------------------------------------------ reading
def load_text(path: Path) -> tuple[str, str, float]:
    """ragsift's reading of a file: its text (location marks taken out), the title a PDF was
    given (else ""), and the seconds it took."""
    t = time.perf_counter()
    res = load_file(path, path.name, LoadLimits(max_seconds=600))
    seconds = time.perf_counter() - t
    text, _ = take_marks("\n\n".join(d.text for d in res.documents))
    first = res.documents[0] if res.documents else None
    return text, first.title if first is not None and first.format == "pdf" else "", seconds


def read_ragsift(path: Path) -> tuple[str, float]:
    text, title, seconds = load_text(path)
    return (f"# {title}\n\n" if title else "") + text, seconds


def read_anchor(python: str, reader: str, paths: list[Path]) -> dict[str, tuple[str, float, str | None]]:
    """Every file by one anchor, in one process of its own venv (its import paid once):
    {path: (text, seconds, error)}."""
    out: dict[str, tuple[str, float, str | None]] = {}
    try:
        p = subprocess.run([python, str(ROOT / "benchmarks" / "readers.py"), reader, *map(str, paths)],
                           capture_output=True, text=True, timeout=3600,
                           env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": "/tmp"})
        rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    except (subprocess.TimeoutExpired, ValueError) as e:
        return {str(x): ("", 0.0, type(e).__name__) for x in paths}
    for r in rows:
        err = None if r.get("ok") else str(r.get("error") or "failed")[:200]
        out[r["file"]] = ("" if err else r.get("text") or "", float(r.get("seconds") or 0), err)
    for x in paths:
        out.setdefault(str(x), ("", 0.0, "no answer from the reader"))
    return out


# ------------------------------------------------------------------ scoring
def _norm_heading(h: str) -> str:
    return re.sub(r"[\W_]+", "", h.lower())


def heading_accuracy(doc: Doc, markdown: str) -> float:
    """The share of the ground truth's sections whose text lands in an output section with the
    same heading path (the document's title, when the output puts it above, left out)."""
    got = sections(markdown) or [((), markdown, 0)]
    title = _norm_heading(doc.title)
    out_secs = []
    for path, body, _ in got:
        p = tuple(_norm_heading(h) for h in path if _norm_heading(h))
        if p and p[0] == title and len(p) > 1:
            p = p[1:]
        out_secs.append((p, _grams(body)))
    right = total = 0
    for path, paras, tables in doc.sections:
        want = tuple(_norm_heading(h) for h in path)
        body = _grams(" ".join(paras + [c for t in tables for r in t for c in r]))
        if not body:
            continue
        total += 1
        best = max(out_secs, key=lambda s: len(body & s[1]), default=None)
        if best is not None and best[0] == want:
            right += 1
    return right / total if total else 0.0


def _grams(text: str) -> set[str]:
    t = re.sub(r"\s+", "", text.lower())
    return {t[i:i + 3] for i in range(0, max(0, len(t) - 2))}


def char_f1(reference: str, output: str) -> float:
    a = Counter(re.sub(r"\s+", "", MARKS.sub("", reference)))
    b = Counter(re.sub(r"\s+", "", MARKS.sub("", output)))
    return multiset_f1(a, b)


def md_tables(markdown: str) -> list[list[list[str]]]:
    out, cur = [], []
    for line in markdown.split("\n"):
        s = line.strip()
        if s.startswith("|") and s.endswith("|"):
            if re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", s):
                continue
            cur.append([c.strip().replace("\\|", "|") for c in s.strip("|").split("|")])
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def cell_accuracy(doc: Doc, markdown: str) -> float | None:
    truth = doc.tables()
    if not truth:
        return None
    rows = [r for t in md_tables(markdown) for r in t]
    norm = lambda c: re.sub(r"\s+", "", c.lower())  # noqa: E731
    found = total = 0
    for t in truth:
        for r in t:
            cells = [norm(c) for c in r if c.strip()]
            total += len(cells)
            best = max((sum(1 for c in cells if c in {norm(x) for x in row}) for row in rows), default=0)
            found += best
    return found / total if total else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--work-dir", default="/tmp/ragsift-reading")
    ap.add_argument("--readers-python", help="the anchors' venv python (benchmarks/requirements-readers.txt)")
    ap.add_argument("--qasper", type=int, default=8)
    ap.add_argument("--nq", type=int, default=8)
    ap.add_argument("--cmrc", type=int, default=10)
    ap.add_argument("--scan-pages", type=int, default=6, help="pages per language rendered and read by OCR")
    ap.add_argument("--retrieval-questions", type=int, default=150)
    ap.add_argument("--retrieval-docs", type=int, default=600, help="passages per language, judged ones first")
    ap.add_argument("--scan-retrieval-questions", type=int, default=40,
                    help="questions per language on the smaller corpus read by OCR (0: none)")
    ap.add_argument("--scan-retrieval-docs", type=int, default=120)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "reading.json"))
    ap.add_argument("--only-scan-retrieval", action="store_true",
                    help="only the scanned PDFs' retrieval against their Markdown (to --out; a rerun of that part)")
    args = ap.parse_args()
    data, work = Path(args.datasets), Path(args.work_dir)
    if args.only_scan_retrieval:
        scans = retrieval_rows(data, work, args.scan_retrieval_questions, args.scan_retrieval_docs, ["md", "scan"])
        write_result(args.out, {"retrieval": {f"{lang}-scan": v for lang, v in scans.items()}})
        return
    docs = (qasper_docs(data / "leval-longdoc-en", args.qasper) + nq_docs(data / "leval-longdoc-en", args.nq)
            + cmrc_docs(data / "cmrc2018-dev", args.cmrc))
    formats = ["docx", "odt", "epub", "pptx", "pdf", "xlsx"]
    t = time.perf_counter()
    files = write_all(docs, work / "docs", formats)
    two_column_pdfs(docs, files)
    print(f"wrote {len(docs)} documents in {len(formats) + 1} formats in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    readers = ["ragsift"] + (["markitdown", "unstructured", "llamaindex", "langchain"] if args.readers_python else [])
    todo = [(doc, fmt, path) for doc in docs for fmt, path in files[doc.name].items() if fmt != "md"]
    got: dict[str, dict[str, tuple[str, float, str | None]]] = {}
    for reader in readers:
        t = time.perf_counter()
        if reader == "ragsift":
            got[reader] = {}
            for _, _, path in todo:
                text, seconds = read_ragsift(path)
                got[reader][str(path)] = (text, seconds, None if text else "no document")
        else:
            got[reader] = read_anchor(args.readers_python, reader, [p for _, _, p in todo])
        print(f"{reader}: {len(todo)} files in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for doc, fmt, path in todo:
        for reader in readers:
            text, seconds, error = got[reader][str(path)]
            row = {"doc": doc.name, "lang": doc.lang, "format": fmt, "reader": reader, "seconds": round(seconds, 3),
                   "error": error, "pages": _pages(path) if fmt.startswith("pdf") else None}
            if not error:
                if fmt != "xlsx":  # the workbook holds the tables only: its cells are its measure
                    row["text_f1"] = round(char_f1(doc.text(), text), 4)
                    row["heading_accuracy"] = round(heading_accuracy(doc, text), 4)
                acc = cell_accuracy(doc, text)
                row["table_cells"] = None if acc is None else round(acc, 4)
            rows.append(row)
    ocr = ocr_rows(docs, files, work, args.scan_pages)
    retrieval = retrieval_rows(data, work, args.retrieval_questions, args.retrieval_docs, ["md", "docx", "pdf"])
    if args.scan_retrieval_questions:  # OCR reads a page in seconds: a smaller corpus, with its own Markdown baseline
        scans = retrieval_rows(data, work, args.scan_retrieval_questions, args.scan_retrieval_docs, ["md", "scan"])
        retrieval.update({f"{lang}-scan": v for lang, v in scans.items()})
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/reading.py " + " ".join(sys.argv[1:]),
           "documents": {d.name: {"lang": d.lang, "sections": len(d.sections), "tables": len(d.tables()),
                                  "chars": len(d.text())} for d in docs},
           "rows": rows, "ocr": ocr, "retrieval": retrieval, "summary": summarize(rows)}
    write_result(args.out, out)
    print(json.dumps(out["summary"], indent=1))


def _pages(path: Path) -> int:
    import pypdfium2

    return len(pypdfium2.PdfDocument(str(path)))


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        key = f"{r['reader']}|{r['format']}"
        s = out.setdefault(key, {"docs": 0, "failed": 0, "heading_accuracy": [], "text_f1": [], "table_cells": [],
                                 "seconds": 0.0, "pages": 0})
        s["docs"] += 1
        if r["error"]:  # a failed read counts for neither time nor pages
            s["failed"] += 1
            continue
        s["seconds"] += r["seconds"]
        s["pages"] += r.get("pages") or 0
        for m in ("heading_accuracy", "text_f1", "table_cells"):
            if r.get(m) is not None:
                s[m].append(r[m])
    for s in out.values():
        for m in ("heading_accuracy", "text_f1", "table_cells"):
            s[m] = round(statistics.fmean(s[m]), 4) if s[m] else None
        s["pages_per_s"] = round(s["pages"] / s["seconds"], 2) if s["pages"] and s["seconds"] else None
    return out


def ocr_rows(docs: list[Doc], files: dict[str, dict[str, Path]], work: Path, per_lang: int) -> dict[str, Any]:
    """Scanned pages (150 dpi) against the born-digital text of the same page."""
    import pdfplumber
    import pypdfium2

    from ragsift.ingest.loaders import ocr

    out: dict[str, Any] = {}
    for lang in ("zh", "en"):
        errs, seconds, pages = [], 0.0, 0
        for doc in (d for d in docs if d.lang == lang):
            if pages >= per_lang:
                break
            pdf = files[doc.name]["pdf"]
            with pdfplumber.open(str(pdf)) as p:
                ref = p.pages[0].extract_text() or ""
            img = pypdfium2.PdfDocument(str(pdf))[0].render(scale=150 / 72).to_pil()
            scan = work / "scans" / f"{doc.name}.pdf"
            scan.parent.mkdir(parents=True, exist_ok=True)
            img.convert("RGB").save(scan, resolution=150)
            text, _, took = load_text(scan)
            seconds += took
            errs.append(cer(MARKS.sub("", ref), MARKS.sub("", text)))  # the page's text, Markdown marks aside
            pages += 1
        out[lang] = {"pages": pages, "cer": round(statistics.fmean(errs), 4) if errs else None,
                     "cer_each": [round(e, 4) for e in errs], "pages_per_s": round(pages / seconds, 3) if seconds else None,
                     "engine": "RapidOCR (rapidocr-onnxruntime 1.4.4, PP-OCRv4)" if ocr.available() else None}
    return out


def retrieval_rows(data: Path, work: Path, n_questions: int = 150, n_docs: int = 600,
                   formats: list[str] | None = None) -> dict[str, Any]:
    """nDCG@10 of sections: the Markdown source's knowledge base against those of the DOCX and the
    PDF written from it (and the PDF's pages scanned at 150 dpi, read by OCR), on the odd-numbered
    judged questions."""
    from ragsift.eval.metrics import ndcg_at_k
    from ragsift.kb import KnowledgeBase

    out: dict[str, Any] = {}
    for lang, folder in (("en", "scifact"), ("zh", "cmrc2018-dev")):
        corpus = {r["_id"]: r for r in _rows(data / folder / "corpus.jsonl")}
        queries = {r["_id"]: r["text"] for r in _rows(data / folder / "queries.jsonl")}
        qrels: dict[str, dict[str, int]] = {}
        for line in (data / folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            q, d, s = line.split("\t")[:3]
            qrels.setdefault(q, {})[d] = int(float(s))
        judged = [q for q in queries if q in qrels][1::2][:n_questions]  # odd-numbered, in file order
        needed = list(dict.fromkeys(d for q in judged for d in qrels[q] if d in corpus))
        # distractors: the corpus' next passages, up to n_docs in all
        have = set(needed)
        needed += [d for d in corpus if d not in have][:max(0, n_docs - len(needed))]
        docs: list[Doc] = []
        group = 10  # passages per document, each a section headed by its article's title
        for i in range(0, len(needed), group):
            doc = Doc(f"{folder.split('-')[0]}-{i // group}", f"{folder} {i // group}", lang)
            doc.sections = [(((corpus[d].get("title") or d),), [corpus[d]["text"]], []) for d in needed[i:i + group]]
            docs.append(doc)
        section_of = {}  # (doc name, section index) -> corpus id
        k = 0
        for doc in docs:
            for j in range(len(doc.sections)):
                section_of[(doc.name, j)] = needed[k]
                k += 1
        tag = f"{lang}-{n_docs}"
        files = write_all(docs, work / f"retrieval-{tag}", ["docx", "pdf"])
        formats = formats or ["md", "docx", "pdf"]
        scan_pages = 0
        if "scan" in formats:
            for doc in docs:
                files[doc.name]["scan"] = scan_pdf(files[doc.name]["pdf"], work / f"retrieval-{tag}-scans" / f"{doc.name}.pdf")
                scan_pages += _pages(files[doc.name]["scan"])
        scores: dict[str, float] = {}
        seconds: dict[str, float] = {}
        for fmt in formats:
            folder_ = work / f"kb-input-{tag}-{fmt}"
            folder_.mkdir(parents=True, exist_ok=True)
            for doc in docs:
                src = files[doc.name][fmt]
                (folder_ / f"{doc.name}{src.suffix}").write_bytes(src.read_bytes())
            kb = KnowledgeBase.open(work / f"kb-{tag}-{fmt}", embedder="e5-small", max_file_seconds=1200.0)
            t = time.perf_counter()
            kb.ingest(folder_)
            seconds[fmt] = round(time.perf_counter() - t, 1)
            grams = {key: _grams(docs_by(docs, key[0]).sections[key[1]][1][0]) for key in section_of}
            total = []
            for q in judged:
                res = kb.query(queries[q], max_passages=10, unit="parent", token_budget=100_000)
                ranking = []
                for p in res.passages:
                    name = Path(p.source).stem
                    g = _grams(p.text)
                    cands = [key for key in section_of if key[0] == name]
                    if cands:
                        best = max(cands, key=lambda key: len(g & grams[key]) / max(1, len(grams[key])))
                        ranking.append(section_of[best])
                ranking = list(dict.fromkeys(ranking))
                total.append(ndcg_at_k(ranking, qrels[q], 10))
            scores[fmt] = round(statistics.fmean(total), 4)
            kb.close()
        out[lang] = {"questions": len(judged), "sections": len(section_of), "documents": len(docs), "ndcg@10": scores,
                     "ingest_seconds": seconds, "scanned_pages": scan_pages}
    return out


def scan_pdf(pdf: Path, out: Path, dpi: int = 150) -> Path:
    """Every page of ``pdf`` rendered to an image at ``dpi``, saved as a PDF of images (no text layer)."""
    import pypdfium2

    out.parent.mkdir(parents=True, exist_ok=True)
    images = [page.render(scale=dpi / 72).to_pil().convert("RGB") for page in pypdfium2.PdfDocument(str(pdf))]
    images[0].save(out, resolution=dpi, save_all=True, append_images=images[1:])
    return out


def docs_by(docs: list[Doc], name: str) -> Doc:
    return next(d for d in docs if d.name == name)


if __name__ == "__main__":
    main()
