"""Documents written by real writers for the loader tests and the reading benchmark: pandoc
(DOCX, ODT, EPUB, PPTX, RTF from Markdown), LibreOffice (PDF, DOC, RTF from DOCX; PPT, ODP from
PPTX; XLSX, XLS, ODS from CSV), Pillow (text
rendered into images, pages rendered into a scanned PDF), the standard library (mail, ZIP), and
files made hostile on purpose (fault injection: bombs, encrypted, damaged, lying about their type)."""
from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from email.message import EmailMessage
from pathlib import Path

CJK_FONT = "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc"


def guide(lang: str) -> str:
    """A short guide in one language: a title, two chapters with sections, a numbered list, a table
    and a footnote (Markdown for pandoc)."""
    if lang == "zh":
        return """---
title: 星云音箱手册
---

# 第一章 快速入门

星云智能音箱 S2 支持蓝牙和 Wi-Fi 两种连接方式。首次使用时请长按电源键三秒开机[^1]。

## 配对步骤

1. 打开手机蓝牙。
2. 在列表中选择星云音箱。

| 功能 | 按键 | 时长 |
|---|---|---|
| 开机 | 电源键 | 3 秒 |
| 恢复出厂设置 | 音量加和电源键 | 10 秒 |

# 第二章 日常维护

请用干布清洁音箱网罩，不要使用溶剂。固件更新在夜间自动安装，安装后音箱会重启。

[^1]: 电源键位于机身背面。
"""
    return """---
title: Nebula Hub Guide
---

# Chapter 1 Getting started

The Nebula hub connects over Zigbee and Wi-Fi. Hold the power button for three seconds to turn it on[^1].

## Pairing

1. Open the app.
2. Choose the Nebula hub in the list.

| Action | Buttons | Time |
|---|---|---|
| Power on | Power | 3 seconds |
| Factory reset | Volume up and power | 10 seconds |

# Chapter 2 Care

Clean the grille with a dry cloth and never use solvents. Firmware updates install overnight and the hub restarts afterwards.

[^1]: The power button is on the back.
"""


def pandoc(md: str, out: Path, *options: str) -> Path:
    src = out.with_suffix(".src.md")
    src.write_text(md, encoding="utf-8")
    subprocess.run(["pandoc", str(src), "-s", *options, "-o", str(out)], check=True, timeout=120)
    src.unlink()
    return out


def soffice(src: Path, fmt: str, outdir: Path, infilter: str | None = None) -> Path:
    """LibreOffice converts ``src`` to ``fmt`` in ``outdir`` (its own profile folder, so runs
    never share one)."""
    profile = outdir / ".lo-profile"
    cmd = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", fmt,
           "--outdir", str(outdir), str(src)]
    if infilter:
        cmd.insert(3, f"--infilter={infilter}")
    subprocess.run(cmd, check=True, timeout=300, capture_output=True)
    out = outdir / (src.stem + "." + fmt.split(":")[0])
    assert out.exists(), f"LibreOffice made no {out.name}"
    shutil.rmtree(profile, ignore_errors=True)
    return out


def soffice_all(srcs: list[Path], fmt: str, outdir: Path, infilter: str | None = None) -> list[Path]:
    """LibreOffice converts every file of ``srcs`` to ``fmt`` in ``outdir`` in one start."""
    profile = outdir / ".lo-profile"
    cmd = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", fmt,
           "--outdir", str(outdir), *map(str, srcs)]
    if infilter:
        cmd.insert(3, f"--infilter={infilter}")
    subprocess.run(cmd, check=True, timeout=300, capture_output=True)
    shutil.rmtree(profile, ignore_errors=True)
    outs = [outdir / (src.stem + "." + fmt.split(":")[0]) for src in srcs]
    assert all(o.exists() for o in outs), f"LibreOffice made no {fmt}"
    return outs


def chromium_pdf(html_body: str, path: Path, *, title: str, lang: str, columns: int = 2) -> Path:
    """Chromium (Debian's, through Playwright) prints HTML to a PDF with ``columns`` columns, the
    title as a running head and the page number as a running foot on every page."""
    from playwright.sync_api import sync_playwright

    css = (f"body{{column-count:{columns};column-gap:2em;font-family:'Noto Serif CJK SC',serif;font-size:10pt;"
           "hyphens:manual}h1,h2,h3{font-family:'Noto Sans CJK SC',sans-serif}"
           "table{border-collapse:collapse}td,th{border:1px solid #444;padding:2px}")
    html = (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{css}</style></head><body>{html_body}</body></html>")
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium is needed (apt-get install chromium; .ci/run installs it)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        page.set_content(html)
        page.pdf(path=str(path), format="A4", display_header_footer=True,
                 margin={"top": "2cm", "bottom": "2cm", "left": "1.5cm", "right": "1.5cm"},
                 header_template=f"<div style='font-size:8px;width:100%;text-align:center'>{title}</div>",
                 footer_template="<div style='font-size:8px;width:100%;text-align:center'>"
                                 "<span class='pageNumber'></span></div>")
        browser.close()
    return path


def text_image(lines: list[str], path: Path) -> Path:
    """Lines of text rendered black on white (a CJK font for both languages), like a scan at 150 dpi."""
    path.write_bytes(png_bytes(lines))
    return path


def scanned_pdf(pdf: Path, out: Path, dpi: int = 150) -> Path:
    """Each page of ``pdf`` rendered to an image, the images bound into a PDF without a text
    layer (what a scanner makes)."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(pdf))
    images = [doc[i].render(scale=dpi / 72).to_pil().convert("RGB") for i in range(len(doc))]
    images[0].save(out, save_all=True, append_images=images[1:], resolution=dpi)
    return out


def mail(subject: str, body: str, attachments: dict[str, bytes], path: Path) -> Path:
    msg = EmailMessage()
    msg["From"] = "ops@example.com"
    msg["To"] = "team@example.com"
    msg["Subject"] = subject
    msg.set_content(body)
    for name, data in attachments.items():
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    path.write_bytes(msg.as_bytes())
    return path


def zipped(members: dict[str, bytes], path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


# ------------------------------------------------------------------ hostile files (fault injection)
def zip_bomb(path: Path, mb: int = 300) -> Path:
    """A small archive whose one member unpacks to ``mb`` MB of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("bomb.txt", "w") as f:
        block = b"\0" * (1 << 20)
        for _ in range(mb):
            f.write(block)
    return path


def pixel_bomb(path: Path, side: int = 30_000) -> Path:
    """A PNG of ``side`` x ``side`` one-bit pixels: a few KB on disk, gigabytes decoded."""
    from PIL import Image

    Image.new("1", (side, side)).save(path)
    return path


LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
          + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
          + "]>\n")


def entity_bomb(good: Path, member: str, path: Path) -> Path:
    """A copy of a zipped document (DOCX, ODT, EPUB) whose ``member`` starts with a billion-laughs
    entity declaration and uses it."""
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == member:
                text = data.decode("utf-8")
                text = text[text.index("?>") + 2:] if text.startswith("<?xml") else text
                head, _, rest = text.partition(">")
                data = (LAUGHS + head + ">&lol9;" + rest).encode("utf-8")
            dst.writestr(info, data)
    return path


def encrypted_pdf(pdf: Path, path: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    w = PdfWriter(clone_from=PdfReader(str(pdf)))
    w.encrypt(user_password="secret", owner_password="owner")
    with open(path, "wb") as f:
        w.write(f)
    return path


def truncated(src: Path, path: Path, keep: float = 0.5) -> Path:
    data = src.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def with_macro(docx: Path, path: Path) -> Path:
    """A DOCM: the document with a VBA project part (never run; its text is read)."""
    with zipfile.ZipFile(docx) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("word/vbaProject.bin", b"\xd0\xcf\x11\xe0" + b"Attribute VB_Name = \"AutoOpen\"" * 20)
    return path


def png_bytes(lines: list[str], width: int = 1240) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(CJK_FONT, 30)
    img = Image.new("RGB", (width, 120 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((60, 60 + 70 * i), line, fill="black", font=font)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


STRICT = [(f"http://schemas.openxmlformats.org/{t}", f"http://purl.oclc.org/ooxml/{s}") for s, t in (
    ("wordprocessingml/main", "wordprocessingml/2006/main"),
    ("officeDocument/relationships", "officeDocument/2006/relationships"),
    ("officeDocument/math", "officeDocument/2006/math"),
    ("drawingml/main", "drawingml/2006/main"),
    ("drawingml/wordprocessingDrawing", "drawingml/2006/wordprocessingDrawing"),
    ("drawingml/picture", "drawingml/2006/picture"),
    ("spreadsheetml/main", "spreadsheetml/2006/main"),
    ("presentationml/main", "presentationml/2006/main"),
)]


def strict(src: Path, path: Path) -> Path:
    """A copy of a Transitional OOXML file (DOCX, XLSX, PPTX) in Strict OOXML (ISO/IEC 29500
    Strict, as Word's "Strict Open XML Document" saves it): the same parts, with Strict's
    namespaces and relationship types (LibreOffice 7.4 writes Transitional only)."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            data = z.read(info)
            if info.filename.endswith((".xml", ".rels")):
                text = data.decode("utf-8")
                for transitional, strict_ns in STRICT:
                    text = text.replace(transitional, strict_ns)
                data = text.encode("utf-8")
            out.writestr(info, data)
    return path
