"""The formats teams still keep (issue 52), in Chinese and English: legacy Word, Excel and
PowerPoint and RTF written by LibreOffice and read through it; the same skipped with what to
install when LibreOffice is absent (fault injection: a PATH without soffice), RTF then read by
our own reader; ODP and ODS written by LibreOffice and read natively; BMP and WebP written by
Pillow, read by OCR. The formats read without LibreOffice or OCR (Outlook messages, JSON and XML,
text and mail in UTF-16, UTF-32 and legacy encodings) are tests/ingest/test_formats_without_tools.py."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import documents as D
import pytest

from ragsift.ingest.loaders import LoadLimits, load_file
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


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_opendocument_slides_and_sheets_are_read_natively(office, lang, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no LibreOffice: ODP and ODS need none
    deck = _one(office[f"{lang}.odp"])
    assert deck.format == "odp" and "converted_by" not in deck.metadata
    _guide_read(deck, lang, slides=True)
    sheet = _one(office[f"{lang}.ods"])
    assert sheet.format == "ods" and sheet.metadata["sheets"] == [f"sheet-{lang}"]
    assert sheet.text.startswith(f"# sheet-{lang}\n\n| name | voltage | note |") and CELLS[lang] in sheet.text


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


@pytest.mark.parametrize("lang,fmt", [("zh", "bmp"), ("en", "webp")])
def test_bmp_and_webp_images_are_read_by_ocr(tmp_path, lang, fmt):
    from PIL import Image

    line = "恢复出厂设置需要同时按住音量加和电源键十秒" if lang == "zh" else "Hold the reset button for ten seconds"
    path = tmp_path / f"note-{lang}.{fmt}"
    Image.open(D.text_image([line], tmp_path / "note.png")).convert("RGB").save(path, lossless=True)
    doc = _one(path)
    assert _flat(line) in _flat(doc.text) and doc.metadata["ocr_pages"] == [1]
