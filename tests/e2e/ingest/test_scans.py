"""Scans upright and spaced (issue 52): pages of real text, Chinese and English, rendered as a
scanner would (150 dpi, black on white), turned 90, 180 and 270 degrees (counterclockwise), bound
as image-only PDFs, PNG and TIFF, and read by the real loaders and OCR: the text comes out as from
the upright page, the turn is named in ``ocr_rotated``, English words keep their spaces, Chinese
gets none; a page with no text is named in ``ocr_empty``; ``ragsift show`` says what became of
each page."""
from __future__ import annotations

import re
from pathlib import Path

import documents as D
import pytest

from ragsift.ingest.loaders import LoadLimits, load_file
from ragsift.ingest.loaders import ocr as ocr_module

pytestmark = pytest.mark.skipif(not ocr_module.available(), reason="needs ragsift[ocr]")

TEXT = {
    "en": ["Backups of the billing database run every night at two o'clock.",
           "Each copy is kept for thirty days and then removed from the store.",
           "To restore a copy, stop the service and hold the reset button.",
           "The green light shows that the restore has finished without errors."],
    "zh": ["恢复出厂设置需要同时按住音量加和电源键十秒。",
           "备份每天凌晨两点运行，每份副本保留三十天。",
           "绿色指示灯亮起表示恢复已经完成，没有错误。",
           "如需帮助，请联系值班工程师或查看用户手册。"],
}
PHRASES = {"en": ["hold the reset button", "kept for thirty days", "billing database"],
           "zh": ["恢复出厂设置", "凌晨两点", "值班工程师"]}
PAGE = re.compile(r"\ue000page:(\d+)\ue001")
MAX_CER = 0.03  # of the page's characters (whitespace aside) read wrong, at most
CJK_SPACE = re.compile(r"[\u4e00-\u9fff，。] +[\u4e00-\u9fff，。]")


def page_image(lang: str, angle: int = 0, mode: str = "RGB"):
    """A page of ``TEXT[lang]`` as a 150 dpi scan (about 12 pt), turned ``angle`` degrees
    counterclockwise."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(D.CJK_FONT, 25)
    img = Image.new("RGB", (960, 90 + 44 * len(TEXT[lang])), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(TEXT[lang]):
        draw.text((50, 45 + 44 * i), line, fill="black", font=font)
    return img.rotate(angle, expand=True, fillcolor="white").convert(mode)


def blank_page(mode: str = "RGB"):
    from PIL import Image

    return Image.new(mode, (960, 280), "white")


def pages_of(text: str) -> dict[int, str]:
    parts = PAGE.split(text)
    return {int(parts[i]): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def cer(reference: str, output: str) -> float:
    """Characters edited (inserted, deleted, changed) over the reference's, whitespace left out."""
    a, b = re.sub(r"\s+", "", reference), re.sub(r"\s+", "", output)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(1, len(a))


def glued(output: str, reference: str) -> list[str]:
    """The output's words that are no word of the reference but two or more of them joined."""
    vocab = {w.lower() for w in re.findall(r"[A-Za-z']+", reference)}

    def joined(w: str) -> bool:
        ok = [True] + [False] * len(w)
        for i in range(1, len(w) + 1):
            ok[i] = any(ok[j] and w[j:i] in vocab and (j > 0 or i < len(w)) for j in range(i))
        return ok[len(w)]

    words = [w.lower() for w in re.findall(r"[A-Za-z']+", output)]
    return [w for w in words if w not in vocab and joined(w)]


def read(path: Path, **limits):
    res = load_file(path, path.name, LoadLimits(**limits))
    assert res.documents, res.skipped
    return res.documents[0]


def assert_upright(lang: str, got: str, upright: str | None = None) -> None:
    """``got`` reads as the page's text: at most ``MAX_CER`` of its characters wrong, and within a
    point of the upright page's reading ``upright``; the key phrases there, English spaced and
    Chinese not."""
    ref = "\n".join(TEXT[lang])
    got = re.sub(r"(?m)^#+ ", "", got)  # a line the loader took for a heading
    bound = MAX_CER if upright is None else min(MAX_CER, cer(ref, upright) + 0.01)
    assert cer(ref, got) <= bound, (cer(ref, got), bound, got)
    flat = " ".join(got.split()).lower()
    for phrase in PHRASES[lang]:
        assert phrase in flat, (phrase, got)
    if lang == "en":
        assert not glued(got, ref), glued(got, ref)
    assert not CJK_SPACE.search(got), got


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_scanned_pdf_turned_every_way_reads_as_upright(tmp_path, lang):
    """An image-only PDF whose four pages are the same page upright and turned 90, 180 and 270
    degrees: every page reads as the upright one, and the turns are named."""
    turned = [page_image(lang, a) for a in (0, 90, 180, 270)]
    pdf = tmp_path / f"turned-{lang}.pdf"
    turned[0].save(pdf, save_all=True, append_images=turned[1:], resolution=150)
    doc = read(pdf)
    assert doc.metadata["ocr_pages"] == [1, 2, 3, 4]
    assert doc.metadata["ocr_rotated"] == {"2": 90, "3": 180, "4": 270}
    assert "ocr_empty" not in doc.metadata
    pages = pages_of(doc.text)
    assert sorted(pages) == [1, 2, 3, 4], doc.text
    for n in (1, 2, 3, 4):
        assert_upright(lang, pages[n], pages[1])


def test_turned_images_png_and_tiff_grey_transparent_and_blank(tmp_path):
    """A PNG on a transparent ground turned 270 degrees; a TIFF of three frames: Chinese turned 90
    in grey, English upside down in black and white (one bit a pixel, as document scanners
    write), a blank frame."""
    png = tmp_path / "note.png"
    rgba = page_image("en", 270, "RGBA")
    ink = rgba.convert("L").point(lambda v: 255 - v)  # the text opaque, the ground clear
    rgba.putalpha(ink)
    rgba.save(png)
    doc = read(png)
    assert doc.metadata["ocr_pages"] == [1] and doc.metadata["ocr_rotated"] == {"1": 270}
    assert_upright("en", pages_of(doc.text)[1])

    tif = tmp_path / "scans.tif"
    page_image("zh", 90, "L").save(tif, save_all=True, append_images=[page_image("en", 180, "1"), blank_page("1")],
                                   compression="tiff_lzw")
    doc = read(tif)
    assert doc.metadata["ocr_pages"] == [1, 2, 3]
    assert doc.metadata["ocr_rotated"] == {"1": 90, "2": 180}
    assert doc.metadata["ocr_empty"] == [3]
    pages = pages_of(doc.text)
    assert_upright("zh", pages[1])
    assert_upright("en", pages[2])
    assert not pages.get(3)


def test_an_image_as_its_exif_says_and_one_without_text(tmp_path):
    """A JPEG stored on its side with an EXIF orientation that stands it up is read as shown (not
    found turned: it is not); an image with no text, or of a few pixels, is skipped and says so."""
    from PIL import Image

    stored = page_image("zh", 90)
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90 degrees clockwise: upright
    jpg = tmp_path / "photo.jpg"
    stored.save(jpg, exif=exif.tobytes(), quality=95)
    doc = read(jpg)
    assert "ocr_rotated" not in doc.metadata
    assert_upright("zh", pages_of(doc.text)[1])
    for name, img in (("blank.png", blank_page()), ("dot.png", Image.new("RGB", (1, 1))),
                      ("strip.png", Image.new("L", (3, 5000), 0))):
        img.save(tmp_path / name)
        res = load_file(tmp_path / name, name, LoadLimits())
        assert not res.documents and "no text" in res.skipped[0].reason, res.skipped


def scanned_manual(path: Path) -> Path:
    """A PDF of three pages: one of text (a text layer, written by reportlab), one scanned upside
    down, one scanned blank."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=(460, 300))
    c.setFont("Helvetica", 12)
    c.drawString(40, 250, "Maintenance manual: the scanned pages follow.")
    c.showPage()
    for img in (page_image("en", 180), blank_page()):
        w, h = img.size[0] * 72 / 150, img.size[1] * 72 / 150
        c.setPageSize((w, h))
        c.drawImage(ImageReader(img), 0, 0, w, h)
        c.showPage()
    c.save()
    return path


def test_show_says_what_became_of_each_scanned_page(tmp_path, capsys):
    """``ragsift show`` of a PDF with scanned pages: a page found turned and read upright, a page
    with no text; with OCR off (as without it installed), those pages left out and named."""
    import json

    from ragsift.cli import main
    from ragsift.kb import KnowledgeBase

    docs = tmp_path / "docs"
    docs.mkdir()
    scanned_manual(docs / "manual.pdf")
    for name, ocr in (("kb", True), ("kb-no-ocr", False)):
        kb = KnowledgeBase.open(tmp_path / name, embedder="minilm", ocr=ocr)
        report = kb.ingest(docs)
        assert not report.skipped, report.skipped
        kb.close()

    assert main(["--kb", str(tmp_path / "kb"), "show", "manual.pdf"]) == 0
    out = capsys.readouterr().out
    assert "scanned pages:\n  page 2: found turned 180 degrees counterclockwise, read upright by OCR\n" \
           "  page 3: read by OCR, no text found\n" in out, out
    assert main(["--kb", str(tmp_path / "kb"), "show", "manual.pdf", "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["scanned_pages"] == [{"page": 2, "state": "rotated", "rotated": 180},
                                     {"page": 3, "state": "empty", "rotated": 0}]
    assert view["ocr_pages"] == [2, 3] and view["document"]["metadata"]["ocr_rotated"] == {"2": 180}
    assert "hold the reset button" in " ".join(p["text"] for p in view["parents"]).lower()

    assert main(["--kb", str(tmp_path / "kb-no-ocr"), "show", "manual.pdf", "--text"]) == 0
    out = capsys.readouterr().out
    assert "scanned pages:\n  pages 2-3: left out: OCR is not installed (ocr_missing; pip install 'ragsift[ocr]')\n" \
        in out, out
    assert "hold the reset button" not in out.lower()
