"""The formats teams still keep (issue 52), in Chinese and English: legacy Word, Excel and
PowerPoint and RTF written by LibreOffice and read through it; the same skipped with what to
install when LibreOffice is absent (fault injection: a PATH without soffice), RTF then read by
our own reader; ODP and ODS written by LibreOffice and read natively; Outlook messages (real
files of Apache POI's test corpus); JSON and XML; BMP and WebP written by Pillow; text and mail in
UTF-16, UTF-32 and legacy encodings."""
from __future__ import annotations

import json
import os
import shutil
from email.message import EmailMessage
from pathlib import Path

import documents as D
import pytest
from conftest import DATA

from ragsift.ingest.loaders import LoadLimits, load_bytes, load_file
from ragsift.ingest.splitter import SplitSettings, split_document

FACTS = {"zh": ("长按电源键三秒开机", "配对步骤", "恢复出厂设置", "电源键位于机身背面"),
         "en": ("Hold the power button for three seconds", "Pairing", "Factory reset", "The power button is on the back")}
HEADS = {"zh": ("第一章 快速入门", "第二章 日常维护"), "en": ("Chapter 1 Getting started", "Chapter 2 Care")}
CELLS = {"zh": "| 风扇 | 5 | 散热 |", "en": "| lamp | 5 | status light |"}


def _one(path: Path, **limits):
    res = load_file(path, path.name, LoadLimits(**limits))
    assert not res.skipped, res.skipped
    assert len(res.documents) == 1
    return res.documents[0]


def _flat(text: str) -> str:
    return text.replace(" ", "").lower()


@pytest.fixture(scope="module")
def office(tmp_path_factory) -> dict[str, Path]:
    """The guide (and a sheet) in both languages, in each legacy and OpenDocument format, as
    LibreOffice writes them from pandoc's DOCX and PPTX and from CSV."""
    d = tmp_path_factory.mktemp("office")
    out: dict[str, Path] = {}
    docx, pptx, csv = [], [], []
    for lang in ("zh", "en"):
        docx.append(D.pandoc(D.guide(lang), d / f"guide-{lang}.docx"))
        pptx.append(D.pandoc(D.guide(lang), d / f"deck-{lang}.pptx"))
        rows = [["name", "voltage", "note"], ["fan", "12", "cooling"],
                ["风扇", "5", "散热"] if lang == "zh" else ["lamp", "5", "status light"]]
        c = d / f"sheet-{lang}.csv"
        c.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
        csv.append(c)
    long = D.pandoc("\n\n".join(f"# Part {i}\n\n" + "The hub restarts after each firmware update. " * 20
                                  for i in range(300)), d / "long.docx")
    out["long.doc"] = D.soffice_all([long], "doc", d)[0]
    for fmt, srcs, infilter in (("doc", docx, None), ("rtf", docx, None), ("ppt", pptx, None),
                                ("odp", pptx, None), ("xls", csv, "CSV:44,34,76"), ("ods", csv, "CSV:44,34,76")):
        for lang, path in zip(("zh", "en"), D.soffice_all(srcs, fmt, d, infilter)):
            out[f"{lang}.{fmt}"] = path
    for lang in ("zh", "en"):  # pandoc's own RTF: read by our reader when LibreOffice is absent
        out[f"{lang}.pandoc.rtf"] = D.pandoc(D.guide(lang), d / f"pandoc-{lang}.rtf")
    return out


def _guide_read(doc, lang: str, slides: bool = False, headings: bool = True) -> None:
    flat = _flat(doc.text)
    for fact in (FACTS[lang][0], FACTS[lang][2], *HEADS[lang]):
        assert _flat(fact) in flat, (fact, doc.text[:600])
    parents, _ = split_document(doc, SplitSettings())
    paths = {" > ".join(p.heading_path) for p in parents}
    for h in HEADS[lang] if headings else ():
        assert any(_flat(h) in _flat(p) for p in paths), (h, paths)
    table = next(p for p in parents if _flat(FACTS[lang][2]) in _flat(p.text))
    row = next(ln for ln in table.text.splitlines() if _flat(FACTS[lang][2]) in _flat(ln))
    assert row.startswith("|") and row.count("|") == 4, row  # a table row of three cells
    if slides:
        assert doc.metadata["slide_count"] >= 3 and all(p.location[0] == "slide" for p in parents if p.location)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_legacy_office_and_rtf_are_read_through_libreoffice(office, lang):
    for fmt in ("doc", "rtf"):
        doc = _one(office[f"{lang}.{fmt}"])
        assert doc.format == fmt and doc.metadata["converted_by"] == "LibreOffice"
        assert doc.title.replace(" ", "") == ("星云音箱手册" if lang == "zh" else "NebulaHubGuide")
        _guide_read(doc, lang)
        assert _flat(FACTS[lang][3]) in _flat(doc.text)  # the footnote
    deck = _one(office[f"{lang}.ppt"])
    assert deck.format == "ppt"
    # LibreOffice's .ppt of pandoc's deck keeps the first chapter's title as a plain shape, not a title
    _guide_read(deck, lang, slides=True, headings=False)
    sheet = _one(office[f"{lang}.xls"])
    assert sheet.format == "xls" and CELLS[lang] in sheet.text and sheet.text.count("| name | voltage | note |") == 1
    # the same file converted again is the same document (its own bytes' hash, not the conversion's)
    assert _one(office[f"{lang}.xls"]).content_hash == sheet.content_hash


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_opendocument_slides_and_sheets_are_read_natively(office, lang, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no LibreOffice: ODP and ODS need none
    deck = _one(office[f"{lang}.odp"])
    assert deck.format == "odp" and "converted_by" not in deck.metadata
    _guide_read(deck, lang, slides=True)
    sheet = _one(office[f"{lang}.ods"])
    assert sheet.format == "ods" and sheet.metadata["sheets"] == [f"sheet-{lang}"]
    assert sheet.text.startswith(f"# sheet-{lang}\n\n| name | voltage | note |") and CELLS[lang] in sheet.text


@pytest.mark.slow
def test_without_libreoffice_legacy_files_are_skipped_saying_what_to_install(office, monkeypatch):
    """Fault injection: a PATH without soffice, as on a machine without LibreOffice."""
    monkeypatch.setenv("PATH", str(Path(shutil.which("pandoc") or "/usr/bin/pandoc").parent.parent / "nowhere"))
    for fmt, package in (("doc", "libreoffice-writer-nogui"), ("xls", "libreoffice-calc-nogui"),
                         ("ppt", "libreoffice-impress-nogui")):
        res = load_file(office[f"zh.{fmt}"], f"zh.{fmt}", LoadLimits())
        assert not res.documents
        assert res.skipped[0].reason == (f"reading .{fmt} needs LibreOffice (soffice on the PATH): apt-get install "
                                         f"{package} (or LibreOffice from libreoffice.org)")
    for lang in ("zh", "en"):  # RTF is then read by our own reader: headings, lists, the table, notes
        for key in (f"{lang}.rtf", f"{lang}.pandoc.rtf"):
            doc = _one(office[key])
            assert doc.format == "rtf" and "converted_by" not in doc.metadata
            _guide_read(doc, lang)
            assert _flat(FACTS[lang][3]) in _flat(doc.text)


@pytest.mark.slow
def test_a_conversion_never_outlives_its_file(office, tmp_path, monkeypatch):
    """Fault injection: a fake LibreOffice that never finishes (named so: a shell script on the
    PATH that waits, with a child as soffice.bin has) and the wall-clock limit cut to a second;
    the file is skipped with the reason, no process of it is left, and with the real LibreOffice
    back the next file converts. A .xls that holds a Word document is refused before any
    conversion. (Cutting only the limit raced the real LibreOffice, which can finish in a second.)"""
    from ragsift.ingest.loaders import convert

    bin_dir = tmp_path / "fault-bin"
    bin_dir.mkdir()
    hang = bin_dir / "soffice"
    hang.write_text("#!/bin/sh\n# fault injection: a LibreOffice that never finishes\n"
                    "sh -c 'sleep 300; :' soffice-fault-child &\nsleep 300\n")
    hang.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(convert, "WALL_FACTOR", 0.0)
    monkeypatch.setattr(convert, "WALL_EXTRA", 0.0)
    assert convert.soffice() == str(hang)
    res = load_file(office["long.doc"], "long.doc", LoadLimits())
    assert not res.documents and "LibreOffice's conversion took longer than the file's time" in res.skipped[0].reason
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _is_soffice(p)]
    monkeypatch.undo()
    assert "# Part 299" in _one(office["long.doc"]).text
    wrong = tmp_path / "word.xls"
    shutil.copy(office["en.doc"], wrong)
    res = load_file(wrong, "word.xls", LoadLimits())
    assert res.skipped[0].reason == ("not an Excel 97-2003 workbook as its name says: an OLE file holding a Word "
                                     "document")


def _is_soffice(pid: str) -> bool:
    try:
        return b"soffice" in Path(f"/proc/{pid}/cmdline").read_bytes() and os.getppid() != int(pid)
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("lang,fmt", [("zh", "bmp"), ("en", "webp")])
def test_bmp_and_webp_images_are_read_by_ocr(tmp_path, lang, fmt):
    from PIL import Image

    line = "恢复出厂设置需要同时按住音量加和电源键十秒" if lang == "zh" else "Hold the reset button for ten seconds"
    path = tmp_path / f"note-{lang}.{fmt}"
    Image.open(D.text_image([line], tmp_path / "note.png")).convert("RGB").save(path, lossless=True)
    doc = _one(path)
    assert _flat(line) in _flat(doc.text) and doc.metadata["ocr_pages"] == [1]


# ------------------------------------------------------------------ fast: no LibreOffice, no OCR
def test_heif_without_a_decoder_is_skipped_saying_what_to_install():
    # a stand-in with a HEIF file's header (no encoder here to write a real one): the reason comes first
    stand_in = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64
    res = load_bytes(stand_in, ".heic", "photo.heic", LoadLimits())
    assert res.skipped[0].reason.endswith("pip install pi-heif") or res.documents


TEXT = {"zh": "星云智能音箱 S2 支持蓝牙和 Wi-Fi 两种连接方式。\n首次使用时请长按电源键三秒开机。\n",
        "en": "Hold the power button for three seconds.\nThe “reset” takes ten seconds — don’t unplug it.\n"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_text_in_utf16_utf32_and_legacy_encodings_is_read(lang):
    text = TEXT[lang]
    legacy = ["gb18030"] if lang == "zh" else ["cp1252"]
    for enc in ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be", *legacy]:
        for suffix in (".txt", ".md"):
            res = load_bytes(text.encode(enc), suffix, f"a{suffix}", LoadLimits())
            assert res.documents and res.documents[0].text == text.strip(), (enc, suffix, res.skipped)
            assert res.documents[0].metadata["encoding"].replace("_", "-").startswith(enc.split("-")[0])
    big5 = "星雲智慧音箱支援藍牙與無線網路兩種連線方式。首次使用時請長按電源鍵三秒開機。\n"
    assert load_bytes(big5.encode("big5"), ".txt", "b.txt", LoadLimits()).documents[0].text == big5.strip()
    gbk = load_file(DATA / "not_utf8.txt", "not_utf8.txt").documents[0]  # was refused as "not valid UTF-8"
    assert gbk.text == "茶叶的储存方法：绿茶应冷藏保存，乌龙茶常温密封。"
    # Excel's "Unicode text": UTF-16 with a BOM, tab-separated
    sheet = "name\tnote\n风扇\t散热\nlamp\tstatus light\n".encode("utf-16")
    assert "| 风扇 | 散热 |" in load_bytes(sheet, ".tsv", "s.tsv", LoadLimits()).documents[0].text
    # never a guess on binary data: NUL bytes that are not UTF-16/32 text, or bytes no encoding fits
    for data in (bytes(range(256)) * 8, bytes((i * 37 + 11) % 256 or 1 for i in range(3000))):
        res = load_bytes(data, ".txt", "x.txt", LoadLimits())
        assert not res.documents and ("binary" in res.skipped[0].reason or "no other encoding" in res.skipped[0].reason)


def test_mail_in_utf16_and_parts_in_their_charsets():
    msg = EmailMessage()
    msg["From"] = "ops@example.com"
    msg["Subject"] = "设备维护通知 Maintenance notice"
    msg.set_content("各位好：本周六凌晨两点更新固件。\nFirmware updates run on Saturday at 2 am.\n")
    for enc in ("utf-16", "utf-32-le"):  # a message saved as "Unicode": NUL bytes between its letters
        doc = load_bytes(msg.as_string().encode(enc), ".eml", "n.eml", LoadLimits()).documents[0]
        assert doc.title == "设备维护通知 Maintenance notice" and "凌晨两点更新固件" in doc.text
        assert "Firmware updates run on Saturday" in doc.text and "\x00" not in doc.text
    raw = ("From: a@example.com\nSubject: 固件更新通知\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
           "Content-Type: text/plain\nContent-Transfer-Encoding: 8bit\n\n各位好：本周六凌晨两点更新固件，请勿断电。\n--b\n"
           "Content-Type: text/plain; charset=big5\nContent-Disposition: attachment; filename=note.txt\n"
           "Content-Transfer-Encoding: 8bit\n\n").encode("gb18030") + "請勿斷電。".encode("big5") + b"\n--b--\n"
    doc = load_bytes(raw, ".eml", "m.eml", LoadLimits()).documents[0]
    assert doc.title == "固件更新通知"  # a raw 8-bit header, no charset said: found
    assert "本周六凌晨两点更新固件，请勿断电" in doc.text  # a body without a charset: found
    assert "# Attachment: note.txt" in doc.text and "請勿斷電" in doc.text  # an attachment in its declared charset


def test_outlook_messages_are_read():
    """Real messages of Apache POI's test corpus (Apache-2.0; tests/data/msg/README.md)."""
    zh = _one(DATA / "msg" / "chinese-traditional.msg")
    assert zh.format == "msg" and zh.title == "Alfresco MSG format testing ( MSG 格式測試 )"
    assert zh.metadata["from"] == "Tests Chang@FT (張毓倫)" and zh.metadata["date"].isoformat().startswith(
        "2011-03-29T08:52:48")
    assert "高票當選雲林縣總工會 100 年度模範勞工代表" in zh.text  # a Big5 (code page 950) body
    en = _one(DATA / "msg" / "attachment_test_msg.msg")
    assert en.title == "test pièce jointe 1" and en.metadata["from"] == "Nicolas1 23456 <nicolas1.23456@free.fr>"
    assert "# Attachment: pj1.txt" in en.text and "euro : € (20AC)" in en.text
    # the compressed RTF body (what Outlook keeps when it keeps nothing else) reads as the same text
    import olefile

    from ragsift.ingest.loaders.msg import decompress_rtf
    from ragsift.ingest.loaders.rtf import read_rtf
    from ragsift.ingest.loaders.text import html_to_text

    ole = olefile.OleFileIO(str(DATA / "msg" / "chinese-traditional.msg"))
    rtf = decompress_rtf(ole.openstream("__substg1.0_10090102").read(), 1 << 20)
    got = read_rtf(rtf)
    text = html_to_text(got.html)[1] if got.html is not None else got.md.text()
    assert "高票當選雲林縣總工會 100 年度模範勞工代表" in text
    cut = load_bytes((DATA / "msg" / "attachment_test_msg.msg").read_bytes()[:3000], ".msg", "cut.msg", LoadLimits())
    assert not cut.documents and cut.skipped[0].reason.startswith("damaged Outlook message")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_json_records_json_as_text_and_xml(lang):
    body = "星云音箱每天凌晨两点自动备份。" if lang == "zh" else "The hub backs up every night at 2 am."
    rows = [{"id": "r1", "title": "备份" if lang == "zh" else "Backups", "text": body}, {"id": "r2", "text": body[:8]},
            {"text": "no id"}]
    res = load_bytes(json.dumps(rows, ensure_ascii=False).encode(), ".json", "rows.json", LoadLimits())
    assert [d.doc_id for d in res.documents] == ["r1", "r2"] and res.documents[0].text == body
    assert [s.path for s in res.skipped] == ["rows.json:[2]"]
    config = {"title": "星云音箱" if lang == "zh" else "Nebula hub", "steps": [{"name": "reset", "text": body}]}
    doc = load_bytes(json.dumps(config, ensure_ascii=False).encode("utf-16"), ".json", "c.json", LoadLimits()).documents[0]
    assert doc.title == config["title"] and f"steps[0].text: {body}" in doc.text and "steps[0].name: reset" in doc.text
    xml = (f'<?xml version="1.0" encoding="{"gb2312" if lang == "zh" else "windows-1252"}"?>\n'
           f"<catalog><title>{config['title']}</title><product><name>S2</name><price>399</price>"
           f"<description>{body[:6]}<b>{body[6:]}</b></description></product></catalog>")
    doc = load_bytes(xml.encode("gb2312" if lang == "zh" else "cp1252"), ".xml", "c.xml", LoadLimits()).documents[0]
    assert doc.title == config["title"] and "name: S2\nprice: 399" in doc.text and body in doc.text
    bomb = load_bytes((D.LAUGHS + "<a>&lol9;</a>").encode(), ".xml", "laughs.xml", LoadLimits())
    assert not bomb.documents and "entities are never expanded" in bomb.skipped[0].reason
