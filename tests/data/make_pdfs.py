"""Regenerate the ingestion test fixtures in this folder.

Requires: reportlab (made with reportlab 5.1.0; `pip install "reportlab>=4"`).
reportlab is only needed to regenerate these fixtures; neither ragsift nor
its tests import it. Run from anywhere:

    python tests/data/make_pdfs.py

Writes, next to this script:

* sample_en.pdf  - 2 pages, English, "Solar panel maintenance".
* sample_zh.pdf  - 2 pages, Chinese, "茶叶的储存方法". Uses reportlab's
  built-in CID font STSong-Light (UnicodeCIDFont, encoding UniGB-UCS2-H), so
  no font file is needed or embedded; pypdf maps the text back to Unicode
  through the predefined CMap.
* not_utf8.txt   - Chinese text encoded as GB18030 (not valid UTF-8).
* image.md       - binary bytes (with NULs) wearing a .md extension.
* empty.md       - zero bytes.

Output is deterministic (reportlab "invariant" mode, seeded bytes), so a
rerun produces byte-identical files.
"""

from __future__ import annotations

import random
from pathlib import Path

from reportlab import rl_config

rl_config.invariant = 1  # fixed dates / document IDs -> reproducible bytes

from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.styles import ParagraphStyle  # noqa: E402
from reportlab.lib.units import mm  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: E402
from reportlab.platypus import (  # noqa: E402
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
)

HERE = Path(__file__).resolve().parent

EN_TITLE = "Solar Panel Maintenance"
EN_PAGES = [
    [
        "Solar panels need little maintenance, but a regular routine keeps "
        "them producing close to their rated output for decades.",
        "Cleaning intervals: clean the panels every six months in most "
        "climates, and every three months in dusty or coastal areas. Use "
        "soft water and a non-abrasive brush; never use a pressure washer.",
        "Inspect the mounting rails and clamps once a year. Tighten any "
        "loose bolts and check the cables for cracks or animal damage.",
    ],
    [
        "Inverter error codes: error code E07 means grid voltage out of "
        "range. The inverter disconnects until the grid voltage returns to "
        "normal; if E07 persists for more than one hour, contact your "
        "installer or the utility company.",
        "Error code E12 means an insulation fault on the DC side. Switch "
        "the system off and call a qualified electrician.",
        "Keep a simple log of monthly energy production. A drop of more "
        "than 15 percent compared with the same month last year usually "
        "means the panels need cleaning or a string has failed.",
    ],
]

ZH_TITLE = "茶叶的储存方法"
ZH_PAGES = [
    [
        "茶叶容易吸收湿气和异味，储存时应做到密封、避光、防潮、低温。",
        "绿茶应在0至5摄氏度冷藏保存，最好使用密封罐或铝箔袋分装，"
        "每次取用后立即封口，避免反复受潮。",
        "乌龙茶可在常温下保存，温度不宜超过25摄氏度，"
        "并远离香料、咖啡等气味浓烈的物品。",
    ],
    [
        "红茶属于全发酵茶，常温密封即可，一般可保存两年左右。",
        "普洱茶需要通风、干燥、无异味的环境，相对湿度以60%至70%为宜，"
        "不宜放入冰箱。",
        "从冰箱取出的茶叶，应先放置约半小时，待恢复到室温后再开封，"
        "以免冷凝水使茶叶受潮变质。",
    ],
]


def build_pdf(path: Path, title: str, pages: list[list[str]], *,
              font: str, cjk: bool, lang_title: str) -> None:
    body = ParagraphStyle(
        "body",
        fontName=font,
        fontSize=12,
        leading=18,
        spaceAfter=14,  # visible blank space between paragraphs
        wordWrap="CJK" if cjk else None,
    )
    heading = ParagraphStyle(
        "heading", parent=body, fontSize=18, leading=24, spaceAfter=18
    )
    story = []
    for i, paragraphs in enumerate(pages):
        if i:
            story.append(PageBreak())
        story.append(Paragraph(title if i == 0 else f"{title} ({i + 1})", heading))
        for text in paragraphs:
            story.append(Paragraph(text, body))
            story.append(Spacer(1, 6 * mm))
    doc = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        leftMargin=25 * mm,
        rightMargin=25 * mm,
        topMargin=25 * mm,
        bottomMargin=25 * mm,
        title=lang_title,
        author="ragsift test fixtures",
    )
    doc.build(story)


def main() -> None:
    build_pdf(HERE / "sample_en.pdf", EN_TITLE, EN_PAGES,
              font="Helvetica", cjk=False, lang_title=EN_TITLE)

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    build_pdf(HERE / "sample_zh.pdf", ZH_TITLE, ZH_PAGES,
              font="STSong-Light", cjk=True, lang_title=ZH_TITLE)

    # Chinese text as GB18030 bytes: must NOT decode as UTF-8.
    gb_text = "茶叶的储存方法：绿茶应冷藏保存，乌龙茶常温密封。\n"
    gb_bytes = gb_text.encode("gb18030")
    try:
        gb_bytes.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:  # pragma: no cover - sanity guard
        raise SystemExit("not_utf8.txt unexpectedly decodes as UTF-8")
    (HERE / "not_utf8.txt").write_bytes(gb_bytes)

    # Binary file with a .md extension: PNG-like header, NULs, seeded noise.
    rng = random.Random(20240501)
    blob = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10"
        + bytes(rng.randrange(256) for _ in range(480))
        + b"\x00" * 16
        + b"\xff\xfe\x00\x00"
    )
    assert b"\x00" in blob
    (HERE / "image.md").write_bytes(blob)

    (HERE / "empty.md").write_bytes(b"")

    for name in ("sample_en.pdf", "sample_zh.pdf", "not_utf8.txt",
                 "image.md", "empty.md"):
        print(f"{name}: {(HERE / name).stat().st_size} bytes")


if __name__ == "__main__":
    main()
