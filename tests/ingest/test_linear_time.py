"""Every path user text takes runs in time linear in its length (issue 51): each path is fed
long runs of each kind of character (spaces, newlines, CJK, combining marks, punctuation, digits,
right-to-left letters, Markdown's own marks) at two lengths, 4x apart, and the longer may take at
most ``MAX_RATIO`` times the shorter (linear: about 4; quadratic: about 16; a cost bounded by a
prefix, as the CSV dialect sniffer's, about 1). One 200 KB run of
spaces used to hold the interpreter for minutes in text normalization (a regular expression
retried from every space); a run of dots, of single Chinese characters, a heading line of " #"
and a long section cut into pieces did the same elsewhere.

Times are CPU times, the best of a few runs (the machine is shared); a path must be slow in absolute terms
too (``MIN_SECONDS`` at the longer length) before its ratio counts."""
from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from html import escape

import pytest

from ragsift.config import Settings
from ragsift.ingest.loaders import LoadLimits, load_bytes
from ragsift.ingest.loaders.base import Markdown, first_heading, normalize_text
from ragsift.ingest.loaders.rtf import read_rtf
from ragsift.ingest.pipeline import documents_of_records
from ragsift.ingest.small_index import SmallIndex, extractive_summary
from ragsift.ingest.splitter import SplitSettings, index_text, split_document
from ragsift.retrieve.highlight import best_sentences
from ragsift.retrieve.strategy import route
from ragsift.text.analyzer import analyzer_for
from ragsift.text.entities import entities, new_terms, residual_words
from ragsift.text.keywords import keywords
from ragsift.text.lang import detect_language
from ragsift.text.links import TitleIndex
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens, cut_to_tokens
from ragsift.types import Document, IngestReport, Span

MAX_RATIO = 9.0
MIN_SECONDS = 0.02
SHORT = 2000  # characters of the run at the shorter length

#: what a run is made of: one character class each, and the marks Markdown and the loaders read
RUNS = {
    "spaces": " ", "tabs": "\t", "newlines": "\n", "crlf": "\r\n", "blank lines": "\n \n", "indented": "\n ",
    "nbsp": "\xa0", "ideographic space": "\u3000", "zero width": "\u200b", "chinese": "设", "chinese words": "重置设备",
    "chinese punctuation": "。", "combining": "e\u0301", "lone combining": "\u0301", "arabic": "ب", "hebrew": "ש",
    "digits": "7", "numbered": "1.", "letters": "a", "capitals": "A", "camel": "aB", "words": "ab ",
    "capitalised words": "Ab ", "dots": ".", "abbreviations": "Dr. ", "dashes": "-", "pipes": "|", "hashes": "#",
    "heading marks": "# ", "stars": "*", "quotes": "'", "double quotes": '"', "brackets": "(", "angles": "<",
    "ampersands": "&", "backticks": "`", "colons": ":", "emoji": "😀", "table rows": "| a | b |\n",
    "list items": "- a\n", "headings": "# h\n",
}

LIMITS = LoadLimits(max_bytes=10 ** 9, max_chars=10 ** 9, max_seconds=10 ** 6)
SPLIT = SplitSettings()
ANALYZER = analyzer_for("ragsift-unicode-v2")
OLD_ANALYZER = analyzer_for("ragsift-zh-en-v1")
EVERY_KIND = SmallIndex(Settings().replace(small_index=["chunk", "sentence", "keys", "keywords", "entities",
                                                        "parent"]), extractive_summary)


def _doc(text: str, fmt: str) -> Document:
    return Document("d", "a.md", "Guide 指南", text, "h", fmt, {})


def _split_and_index(text: str) -> None:
    doc = _doc(text, "md")
    parents, chunks = split_document(doc, SPLIT)
    pmap = {p.parent_id: p for p in parents}
    for c in chunks + EVERY_KIND.extra(parents, chunks):
        ANALYZER.analyze(index_text(doc, pmap[c.parent_id], c, True))


def _loader(suffix: str, wrap: Callable[[str], str] = lambda s: s) -> Callable[[str], object]:
    return lambda s: load_bytes(wrap(s).encode("utf-8"), suffix, "a" + suffix, LIMITS)


def _markdown(s: str) -> str:
    md = Markdown()
    md.heading(1, s)
    md.para(s)
    md.item(s, 1)
    md.table([[s, "x"], ["y", s]])
    md.code(s)
    return md.text()


def _records(s: str) -> list:
    return list(documents_of_records([{"id": "r", "title": s[:300], "text": s}], "api", IngestReport()))


TITLES = TitleIndex([("d1", "Reset Guide"), ("d2", "恢复出厂设置"), ("d3", "Oceans (film)")])
EML = "From: a@example.com\nTo: b@example.com\nSubject: 重置 reset\nContent-Type: text/plain; charset=utf-8\n\n{}"
HTML = "<html><head><title>t</title></head><body><h1>重置</h1><p>{0}</p><ul><li>{0}</li></ul>" \
       "<table><tr><th>a</th></tr><tr><td>{0}</td></tr></table><pre>{0}</pre></body></html>"

#: every path user text takes: loading (each text format), normalizing, splitting, the small index and
#: the analyzer's terms, language, tokens, keywords, entities, titles, highlights, the router
PATHS: dict[str, Callable[[str], object]] = {
    "normalize": normalize_text,
    "first heading": first_heading,
    "markdown writer": _markdown,
    "markdown file": _loader(".md"),
    "text file": _loader(".txt"),
    "html file": _loader(".html", lambda s: HTML.format(s.replace("<", "&lt;"))),
    "jsonl file": _loader(".jsonl", lambda s: json.dumps({"_id": "a", "title": s[:300], "text": s})),
    "csv file": _loader(".csv", lambda s: f"name,value\nx,\"{s.replace(chr(34), '')}\"\n"),
    "mail file": _loader(".eml", EML.format),
    "json file": _loader(".json", lambda s: json.dumps({"title": s[:300], "body": [{"text": s}]})),
    "xml file": _loader(".xml", lambda s: f"<doc><title>t</title><p>{escape(s)}</p><v>{escape(s[:60])}</v></doc>"),
    "rtf reader": lambda s: read_rtf(("{\\rtf1\\ansi\\ansicpg936 {\\info{\\title t}}" + s + "\\par}").encode("utf-8")),
    "utf-16 text file": lambda s: load_bytes(s.encode("utf-16-le"), ".txt", "a.txt", LIMITS),
    "gb18030 text file": lambda s: load_bytes(s.encode("gb18030"), ".txt", "a.txt", LIMITS),
    "records": _records,
    "split and index": _split_and_index,
    "split plain text": lambda s: split_document(_doc(s, "text"), SPLIT),
    "sentences": sentence_spans,
    "tokens": lambda s: (count_tokens(s), cut_to_tokens(s, 10 ** 9)),
    "language": detect_language,
    "analyzer": ANALYZER.terms,
    "analyzer (zh-en-v1)": OLD_ANALYZER.terms,
    "keywords": keywords,
    "entities": entities,
    "titles": lambda s: (TitleIndex([("x", s)]), TITLES.find(s)),
    "highlight": lambda s: best_sentences(s, [Span("c", 0, len(s), ("dense",))], "reset the device 恢复设置",
                                          ANALYZER, "Guide > 指南"),
    "next hop terms": lambda s: (new_terms("Who founded the Reset company?", [s]),
                                 residual_words("Who founded the Reset company?", [s])),
    "router": lambda s: route(s[:2000], TITLES),
}


def _best(fn: Callable[[str], object], text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()  # CPU time: the other processes of a busy machine do not count
        fn(text)
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.parametrize("path", list(PATHS))
def test_every_text_path_is_linear_in_its_input(path):
    fn = PATHS[path]
    fn("Reset the device. 恢复出厂设置。")  # models and dictionaries loaded before timing
    gc.collect()
    gc.disable()  # a full collection walks every object (the segmenter's dictionary): ~50 ms at random
    try:
        slow = _slow_runs(fn)
    finally:
        gc.enable()
    assert not slow, f"{path} is super-linear on runs of " + "; ".join(slow)


def _slow_runs(fn: Callable[[str], object]) -> list[str]:
    slow = []
    for name, unit in RUNS.items():
        n = max(1, SHORT // len(unit))
        # the run ends in a letter: a pattern such as ``[ \t]+\n`` fails only then, after scanning it
        once, four = (f"Reset the device. 恢复出厂设置。\n{unit * (n * m)}x\nend 结束。" for m in (1, 4))
        short, long = _best(fn, once, 2), _best(fn, four, 1)
        if long > MIN_SECONDS and long > MAX_RATIO * short:  # measured again, longer, before it counts
            short, long = _best(fn, once, 5), _best(fn, four, 3)
        if long > MIN_SECONDS and long > MAX_RATIO * short:
            slow.append(f"{name}: {short * 1000:.1f} ms -> {long * 1000:.1f} ms")
    return slow
