"""The web page in real headless Chromium (Debian's chromium, driven by Playwright): the key,
questions in Chinese and English with the expected section first and its best sentences marked,
why each passage was found and the trace, named by source and heading; two configurations side
by side; Enter to search; the documents browser (search, sort, pages, the view); an upload that
becomes searchable; how a PDF was read; at 1440 px and on a 390 px phone, with axe-core's
accessibility check."""
from __future__ import annotations

import re
import shutil

import pytest
from conftest import DATA, write_files
from playwright.sync_api import expect, sync_playwright
from server_process import WRITE_KEY, ServerProcess

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
AXE = DATA / "axe" / "axe.min.js"  # axe-core 4.14.1 (tests/data/axe/README.md)
WIDTHS = {1440: 1000, 390: 844}  # a desktop, a phone
PAGE = 10  # documents a page (app.js)
# added to the sample's six documents, so that the list has two pages
NOTES = ([{"id": f"kayak-{i}", "source": f"kayak-{i}.md", "title": f"Kayak note {i}",
           "text": f"Kayak note {i}: a touring kayak is about {480 + i} centimetres long."} for i in range(1, 6)]
         + [{"id": f"huachuan-{i}", "source": f"划船-{i}.txt", "title": f"划船笔记 {i}",
             "text": f"划船笔记第{i}篇：桨的长度约为两米二。"} for i in range(1, 5)])


@pytest.fixture(scope="module")
def server(sample_kb, tmp_path_factory):
    from server_process import wait_job

    kb = tmp_path_factory.mktemp("web") / "kb"
    shutil.copytree(sample_kb.path, kb)
    with ServerProcess(["--kb", str(kb), "serve", "--no-mcp"]) as srv:
        with srv.client() as c:
            job = wait_job(c, c.post("/v1/documents", json={"documents": NOTES}).json())
            assert job["state"] == "done", job
        yield srv


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    assert executable, "the browser tests need Debian's chromium (apt-get install chromium; .ci/run installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, server, width: int = 1440):
    context = browser.new_context(viewport={"width": width, "height": WIDTHS[width]})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    expect(page.locator("#error")).to_contain_text("401")  # the server has keys: the page asks for one
    page.fill("#apikey", WRITE_KEY)
    page.dispatch_event("#apikey", "change")
    expect(page.locator("#status")).to_have_text("ready")
    expect(page.locator("#error")).to_be_hidden()  # the 401 banner went with the key that ended it
    return context, page, errors


@pytest.fixture
def page(browser, server):
    context, page, errors = _open(browser, server)
    yield page
    assert not errors, errors
    context.close()


@pytest.fixture(params=list(WIDTHS), ids=lambda w: f"{w}px")
def sized(request, browser, server):
    """The page at a desktop's width and at a phone's."""
    context, page, errors = _open(browser, server, request.param)
    yield page
    assert not errors, errors
    context.close()


def _no_sideways_scroll(page) -> None:
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width


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


@pytest.mark.parametrize("question,weak", [("Who was the first emperor of the Roman Empire?", True),
                                            ("罗马帝国的第一位皇帝是谁？", True), ("😀😀", True),
                                            ("恢复出厂设置要按哪些键？", False)])
def test_no_good_match_is_said_above_the_passages(page, question, weak):
    page.fill("#question", question)
    page.click("#ask-button")
    expect(page.locator("#status")).to_contain_text("passages")
    banner = page.locator(".result-column .no-good-match")
    if weak:
        expect(banner).to_contain_text("No good match: ")
        expect(page.locator("#status")).to_contain_text("(no good match)")
    else:
        expect(banner).to_have_count(0)
    for meta in page.locator(".result-column .passage .meta").all_inner_texts():
        assert re.search(r"similarity (0|-)\.\d{3} · terms \d+% · score", meta), meta


@pytest.mark.parametrize("question,filter,told", [
    ("恢复出厂设置要按哪些键？", '{"item_name": "星云音箱"}', 'no document has item_name "星云音箱" (did you mean "星云智能音箱 S2"'),
    ("How do I reset the hub?", '{"source": "smarthub_manual.md"}',
     'no document has source "smarthub_manual.md" (did you mean "smarthub_manual_en.md"'),
])
def test_why_nothing_was_found_is_said_in_the_same_banner(page, question, filter, told):
    page.fill("#filter", filter)
    page.fill("#question", question)
    page.click("#ask-button")
    expect(page.locator("#status")).to_contain_text("0 passages (no good match)")
    warning = page.locator(".result-column .warning")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text("Why nothing was found: " + told)
    assert warning.evaluate("e => getComputedStyle(e).borderLeftStyle") == "solid"  # the no-good-match banner's style
    expect(page.locator(".result-column .empty")).to_have_count(0)  # not a bare "no passages found" beside it
    page.fill("#filter", "")
    page.click("#ask-button")
    expect(page.locator(".result-column .passage").first).to_be_visible()
    expect(page.locator(".result-column .warning")).to_have_count(0)


def test_the_trace_opens(page):
    _ask(page, "绿茶怎么保存？")
    trace = page.locator(".result-column details.trace").first
    trace.locator("summary").first.click()
    rows = trace.locator("table").first.locator("tbody tr")
    expect(rows).to_have_count(2)
    assert rows.nth(0).inner_text().startswith("dense") and rows.nth(1).inner_text().startswith("bm25")
    expect(trace).to_contain_text("Fused ranking")
    expect(trace).to_contain_text("fusion: mode=adaptive")  # the default, with the knowledge base's weights
    expect(trace).to_contain_text('"dense":0.5')
    expect(trace).to_contain_text("adapted_weights=")  # the weights this query was fused with


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
    # the list turns to newest first: the upload is its first row, marked
    expect(page.locator("#doc-sort")).to_have_value("generation:desc")
    expect(page.locator("#documents li.doc").first).to_have_attribute("data-source", "kayak.md")
    expect(page.locator("#documents li.doc.fresh")).to_have_count(1)
    _ask(page, "How long is a touring kayak paddle?")
    expect(page.locator(".result-column .passage").first.locator(".where")).to_contain_text("kayak.md › Kayaks > Paddling")


def test_the_router_choice_is_shown_in_the_trace(page):
    page.locator("fieldset[data-config=a] [name=strategy]").select_option("auto")
    _ask(page, "How do I reset the hub?")
    trace = page.locator(".result-column details.trace").first
    trace.locator("summary").first.click()
    expect(trace.locator(".strategy")).to_have_text(
        "strategy auto: chose hybrid (neither the question nor the passages found name a document)")


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
    row = page.locator("#documents li.doc", has_text="星云手册.pdf")
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


# ------------------------------------------------------------------ at a desktop's and a phone's width
def _ask_enter(page, question: str) -> None:
    """Type a question and press Enter (the page searches; no new line)."""
    page.fill("#question", question)
    page.press("#question", "Enter")
    expect(page.locator(".result-column .passage").first).to_be_visible()
    assert "\n" not in page.input_value("#question")


@pytest.mark.parametrize("question,source,word", [
    ("恢复出厂设置要按哪些键？", "speaker_manual_zh.md", "键"),  # the sentence with the keys, not the heading's words
    ("How many seconds do I hold the reset button to wipe the hub?", "smarthub_manual_en.md", "reset button"),
])
def test_enter_searches_and_the_matching_sentences_are_marked(sized, question, source, word):
    _ask_enter(sized, question)
    first = sized.locator(".result-column .passage").first
    expect(first).to_have_attribute("data-source", source)
    text = first.locator(".text").inner_text()
    marks = first.locator(".text mark").all_inner_texts()
    assert marks and all(0 < len(m) < len(text) for m in marks)  # sentences, not the passage
    assert any(word in m.replace("\n", " ") for m in marks)
    assert all(m in text for m in marks)
    chunks = first.locator(".text .chunk")  # the matched children, lighter, around the marks
    assert chunks.count() >= 1 and first.locator(".text .chunk mark").count() == len(marks)
    assert sum(len(m) for m in marks) < sum(len(c) for c in chunks.all_inner_texts())
    _no_sideways_scroll(sized)


def test_before_a_key_the_page_says_why_it_is_empty_and_a_valid_key_clears_the_banner(browser, server):
    context = browser.new_context(viewport={"width": 1440, "height": WIDTHS[1440]})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    expect(page.locator("#error")).to_contain_text("401")
    # the empty boxes say why, and where to go
    expect(page.locator("#kb")).to_be_disabled()
    expect(page.locator("#kb option")).to_have_text(["(enter an API key first)"])
    for config in ("a", "b"):
        expect(page.locator(f"fieldset[data-config={config}] p.locked")).to_contain_text(
            "The search settings load once the server accepts your API key")
    expect(page.locator("#documents li.locked")).to_have_text("Enter an API key above to see the documents.")
    expect(page.locator("#status")).to_have_text("waiting for an API key")
    # a wrong key: still refused, still said
    page.fill("#apikey", "wrong-key-0123456789abcdef")
    page.dispatch_event("#apikey", "change")
    expect(page.locator("#error")).to_contain_text("401")
    expect(page.locator("#kb")).to_be_disabled()
    # the right key: the banner goes, the boxes fill, questions in both languages are answered
    page.fill("#apikey", WRITE_KEY)
    page.dispatch_event("#apikey", "change")
    expect(page.locator("#status")).to_have_text("ready")
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator("#kb")).to_be_enabled()
    expect(page.locator("#kb option")).to_have_text(["default"])
    expect(page.locator("fieldset[data-config=a] p.locked")).to_have_count(0)
    expect(page.locator("fieldset[data-config=a] [name=unit]")).to_have_value("parent")
    for question, source in (("恢复出厂设置要按哪些键？", "speaker_manual_zh.md"),
                             ("How many seconds do I hold the reset button to wipe the hub?", "smarthub_manual_en.md")):
        _ask(page, question)
        expect(page.locator(".result-column .passage").first).to_have_attribute("data-source", source)
        expect(page.locator("#error")).to_be_hidden()
    assert not errors, errors
    context.close()


def test_only_what_runs_here_is_offered_and_the_rest_says_why(page):
    """No language model, LanceDB: hyde, multi_query and engine_hybrid are shown disabled with
    the reason; the strategies and modes that need a model are not offered."""
    a = page.locator("fieldset[data-config=a]")
    expect(a.locator("[name=channel]")).to_have_count(2)  # dense, bm25: what can run
    for name in ("hyde", "hyde_bm25", "multi_query", "engine_hybrid"):
        off = a.locator(f"[name=channel-off][value={name}]")
        expect(off).to_be_disabled()
        expect(off).not_to_be_checked()
    expect(a.locator("label.unavailable", has=page.locator("[value=multi_query]"))).to_have_attribute(
        "title", re.compile("needs a language model.*operator can configure one"))
    note = a.locator("p.unavailable-note")
    expect(note).to_contain_text("Not available on this knowledge base: hyde, hyde_bm25, multi_query")
    expect(note).to_contain_text("needs a language model")
    expect(note).to_contain_text("engine_hybrid")
    expect(note).to_contain_text("(Milvus)")
    expect(note).not_to_contain_text("set llm_model")
    strategies = a.locator("[name=strategy] option").all_inner_texts()
    assert "hyde" not in strategies and "combined" not in strategies and "auto" in strategies
    assert "llm" not in a.locator("[name=multihop_mode] option").all_inner_texts()
    _ask(page, "绿茶怎么保存？")
    expect(page.locator("#error")).to_be_hidden()


def test_shift_enter_is_a_new_line_and_a_search_shows_its_state(page):
    page.fill("#question", "first line")
    page.press("#question", "Shift+Enter")
    page.keyboard.type("second line")
    assert page.input_value("#question") == "first line\nsecond line"
    expect(page.locator(".result-column")).to_have_count(0)  # nothing was searched
    page.fill("#question", "How do I reset the hub?")
    # the moment the search starts: button disabled, status said (read before the answer can arrive)
    assert page.evaluate("""() => { document.querySelector('#question').dispatchEvent(
        new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true}));
        return [document.querySelector('#ask-button').disabled, document.querySelector('#status').textContent]; }""") \
        == [True, "searching…"]
    expect(page.locator("#status")).to_contain_text("passages")
    expect(page.locator("#ask-button")).to_be_enabled()


def test_a_failed_search_says_why_and_the_page_recovers(page):
    page.fill("#filter", '{"no_such_field": 1}')
    page.fill("#question", "How do I reset the hub?")
    page.click("#ask-button")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error")).to_contain_text("The search failed: 400")
    expect(page.locator("#error")).to_contain_text("no_such_field")
    expect(page.locator("#status")).to_have_text("search failed")
    expect(page.locator("#ask-button")).to_be_enabled()
    page.fill("#filter", "{not json")
    page.click("#ask-button")
    expect(page.locator("#error")).to_contain_text("The filter is not valid JSON")
    page.fill("#filter", "")
    page.click("#ask-button")
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator(".result-column .passage").first).to_be_visible()


def test_why_each_passage_was_found_and_the_trace_name_sources_and_headings(sized):
    _ask_enter(sized, "恢复出厂设置要按哪些键？")
    first = sized.locator(".result-column .passage").first
    why = first.locator("aside.why")
    expect(why).to_be_visible()
    expect(why.locator("li[data-channel=dense]")).to_contain_text(re.compile(r"dense #\d+ \(score"))
    expect(why.locator("li[data-channel=bm25]")).to_contain_text(re.compile(r"bm25 #\d+ \(score"))
    expect(why.locator("li.fused")).to_contain_text("fused #1 (adaptive)")
    box, text = why.bounding_box(), first.locator(".text").bounding_box()
    if sized.viewport_size["width"] >= 1200:  # beside the passage it explains
        assert box["x"] >= text["x"] + text["width"] and abs(box["y"] - text["y"]) < 40
    else:  # under it on a phone
        assert box["y"] >= text["y"] + text["height"]
    trace = sized.locator(".result-column details.trace").first
    assert trace.get_attribute("open") is None  # folded until asked for
    trace.locator("summary").first.click()
    trace.locator("details.channel-hits summary").first.click()
    fused = trace.locator("table").nth(2)  # channels, the first channel's hits, the fused ranking
    expect(fused.locator("tbody tr").first).to_contain_text("speaker_manual_zh.md › 星云智能音箱 S2 使用说明书 > 故障排除 > 恢复出厂设置")
    expect(trace.locator("details.channel-hits table").first).to_contain_text(" › ")
    assert not re.search(r"#p\d", trace.inner_text())  # no opaque unit ids
    _no_sideways_scroll(sized)


def _sources(page) -> list[str]:
    return page.locator("#documents li.doc").evaluate_all("items => items.map(i => i.dataset.source)")


def test_the_documents_browser_searches_sorts_pages_and_opens_a_document(sized, server):
    with server.client() as c:
        total = c.get("/v1/documents", params={"limit": 1}).json()["total"]
        by_title = [d["source"] for d in c.get("/v1/documents", params={"sort": "title", "limit": PAGE}).json()["documents"]]
    assert total > PAGE
    p = sized
    expect(p.locator("#doc-range")).to_have_text(f"1–{PAGE} of {total}")
    expect(p.locator("#documents li.doc")).to_have_count(PAGE)
    expect(p.locator("#doc-prev")).to_be_disabled()
    p.click("#doc-next")
    expect(p.locator("#doc-range")).to_have_text(f"{PAGE + 1}–{total} of {total}")
    expect(p.locator("#documents li.doc")).to_have_count(total - PAGE)
    expect(p.locator("#doc-next")).to_be_disabled()
    p.click("#doc-prev")
    expect(p.locator("#doc-range")).to_have_text(f"1–{PAGE} of {total}")

    p.fill("#doc-search", "KAYAK note")  # English, any case, every word
    expect(p.locator("#doc-range")).to_have_text("1–5 of 5")
    assert sorted(_sources(p)) == [f"kayak-{i}.md" for i in range(1, 6)]
    p.fill("#doc-search", "划船")  # Chinese, by title
    expect(p.locator("#doc-range")).to_have_text("1–4 of 4")
    expect(p.locator("#documents li.doc").first).to_contain_text("划船笔记")
    p.fill("#doc-search", "说明书")
    expect(p.locator("#doc-range")).to_have_text("1–1 of 1")
    p.fill("#doc-search", "nothing-like-this")
    expect(p.locator("#documents li.empty")).to_have_text("no document matches “nothing-like-this”")
    p.fill("#doc-search", "")
    p.select_option("#doc-sort", "title:asc")
    expect(p.locator("#documents li.doc").first).to_have_attribute("data-source", by_title[0])
    assert _sources(p) == by_title

    # no one-letter-per-line columns: names and buttons keep a usable width
    for item in p.locator("#documents li.doc").all():
        assert item.locator(".doc-name").bounding_box()["width"] > 150
        assert item.locator(".doc-source").bounding_box()["height"] < 30  # a short name on one line
        for button in item.locator("button").all():
            assert button.bounding_box()["height"] < 40
    ask, docs = p.locator("#ask").bounding_box(), p.locator("#manage").bounding_box()
    if p.viewport_size["width"] >= 1200:
        assert docs["x"] > ask["x"] + ask["width"] - 1  # side by side
    else:
        assert docs["y"] > ask["y"] + ask["height"] - 1  # stacked
    _no_sideways_scroll(p)

    p.fill("#doc-search", "speaker")
    row = p.locator("#documents li.doc", has_text="speaker_manual_zh.md")
    row.locator("button.view").click()
    view = p.locator("#document-view")
    expect(view).to_be_visible()
    expect(view.locator("h3")).to_have_text("speaker_manual_zh.md — 星云智能音箱 S2 使用说明书")
    expect(view.locator(".outline li", has_text="恢复出厂设置")).to_have_count(1)
    _no_sideways_scroll(p)
    p.keyboard.press("Escape")
    expect(view).to_be_hidden()


def test_keyboard_focus_is_visible(page):
    page.click("#question")
    page.keyboard.press("Tab")
    focused = page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
        return [e.id, s.outlineStyle, s.outlineWidth]; }""")
    assert focused == ["ask-button", "solid", "3px"]


def test_no_serious_accessibility_violations(sized):
    """axe-core on the page with an answer, its trace open, and a document's view open."""
    _ask_enter(sized, "How do I factory reset the hub?")
    sized.locator(".result-column details.trace summary").first.click()
    sized.add_script_tag(path=str(AXE))
    run = "async () => (await axe.run(document, {resultTypes: ['violations']})).violations" \
          ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    bad = [v for v in sized.evaluate(run) if v["impact"] in ("serious", "critical")]
    assert not bad, bad
    sized.locator("#documents li.doc button.view").first.click()
    expect(sized.locator("#document-view")).to_be_visible()
    bad = [v for v in sized.evaluate(run) if v["impact"] in ("serious", "critical")]
    assert not bad, bad


def test_the_documents_api_searches_sorts_and_pages(server):
    with server.client() as c:
        r = c.get("/v1/documents", params={"q": "划船 笔记", "sort": "title", "order": "desc", "limit": 2}).json()
        assert r["total"] == 4 and [d["title"] for d in r["documents"]] == ["划船笔记 4", "划船笔记 3"]
        r = c.get("/v1/documents", params={"q": "kayak note", "offset": 4}).json()
        assert (r["total"], r["offset"], [d["source"] for d in r["documents"]]) == (5, 4, ["kayak-5.md"])
        newest = c.get("/v1/documents", params={"sort": "generation", "order": "desc", "limit": 1}).json()
        assert newest["documents"][0]["generation"] == max(
            d["generation"] for d in c.get("/v1/documents", params={"limit": 100}).json()["documents"])
        assert c.get("/v1/documents", params={"sort": "size"}).status_code == 422
