"""Untrusted files are read in a process of their own, within limits that hold whatever the file
holds (issue 51): a reader that loops (in Python or in C), allocates without end, crashes or
waits costs its own file only, skipped with the reason, and nothing else waits on it. The CPU
budget is CPU time, and grows with the work a file really holds.

The misbehaving readers are fault injection (``fault_loaders``); the hostile documents are real
files of each format, built here, that looped, ran for hours or needed gigabytes before."""
from __future__ import annotations

import io
import threading
import time
import zipfile

import fault_loaders
import pytest
from conftest import write_files

from ragsift.ingest.loaders import LoadLimits, isolation, load_bytes, read_file
from ragsift.ingest.loaders.base import Budget, OverLimit
from ragsift.kb import KnowledgeBase

GOOD = {
    "reset_en.md": "# Factory reset\n\nHold the reset button for ten seconds to restore factory settings.\n",
    "reset_zh.md": "# 恢复出厂设置\n\n按住复位键十秒即可恢复出厂设置。\n",
}
TIGHT = {"file_seconds": 2.0, "file_seconds_per_page": 0.0, "max_reader_mb": 256}


@pytest.fixture()
def faults():
    fault_loaders.install()
    yield
    fault_loaders.uninstall()


@pytest.mark.slow  # readers killed and limits waited for: `make test` runs it
def test_a_reader_that_misbehaves_costs_its_own_file_only(tmp_path, faults, monkeypatch):
    monkeypatch.setattr(isolation, "STALL_SECONDS", 3.0)  # the watchdog of a reader that waits without working
    docs = write_files(tmp_path / "docs", {**GOOD, "loop.spin": "x", "backtrack.cspin": "x", "huge.hog": "x",
                                           "damaged.crash": "x", "stuck.wait": "x"})
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **TIGHT)
    t = time.monotonic()
    report = kb.ingest(docs)
    took = time.monotonic() - t
    reasons = {s.path: s.reason for s in report.skipped}
    assert set(reasons) == {"loop.spin", "backtrack.cspin", "huge.hog", "damaged.crash", "stuck.wait"}
    # a loop in Python is stopped by SIGXCPU at its deadline, one in C by the watchdog a little after
    for name in ("loop.spin", "backtrack.cspin"):
        assert "took more than 2 s of CPU time" in reasons[name] and "file_seconds" in reasons[name], reasons[name]
    assert "needed more memory than reading a file may take (256 MB, setting max_reader_mb)" in reasons["huge.hog"]
    assert "crashed (SIGSEGV)" in reasons["damaged.crash"]
    assert "s without using the CPU (it waited on something)" in reasons["stuck.wait"]
    assert took < 600, took  # each stopped within its limits (CPU time: slower on a loaded machine), not never
    assert len(report.added) == 2
    top = kb.query("恢复出厂设置", max_passages=1).passages[0]
    assert top.source == "reset_zh.md"
    assert kb.query("restore factory settings", max_passages=1).passages[0].source == "reset_en.md"


@pytest.mark.slow  # readers killed and limits waited for: `make test` runs it
def test_queries_go_on_while_a_reader_spins_in_c(tmp_path, faults):
    """A regular expression backtracking inside C held the interpreter's lock for the whole
    process; in its own process, queries beside it never notice."""
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", file_seconds=8.0, file_seconds_per_page=0.0)
    kb.ingest(write_files(tmp_path / "docs", GOOD))
    spin = write_files(tmp_path / "bad", {"backtrack.cspin": "x"})
    ingest = threading.Thread(target=kb.ingest, args=(spin,), daemon=True)
    ingest.start()
    time.sleep(1.0)  # the reader is spinning now
    answered: list[str] = []

    def ask() -> None:
        for q in ("恢复出厂设置", "factory reset", "复位键", "reset button"):
            answered.append(kb.query(q, max_passages=1).passages[0].source)

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    asker.join(timeout=15)
    assert answered == ["reset_zh.md", "reset_en.md", "reset_zh.md", "reset_en.md"]
    assert ingest.is_alive()  # the queries were answered while the file was still being read
    ingest.join(timeout=60)


def test_an_application_loader_is_read_in_the_reading_process(tmp_path, faults):
    """A loader registered by the application (not ragsift's) reads in the reading process too:
    it is imported there by its module; a fresh process reads the next file after one is stopped."""
    spin = write_files(tmp_path, {"a.spin": "x", "b_zh.md": "# 标题\n\n正文。\n"})
    limits = LoadLimits(seconds=1.0, seconds_per_page=0.0)
    first = read_file(spin / "a.spin", "a.spin", limits)
    assert "took more than 1 s of CPU time" in first.skipped[0].reason
    after = read_file(spin / "b_zh.md", "b_zh.md", limits)
    assert [d.title for d in after.documents] == ["标题"] and after.stats["cpu_seconds"] < 1.0


def test_the_budget_is_cpu_time_and_grows_with_the_work_read():
    from ragsift.ingest.loaders.base import budget_now, restore_budget

    outer = budget_now()
    budget = Budget(LoadLimits(seconds=0.3, seconds_per_page=0.5, max_seconds=1.0))
    try:
        time.sleep(0.5)  # waiting on a busy machine is not reading: a wall-clock budget failed honest files
        budget.tick()
        t = time.process_time()
        while time.process_time() - t < 0.4:
            pass
        with pytest.raises(OverLimit, match="0 s of CPU time for the work it held"):
            budget.tick()
        budget.page()  # a page read: half a second more (0.8 s)
        budget.tick()
        budget.text(200_000)  # four pages' worth of text: capped at max_seconds (1.0 s)
        assert budget.allowance == 1.0
    finally:  # a budget opened here, as a loader's is closed by load_bytes: later files in this
        restore_budget(outer)  # process would count as read inside it (and find no time left)


# ---------------------------------------------------------------- hostile documents, bounded
def _docx(body_xml: str = "", styles: bool = False) -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from lxml import etree

    d = docx.Document()
    d.add_heading("重置指南 Reset guide", 1)
    p = d.add_paragraph("按住复位键十秒。Hold the reset button for ten seconds.")
    if styles:  # a style based on itself through a second one
        a = d.styles.add_style("LoopA", WD_STYLE_TYPE.PARAGRAPH)
        b = d.styles.add_style("LoopB", WD_STYLE_TYPE.PARAGRAPH)
        a.base_style, b.base_style = b, a
        p.style = a
    if body_xml:
        ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        frag = etree.fromstring(f"<w:tbl {ns}>{body_xml}</w:tbl>")
        d.element.body.insert(len(d.element.body) - 1, frag)
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_a_docx_style_based_on_itself_reads(tmp_path):
    data = _docx(styles=True)
    res = read_file(write_files(tmp_path, {"loop.docx": data}) / "loop.docx", "loop.docx", LoadLimits(seconds=20))
    assert not res.skipped
    assert "按住复位键十秒" in res.documents[0].text and "Hold the reset button" in res.documents[0].text


def test_a_docx_table_spanning_a_billion_columns_and_a_huge_empty_one_read_in_linear_time(tmp_path):
    row = "<w:tr>" + "<w:tc><w:p/></w:tc>" * 200 + "</w:tr>"
    span = ('<w:tr><w:tc><w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr><w:p><w:r><w:t>合并 merged</w:t></w:r>'
            "</w:p></w:tc><w:tc><w:p><w:r><w:t>after</w:t></w:r></w:p></w:tc></w:tr>")
    data = _docx(span + row * 1000)  # python-docx's row.cells: 1000 x 1000 x 200 steps; here 200,000
    res = read_file(write_files(tmp_path, {"table.docx": data}) / "table.docx", "table.docx", LoadLimits(seconds=30))
    assert not res.skipped, res.skipped
    assert "| 合并 merged | after |" in res.documents[0].text
    assert res.stats["cpu_seconds"] < 30


def test_an_odt_repeating_a_space_a_billion_times_needs_no_memory():
    content = ('<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
               '<text:h text:outline-level="1">重置 Reset</text:h><text:p>按住<text:s text:c="1000000000"/>复位键 '
               'hold<text:s text:c="4000000000"/>reset</text:p></office:text></office:body></office:document-content>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
    assert len(buf.getvalue()) < 1000
    res = load_bytes(buf.getvalue(), ".odt", "spaces.odt", LoadLimits())
    assert not res.skipped
    text = res.documents[0].text
    assert "按住" in text and "复位键 hold" in text and len(text) < 5000


def _xlsx(sheet_data: str, ref: str) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "数据 data"
    out = io.BytesIO()
    wb.save(out)
    src = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
                        f'spreadsheetml/2006/main"><dimension ref="{ref}"/><sheetData>{sheet_data}</sheetData>'
                        "</worksheet>").encode()
            z.writestr(item, data)
    return buf.getvalue()


@pytest.mark.slow  # readers killed and limits waited for: `make test` runs it
def test_a_sheet_of_a_million_empty_rows_is_stopped_and_a_real_one_reads(tmp_path):
    cell = '<c r="A{0}" t="inlineStr"><is><t>行 row {0}</t></is></c><c r="B{0}"><v>{0}</v></c>'
    empty = _xlsx('<row r="1">' + cell.format(1) + "</row>" + "".join(f'<row r="{i}"/>' for i in range(2, 1_048_577)),
                  "A1:XFD1048576")
    real = _xlsx("".join(f'<row r="{i}">{cell.format(i)}</row>' for i in range(1, 5001)), "A1:B5000")
    files = write_files(tmp_path, {"empty.xlsx": empty, "real.xlsx": real})
    limits = LoadLimits(seconds=3.0, seconds_per_page=2.0)
    stopped = read_file(files / "empty.xlsx", "empty.xlsx", limits)
    # 3 s, and 2 more for the sheet: its empty rows earn nothing
    assert "took more than 5 s of CPU time for the work it held" in stopped.skipped[0].reason
    read = read_file(files / "real.xlsx", "real.xlsx", limits)  # 5,000 rows earn 10 s more than the 3
    assert not read.skipped, read.skipped
    assert "| 行 row 5000 | 5000 |" in read.documents[0].text
