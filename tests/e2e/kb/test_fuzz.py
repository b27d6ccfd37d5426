"""Property-based fuzzing (Hypothesis) of every door input comes through: queries, filters,
per-query settings, ``ragsift.toml``, JSONL rows and files. Queries, filters, settings and
ingests go through the real API on a small minilm knowledge base. Every case must give a
correct result or one clear error (a ``RagsiftError`` of one line): never a traceback, never
an empty result for a valid query, and the knowledge base unchanged or committed whole.

Filter results are checked against an independent evaluator (plain Python over the stored
metadata) of the parsed filter: the store must return only documents the filter admits, and
something whenever some document is admitted. The number of cases run is printed at the end
of the test session (``conftest.pytest_terminal_summary``). Runs are derandomized, so CI is
reproducible; set ``RAGSIFT_FUZZ_SEED`` (any value) to draw new random cases instead."""
from __future__ import annotations

import json
import math
import os
import string
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsift.config import Settings
from ragsift.errors import ConfigError, FilterError, QueryError, RagsiftError
from ragsift.ingest.loaders import load_file, load_jsonl
from ragsift.kb import KnowledgeBase
from ragsift.store.filters import And, Cmp, Not, Or, parse_filter

CASES: Counter = Counter()  # cases run, by door (printed by conftest)
OUTCOMES: Counter = Counter()  # how they ended (printed too: a fuzz run that only hits errors proves little)
_SEED = os.environ.get("RAGSIFT_FUZZ_SEED")
FUZZ = settings(deadline=None, database=None, derandomize=_SEED is None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])

TEAMS = ["infra", "data", "web", "数据平台"]
TAGS = ["manual", "faq", "手册", "safety", "network"]
TOPICS = [("蓝牙配对", "长按电源键五秒进入蓝牙配对模式，指示灯闪烁蓝色。"),
          ("Factory reset", "Hold the reset button for ten seconds to restore factory settings."),
          ("备份策略", "每天凌晨两点进行全量备份，备份保留三十天。"),
          ("Alert thresholds", "Alerts fire when disk usage stays above ninety percent for five minutes."),
          ("网络配置", "在设置页面输入无线网络名称和密码，然后点击连接。"),
          ("Firmware update", "Download the firmware image and upload it on the maintenance page."),
          ("电池保养", "长期不用时请将电池充电到百分之五十并存放在阴凉处。"),
          ("Access control", "Only members of the admin group may change the retention policy.")]


def _corpus() -> list[dict[str, Any]]:
    docs = []
    for i in range(12):
        title, text = TOPICS[i % len(TOPICS)]
        docs.append({"id": f"doc{i}", "title": f"{title} {i}", "text": f"{text} (第{i}号文档, document {i})",
                     "source": f"fuzz/{'zh' if i % 2 == 0 else 'en'}_{i}.md",
                     "metadata": {"team": TEAMS[i % 4], "year": 2018 + i % 7, "score": round(0.37 * i - 1.5, 3),
                                  "tags": [TAGS[i % 5], TAGS[(i * 3 + 1) % 5]]}})
    return docs


@pytest.fixture(scope="module")
def fuzz_kb(tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("fuzz") / "kb", embedder="minilm")
    report = kb.add_documents(_corpus(), source="fuzz")
    assert len(report.added) == 12 and not report.skipped
    stored = {doc_id: {**d.metadata, "doc_id": doc_id, "source": d.source, "title": d.title, "format": d.format}
              for doc_id, d in kb.documents().items()}
    return kb, stored


def _one_clear_line(e: RagsiftError) -> None:
    text = str(e)
    assert text and "\n" not in text and "Traceback" not in text, repr(text)


# ---------------------------------------------------------------------------------- queries
WORDS = [w for title, text in TOPICS for w in (title, text[:12])] + ["the", "how", "怎么", "？", "?", " "]
hostile_chars = st.one_of(st.characters(), st.sampled_from(  # anything, lone surrogates included
    ["\ud800", "\udfff", "\x00", "\u2028", "\ufeff", "\u200b", "\x85", "\r"]))
queries = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=hostile_chars, max_size=60),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map("".join),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join).flatmap(
        lambda q: st.integers(1, 3000).map(lambda n: q * n)),  # up to far past the length limit
    st.sampled_from(["", " ", "\n\t", "\u3000", "\x00", "\ud800", "🙂" * 5, "' OR 1=1 --", "*:*", "a" * 20_000]),
)


def _expect_passages_or_query_error(kb: KnowledgeBase, q: str, **kw: Any):
    limit = kb.settings.query.max_query_chars
    try:
        result = kb.query(q, **kw)
    except QueryError as e:
        _one_clear_line(e)
        OUTCOMES["query refused"] += 1
        assert not q.strip() or len(q) > limit or "\x00" in q or any(0xD800 <= ord(c) <= 0xDFFF for c in q), \
            f"a valid query was refused: {e}"
        return None
    assert q.strip() and len(q) <= limit
    if not any(unicodedata.category(c)[0] in "LN" for c in q):  # no letter or digit: nothing to search, said so
        assert result.no_good_match and result.passages == () and "nothing to search" in result.match.reason
        OUTCOMES["nothing to search, said so"] += 1
        return result
    assert result.passages, f"no passages for the valid query {q[:80]!r}"
    OUTCOMES["query answered"] += 1
    return result


@settings(FUZZ, max_examples=300)
@given(q=queries)
def test_fuzz_queries(fuzz_kb, q):
    CASES["queries"] += 1
    kb, _ = fuzz_kb
    _expect_passages_or_query_error(kb, q)


# ---------------------------------------------------------------------------------- filters
BIG_INTS = st.sampled_from([2 ** 63 - 1, 2 ** 63, -(2 ** 63), -(2 ** 63) + 1, 10 ** 30, -1, 0])
any_scalar = st.one_of(st.none(), st.booleans(), st.integers(), BIG_INTS, st.floats(allow_nan=True),
                       st.text(max_size=10), st.text(alphabet=hostile_chars, max_size=4))
values_for = {
    "team": st.one_of(st.sampled_from(TEAMS), st.text(max_size=8)),
    "year": st.one_of(st.integers(2015, 2027), st.integers(2015, 2027), BIG_INTS),
    "score": st.one_of(st.floats(-3, 4, allow_nan=False), st.integers(-3, 4), st.sampled_from([0.37 * 4 - 1.5, 2.2])),
    "tags": st.one_of(st.sampled_from(TAGS), st.text(max_size=6)),
    "source": st.sampled_from([d["source"] for d in _corpus()]),
    "title": st.sampled_from([d["title"] for d in _corpus()]),
}
OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "$in", "$eq", "like", "", "EQ"]


SCALAR_OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "$in", "$eq"]
LIST_FIELD_OPS = ["contains", "in", "nin"]


@st.composite
def comparisons(draw):
    """Mostly comparisons a user means (so results get checked), one in eight hostile."""
    hostile = draw(st.integers(0, 7)) == 0
    names = list(values_for) + (["missing", "", "m_team", "gen", "a'b"] if hostile else [])
    field = draw(st.sampled_from(names))
    value = draw(st.one_of(values_for.get(field, any_scalar), any_scalar) if hostile
                 else values_for.get(field, any_scalar))
    shape = draw(st.integers(0, 9))
    if shape <= 2 and field != "tags":
        return {field: value}  # equality
    ops = OPS if hostile else LIST_FIELD_OPS if field == "tags" else SCALAR_OPS
    op = draw(st.sampled_from(ops))
    if op in ("in", "nin", "$in") and not (hostile and shape == 9):
        value = draw(st.lists(values_for.get(field, any_scalar), min_size=1, max_size=4))
    return {field: {op: value}}


filters = st.recursive(
    comparisons(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: {"and": xs}),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: {"or": xs}),
        inner.map(lambda x: {"not": x}),
        st.tuples(inner, inner).map(lambda ab: {**ab[0], **ab[1]}),
    ),
    max_leaves=8,
)
deep_filters = st.tuples(st.integers(1, 40), comparisons()).map(
    lambda nf: _wrap_not(nf[1], nf[0]))
garbage_filters = st.one_of(any_scalar, st.lists(any_scalar, max_size=3),
                            st.dictionaries(st.text(max_size=5), any_scalar, max_size=3))


def _floats(lo: float, hi: float):
    """Floats in [lo, hi], and the values that are not: NaN and the infinities."""
    return st.one_of(st.floats(lo, hi), st.sampled_from([float("nan"), float("inf"), float("-inf")]))


def _wrap_not(f, n):
    for _ in range(n):
        f = {"not": f}
    return f


def admits(node, meta: dict[str, Any]) -> bool:
    """The independent evaluator: what a parsed filter means, in plain Python."""
    if node is None:
        return True
    if isinstance(node, And):
        return all(admits(n, meta) for n in node.items)
    if isinstance(node, Or):
        return any(admits(n, meta) for n in node.items)
    if isinstance(node, Not):
        return not admits(node.item, meta)
    assert isinstance(node, Cmp)
    have = meta[node.field]
    if isinstance(have, list):
        wanted = node.value if isinstance(node.value, tuple) else (node.value,)
        hit = any(v in have for v in wanted)
        return not hit if node.op == "nin" else hit
    v = node.value
    return {"eq": lambda: have == v, "ne": lambda: have != v, "gt": lambda: have > v, "gte": lambda: have >= v,
            "lt": lambda: have < v, "lte": lambda: have <= v, "in": lambda: have in v,
            "nin": lambda: have not in v}[node.op]()


@settings(FUZZ, max_examples=350)
@given(pick=st.integers(0, 7), data=st.data(), q=st.sampled_from(WORDS[:8]))
def test_fuzz_filters(fuzz_kb, pick, data, q):
    CASES["filters"] += 1
    spec = data.draw(filters if pick < 6 else deep_filters if pick == 6 else garbage_filters)
    kb, stored = fuzz_kb
    try:
        node = parse_filter(spec, kb.store.fields())
    except FilterError as e:
        _one_clear_line(e)
        with pytest.raises(FilterError):  # the API refuses it the same way
            kb.query(q, filter=spec)
        OUTCOMES["filter refused"] += 1
        return
    admitted = {doc_id for doc_id, meta in stored.items() if admits(node, meta)}
    result = kb.query(q, filter=spec, max_passages=50)
    found = {p.doc_id for p in result.passages}
    assert found <= admitted, f"{spec!r} let in {found - admitted}"
    assert bool(found) == bool(admitted), f"{spec!r} admits {sorted(admitted)} but nothing was returned"
    OUTCOMES["filter checked by the evaluator"] += 1


# --------------------------------------------------------------------------------- settings
channel_names = st.sampled_from(["dense", "bm25", "keywords", "entities", "sparse", "hyde", "nope", "", "DENSE"])
weird = st.one_of(any_scalar, st.lists(any_scalar, max_size=3), st.dictionaries(st.text(max_size=4), any_scalar, max_size=2),
                  st.sampled_from([float("inf"), -0.0, 1e308, "5", "inf", [], {}]))
SETTING_VALUES = {
    "channels": st.one_of(st.lists(channel_names, max_size=3), channel_names),
    "fusion": st.sampled_from(["rrf", "weighted", "RRF", "max", 1]),
    "rrf_k": st.integers(-5, 200_000),
    "weights": st.dictionaries(channel_names, st.one_of(_floats(-1, 2000), st.integers(0, 3)), max_size=3),
    "normalization": st.sampled_from(["minmax", "zscore", "rank", "none", "x"]),
    "channel_depth": st.one_of(st.integers(-1, 20_000), st.just(10 ** 12)),
    "unit": st.sampled_from(["parent", "child", "window", "auto", "document", "x"]),
    "window_sentences": st.integers(-1, 200),
    "merge_threshold": _floats(-1, 2),
    "max_passages": st.integers(-1, 2000),
    "token_budget": st.integers(-1, 2_000_000),
    "channel_timeout_s": st.one_of(_floats(0, 100), st.just(1e-9)),
    "channel_timeouts": st.dictionaries(channel_names, _floats(0, 1e6), max_size=2),
    "max_query_chars": st.integers(-1, 2_000_000),
    "max_filter_nodes": st.integers(-1, 200_000),
    "multihop_mode": st.sampled_from(["off", "keywords", "x"]),
    "hops_max": st.integers(0, 12), "hop_queries": st.integers(0, 12), "hop_top": st.integers(0, 120),
    "hop_min_gain": _floats(-1, 2), "hop_protect": st.integers(-1, 120),
    "hop_time_s": _floats(0, 1e6),
}
VALID_VALUES = {  # what a user means: these must be answered
    "channels": st.lists(st.sampled_from(["dense", "bm25", "keywords", "entities"]), min_size=1, max_size=3, unique=True),
    "fusion": st.sampled_from(["rrf", "weighted"]), "rrf_k": st.integers(0, 1000),
    "weights": st.dictionaries(st.sampled_from(["dense", "bm25"]), st.floats(0.01, 10), min_size=1, max_size=2),
    "normalization": st.sampled_from(["minmax", "zscore", "rank", "none"]), "channel_depth": st.integers(1, 500),
    "unit": st.sampled_from(["parent", "child", "window", "auto"]), "window_sentences": st.integers(0, 5),
    "merge_threshold": st.floats(0.01, 1), "max_passages": st.integers(1, 50), "token_budget": st.integers(50, 100_000),
    "channel_timeout_s": st.floats(5, 600), "max_query_chars": st.integers(100, 100_000),
    "max_filter_nodes": st.integers(1, 5000), "multihop_mode": st.sampled_from(["off", "keywords"]),
    "hops_max": st.integers(1, 3), "hop_queries": st.integers(1, 3), "hop_top": st.integers(1, 20),
    "hop_min_gain": st.floats(0, 1), "hop_protect": st.integers(0, 10), "hop_time_s": st.floats(5, 600),
}
NOT_QUERY_SETTINGS = ["embedder", "store", "bogus", "child_tokens"]


@st.composite
def overrides(draw):
    """Up to three per-query settings: mostly values a user means, one in eight outside their
    range and one in eight of any type; one key in eight is not a query setting at all.
    (A choice by number: ``one_of`` of the same strategy repeated would not weigh it.)"""
    kw = {}
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.integers(0, 7)) == 0:
            kw[draw(st.sampled_from(NOT_QUERY_SETTINGS))] = draw(weird)
            continue
        key = draw(st.sampled_from(list(SETTING_VALUES)))
        r = draw(st.integers(0, 7))
        kw[key] = draw(VALID_VALUES[key] if r < 6 and key in VALID_VALUES else SETTING_VALUES[key] if r < 7 else weird)
    return kw


@settings(FUZZ, max_examples=200)
@given(kw=overrides(), q=st.sampled_from(WORDS[:8]))
def test_fuzz_query_settings(fuzz_kb, kw, q):
    CASES["settings"] += 1
    kb, _ = fuzz_kb
    try:
        kb.query_settings(**kw)
    except RagsiftError as e:
        _one_clear_line(e)
        with pytest.raises(type(e)):  # the query refuses them the same way
            kb.query(q, **kw)
        OUTCOMES["settings refused"] += 1
        return
    try:
        result = kb.query(q, **kw)
    except RagsiftError as e:  # e.g. every channel timed out at 1e-9 s: said, not an empty list
        _one_clear_line(e)
        OUTCOMES["settings accepted, query failed clearly"] += 1
        return
    assert result.passages, f"{kw!r}: no passages"
    OUTCOMES["settings accepted and answered"] += 1


toml_values = st.one_of(st.integers(-10, 10 ** 6), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                        st.text(max_size=8), st.lists(st.integers(0, 3), max_size=3), st.sampled_from(
                            ["rrf", "weighted", "parent", "child", "lancedb", "milvus", "minilm", "dense"]))
TOML_KEYS = {"query": ["fusion", "rrf_k", "channels", "weights", "channel_timeout_s", "max_passages", "unit",
                       "nonsense"],
             "index": ["embedder", "child_tokens", "parent_max_tokens", "child_overlap_tokens", "nonsense"],
             "store": ["kind", "keep_generations", "optimize_every", "lock_timeout_s"],
             "ingest": ["max_file_mb", "max_document_chunks"]}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, (int, list)):
        return json.dumps(v)
    return json.dumps(v, ensure_ascii=False)


@settings(FUZZ, max_examples=100)
@given(groups=st.lists(st.sampled_from(list(TOML_KEYS)), unique=True, max_size=3), data=st.data(),
       garbage=st.one_of(st.just(""), st.just(""), st.text(alphabet=hostile_chars, max_size=20)))
def test_fuzz_settings_file(tmp_path_factory, groups, data, garbage):
    CASES["settings files"] += 1
    lines = []
    for group in groups:
        lines.append(f"[{group}]")
        for key in data.draw(st.lists(st.sampled_from(TOML_KEYS[group]), unique=True, max_size=3)):
            lines.append(f"{key} = {_toml_value(data.draw(toml_values))}")
    text = "\n".join(lines) + ("\n" + garbage if garbage else "") + "\n"
    path = tmp_path_factory.mktemp("toml") / "ragsift.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        s = Settings.load(path)
    except ConfigError as e:
        _one_clear_line(e)
        return
    again = tmp_path_factory.mktemp("toml") / "ragsift.toml"
    s.save(again)
    assert Settings.load(again) == s  # what loads, saves and loads back the same


# ------------------------------------------------------------------------------ JSONL rows
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), BIG_INTS, st.floats(allow_nan=False),
                      st.text(max_size=12), st.text(alphabet=hostile_chars, max_size=4),
                      st.sampled_from(["\u2028", "a\u2029b", "\x85", "第一行\u2028第二行"]))
json_values = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                              st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=10)
row_ids = st.one_of(st.text(min_size=1, max_size=12), st.integers(), BIG_INTS, st.none(), st.floats(),
                    st.lists(st.integers(), max_size=2), st.just(""), st.just("x" * 2000))
rows = st.fixed_dictionaries({}, optional={
    "_id": row_ids, "title": st.one_of(st.text(max_size=20), json_leaf),
    "text": st.one_of(st.sampled_from([t for _, t in TOPICS]), st.text(max_size=80), json_leaf,
                      st.sampled_from(["段落一\u2028段落二", "line\u2029line", ""])),
    "metadata": st.one_of(st.dictionaries(st.sampled_from(["team", "year", "n", "深", "deep", "list"]), json_values,
                                          max_size=3), json_leaf)})
good_rows = st.fixed_dictionaries({"_id": st.text(string.ascii_letters + "中文", min_size=1, max_size=8),
                                   "text": st.sampled_from([t for _, t in TOPICS]).flatmap(
                                       lambda t: st.text(max_size=30).map(lambda x: t + x)),
                                   "metadata": st.dictionaries(st.sampled_from(["team", "year", "n"]), json_leaf,
                                                               max_size=2)})
jsonl_lines = st.lists(st.one_of(good_rows.map(lambda r: json.dumps(r, ensure_ascii=False)),
                                 good_rows.map(lambda r: json.dumps(r, ensure_ascii=False)),
                                 rows.map(lambda r: json.dumps(r, ensure_ascii=False)),
                                 rows.map(lambda r: json.dumps(r)),  # \\u-escaped, lone surrogates too
                                 st.sampled_from(["", "{", "[1, 2]", "null", "{\"_id\": 1, \"text\": }", "  "]),
                                 st.text(max_size=20).filter(lambda t: "\n" not in t)),
                       min_size=1, max_size=6)


@settings(FUZZ, max_examples=150)
@given(lines=jsonl_lines)
def test_fuzz_jsonl_rows(lines):
    CASES["jsonl rows"] += 1
    text = "\n".join(lines) + "\n"
    loaded = load_jsonl(text, "rows.jsonl")  # never raises: each row is a document or a skip
    expected_rows = [i for i, line in enumerate(text.split("\n")[:-1], start=1) if line.strip()]
    assert len(loaded.documents) + len(loaded.skipped) == len(expected_rows), (lines, loaded)
    assert all(s.reason and "\n" not in s.reason for s in loaded.skipped)
    for d in loaded.documents:
        d.text.encode("utf-8")  # valid text: no lone surrogate reaches a store
        json.dumps(d.metadata, ensure_ascii=False).encode("utf-8")


@settings(FUZZ, max_examples=40)
@given(lines=jsonl_lines)
def test_fuzz_jsonl_ingest(fuzz_ingest_kb, lines):
    """Through the real API: one commit or none; every row added, updated, unchanged or skipped."""
    CASES["jsonl ingests"] += 1
    _ingest_and_check(fuzz_ingest_kb, {"rows.jsonl": ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")})


@pytest.fixture(scope="module")
def fuzz_ingest_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-ingest")
    return KnowledgeBase.open(root / "kb", embedder="minilm"), root


def _ingest_and_check(kb_and_root: tuple[KnowledgeBase, Path], files: dict[str, bytes]) -> None:
    """Ingest the files from a folder of their own; check the report and the knowledge base."""
    kb, root = kb_and_root
    CASES["_n"] += 1
    folder = root / f"batch{CASES['_n']}"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    before_gen, before = kb.stats()["generation"], kb.documents()
    try:
        report = kb.ingest(folder)
    except RagsiftError as e:
        _one_clear_line(e)
        assert kb.stats()["generation"] == before_gen and kb.documents().keys() == before.keys()
        return
    after = kb.documents()
    # a file already stored under its name, met in another folder, is written again for its path
    changed = report.added or report.updated or report.relabeled or report.renamed
    OUTCOMES["ingest committed" if changed else "ingest without changes"] += 1
    assert report.generation == before_gen + (1 if changed else 0)
    assert set(after) == set(before) | set(report.added)
    assert all(s.reason and "\n" not in s.reason for s in report.skipped)
    assert kb.store.check_integrity() == []
    for doc_id in report.added + report.updated:
        stored = kb.document(doc_id)
        assert stored is not None and stored[0].content_hash


# ------------------------------------------------------------------------------------ files
EXTS = [".md", ".txt", ".html", ".htm", ".jsonl", ".pdf", ".markdown", ".csv", ".bin", ""]
contents = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.text(max_size=200).map(lambda t: t.encode("utf-16")),
    st.sampled_from([t for _, t in TOPICS]).map(lambda t: t.encode("gb18030")),
    st.sampled_from([b"%PDF-1.4\n", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", b"\xef\xbb\xbf# T\n\nx",
                     b"---\nyear: 99999999999999999999\n---\n# Y\n\nbody", b"---\n: [\n---\n# broken\n\ntext",
                     b"<html><body><script>x</script><p>\xe4\xbd\xa0\xe5\xa5\xbd</p></body></html>",
                     b"\x00\x01\x02", b""]),
    jsonl_lines.map(lambda ls: ("\n".join(ls) + "\n").encode("utf-8", "surrogatepass")),
)


@settings(FUZZ, max_examples=150)
@given(data=contents, ext=st.sampled_from(EXTS))
def test_fuzz_files(tmp_path_factory, data, ext):
    CASES["files"] += 1
    path = tmp_path_factory.mktemp("file") / f"f{ext}"
    path.write_bytes(data)
    loaded = load_file(path, path.name)  # a document (or rows), or a skip with its reason
    assert loaded.documents or loaded.skipped
    assert all(s.reason and "\n" not in s.reason for s in loaded.skipped)
    for d in loaded.documents:
        d.text.encode("utf-8")


@settings(FUZZ, max_examples=25)
@given(files=st.lists(st.tuples(contents, st.sampled_from(EXTS)), min_size=1, max_size=4))
def test_fuzz_file_ingest(fuzz_ingest_kb, files):
    CASES["file ingests"] += 1
    _ingest_and_check(fuzz_ingest_kb, {f"f{i}{ext}": data for i, (data, ext) in enumerate(files)})


def test_fuzz_cases_add_up():
    """At least 1,000 cases ran across the doors (this test runs after the others in the file)."""
    total = sum(n for door, n in CASES.items() if not door.startswith("_"))
    assert total >= 1000, dict(CASES)
