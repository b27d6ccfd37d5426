import json

import pytest
from conftest import DATA, write_files

from ragsift.demo import sample_dir
from ragsift.ingest.loaders import html_to_text, load_file


def load(path, source=None):
    return load_file(path, source or path.name)


def test_markdown_front_matter_becomes_metadata():
    res = load(sample_dir() / "kb" / "speaker_manual_zh.md")
    (doc,) = res.documents
    assert doc.metadata == {"item_name": "星云智能音箱 S2", "category": "manual"}
    assert not doc.text.startswith("---")
    assert doc.title == "星云智能音箱 S2 使用说明书"


def test_html_headings_kept_and_script_style_dropped():
    res = load(sample_dir() / "kb" / "faq_en.html")
    (doc,) = res.documents
    assert "DO_NOT_INDEX" not in doc.text
    assert "\n## Storage\n" in doc.text or doc.text.count("## Storage") == 1
    assert doc.title == "Nimbus Backup - Frequently Asked Questions"  # from <title>


def test_html_to_text_chinese():
    title, text = html_to_text("<html><head><title>帮助</title><script>x=1</script></head>"
                               "<body><h1>常见问题</h1><p>如何&nbsp;退款？</p><h2>账户</h2><p>登录失败怎么办。</p></body></html>")
    assert title == "帮助"
    assert text.splitlines()[0] == "# 常见问题"
    assert "## 账户" in text and "x=1" not in text and "如何 退款？" in text


@pytest.mark.parametrize("name,facts", [
    ("sample_en.pdf", ["E07", "grid voltage out of range", "Cleaning intervals"]),
    ("sample_zh.pdf", ["绿茶应在0至5摄氏度冷藏保存", "乌龙茶", "茶叶的储存方法"]),
])
def test_pdf_text_is_extracted_and_wrapped_lines_joined(name, facts):
    (doc,) = load(DATA / name).documents
    assert doc.format == "pdf" and doc.metadata["page_count"] == 2
    for fact in facts:
        assert fact in doc.text
    assert "封口" in doc.text or name == "sample_en.pdf"  # "封\n口" wrapped mid-word in the PDF


@pytest.mark.parametrize("name,reason", [
    ("image.md", "binary"),
    ("empty.md", "empty"),
])
def test_bad_files_are_skipped_with_a_reason(name, reason):
    res = load(DATA / name)
    assert res.documents == []
    (skip,) = res.skipped
    assert skip.path == name and reason in skip.reason


def test_unsupported_extension_and_broken_pdf(tmp_path):
    write_files(tmp_path, {"a.key": b"PK\x03\x04", "a.docx": b"PK\x03\x04", "b.pdf": b"%PDF-1.4 garbage \x00\x01"})
    assert "unsupported file type" in load(tmp_path / "a.key").skipped[0].reason
    assert "damaged Word document" in load(tmp_path / "a.docx").skipped[0].reason
    assert "PDF" in load(tmp_path / "b.pdf").skipped[0].reason


def test_jsonl_rows_and_malformed_lines(tmp_path):
    lines = [json.dumps({"_id": "1", "title": "Solar", "text": "Panels need cleaning."}),
             "{not json",
             json.dumps({"_id": "2", "text": "绿茶需要冷藏。", "metadata": {"lang": "zh", "year": 2024}}),
             json.dumps(["a list"]),
             json.dumps({"_id": "3"}),
             json.dumps({"_id": "1", "text": "duplicate"})]
    write_files(tmp_path, {"c.jsonl": "\n".join(lines)})
    res = load(tmp_path / "c.jsonl")
    assert [d.doc_id for d in res.documents] == ["1", "2"]
    assert res.documents[1].metadata == {"lang": "zh", "year": 2024}
    assert [s.path for s in res.skipped] == ["c.jsonl:2", "c.jsonl:4", "c.jsonl:5", "c.jsonl:6"]
    assert "malformed JSON" in res.skipped[0].reason


def test_plain_text_hash_lines_are_not_headings(tmp_path):
    from ragsift.ingest.splitter import SplitSettings, split_document

    write_files(tmp_path, {"t.txt": "# not a heading, just a line long enough to stand alone\n\nbody text here."})
    (doc,) = load(tmp_path / "t.txt").documents
    parents, _ = split_document(doc, SplitSettings())
    assert parents[0].heading_path == () and parents[0].text.startswith("# not a heading")


def test_wrapped_lines_join_hyphenation_and_chinese():
    """How a paragraph's lines join (``layout.join_lines``): a word hyphenated at a line's end is
    made whole (hyphen-minus, Chromium's U+2010, a soft hyphen), a real hyphen before a capital
    stays, Chinese lines join without a space, English lines with one; Kangxi radicals from CJK
    fonts become the ideographs they stand for."""
    from ragsift.ingest.loaders import layout

    assert layout.join_lines(["the recali-", "bration of the manu\u2010", "facturer's valve"]) == \
        "the recalibration of the manufacturer's valve"
    assert layout.join_lines(["soft\u00ad", "ware"]) == "software"
    assert layout.join_lines(["the North-", "East line"]) == "the North-East line"
    assert layout.join_lines(["启动水泵之前，必须记录", "压力阀的校准结果。"]) == "启动水泵之前，必须记录压力阀的校准结果。"
    assert layout.cjk_unified("泵站操作\u2f3f册，\u2f54泵") == "泵站操作手册，水泵"
