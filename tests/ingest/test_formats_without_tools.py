"""The formats teams still keep (issue 52) that need neither LibreOffice nor OCR, in Chinese and
English: Outlook messages (real files of Apache POI's test corpus); JSON and XML; text and mail in
UTF-16, UTF-32 and legacy encodings; HEIF without a decoder skipped saying what to install. The
ones LibreOffice writes or reads, and images read by OCR, are tests/e2e/ingest/test_formats.py."""
from __future__ import annotations

import json
from email.message import EmailMessage
from pathlib import Path

import documents as D
import pytest
from conftest import DATA

from ragsift.ingest.loaders import LoadLimits, load_bytes, load_file


def _one(path: Path, **limits):
    res = load_file(path, path.name, LoadLimits(**limits))
    assert not res.skipped, res.skipped
    assert len(res.documents) == 1
    return res.documents[0]


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
