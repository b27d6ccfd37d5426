"""Regression tests for the hostile inputs of issue 17: each one once gave a traceback, a
silent wrong answer or cost a whole ingest. Now: a correct result, or one clear line."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import write_files

from ragsift.errors import ConfigError, FilterError, QueryError
from ragsift.ingest.loaders import doc_id_for, iter_files, load_jsonl
from ragsift.kb import KnowledgeBase
from ragsift.store.filters import MAX_DEPTH, parse_filter

BIG = 2 ** 63  # one past the largest 64-bit integer


def _deep_json(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.fixture()
def mixed(tmp_path):
    """Good files beside the bad ones that used to abort the whole ingest."""
    rows = [
        {"_id": "zh-1", "title": "蓝牙配对", "text": "长按电源键五秒进入蓝牙配对模式。", "metadata": {"serial": 7}},
        {"_id": "en-big", "text": "The serial number of this unit overflows 64 bits.", "metadata": {"serial": BIG}},
        {"_id": "zh-big", "text": "这台设备的序列号超过六十四位整数。", "metadata": {"serial": -BIG - 5}},
        {"_id": "en-ls", "text": "Paragraph one\u2028still the same row\u2029and U+0085\x85here.", "metadata": {}},
    ]
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    lines.insert(2, '{"_id": "deep", "text": "x", "metadata": {"a": ' + _deep_json(100_000) + "}}")
    nested: object = "bottom"
    for _ in range(20):
        nested = {"k": nested}
    lines.insert(3, json.dumps({"_id": "nested", "text": "嵌套太深的元数据", "metadata": {"tree": nested}}))
    lines.append(json.dumps({"_id": ["a", "list"], "text": "an id that is a list"}))
    return write_files(tmp_path / "docs", {
        "rows.jsonl": "\n".join(lines) + "\n",
        "good_en.md": "---\nserial: 12\n---\n# Reset\n\nHold the reset button for ten seconds to restore factory settings.\n",
        "good_zh.md": "# 恢复出厂设置\n\n按住复位键十秒即可恢复出厂设置。\n",
        "big_en.md": f"---\nserial: {BIG}\n---\n# Overflow\n\nA front-matter integer past int64 stays in the metadata.\n",
        "big_zh.md": f"---\nserial: {BIG * 4}\n---\n# 溢出\n\n前置元数据中的超大整数保存在元数据里。\n",
    })


def test_one_bad_document_never_costs_the_others(tmp_path, mixed, backend):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **backend)
    report = kb.ingest(mixed)
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped == {"rows.jsonl:3": "JSON nested too deeply",
                       "rows.jsonl:4": "metadata 'tree' is nested deeper than 16 levels",
                       "rows.jsonl:7": "'_id' must be a string or an integer, not list"}
    assert report.generation == 1 and kb.stats()["documents"] == 8
    # the integers past int64 are kept in the metadata, and only there (not filterable)
    assert kb.document("en-big")[0].metadata["serial"] == BIG
    assert kb.document("zh-big")[0].metadata["serial"] == -BIG - 5
    hits = kb.query("前置元数据 超大整数", unit="document", max_passages=3).passages
    assert hits[0].metadata["serial"] == BIG * 4
    assert {p.doc_id for p in kb.query("serial", filter={"serial": {"gte": 0}}, unit="document",
                                       max_passages=10).passages} == {"zh-1", doc_id_for("good_en.md")}
    with pytest.raises(FilterError, match="outside the 64-bit integers"):
        kb.query("serial", filter={"serial": BIG})
    # U+2028, U+2029 and U+0085 are text inside a row, not line breaks
    ls = kb.document("en-ls")
    assert ls is not None and "\u2028still the same row\u2029" in ls[1][0].parent.text


def test_jsonl_lines_end_at_newline_only_and_numbers_stay_right():
    text = ('{"_id": "a", "text": "第一行\u2028同一行"}\n'
            '{"_id": "b", "text": "line\u0085two"}\n'
            "not json\n"
            '{"_id": "c", "text": "third\u2029row"}\r\n')
    res = load_jsonl(text, "x.jsonl")
    assert [d.doc_id for d in res.documents] == ["a", "b", "c"]
    assert [(s.path, s.reason.split(":")[0]) for s in res.skipped] == [("x.jsonl:3", "malformed JSON")]
    assert res.documents[0].text == "第一行\u2028同一行"


def test_lone_surrogates_become_replacement_characters(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    report = kb.add_documents([
        {"id": "zh\ud800", "text": "孤立代理\udc00字符不会中断写入。", "metadata": {"tag": "a\udfffb"}},
        {"id": "en", "title": "Lone \ud83d surrogate", "text": "A lone surrogate is replaced, never fatal."},
    ])
    assert not report.skipped and sorted(report.added) == ["en", "zh\ufffd"]
    stored, parents = kb.document("zh\ufffd")
    assert stored.metadata == {"tag": "a\ufffdb"} and "孤立代理\ufffd字符" in parents[0].parent.text
    assert kb.query("lone surrogate replaced").passages[0].doc_id == "en"
    with pytest.raises(FilterError, match="lone surrogate"):
        kb.query("孤立代理", filter={"tag": "a\udfffb"})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_every_path_left_out_is_reported(tmp_path):
    root = write_files(tmp_path / "docs", {"好.md": "# 好\n\n内容。\n", "ok.md": "# OK\n\nContent.\n",
                                           "sub/inner.txt": "inner text"})
    (root / "dangling.md").symlink_to(root / "missing.md")
    (root / "环.md").symlink_to(root / "环.md")
    (root / "dirlink").symlink_to(root / "sub", target_is_directory=True)
    (root / "link_ok.md").symlink_to(root / "ok.md")
    os.mkfifo(root / "pipe.md")
    found = list(iter_files(root))
    files = sorted(p.name for p in found if not isinstance(p, tuple))
    reasons = {p.name: r for p, r in (f for f in found if isinstance(f, tuple))}
    assert files == ["inner.txt", "link_ok.md", "ok.md", "好.md"]
    assert reasons == {"dangling.md": "dangling symbolic link", "环.md": "symbolic link loop",
                       "dirlink": "symbolic link to a directory (not followed)",
                       "pipe.md": "not a regular file (FIFO)"}
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    report = kb.ingest(root)  # never blocks on the FIFO
    assert {s.path: s.reason for s in report.skipped} == reasons
    assert len(report.added) == 4


def test_limits_users_set(tmp_path):
    body_en = " ".join(f"Sentence {i} describes part {i} of the long manual." for i in range(400))
    body_zh = "".join(f"第{i}句说明长手册的第{i}部分。" for i in range(400))
    docs = write_files(tmp_path / "docs", {"long_en.md": f"# Long\n\n{body_en}\n", "long_zh.md": f"# 长\n\n{body_zh}\n",
                                           "short.md": "# Short\n\nA short note.\n", "big.txt": "x " * 30000})
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", max_document_chunks=5, max_file_mb=0.05)
    report = kb.ingest(docs)
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["big.txt"] == "file too large (60000 bytes; limit 52428, setting max_file_mb)"
    assert "; the limit is 5 (setting max_document_chunks)" in reasons["long_en.md"]
    assert "; the limit is 5 (setting max_document_chunks)" in reasons["long_zh.md"]
    assert report.added == [doc_id_for("short.md")]
    # a stored document whose new version is past the limit keeps its stored version
    (docs / "short.md").write_text(f"# Short\n\n{body_en}\n", encoding="utf-8")
    report = kb.ingest(docs)
    assert "short.md" in {s.path for s in report.skipped} and not report.updated
    assert "A short note." in kb.query("short note", max_passages=1).passages[0].text
    with pytest.raises(QueryError, match="4000"):
        kb.query("问" * 4001)
    with pytest.raises(ConfigError, match="max_file_mb"):
        kb.query("x", max_file_mb=1)  # an ingest limit, not a query setting


def _deep_filter(levels: int) -> dict:
    """A filter of ``levels`` nested logical operators that no simplification flattens (and /
    or alternate), which selects exactly good_zh.md."""
    node: dict = {"source": "good_zh.md"}
    for level in range(levels):
        if (levels - 1 - level) % 2 == 0:
            node = {"and": [node, {"source": "good_zh.md"}]}
        else:
            node = {"or": [node, {"title": {"ne": f"t{level}"}}]}
    return node


def test_filters_that_pass_validation_run_on_every_store(tmp_path, mixed, backend):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **backend)
    kb.ingest(mixed)
    fields = kb.store.fields()
    assert fields["serial"] == "int"
    deep = _deep_filter(MAX_DEPTH)
    assert {p.source for p in kb.query("恢复出厂设置", filter=deep, unit="document", max_passages=20).passages} == {
        "good_zh.md"}
    nots: dict = {"source": "good_en.md"}
    for _ in range(MAX_DEPTH - 1):
        nots = {"not": nots}  # an odd number of nots: everything but good_en.md
    assert "good_en.md" not in {p.source for p in kb.query("reset button", filter=nots, unit="document").passages}
    assert {p.source for p in kb.query("reset button", filter={"not": nots}, unit="document").passages} == {
        "good_en.md"}
    edge = kb.query("serial", filter={"serial": {"lt": 2 ** 63 - 1, "gt": -(2 ** 63) + 1}}, unit="document",
                    max_passages=20).passages
    assert {p.metadata["serial"] for p in edge} == {7, 12}
    for value, message in [(BIG, "outside the 64-bit"), (-(2 ** 63), "outside the 64-bit"),
                           ("\ud800", "lone surrogate"), (float("nan"), "holds int values; got nan")]:
        field = "title" if isinstance(value, str) else "serial"
        with pytest.raises(FilterError, match=message):
            kb.query("serial", filter={field: value})
    with pytest.raises(FilterError, match="nested deeper than 16"):
        kb.query("serial", filter=_deep_filter(MAX_DEPTH + 1))
    wide = {"or": [{"serial": i} for i in range(1000)]}
    with pytest.raises(FilterError, match="1001 comparisons and operators; the limit is 1000"):
        kb.query("serial", filter=wide)
    assert kb.query("serial", filter=wide, max_filter_nodes=1001, unit="document").passages


def test_filter_simplification_keeps_the_meaning():
    fields = {"a": "int", "b": "string"}
    assert parse_filter({"not": {"not": {"a": 1}}}, fields) == parse_filter({"a": 1}, fields)
    flat = parse_filter({"and": [{"and": [{"a": 1}, {"b": "x"}]}, {"a": {"lt": 5}}]}, fields)
    assert len(flat.items) == 3


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragsift.cli", *args], capture_output=True, text=True,
                          input=stdin, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300)


@pytest.fixture(scope="module")
def cli_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("clikb")
    docs = write_files(root / "docs", {"a.md": "# 手册\n\n设备的说明。\n", "b.md": "# Manual\n\nHow the device works.\n"})
    kb = KnowledgeBase.open(root / "kb", embedder="minilm")
    kb.ingest(docs)
    return root / "kb"


@pytest.mark.slow
@pytest.mark.parametrize("args,message", [
    (["--timeout", "inf"], "channel_timeout_s: input should be a finite number (got inf)"),
    (["--timeout", "nan"], "channel_timeout_s: input should be a finite number (got nan)"),
    (["--filter", "[" * 5000], "--filter is nested too deeply"),
    (["--filter", '{"not": ' * 1000 + '{"source": "a.md"}' + "}" * 1000], "nested too deeply"),
    (["--filter", json.dumps({"source": {"eq": BIG}})], "holds string values"),
    (["--weights", "dense=nan", "--fusion", "weighted"], "finite"),
])
def test_cli_bad_input_is_one_line(cli_kb, args, message):
    p = _cli("--kb", str(cli_kb), "query", "设备", *args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragsift: error: ") and "Traceback" not in p.stderr
    assert message in lines[0]


@pytest.mark.parametrize("key,value,message", [
    ("channels", 5, "channels: input should be a valid tuple"),
    ("channel_timeout_s", "5", "channel_timeout_s: input should be a valid number (got '5')"),
    ("weights", [1, 2], "weights: input should be a valid dictionary"),
    ("channel_depth", 10 ** 12, "channel_depth: input should be less than or equal to 10000"),
])
def test_settings_file_of_the_wrong_type_is_one_line(cli_kb, tmp_path, key, value, message):
    import shutil
    import tomllib

    import tomli_w

    kb = tmp_path / "kb"
    shutil.copytree(cli_kb, kb)
    data = tomllib.loads((kb / "ragsift.toml").read_text(encoding="utf-8"))
    data["query"][key] = value
    (kb / "ragsift.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        KnowledgeBase.open(kb, create=False)
    assert message in str(e.value) and "\n" not in str(e.value)
    p = _cli("--kb", str(kb), "query", "设备")
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1
