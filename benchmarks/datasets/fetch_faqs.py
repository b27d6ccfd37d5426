"""FAQ sets nobody here wrote: the Debian FAQ in English and in Chinese, as BEIR folders.

    .venv/bin/python benchmarks/datasets/fetch_faqs.py       # -> benchmarks/data/debian-faq-{en,zh,xling}

Downloads Debian's ``debian-faq`` and ``debian-faq-zh-cn`` packages (bookworm, 11.1; apt-get
download, unpacked with dpkg-deb) and reads their HTML editions (DocBook: one ``div.section`` per
question, its ``h2`` the question, the same anchor id in both languages). Every section whose
English heading is a question (ends with "?") becomes one FAQ entry:

- the **document** is the answer alone (the section's text below its heading; paragraphs, list
  items and code blocks as blocks separated by blank lines, as a user's text file of the answer
  would be), so the question's words are not handed to the search in its heading;
- the **query** is the question (its numbering taken away), judged relevant to its own answer.

The FAQ's other sections (headings that are not questions) are documents too, found by no
question. Three sets: ``debian-faq-en`` (English questions, English answers), ``debian-faq-zh`` (Chinese
questions, Chinese answers) and ``debian-faq-xling`` (the English questions, the Chinese answers:
the same FAQ asked in English). The answers' text is the FAQ's authors' (GPL-2+, see SOURCE.md);
nothing is written here but the split into entries.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from real_reading import fetch  # noqa: E402

OUT = ROOT / "benchmarks" / "data"
PACKAGES = ["debian-faq", "debian-faq-zh-cn"]
FAQ = "usr/share/doc/debian/FAQ"
BLOCKS = {"p", "li", "pre", "dt", "dd", "tr", "h3", "h4", "h5", "blockquote"}
NUMBER = re.compile(r"^\s*[\d.]+\s*")


def blocks(el) -> list[str]:
    """The element's text as blocks (paragraphs, list items, code), in order, innermost blocks kept whole."""
    out: list[str] = []
    for node in el.iter():
        if node.tag in BLOCKS and not any(a.tag in BLOCKS for a in node.iterancestors()):
            text = node.text_content()
            text = text.strip("\n") if node.tag == "pre" else " ".join(text.split())
            if text.strip():
                out.append(text)
    return out


def entries(folder: Path, lang: str) -> dict[str, tuple[str, str]]:
    """anchor id -> (question, answer) of every section of the FAQ's chapters in one language."""
    import lxml.html

    out: dict[str, tuple[str, str]] = {}
    for page in sorted(folder.glob(f"*.{lang}.html")):
        if page.name.startswith("index."):
            continue
        doc = lxml.html.fromstring(page.read_bytes())
        for sec in doc.xpath('//div[@class="section"]'):
            h = sec.xpath('./div[@class="titlepage"]//h2')
            anchor = sec.xpath('./div[@class="titlepage"]//h2/a/@id')
            if not h or not anchor:
                continue
            question = NUMBER.sub("", " ".join(h[0].text_content().split()))
            body = [b for child in sec if child.get("class") != "titlepage" for b in blocks(child)]
            if body:
                out[anchor[0]] = (question, "\n\n".join(body))
    return out


def write(name: str, pairs: list[tuple[str, str, str]], others: list[tuple[str, str]], source: str) -> None:
    """pairs: (id, question, answer) of the FAQ's questions; others: (id, text) of its other sections."""
    folder = OUT / name
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for i, a in [(i, a) for i, _, a in pairs] + others:
            f.write(json.dumps({"_id": i, "title": "", "text": a}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for i, q, _ in pairs:
            f.write(json.dumps({"_id": f"q-{i}", "text": q}, ensure_ascii=False) + "\n")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        f.writelines(f"q-{i}\t{i}\t1\n" for i, _, _ in pairs)
    (folder / "SOURCE.md").write_text(source, encoding="utf-8")
    print(f"{name}: {len(pairs)} questions, {len(others)} other sections, "
          f"mean answer {sum(len(a) for _, _, a in pairs) / len(pairs):.0f} chars")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="faqs-") as tmp:
        root = fetch(Path(tmp), PACKAGES, f"{FAQ}/zh-cn/basic-defs.zh-cn.html")
        debs = {d.name: hashlib.sha256(d.read_bytes()).hexdigest() for d in sorted((Path(tmp) / "debs").glob("*.deb"))}
        en = entries(root / FAQ, "en")
        zh = entries(root / FAQ / "zh-cn", "zh-cn")
    ids = [i for i, (q, _) in en.items() if q.endswith("?") and i in zh]
    source = ("# Debian FAQ (bookworm, 11.1) as FAQ retrieval sets\n\n"
              f"Made by `python {Path(__file__).relative_to(ROOT)}` from Debian's packages "
              + ", ".join(f"`{n}` (sha256 {h})" for n, h in debs.items())
              + ". The FAQ is by its authors (the Debian FAQ authors, GPL-2+). One entry per section "
              "whose English heading is a question: the answer is the document, the question (numbering "
              "taken away) the query. Set to the entries in the FAQ's own order (even / odd as in the file).\n")
    rest = [i for i in en if i in zh and i not in ids]  # sections that are not questions: more to search
    write("debian-faq-en", [(i, en[i][0], en[i][1]) for i in ids], [(i, en[i][1]) for i in rest], source)
    write("debian-faq-zh", [(i, zh[i][0], zh[i][1]) for i in ids], [(i, zh[i][1]) for i in rest], source)
    write("debian-faq-xling", [(i, en[i][0], zh[i][1]) for i in ids], [(i, zh[i][1]) for i in rest], source)


if __name__ == "__main__":
    sys.exit(main())
