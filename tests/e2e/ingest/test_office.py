"""Office files read whole (issue 52), written by real writers: a DOCX with a text box, content
controls, a nested table (LibreOffice) and one with equations, also in a table, and a table of
contents in a content control (pandoc); the same DOCX in Strict OOXML; a PPTX with nested groups
moved on the slide and a chart in a group (python-pptx); an XLSX with dates in their formats,
formulas, a percentage, booleans and merged cells (LibreOffice). Chinese and English in each."""
from __future__ import annotations

from pathlib import Path

import documents as D

from ragsift.ingest.loaders import LoadLimits, load_file
from ragsift.ingest.splitter import take_marks

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
      'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
      'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
      'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
      'xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" '
      'xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" '
      'xmlns:loext="urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0" office:version="1.3"')


def _text(path: Path) -> str:
    res = load_file(path, path.name, LoadLimits())
    assert not res.skipped, res.skipped
    return take_marks(res.documents[0].text)[0]


def test_a_docx_with_a_text_box_content_controls_and_a_nested_table_reads_whole_also_in_strict(tmp_path):
    """LibreOffice writes the text box twice (DrawingML and its VML fallback in mc:AlternateContent):
    read once, after the paragraph it is anchored in. Inline content controls and a check box read;
    the inner table's cells inside the outer table's cell. The Strict copy reads the same."""
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document {NS} office:mimetype="application/vnd.oasis.opendocument.text"><office:body><office:text>
<text:h text:outline-level="1">泵站手册 Pump manual</text:h>
<text:p>锚定段落 Anchor paragraph.<draw:frame draw:name="Box" text:anchor-type="paragraph" svg:width="8cm"
 svg:height="2cm" svg:x="1cm" svg:y="0.5cm"><draw:text-box><text:p>文本框：先关闭阀门。Text box: close the valve first.</text:p>
</draw:text-box></draw:frame></text:p>
<text:p>控件 Control: <loext:content-control>内嵌控件文字 inline control text</loext:content-control> /
<loext:content-control loext:checkbox="true" loext:checked="true" loext:checked-state="☒" loext:unchecked-state="☐">☒</loext:content-control> 已检查 checked.</text:p>
<table:table table:name="Outer"><table:table-column table:number-columns-repeated="2"/>
<table:table-row><table:table-cell><text:p>部件 Part</text:p></table:table-cell><table:table-cell><text:p>说明 Note</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>阀门 Valve</text:p><table:table table:name="Inner"><table:table-column table:number-columns-repeated="2"/>
<table:table-row><table:table-cell><text:p>内表一 Inner one</text:p></table:table-cell><table:table-cell><text:p>内表二 Inner two</text:p></table:table-cell></table:table-row></table:table>
</table:table-cell><table:table-cell><text:p>每月检查 Check monthly</text:p></table:table-cell></table:table-row>
</table:table></office:text></office:body></office:document>"""
    src = tmp_path / "manual.fodt"
    src.write_text(body, encoding="utf-8")
    docx = D.soffice(src, "docx", tmp_path)
    text = _text(docx)
    box = "文本框：先关闭阀门。Text box: close the valve first."
    assert text.count(box) == 1, text  # one branch of the alternate content, never both
    assert text.index("锚定段落 Anchor paragraph.") < text.index(box)
    assert "内嵌控件文字 inline control text" in text and "[x] 已检查 checked." in text
    row = next(ln for ln in text.splitlines() if "阀门 Valve" in ln)
    assert row.startswith("|") and "内表一 Inner one \\| 内表二 Inner two" in row and "每月检查 Check monthly" in row, row
    assert _text(D.strict(docx, tmp_path / "manual-strict.docx")) == text


def test_a_docx_with_equations_and_a_contents_control_reads_them(tmp_path):
    """pandoc writes LaTeX math as OMML (inline, on its own line, in a table cell) and the table of
    contents' title in a block content control: equations read as LaTeX, the control's text read."""
    md = ("---\ntitle: 泵站公式 Pump formulas\ntoc-title: 目录 Contents of the formulas\n---\n\n"
          "# 能量 Energy\n\n质能方程 The energy is $E=mc^2$ here.\n\n$$\\frac{a}{b}=\\sqrt{x^2+1}$$\n\n"
          "| 量 Quantity | 公式 Formula |\n|---|---|\n| 面积 Area | $A=\\pi r^2$ |\n")
    text = _text(D.pandoc(md, tmp_path / "formulas.docx", "--toc"))
    assert "目录 Contents of the formulas" in text
    assert "质能方程 The energy is $E=mc^{2}$ here." in text
    assert "$$\\frac{a}{b}=\\sqrt{x^{2}+1}$$" in text
    row = next(ln for ln in text.splitlines() if "面积 Area" in ln)
    assert "$A=πr^{2}$" in row, row


def test_a_pptx_chart_and_nested_groups_moved_on_the_slide_read_in_place(tmp_path):
    """A group moved on the slide keeps its children's own coordinates (chOff): read where the
    group puts them, between the slide's other shapes; a chart inside the inner group: its title,
    categories and values."""
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "季度报告 Quarterly report"
    slide.shapes.add_textbox(Inches(1), Inches(1.5), Inches(6), Inches(0.5)).text_frame.text = "顶部 Top note"
    outer = slide.shapes.add_group_shape()
    inner = outer.shapes.add_group_shape()
    inner.shapes.add_textbox(Inches(1), Inches(0.2), Inches(4), Inches(0.5)).text_frame.text = "组内文字 Grouped text"
    data = CategoryChartData()
    data.categories = ["一月 Jan", "二月 Feb"]
    data.add_series("销量 Sales", (120, 135.5))
    chart = inner.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(0.8), Inches(4), Inches(2),
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "鸭子观测 Duck count"
    outer.top = Inches(2.5)  # moved down: its children's own coordinates stay near the top
    slide.shapes.add_textbox(Inches(1), Inches(6.5), Inches(6), Inches(0.5)).text_frame.text = "底部 Bottom note"
    prs.save(tmp_path / "deck.pptx")
    text = _text(tmp_path / "deck.pptx")
    order = [text.index(s) for s in ("顶部 Top note", "组内文字 Grouped text", "鸭子观测 Duck count", "底部 Bottom note")]
    assert order == sorted(order), text
    assert "Bar chart: 鸭子观测 Duck count" in text
    assert "| 一月 Jan | 120 |" in text and "| 二月 Feb | 135.5 |" in text and "| | 销量 Sales |" in text.replace("|  |", "| |")


def test_an_xlsx_reads_each_cell_as_the_sheet_shows_it(tmp_path):
    """LibreOffice writes the sheet (with the formulas' cached values): dates in their own formats
    (a Chinese one, an ISO one), a percentage, booleans, formulas by their values, a batch merged
    over two rows named in both."""
    styles = """<office:automatic-styles>
<number:date-style style:name="N1"><number:year number:style="long"/><number:text>年</number:text><number:month/>
<number:text>月</number:text><number:day/><number:text>日</number:text></number:date-style>
<number:date-style style:name="N2"><number:year number:style="long"/><number:text>-</number:text>
<number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/></number:date-style>
<number:percentage-style style:name="N3"><number:number number:decimal-places="1" number:min-integer-digits="1"/>
<number:text>%</number:text></number:percentage-style>
<style:style style:name="ce1" style:family="table-cell" style:data-style-name="N1"/>
<style:style style:name="ce2" style:family="table-cell" style:data-style-name="N2"/>
<style:style style:name="ce3" style:family="table-cell" style:data-style-name="N3"/>
<number:boolean-style style:name="N4"><number:boolean/></number:boolean-style>
<style:style style:name="ce4" style:family="table-cell" style:data-style-name="N4"/>
</office:automatic-styles>"""

    def cell(v: str) -> str:
        return f'<table:table-cell office:value-type="string"><text:p>{v}</text:p></table:table-cell>'

    rows = ["<table:table-row>" + "".join(cell(h) for h in ("批次 Batch", "日期 Date", "数量 Qty", "金额 Amount",
                                                             "占比 Share", "已付 Paid")) + "</table:table-row>"]
    for r, (date, style, qty, share, paid) in enumerate((("2024-03-05", "ce1", 12, 0.256, "true"),
                                                          ("2024-03-06", "ce2", 7, 0.5, "false")), start=2):
        first = ('<table:table-cell table:number-rows-spanned="2" office:value-type="string"><text:p>A-1 一批</text:p>'
                 "</table:table-cell>" if r == 2 else "<table:covered-table-cell/>")
        rows.append(f'<table:table-row>{first}<table:table-cell table:style-name="{style}" office:value-type="date" '
                    f'office:date-value="{date}"/><table:table-cell office:value-type="float" office:value="{qty}"/>'
                    f'<table:table-cell table:formula="of:=[.C{r}]*2" office:value-type="float"/>'
                    f'<table:table-cell table:style-name="ce3" office:value-type="percentage" office:value="{share}"/>'
                    f'<table:table-cell table:style-name="ce4" office:value-type="boolean" office:boolean-value="{paid}"/>'
                    "</table:table-row>")
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document {NS} '
            f'office:mimetype="application/vnd.oasis.opendocument.spreadsheet">{styles}<office:body><office:spreadsheet>'
            f'<table:table table:name="交付 Deliveries">{"".join(rows)}</table:table>'
            "</office:spreadsheet></office:body></office:document>")
    src = tmp_path / "deliveries.fods"
    src.write_text(body, encoding="utf-8")
    text = _text(D.soffice(src, "xlsx", tmp_path))
    assert "| A-1 一批 | 2024年3月5日 | 12 | 24 | 25.6% | TRUE |" in text, text
    assert "| A-1 一批 | 2024-03-06 | 7 | 14 | 50.0% | FALSE |" in text, text
