"""PDFs as real ones come (issue 52), each written by a real writer: a two-column review copy set
the way pdfTeX sets it (every word placed on its own, no space characters, tight spacing), with
line-number rulers in both margins, a sideways arXiv stamp, a title, a by-line and an abstract;
Arabic and Hebrew (right to left); a font whose glyphs map to no character; dot leaders and a
table ruled only at its top and bottom. English and Chinese throughout."""
from __future__ import annotations

from pathlib import Path

import pytest

from ragsift.ingest.loaders import LoadLimits, load_file
from ragsift.ingest.splitter import take_marks

PAPER = {
    "en": {"title": "Reading Documents As They Come", "authors": ["Ada Lovelace", "Charles Babbage"],
           "abstract": "Abstract",
           "sections": [("1 Introduction", ("Recent advances in document image analysis make tightly set text "
                                             "readable again. Readers glued such words together before. ") * 6),
                        ("2 Method", ("We place every word where the typesetter put it and read the columns one "
                                      "after the other without mixing their lines. ") * 6),
                        ("3 Results", ("The second column follows the first and the ruler numbers never reach the "
                                       "text of the paper. ") * 6)]},
    "zh": {"title": "按原样阅读文档", "authors": ["张三", "李四"], "abstract": "摘要",
           "sections": [("1 引言", "文档图像分析的最新进展使排版紧密的文本重新可读。此前的读取器会把这样的词粘在一起。" * 5),
                        ("2 方法", "我们把每个词放在排版器放置的位置，并依次阅读各栏，不混合它们的行。" * 5),
                        ("3 结果", "第二栏紧随第一栏，标尺上的数字从不进入论文的正文。" * 5)]},
}
STAMP = "arXiv:2401.00001v1 [cs.CL] 5 Jan 2024"


def _paper(path: Path, lang: str) -> Path:
    """A two-column paper drawn with reportlab, word by word as pdfTeX places them: no space
    glyphs, a gap of a fifth of an em between words."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    p = PAPER[lang]
    if lang == "zh":
        pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
        body, bold = "STSong-Light", "STSong-Light"
    else:
        body, bold = "Times-Roman", "Times-Bold"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    width, height = A4
    cols = [(57.0, 291.0), (304.0, 538.0)]  # a gutter of 13 points
    size, lead = 10.0, 12.0

    def words_of(text: str) -> list[str]:
        return list(text) if lang == "zh" else text.split()

    def place(x0: float, y: float, words: list[str], font: str, fsize: float) -> None:
        x = x0
        gap = 0 if lang == "zh" else 0.2 * fsize
        for w in words:
            c.setFont(font, fsize)
            c.drawString(x, y, w)
            x += pdfmetrics.stringWidth(w, font, fsize) + gap

    def wrap(words: list[str], font: str, fsize: float, room: float) -> list[list[str]]:
        lines, cur, used = [], [], 0.0
        gap = 0 if lang == "zh" else 0.2 * fsize
        for w in words:
            wide = pdfmetrics.stringWidth(w, font, fsize)
            if cur and used + gap + wide > room:
                lines.append(cur)
                cur, used = [], 0.0
            used += (gap if cur else 0) + wide
            cur.append(w)
        return lines + [cur] if cur else lines

    line_no = 0

    def rulers(y: float) -> None:
        nonlocal line_no
        c.setFont("Helvetica", 7)
        c.drawString(28, y, f"{line_no:03d}")
        c.drawString(552, y, f"{line_no + 50:03d}")
        line_no += 1

    # the title and the by-line across both columns, the stamp sideways in the left margin
    y = height - 90
    title_words = words_of(p["title"])
    tw = sum(pdfmetrics.stringWidth(w, bold, 15) for w in title_words) + (0 if lang == "zh" else 3 * len(title_words))
    place((width - tw) / 2, y, title_words, bold, 15)
    for i, name in enumerate(p["authors"]):
        place(150 + 200 * i, y - 30, words_of(name), bold, 12)
    c.saveState()
    c.translate(20, 250)
    c.rotate(90)
    c.setFont("Times-Roman", 18)
    c.drawString(0, 0, STAMP)
    c.restoreState()
    blocks: list[tuple[str, str]] = [("abstract", p["abstract"])]
    for heading, text in p["sections"]:
        blocks += [("heading", heading), ("text", text)]
    col, y = 0, height - 160
    for kind, text in blocks:
        font, fsize = (bold, 12.0) if kind in ("heading", "abstract") else (body, size)
        for ln in wrap(words_of(text), font, fsize, cols[col][1] - cols[col][0]):
            if y < 80:
                col, y = col + 1, height - 160
                if col == 2:
                    c.showPage()
                    col, y = 0, height - 80
            rulers(y) if col == 0 else None
            place(cols[col][0], y, ln, font, fsize)
            y -= lead if kind == "text" else 18
        y -= 6
    c.showPage()
    c.save()
    return path


def _read(path: Path) -> tuple[str, dict]:
    res = load_file(path, path.name, LoadLimits())
    assert not res.skipped, res.skipped
    text, _ = take_marks(res.documents[0].text)
    return text, res.documents[0].metadata


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_two_column_review_copy_reads_as_written(tmp_path, lang):
    p = PAPER[lang]
    text, _ = _read(_paper(tmp_path / f"paper-{lang}.pdf", lang))
    headings = [ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("#")]
    # the title and the numbered sections are headings; the by-line is not (it was read as headings
    # that replaced each other)
    assert headings == [p["title"], p["abstract"]] + [h for h, _ in p["sections"]], headings
    for name in p["authors"]:
        assert name in text and name not in headings
    # every section's text whole and in order: the columns one after the other, no ruler number,
    # no stamp, words apart (pdfTeX's tight spacing once glued them: "Recentadvancesin...")
    flat = " ".join(text.split()) if lang == "en" else "".join(text.split())
    for _, body in p["sections"]:
        sentence = " ".join(body.split()[:12]) if lang == "en" else body[:30]
        assert sentence in flat, sentence
    assert flat.index(p["sections"][0][1][:20]) < flat.index(p["sections"][1][1][:20]) \
        < flat.index(p["sections"][2][1][:20])
    assert "arXiv" not in text and "000" not in text and "051" not in text
    if lang == "en":
        assert "Recent advances in document image analysis" in flat and "Recentadvances" not in flat


@pytest.mark.parametrize("lang", ["ar", "he"])
def test_right_to_left_text_reads_in_logical_order(tmp_path, lang):
    import documents as D

    text = {"ar": ("مقدمة", "هذا نص عربي للاختبار، يجب أن يقرأ بالترتيب الصحيح"),
            "he": ("מבוא", "זהו טקסט בעברית לבדיקה שצריך להיקרא בסדר הנכון")}[lang]
    docx = D.pandoc(f"# {text[0]}\n\n{text[1]}\n", tmp_path / f"rtl-{lang}.docx")
    got, _ = _read(D.soffice(docx, "pdf", tmp_path))
    assert f"# {text[0]}" in got.splitlines()
    assert text[1] in got  # the letters in their order (a lam-alef ligature too), the words from the right


def test_a_font_that_maps_no_characters_is_read_by_ocr(tmp_path):
    """A PDF whose fonts lost their Unicode maps gives pdfminer's "(cid:N)" for every glyph: 295 of
    them were indexed from one file. The page is read by OCR instead; none is ever kept."""
    import documents as D
    from pypdf import PdfReader, PdfWriter

    docx = D.pandoc("# 恢复出厂设置\n\n按住复位键十秒即可恢复出厂设置。\n\nHold the reset button for ten seconds.\n",
                    tmp_path / "reset.docx")
    pdf = D.soffice(docx, "pdf", tmp_path)
    reader = PdfReader(pdf)
    writer = PdfWriter()
    for page in reader.pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font.get_object().pop("/ToUnicode", None)
        writer.add_page(page)
    broken = tmp_path / "no-map.pdf"
    with open(broken, "wb") as f:
        writer.write(f)
    without = load_file(broken, "x", LoadLimits(ocr=False))  # without OCR: the page is named, no junk kept
    assert all("(cid:" not in d.text for d in without.documents)
    assert (without.documents and without.documents[0].metadata["ocr_missing"] == [1]) or \
        "OCR" in without.skipped[0].reason
    text, meta = _read(broken)
    assert "(cid:" not in text
    assert meta.get("ocr_pages") == [1]
    assert "恢复出厂设置" in text and "ten seconds" in text.replace("tenseconds", "ten seconds")


def test_tex_bold_fonts_are_bold():
    from ragsift.ingest.loaders.layout import is_bold

    assert [n for n in ("WMCETY+CMBX12", "CMSSBX10", "SFBX1200", "LMRoman10-Bold", "CMB10", "NimbusRomNo9L-Medi")
            if not is_bold(n)] == []
    assert [n for n in ("PGXFVZ+CMR10", "CMTI10", "cmbr10", "SFRM1000", "NimbusRomNo9L-Regu") if is_bold(n)] == []


def test_dot_leaders_go(tmp_path):
    """A table of contents' dot leaders were about 2,000 tokens of one real file."""
    import documents as D

    md = ("# 目录 Contents\n\n1 Introduction " + "." * 24 + " 3\n\n2 Fonts " + ". " * 12 + "7\n\n"
          "3 恢复出厂设置 " + "…" * 8 + " 9\n\nThe end... of the story.\n")
    text, _ = _read(D.soffice(D.pandoc(md, tmp_path / "toc.docx"), "pdf", tmp_path))
    flat = " ".join(text.split())
    assert "1 Introduction 3" in flat and "2 Fonts 7" in flat and "3 恢复出厂设置 9" in flat, flat
    assert "...." not in flat and ". . ." not in flat and "……" not in flat
    assert "The end… of the story." in flat  # an ellipsis in a sentence stays (pandoc writes it as one character)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cover_page_keeps_its_authors_and_the_title_is_no_running_head(tmp_path, lang):
    """A cover page of a title and nine authors (each large enough to be a heading, no text under
    them) vanished from every stored section; titles were taken from a running head with its page
    number or a check box's line."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    from ragsift.ingest.splitter import SplitSettings, split_document

    zh = lang == "zh"
    font = "STSong-Light" if zh else "Helvetica"
    title = "年度阅读报告" if zh else "Annual Report on Reading"
    authors = [f"作者{n}号" for n in "一二三四五六七八九"] if zh else [f"Author Number {n}" for n in range(1, 10)]
    path = tmp_path / f"cover-{lang}.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    c.setFont("STSong-Light", 26)  # a check box's line, larger than the title
    c.drawString(60, 720, "□ 待审批" if zh else "□ Pending approval")
    c.setFont(font, 8)
    c.drawString(60, 815, ("测试期刊 第3卷 12" if zh else "Journal of Tests, Vol. 3   12"))
    c.setFont(font, 22)
    c.drawString(60, 640, title)
    for i, name in enumerate(authors):
        c.setFont(font, 15)
        c.drawString(60, 590 - 24 * i, name)
    c.showPage()
    c.setFont(font, 14)
    c.drawString(60, 780, "1 引言" if zh else "1 Introduction")
    c.setFont(font, 10)
    for i in range(12):
        c.drawString(60, 750 - 14 * i, ("报告正文第" + str(i) + "行，说明阅读的方法。") if zh else
                     f"Line {i} of the report's body says how the reading was done.")
    c.showPage()
    c.save()
    res = load_file(path, path.name, LoadLimits())
    doc = res.documents[0]
    assert doc.title == title, doc.title
    parents, _ = split_document(doc, SplitSettings())
    stored = "\n".join(p.text for p in parents) + "\n".join(h for p in parents for h in p.heading_path)
    for name in authors:
        assert name in stored, name


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_outline_entry_names_its_numbered_heading_not_the_body_line_under_it(tmp_path, lang):
    """R's manuals: the outline says "Vectors", the page "2.1.1 Vectors" and under it "Vectors can
    be thought of as ..."; the body line was taken for the heading (R-lang: 25 of 157 headings).
    A bold heading the outline leaves out is one, a level below; a title wrapped over three lines
    and numbered on the page is one heading."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    zh = lang == "zh"
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    body_font, head_font = ("STSong-Light", "STSong-Light") if zh else ("Times-Roman", "Times-Bold")
    sections = ([("向量与列表", "向量与列表是最常用的数据结构，按位置取出其中的元素。"),
                 ("环境与作用域", "环境与作用域决定一个名字在求值时指向哪个值。")] if zh else
                [("Vectors", "Vectors can be thought of as contiguous cells containing data."),
                 ("Environments", "Environments can be thought of as consisting of two things.")])
    path = tmp_path / f"outline-{lang}.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    y = 760
    for n, (title, body) in enumerate(sections, 1):
        c.bookmarkPage(f"s{n}", fit="XYZ", top=y + 14)
        c.addOutlineEntry(title, f"s{n}", level=0)
        c.setFont(head_font, 13)
        c.drawString(60, y, f"2.1.{n} {title}")
        c.setFont(body_font, 10)
        for i in range(4):
            c.drawString(60, y - 22 - 13 * i, body if i == 0 else (f"第{i}行补充说明。" if zh else f"More text, line {i}."))
        y -= 120
    # a heading the outline leaves out (texinfo's @subheading): bold, alone, body text under it
    sub, sub_body = (("使用建议", "大多数新手会从附录开始阅读。") if zh else
                     ("Suggestions to the reader", "Most novices will start with the appendix."))
    c.setFont(head_font, 12)
    c.drawString(60, y, sub)
    c.setFont(body_font, 10)
    c.drawString(60, y - 20, sub_body)
    # an outline entry whose title wraps over three lines, numbered on the page
    long_title = ("为什么在没有截距的线性模型中汇总函数会报告奇怪的决定系数估计值" if zh else
                  "Why does summary() report strange results for the R^2 estimate when I fit a linear model "
                  "with no intercept?")
    c.bookmarkPage("long", fit="XYZ", top=y - 40)
    c.addOutlineEntry(long_title, "long", level=0)
    c.setFont(head_font, 13)
    cut = [long_title[:12], long_title[12:24], long_title[24:]] if zh else [
        "7.41 Why does summary() report strange results", "for the R^2 estimate when I fit a linear",
        "model with no intercept?"]
    if zh:
        cut[0] = "7.41 " + cut[0]
    for k, part in enumerate(cut):
        c.drawString(60, y - 60 - 16 * k, part)
    c.setFont(body_font, 10)
    c.drawString(60, y - 120, "这是回答的正文。" if zh else "This is the answer's text.")
    c.showPage()
    c.save()
    text, _ = _read(path)
    headings = [ln for ln in text.split("\n") if ln.startswith("#")]
    for n, (title, body) in enumerate(sections, 1):
        assert f"# 2.1.{n} {title}" in text, headings
        assert body in text and not any(body[len(title):len(title) + 8] in h for h in headings), headings
    assert f"## {sub}" in headings and sub_body in text, headings
    assert [h for h in headings if h.startswith("# 7.41")] == [f"# 7.41 {long_title}"], headings


SPARSE_TABLE = {
    "en": [("", "CPU", "Versions", "Provider"), ("Debian", "i386/amd64", "squeeze/wheezy", "Johannes Ranke"),
           ("", "armel", "wheezy", "Johannes Ranke"), ("Ubuntu", "i386/amd64", "lucid/precise", "Michael Rutter")],
    "zh": [("", "架构", "版本", "维护者"), ("银河", "i386/amd64", "一号/二号", "张三"),
           ("", "armel", "二号", "张三"), ("星云", "i386/amd64", "三号/四号", "李四")],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_table_whose_header_leaves_the_row_names_column_empty(tmp_path, lang):
    """An unruled table as texinfo's @multitable sets it (R-FAQ's): the header row has no cell over
    the row names, so its columns alone put "Debian" in one cell with "i386/amd64"."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    font = "STSong-Light" if lang == "zh" else "Times-Roman"
    path = tmp_path / f"table-{lang}.pdf"
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont(font, 10)
    prose = {"en": ["Binary distributions of the system are provided for several platforms, each maintained",
                    "by a volunteer who builds the packages from the sources released by the team and",
                    "publishes them on the mirrors, as the table below says for each of them in turn."],
             "zh": ["本系统的二进制发行版由志愿者为多个平台维护，他们根据团队发布的源代码构建软件包，",
                    "并把软件包发布到各个镜像站点上，下表逐一列出每个平台的架构、版本和维护者的情况。",
                    "其他平台的用户可以从源代码自行构建，构建所需的工具和步骤在安装手册中有详细说明。"]}[lang]
    for n, line in enumerate(prose):  # lines across the page, as a manual's body text runs
        c.drawString(72, 780 - 13 * n, line)
    for r, row in enumerate(SPARSE_TABLE[lang]):
        for x, cell in zip((119, 175, 248, 358), row):
            c.drawString(x, 730 - 13 * r, cell)
    for n, line in enumerate(prose):
        c.drawString(72, 660 - 13 * n, line)
    c.showPage()
    c.save()
    text, _ = _read(path)
    rows = [[cell.strip() for cell in ln.strip().strip("|").split("|")] for ln in text.splitlines()
            if ln.startswith("|") and not set(ln) <= set("|- ")]
    assert rows == [list(r) for r in SPARSE_TABLE[lang]], text


# a Persian line as XeTeX sets it, in presentation forms drawn left to right: each word's glyphs,
# the space between words squeezed by justification to 0.12 of the size (below the 0.15 that parts
# words elsewhere), a gap of 0.07 after the letters that join nothing on their left (ا, ر, آ), and
# the zero-width non-joiner of "می‌کند" drawn as a space that starts a hair inside the letter after
# the break and runs over it
PERSIAN = [("ﺪﻨﮐ", "ﯽﻣ"), ("ﻥﺎﺳﺁ",), ("ﺍﺭ",), ("ﺭﺎﮐ",), ("ﻢﺘﺴﯿﺳ",), ("ﻦﯾﺍ",)]  # visual, left to right
PERSIAN_TEXT = "این سیستم کار را آسان می کند"  # logical: the non-joiner read as the break it is


def test_a_justified_persian_line_reads_word_by_word(tmp_path):
    """A Persian book set by XeTeX read as glued words ("یکسیستمحروف...", 416 of them in 147 pages)
    and split one letter off at each non-joiner ("م یکند"); the English line beside it reads as before."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    size = 11.0
    path = tmp_path / "persian.pdf"
    c = canvas.Canvas(str(path), invariant=1)
    c.setFont("DejaVu", size)
    c.drawString(72, 760, "The system makes the work easy, and so does this line in English.")
    for y in (730, 712):  # two lines alike: a paragraph
        x = 100.0
        for word in PERSIAN:
            for k, part in enumerate(word):
                if k:  # the non-joiner: a blank over the first letter of this part
                    c.drawString(x + 0.02, y, " ")
                for ch in part:
                    c.drawString(x, y, ch)
                    x += pdfmetrics.stringWidth(ch, "DejaVu", size)
                    if ch in "ﺎﺍﺭﺁ" and ch != part[-1]:
                        x += 0.07 * size
            x += 0.12 * size
    c.showPage()
    c.save()
    text, _ = _read(path)
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    assert any(PERSIAN_TEXT + " " + PERSIAN_TEXT in ln or ln == PERSIAN_TEXT for ln in lines), lines
    assert any("The system makes the work easy, and so does this line in English." in ln for ln in lines), lines
