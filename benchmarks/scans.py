"""Scans upright and spaced (issue 52): pages of real documents scanned at 150 dpi, upright and
turned 90, 180 and 270 degrees (counterclockwise, with Pillow), each read by ragsift's PDF loader
as a scanned PDF; and the real scans of docling's test corpus.

    .venv/bin/python benchmarks/scans.py --root /work/data-ext/real-reading/root \
        --docling /work/data-ext/scans --datasets ../shared/datasets
    # the code before, for comparison (its own source tree first on the path; the compiled
    # store modules copied in: cp src/ragsift/store/*.so /tmp/oldsrc/src/ragsift/store/):
    git archive main src | tar -x -C /tmp/oldsrc
    PYTHONPATH=/tmp/oldsrc/src .venv/bin/python benchmarks/scans.py ... --label before

**Pages.** English: two pages of R's "An Introduction to R" (pdfTeX, Computer Modern) and two of
the Debian Edu manual (dblatex), as Debian ships them (packages r-doc-pdf, debian-edu-doc-en;
``benchmarks/real_reading.py`` fetches them). Chinese: a page of the Debian Edu manual in
Simplified Chinese (debian-edu-doc-zh-cn; mixed with English words), and the first page of
three documents of CMRC 2018's Wikipedia paragraphs that LibreOffice printed to PDF (as
``reading.py`` writes them). Each page rendered at 150 dpi (pypdfium2), turned, bound into a PDF
without a text layer. Reference: the born-digital page's own text (pdfium's).

**docling's scans** (github.com/docling-project/docling, tests/data; see /work/data-ext/scans/SOURCE.md):
``ocr_test.pdf`` and its versions turned 90, 180 and 270 degrees (by the page's /Rotate), the four
pages of ``nemotron_multipage.pdf`` each turned differently, against the text docling's tests
expect; ``2206.01062.tif``, a two-page TIFF of a paper (72 dpi), against the paper's text.

**Scores.** Character error rate (edit distance over the reference's length, whitespace and
Markdown marks left out: ``harness.cer``); word F1 over whitespace-delimited words (lower-cased,
punctuation at their ends taken off; for Chinese pages only the runs of other letters and digits
between Chinese characters, which is where spaces matter); glued words (the share of the output's
words of six letters or more that are no reference word but two or more joined:
``harness.glued``); CPU seconds a page (``time.process_time`` of the whole load); the
rotation ragsift says it found (``ocr_rotated``).

Writes benchmarks/results/scans.json (or scans-<label>.json), with the command and the commit.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # documents.py: the writers (no ragsift import)

from harness import cer, glued, multiset_f1, write_result  # noqa: E402

from ragsift.ingest.loaders import LoadLimits, load_file  # noqa: E402

MARKS = re.compile(r"[#|*`>\-]|^\s*\d+\.\s", re.M)  # reading.MARKS: left out of both texts for the CER
PAGE_MARK = re.compile(r"\ue000[^\n]*\ue001|^#+ |^- ", re.M)  # page marks, heading and list marks
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
EN_PAGES = [("R/doc/manual/R-intro.pdf", 9), ("R/doc/manual/R-intro.pdf", 15),
            ("doc/debian-edu-doc-en/debian-edu-bookworm-manual.pdf", 9),
            ("doc/debian-edu-doc-en/debian-edu-bookworm-manual.pdf", 13)]
ZH_PAGES = [("doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.pdf", 9)]
ROTATIONS = (0, 90, 180, 270)
DPI = 150


def tokens(text: str, zh: bool = False) -> list[str]:
    if zh:
        text = CJK.sub(" ", text)
    out = []
    for t in text.replace("’", "'").replace("‘", "'").split():
        t = t.strip(".,;:!?()[]{}\"'“”«»").casefold()
        if t:
            out.append(t)
    return out


def word_f1(reference: str, output: str, zh: bool = False) -> float:
    return multiset_f1(Counter(tokens(reference, zh)), Counter(tokens(output, zh)))


def vocabulary(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[A-Za-z]+", text)}


def read(path: Path) -> tuple[str, dict[str, Any], float]:
    t = time.process_time()
    res = load_file(path, path.name, LoadLimits())
    took = time.process_time() - t
    if not res.documents:
        return "", {"skipped": res.skipped[0].reason if res.skipped else ""}, took
    doc = res.documents[0]
    return PAGE_MARK.sub("", doc.text), {**doc.metadata, "title": doc.title}, took


def scanned(image: Any, out: Path) -> Path:
    image.convert("RGB").save(out, resolution=DPI)
    return out


def render(pdf: Path, index: int) -> tuple[Any, str]:
    import pypdfium2

    page = pypdfium2.PdfDocument(str(pdf))[index]
    # pdfium marks a hyphen it took for a soft one (at a line's end) with U+FFFE
    return page.render(scale=DPI / 72).to_pil().convert("RGB"), page.get_textpage().get_text_range().replace("\ufffe", "")


def cmrc_pages(datasets: Path, work: Path, n: int = 3) -> list[tuple[str, Any, str]]:
    """The first page of ``n`` documents of CMRC 2018 paragraphs (Wikipedia), written as DOCX by
    pandoc and printed to PDF by LibreOffice."""
    import documents as D

    rows = [json.loads(line) for line in (datasets / "cmrc2018-dev" / "corpus.jsonl").read_text("utf-8").splitlines()
            if line.strip()]
    rows = [r for r in rows if r.get("title")]
    out = []
    for k in range(n):
        group = rows[k * 4:(k + 1) * 4]
        md = "\n\n".join(f"# {r['title']}\n\n{r['text']}" for r in group)
        d = work / f"cmrc-{k}"
        d.mkdir(parents=True, exist_ok=True)
        pdf = D.soffice(D.pandoc(md, d / "doc.docx"), "pdf", d)
        img, ref = render(pdf, 0)
        out.append((f"cmrc2018-{group[0]['_id']} p1", img, ref))
    return out


def rotation_rows(pages: list[tuple[str, str, Any, str]], work: Path) -> list[dict[str, Any]]:
    rows = []
    for name, lang, img, ref in pages:
        vocab = vocabulary(ref)
        for angle in ROTATIONS:
            path = scanned(img.rotate(angle, expand=True, fillcolor="white"), work / f"scan-{len(rows)}.pdf")
            text, meta, took = read(path)
            found = (meta.get("ocr_rotated") or {}).get("1", 0)
            rows.append({"page": name, "lang": lang, "rotation": angle, "found": found,
                         "cer": round(cer(MARKS.sub("", ref), MARKS.sub("", text)), 4),
                         "word_f1": round(word_f1(ref, text, zh=lang == "zh"), 4),
                         "glued": round(glued(tokens(text), vocab), 4), "cpu_s": round(took, 2)})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    return rows


def docling_rows(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    expected = (folder / "ocr_test.nemotron_ocr.full_page.md").read_text("utf-8").strip()
    for name in ("ocr_test.pdf", "ocr_test_rotated_90.pdf", "ocr_test_rotated_180.pdf", "ocr_test_rotated_270.pdf"):
        text, meta, took = read(folder / name)
        out[name] = {"cer": round(cer(MARKS.sub("", expected), MARKS.sub("", text)), 4), "word_f1": round(word_f1(expected, text), 4),
                     "ocr_rotated": meta.get("ocr_rotated"), "cpu_s": round(took, 2)}
    text, meta, took = read(folder / "nemotron_multipage.pdf")
    out["nemotron_multipage.pdf"] = {
        "cer": round(cer(MARKS.sub("", expected * 4), MARKS.sub("", text)), 4), "word_f1": round(word_f1(" ".join([expected] * 4), text), 4),
        "title": meta.get("title"), "ocr_pages": meta.get("ocr_pages"), "ocr_rotated": meta.get("ocr_rotated"),
        "ocr_empty": meta.get("ocr_empty"), "cpu_s": round(took, 2)}
    paper = (folder / "2206.01062.md").read_text("utf-8")
    text, meta, took = read(folder / "2206.01062.tif")
    out["2206.01062.tif"] = {"glued": round(glued(tokens(text), vocabulary(paper)), 4),
                             "words_in_reference": round(_in_reference(text, paper), 4),
                             "ocr_rotated": meta.get("ocr_rotated"), "cpu_s": round(took, 2)}
    for k, v in out.items():
        print(k, json.dumps(v, ensure_ascii=False), flush=True)
    return out


def _in_reference(output: str, reference: str) -> float:
    """The share of the output's words that are words of the reference (the TIFF holds two of the
    paper's pages: a precision; glued words are not)."""
    ref = set(tokens(reference))
    out = tokens(output)
    return sum(1 for w in out if w in ref) / len(out) if out else 0.0


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in ("en", "zh"):
        for angle in ROTATIONS:
            some = [r for r in rows if r["lang"] == lang and r["rotation"] == angle]
            if not some:
                continue
            out[f"{lang} {angle}"] = {
                "pages": len(some), "found_right": sum(1 for r in some if r["found"] == angle),
                "cer": round(statistics.fmean(r["cer"] for r in some), 4),
                "word_f1": round(statistics.fmean(r["word_f1"] for r in some), 4),
                "glued": round(statistics.fmean(r["glued"] for r in some), 4),
                "cpu_s_per_page": round(statistics.fmean(r["cpu_s"] for r in some), 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, required=True, help="Debian's packages unpacked (real_reading.py --work-dir)/root")
    ap.add_argument("--docling", type=Path, required=True, help="docling's scans and references (SOURCE.md)")
    ap.add_argument("--datasets", type=Path, required=True, help="the folder holding cmrc2018-dev")
    ap.add_argument("--label", default="", help="written to scans-<label>.json (e.g. before)")
    args = ap.parse_args()
    import ragsift

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pages = []
        for rel, index in EN_PAGES:
            img, ref = render(args.root / "usr/share" / rel, index)
            pages.append((f"{Path(rel).name} p{index + 1}", "en", img, ref))
        for rel, index in ZH_PAGES:
            img, ref = render(args.root / "usr/share" / rel, index)
            pages.append((f"{Path(rel).parent.name}/{Path(rel).name} p{index + 1}", "zh", img, ref))
        pages += [(name, "zh", img, ref) for name, img, ref in cmrc_pages(args.datasets, work)]
        rows = rotation_rows(pages, work)
        docling = docling_rows(args.docling)
    result = {"ragsift": str(Path(ragsift.__file__).parent), "label": args.label or "after",
              "summary": summarize(rows), "rows": rows, "docling": docling}
    name = f"scans-{args.label}.json" if args.label else "scans.json"
    write_result(ROOT / "benchmarks" / "results" / name, result)  # with the command, the commit, the date, the host
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
