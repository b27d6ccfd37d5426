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


# ------------------------------------------------------------------ mail (.eml): checked to be mail
def _zip(members: dict[str, str]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return buf.getvalue()


def _image(fmt: str) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 20), "white").save(buf, fmt)
    return buf.getvalue()


def _junk(n: int, seed: int, low: int = 0) -> bytes:
    import random

    r = random.Random(seed)
    return bytes(r.randrange(low, 256) for _ in range(n))


def _mail(headers: str, body: bytes) -> bytes:
    return headers.replace("\n", "\r\n").encode("ascii") + b"\r\n" + body


BODY_ZH = "各位好：本周六凌晨两点更新固件，届时服务暂停十分钟。"
BODY_EN = "Hi all, the firmware update runs on Saturday at 2 am; service pauses for ten minutes."


REAL_MAILS = [
    ("en.eml", _mail("From: Ops <ops@example.com>\nTo: team@example.com\nSubject: Maintenance notice\n"
                     "Content-Type: text/plain; charset=utf-8\n", BODY_EN.encode()),
     "Maintenance notice", {"from": "Ops <ops@example.com>", "to": "team@example.com"}, BODY_EN),
    ("zh-base64.eml", _mail("From: =?UTF-8?B?6L+Q57u0?= <ops@example.com>\nSubject: =?UTF-8?B?6K6+5aSH57u05oqk?=\n"
                            "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n",
                            __import__("base64").encodebytes(BODY_ZH.encode())),
     "设备维护", {"from": "运维 <ops@example.com>"}, BODY_ZH),
    ("zh-qp-gbk.eml", _mail("Subject: =?GBK?Q?=B9=CC=BC=FE?=\nContent-Type: text/plain; charset=gbk\n"
                            "Content-Transfer-Encoding: quoted-printable\n",
                            __import__("quopri").encodestring(BODY_ZH.encode("gbk"))),
     "固件", {}, BODY_ZH),
    ("no-charset-zh.eml", _mail("From: ops@example.com\nSubject: Firmware\n", BODY_ZH.encode()),  # 8-bit UTF-8 undeclared
     "Firmware", {"from": "ops@example.com"}, BODY_ZH),
    ("body-only-zh.eml", BODY_ZH.encode(), "body-only-zh", {}, BODY_ZH),  # no headers at all
    ("body-only-en.eml", BODY_EN.encode(), "body-only-en", {}, BODY_EN),
    ("body-only-gbk.eml", BODY_ZH.encode("gbk"), "body-only-gbk", {}, BODY_ZH),  # a legacy encoding, detected
    ("utf16.eml", f"Subject: 固件更新\r\n\r\n{BODY_ZH}\r\n".encode("utf-16"), "固件更新", {}, BODY_ZH),
    ("bom.eml", f"\ufeffSubject: Firmware\r\n\r\n{BODY_EN}\r\n".encode(), "Firmware", {}, BODY_EN),
    ("jp.eml", _mail("Subject: test\nContent-Type: text/plain; charset=iso-2022-jp\n",
                     "土曜日の午前二時に更新します。".encode("iso-2022-jp")), "test", {}, "土曜日の午前二時に更新します。"),
    ("mentions-pdf.eml", _mail("Subject: PDF\n", b"A PDF file starts with %PDF-1.7 and a binary comment."),
     "PDF", {}, "A PDF file starts with %PDF-1.7"),
]


@pytest.mark.parametrize("name,data,title,meta,text", REAL_MAILS, ids=[m[0] for m in REAL_MAILS])
def test_real_mails_are_read(tmp_path, name, data, title, meta, text):
    (tmp_path / name).write_bytes(data)
    res = load(tmp_path / name)
    assert not res.skipped, res.skipped
    (doc,) = res.documents
    assert doc.format == "eml" and doc.title == title and text in doc.text
    assert meta.items() <= doc.metadata.items()


NOT_MAILS = [
    ("archive.eml", _zip({"notes.txt": "hello"}), "its content is a ZIP archive"),
    ("report.eml", _zip({"[Content_Types].xml": "<x/>", "word/document.xml": "<w/>"}),
     "its content is a ZIP archive (a Word document)"),
    ("sheet.eml", _zip({"xl/workbook.xml": "<x/>"}), "its content is a ZIP archive (an Excel workbook)"),
    ("outlook.eml", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1024), "its content is an old Office (OLE) file"),
    ("scan.eml", DATA.joinpath("sample_zh.pdf").read_bytes(), "its content is a PDF"),
    ("photo.eml", _image("PNG"), "its content is a PNG image"),
    ("photo2.eml", _image("JPEG"), "its content is a JPEG image"),
    ("anim.eml", _image("GIF"), "its content is a GIF image"),
    ("junk.eml", _junk(5000, 1), "its content is binary data of an unknown kind (no mail headers)"),
    ("junk-no-nul.eml", _junk(5000, 2, low=1), "its content is binary data of an unknown kind (no mail headers)"),
]


@pytest.mark.parametrize("name,data,reason", NOT_MAILS, ids=[m[0] for m in NOT_MAILS])
def test_an_eml_that_is_not_a_mail_is_skipped_with_what_it_is(tmp_path, name, data, reason):
    (tmp_path / name).write_bytes(data)
    res = load(tmp_path / name)
    assert res.documents == []
    (skip,) = res.skipped
    assert skip.path == name and skip.reason.startswith("not a mail as its name says: ") and reason in skip.reason


def test_a_mail_whose_body_is_binary_is_not_read_as_text(tmp_path):
    (tmp_path / "junk-body.eml").write_bytes(_mail("From: ops@example.com\nSubject: x\n", _junk(5000, 3)))
    res = load(tmp_path / "junk-body.eml")
    assert res.documents == [] and res.skipped[0].reason == "a mail whose body is binary data, not text"
    from email.message import EmailMessage

    msg = EmailMessage()  # a binary body beside a readable attachment: the attachment is read
    msg["Subject"] = "附件 Attachment"
    msg.set_content(_junk(3000, 4, low=1).decode("latin-1"), charset="utf-8")
    msg.add_attachment("# 说明\n\n附件里的说明。\n".encode(), maintype="text", subtype="markdown", filename="说明.md")
    (tmp_path / "with-attachment.eml").write_bytes(msg.as_bytes())
    (doc,) = load(tmp_path / "with-attachment.eml").documents
    assert doc.metadata["body_skipped"] == "binary data, not text" and "附件里的说明。" in doc.text
