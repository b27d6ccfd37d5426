"""The web page in real headless Chromium (Debian's chromium, driven by Playwright): the key,
questions in Chinese and English with the expected section first and its spans highlighted,
the trace, two configurations side by side, an upload that becomes searchable, and how a PDF
was read (its pages, headings and tables)."""
from __future__ import annotations

import shutil

import pytest
from conftest import write_files
from playwright.sync_api import expect, sync_playwright
from server_process import WRITE_KEY, ServerProcess

pytestmark = pytest.mark.slow  # a real browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(sample_kb, tmp_path_factory):
    kb = tmp_path_factory.mktemp("web") / "kb"
    shutil.copytree(sample_kb.path, kb)
    with ServerProcess(["--kb", str(kb), "serve", "--no-mcp"]) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    assert executable, "the browser tests need Debian's chromium (apt-get install chromium; .ci/run installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    expect(page.locator("#error")).to_contain_text("401")  # the server has keys: the page asks for one
    page.fill("#apikey", WRITE_KEY)
    page.dispatch_event("#apikey", "change")
    expect(page.locator("#status")).to_have_text("ready")
    yield page
    assert not errors, errors
    context.close()


def _ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask-button")
    expect(page.locator(".result-column .passage").first).to_be_visible()


@pytest.mark.parametrize("question,source,heading", [
    ("恢复出厂设置要按哪些键？", "speaker_manual_zh.md", "恢复出厂设置"),
    ("How many seconds do I hold the reset button to wipe the hub?", "smarthub_manual_en.md", "Factory reset"),
])
def test_a_question_shows_the_expected_section_first_with_its_spans(page, question, source, heading):
    _ask(page, question)
    first = page.locator(".result-column .passage").first
    expect(first.locator(".where")).to_contain_text(f"{source} › ")
    expect(first.locator(".where")).to_contain_text(heading)
    marks = first.locator(".text mark")
    assert marks.count() >= 1
    text = first.locator(".text").inner_text()
    assert all(m in text for m in marks.all_inner_texts())
    assert marks.first.get_attribute("data-channels")  # which channels found the span


def test_the_trace_opens(page):
    _ask(page, "绿茶怎么保存？")
    trace = page.locator(".result-column details.trace").first
    trace.locator("summary").first.click()
    rows = trace.locator("table").first.locator("tbody tr")
    expect(rows).to_have_count(2)
    assert rows.nth(0).inner_text().startswith("dense") and rows.nth(1).inner_text().startswith("bm25")
    expect(trace).to_contain_text("Fused ranking")
    expect(trace).to_contain_text("fusion: mode=weighted")  # the default, with the knowledge base's weights
    expect(trace).to_contain_text('"dense":0.4')


def test_two_configurations_side_by_side(page):
    page.check("#compare")
    b = page.locator("fieldset[data-config=b]")
    b.locator("[name=unit]").select_option("child")
    b.locator("[name=channel][value=dense]").uncheck()
    page.fill("#question", "How do I reset the hub?")
    page.click("#ask-button")
    cols = page.locator(".result-column")
    expect(cols).to_have_count(2)
    expect(cols.nth(1).locator(".config-summary")).to_contain_text("unit=child")
    expect(cols.nth(1).locator(".config-summary")).to_contain_text("channels=bm25")
    expect(cols.nth(1).locator(".passage .meta").first).to_contain_text("child ·")
    expect(cols.nth(0).locator(".passage .meta").first).to_contain_text("parent ·")


def test_upload_a_file_then_find_it(page, tmp_path):
    docs = write_files(tmp_path / "up", {"kayak.md": "# Kayaks\n\n## Paddling\n\nA touring kayak paddle is about "
                                                     "two hundred and twenty centimetres long.\n"})
    page.set_input_files("#files", str(docs / "kayak.md"))
    page.click("#upload-button")
    expect(page.locator("#job")).to_contain_text("ingest done: 1 added", timeout=120_000)
    expect(page.locator("#documents tbody")).to_contain_text("kayak.md")
    _ask(page, "How long is a touring kayak paddle?")
    expect(page.locator(".result-column .passage").first.locator(".where")).to_contain_text("kayak.md › Kayaks > Paddling")


def test_the_router_choice_is_shown_in_the_trace(page):
    page.locator("fieldset[data-config=a] [name=strategy]").select_option("auto")
    _ask(page, "How do I reset the hub?")
    trace = page.locator(".result-column details.trace").first
    trace.locator("summary").first.click()
    expect(trace.locator(".strategy")).to_have_text(
        "strategy auto: chose hybrid (the question names no document)")


def test_a_pdf_uploaded_then_viewed_with_its_pages_and_tables(page, tmp_path):
    """A Chinese PDF (pandoc, then LibreOffice) uploaded from the page: its answer cites the page,
    and its View shows the heading tree and each section with its page and tables."""
    import documents as D

    pdf = D.soffice(D.pandoc(D.guide("zh"), tmp_path / "星云手册.docx"), "pdf", tmp_path)
    page.set_input_files("#files", str(pdf))
    page.click("#upload-button")
    expect(page.locator("#job")).to_contain_text("ingest done: 1 added", timeout=180_000)
    _ask(page, "恢复出厂设置要按哪些键？")
    cited = page.locator(".result-column .passage .where", has_text="星云手册.pdf › ").first
    expect(cited).to_contain_text("(p. 1)")
    row = page.locator("#documents tbody tr", has_text="星云手册.pdf")
    row.locator("button.view").click()
    view = page.locator("#document-view")
    expect(view).to_be_visible()
    expect(view.locator("h3")).to_contain_text("星云手册.pdf — 星云音箱手册")
    expect(view.locator(".doc-meta")).to_contain_text("pdf · ")
    expect(view.locator(".doc-meta")).to_contain_text("· 1 page")
    expect(view.locator(".outline li", has_text="配对步骤")).to_have_count(1)
    table = view.locator("details.section", has_text="table(s)").first
    expect(table.locator("summary")).to_contain_text("(p. 1)")
    table.locator("summary").click()
    expect(table).to_contain_text("恢复出厂设置")
    view.locator("button.close").click()
    expect(view).to_be_hidden()
