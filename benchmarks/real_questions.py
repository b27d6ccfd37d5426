"""Questions asked of real documents as read (issue 52): the same questions over a knowledge base of
the PDF as ragsift reads it, of other readers' text of the same PDF, and of the reference text (the
HTML edition, or the LaTeX source), on the documents of ``real_reading.py``.

    .venv/bin/python benchmarks/real_questions.py --work-dir /work/data-ext/real-reading
    # the texts real_reading.py kept (out/<tag>/<name>.md) are read as Markdown for the other readers:
    .venv/bin/python benchmarks/real_questions.py --kept before,markitdown

**The questions come from the documents' own authors, not from us.** Two sets per document:
- ``index``: the entries of a texinfo manual's printed index (R's manuals: "Generalized linear
  models", "lapply", ...). An entry points to a place in the text; that place (the twelve words
  that follow its anchor in the HTML edition) is what the question asks for. Entries of fewer than
  four letters (``c``, ``[[``) are left out; one question per distinct entry text, its first place.
- ``headings``: each section's heading asked as a question (numbering taken away; at least two
  words, or four CJK characters); its place is the twelve words that open the section's text.
At most ``--per-set`` questions per document and set, taken evenly over the document.

**A passage holds a place** when at least 60% of the place's word pairs (words as real_reading.py
counts them: lower-cased runs of letters and digits, each CJK character a word) occur in the
passage's text. **nDCG@10** with one relevant item per question: the first passage that holds the
place (``ragsift.eval.metrics.ndcg_at_k`` over passages labelled hit/miss); also hit@10.

**The knowledge bases**, one per document and reader, each with the defaults (no setting named but
``max_passages=10`` and a token budget that lets ten passages through): ``reference`` (the
reference as Markdown: the HTML's headings as ``#`` lines, its text, its index kept, as the PDF
keeps its printed index; the LaTeX's sections), ``ragsift`` (the PDF itself, ingested as a user
would), and each ``--kept`` reader's text as a Markdown file.

Writes benchmarks/results/real_questions.json.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT / "benchmarks"))

from harness import evenly, read_result, write_result  # noqa: E402
from real_reading import LATEX_HEADING, NUMBERING, SKIP_CLASSES, _detex, documents, fetch, words  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "real_questions.json"
PLACE_WORDS = 12
HOLDS = 0.6
MARK = "\u2063"  # an index anchor's place in the reference text, taken out before it is stored


# ------------------------------------------------------------------ the reference and its questions
def html_reference(html: Path) -> tuple[str, list[dict[str, str]]]:
    """The HTML edition as Markdown (headings as ``#`` lines) and its index entries with the anchor
    each points to."""
    import lxml.html

    tree = lxml.html.fromstring(html.read_bytes())
    body = tree.find("body") if tree.find("body") is not None else tree
    entries = []
    for a in body.iter("a"):
        href = a.get("href") or ""
        parent = a.getparent()
        if href.startswith("#index-") and parent is not None and parent.tag == "td":
            entries.append({"entry": " ".join(a.text_content().split()), "anchor": href[1:]})
    for el in list(body.iter()):
        cls = set((el.get("class") or "").split())
        if el.tag in ("script", "style") or cls & SKIP_CLASSES:
            if el.getparent() is not None:
                el.drop_tree()
    for el in list(body.iter()):  # a list: the loop takes headings' children out
        ident = el.get("id") or ""
        if ident.startswith("index-"):
            el.text = f"{MARK}{ident}{MARK}" + (el.text or "")
        if el.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            title = " ".join(el.text_content().split())
            for child in list(el):
                el.remove(child)
            el.text = f"\n\n{'#' * int(el.tag[1])} {title}\n\n"
        elif el.tag in ("p", "pre", "li", "tr", "dt", "dd", "div", "br", "table"):
            el.tail = "\n\n" + (el.tail or "")
        elif el.tag in ("td", "th"):
            el.tail = " | " + (el.tail or "")
    return re.sub(r"\n{3,}", "\n\n", body.text_content()), entries


def latex_markdown(tex: Path) -> str:
    """A paper's LaTeX source as Markdown: its title, abstract and sections as ``#`` lines, the text
    between them as ``real_reading.latex_reference`` takes it."""
    src = re.sub(r"(?<!\\)%.*", "", tex.read_text(encoding="utf-8", errors="replace"))
    body = src[src.find("\\begin{document}"):] if "\\begin{document}" in src else src
    body = body.replace("\\begin{abstract}", "\\section{Abstract}")
    out, last = [], 0
    for m in LATEX_HEADING.finditer(body):
        out.append(_detex(body[last:m.start()]))
        out.append(f"\n\n## {_detex(m.group(1))}\n\n")
        last = m.end()
    out.append(_detex(body[last:]))
    title = re.search(r"\\title\{((?:[^{}]|\{[^{}]*\})*)\}", src)
    return (f"# {_detex(title.group(1))}\n\n" if title else "") + "".join(out)


ANCHOR = re.compile(f"{MARK}([^{MARK}]+){MARK}")


def _place(text: str, start: int) -> list[str]:
    return words(ANCHOR.sub(" ", text[start:start + 2000]))[:PLACE_WORDS]


def questions(markdown: str, entries: list[dict[str, str]], lang: str, per_set: int) -> tuple[str, list[dict[str, Any]]]:
    """The index and heading questions of a reference text and their places; the text without its
    anchor marks."""
    qs: list[dict[str, Any]] = []
    where = {m.group(1): m.end() for m in ANCHOR.finditer(markdown)}
    seen: set[str] = set()
    index = []
    for e in entries:
        key = e["entry"].casefold()
        if key in seen or sum(c.isalpha() for c in e["entry"]) < 4 or e["anchor"] not in where:
            continue
        seen.add(key)
        place = _place(markdown, where[e["anchor"]])
        if len(place) >= 6:
            index.append({"set": "index", "question": e["entry"], "place": place})
    qs += evenly(index, per_set)
    heads = []
    for m in re.finditer(r"(?m)^#{1,6} (.+)$", markdown):
        q = NUMBERING.sub("", m.group(1)).strip()
        cjk = sum(1 for w in words(q) if len(w) == 1 and not w.isascii())
        if (len(q.split()) >= 2 or cjk >= 4) and q.casefold() not in seen:
            seen.add(q.casefold())
            place = _place(markdown, m.end())
            if len(place) >= 6:
                heads.append({"set": "headings", "question": q, "place": place})
    qs += evenly(heads, per_set)
    return ANCHOR.sub("", markdown), qs


def holds(place: list[str], text: str) -> bool:
    pairs = set(zip(place, place[1:]))
    ws = words(text)
    have = set(zip(ws, ws[1:]))
    return len(pairs & have) >= HOLDS * len(pairs)


# ------------------------------------------------------------------ asking
def ask(kb_dir: Path, source: Path, qs: list[dict[str, Any]]) -> dict[str, Any]:
    from ragsift.eval.metrics import ndcg_at_k
    from ragsift.kb import KnowledgeBase

    shutil.rmtree(kb_dir, ignore_errors=True)
    kb = KnowledgeBase.open(kb_dir, max_file_seconds=3600.0)
    t = time.perf_counter()
    report = kb.ingest(source)
    took = time.perf_counter() - t
    per_set: dict[str, list[float]] = {}
    hits: dict[str, list[float]] = {}
    for q in qs:
        res = kb.query(q["question"], max_passages=10, token_budget=100_000)
        ranked = [("place" if holds(q["place"], p.text) else f"miss{i}") for i, p in enumerate(res.passages)]
        if "place" in ranked:  # the first passage that holds it
            first = ranked.index("place")
            ranked = [r if i == first else f"miss{i}" for i, r in enumerate(ranked)]
        per_set.setdefault(q["set"], []).append(ndcg_at_k(ranked, {"place": 1}, 10))
        hits.setdefault(q["set"], []).append(1.0 if "place" in ranked else 0.0)
    kb.close()
    shutil.rmtree(kb_dir, ignore_errors=True)
    return {"ingest_seconds": round(took, 1), "sections": report.parents, "entries": report.children, "skipped": [s.reason for s in report.skipped],
            **{f"ndcg@10_{s}": round(statistics.fmean(v), 4) for s, v in per_set.items()},
            **{f"hit@10_{s}": round(statistics.fmean(v), 4) for s, v in hits.items()},
            "scores": {s: v for s, v in per_set.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work-dir", type=Path, default=ROOT.parent / "data-ext" / "real-reading")
    ap.add_argument("--only", default="", help="names of documents, comma-separated")
    ap.add_argument("--kept", default="", help="readers whose kept texts (out/<name>/) are asked too, comma-separated")
    ap.add_argument("--per-set", type=int, default=60, help="questions per document and set, at most")
    ap.add_argument("--resume", action="store_true", help="keep the documents the result file has, measure the rest")
    args = ap.parse_args()
    root = fetch(args.work_dir)
    docs = [d for d in documents(root) if not args.only or d["name"] in args.only.split(",")]
    tmp = args.work_dir / "questions-tmp"
    done = read_result(OUT) if args.resume else None
    rows: dict[str, Any] = dict(done["rows"]) if done else {}
    for d in docs:
        if d["name"] in rows:
            continue  # --resume: measured by the run this one carries on
        if "tex" in d:
            markdown, entries = latex_markdown(d["tex"]), []
        else:
            markdown, entries = html_reference(d["html"])
        text, qs = questions(markdown, entries, d["lang"], args.per_set)
        if not qs:
            continue
        ref = tmp / "reference" / f"{d['name']}.md"
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(text, encoding="utf-8")
        row: dict[str, Any] = {"lang": d["lang"], "kind": d["kind"],
                               "questions": {s: sum(1 for q in qs if q["set"] == s) for s in ("index", "headings")}}
        pdf = tmp / "pdf" / d["pdf"].name
        pdf.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(d["pdf"], pdf)
        readers = {"reference": ref, "ragsift": pdf}
        for name in filter(None, args.kept.split(",")):
            kept = args.work_dir / "out" / name / f"{d['name']}.md"
            if kept.exists():
                readers[name] = kept
        for name, source in readers.items():
            row[name] = ask(tmp / "kb", source, qs)
            print(d["name"], name, {k: v for k, v in row[name].items() if k != "scores"}, flush=True)
        rows[d["name"]] = row
        # after each document: a long run stopped keeps what it measured (--resume carries on)
        write_result(OUT, {"rows": rows, "place_words": PLACE_WORDS, "holds": HOLDS, "per_set": args.per_set})


if __name__ == "__main__":
    main()
