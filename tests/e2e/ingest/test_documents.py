"""Every document a team has, read faithfully (issue 28): DOCX, ODT, EPUB, PPTX written by pandoc,
PDF and XLSX by LibreOffice, CSV and TSV, mail with an attachment, ZIP, images and a scanned PDF
read by OCR; in Chinese and English. Headings, tables, pages and slides kept; tables never cut
between rows; hostile files skipped with their reason; a file one document however it is named;
a folder mirrored (added, changed, renamed without re-embedding, deleted)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import documents as D
import numpy as np
import pytest
from conftest import write_files

from ragsift.ingest.loaders import LoadLimits, load_file
from ragsift.ingest.splitter import SplitSettings, split_document, take_marks
from ragsift.kb import KnowledgeBase

FACTS = {  # a sentence of each guide, a section heading, a table cell, the footnote
    "zh": ("长按电源键三秒开机", "配对步骤", "恢复出厂设置", "电源键位于机身背面"),
    "en": ("Hold the power button for three seconds", "Pairing", "Factory reset", "The power button is on the back"),
}
HEADINGS = {"zh": ("第一章 快速入门", "配对步骤", "第二章 日常维护"), "en": ("Chapter 1 Getting started", "Pairing",
                                                                   "Chapter 2 Care")}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The guide in both languages, in every format a real writer makes."""
    d = tmp_path_factory.mktemp("written")
    out: dict[str, Path] = {}
    for lang in ("zh", "en"):
        for fmt in ("docx", "odt", "epub", "pptx"):
            out[f"{lang}.{fmt}"] = D.pandoc(D.guide(lang), d / f"guide-{lang}.{fmt}")
        out[f"{lang}.pdf"] = D.soffice(out[f"{lang}.docx"], "pdf", d)
        csv = d / f"table-{lang}.csv"
        rows = [["name", "voltage", "note"], ["fan", "12", "cooling"], ["风扇" if lang == "zh" else "lamp", "5",
                                                                       "散热" if lang == "zh" else "status light"]]
        csv.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
        out[f"{lang}.csv"] = csv
        out[f"{lang}.xlsx"] = D.soffice(csv, "xlsx", d, infilter="CSV:44,34,76")
    return out


def _one(path: Path, source: str | None = None, **limits):
    res = load_file(path, source or path.name, LoadLimits(**limits))
    assert not res.skipped, res.skipped
    assert len(res.documents) == 1
    return res.documents[0]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("fmt", ["docx", "odt", "epub", "pdf"])
def test_headings_text_tables_and_notes_are_read(files, lang, fmt):
    doc = _one(files[f"{lang}.{fmt}"])
    parents, children = split_document(doc, SplitSettings())
    paths = {p.heading_path for p in parents}
    for h in HEADINGS[lang]:
        assert any(h.replace(" ", "") in "".join(x.replace(" ", "") for x in path) for path in paths), (h, paths)
    text = "\n".join(p.text for p in parents)
    flat = text.replace(" ", "")
    sentence, _, cell, note = FACTS[lang]
    assert sentence.replace(" ", "") in flat and note.replace(" ", "") in flat
    table = next(p for p in parents if cell.replace(" ", "") in p.text.replace(" ", ""))
    row = next(ln for ln in table.text.splitlines() if cell.replace(" ", "") in ln.replace(" ", ""))
    assert row.startswith("|") and row.count("|") == 4, row  # a Markdown row of three cells
    assert doc.title.replace(" ", "") == ("星云音箱手册" if lang == "zh" else "NebulaHubGuide")
    if fmt == "pdf":
        assert all(p.location == ("page", 1, 1) for p in parents) and doc.metadata["page_count"] == 1


TWO_COLUMN = {
    "en": ("Pump Station Manual", ["Installation", "Operation", "Maintenance"],
           "Step {n}: the recalibration of the manufacturer's pressure valve number {n} is logged before the pump starts."),
    "zh": ("泵站操作手册", ["安装", "运行", "维护"], "第{n}步：启动水泵之前，必须记录第{n}号压力阀的重新校准结果，并由值班人员签字确认。"),
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_two_column_pdf_with_running_heads_reads_in_order(tmp_path, lang):
    """Chromium prints three sections of numbered sentences in two columns over several pages,
    with the title as a running head and the page number as a running foot. Read back: the real
    title, the headings, every sentence whole and in order (down the left column, then the right;
    a sentence running on into the next column or page joined), no running head or page number
    in the text, and the pages of each section."""
    title, heads, pattern = TWO_COLUMN[lang]
    body, sentences, n = [], [], 0
    for h in heads:
        body.append(f"<h1>{h}</h1>")
        for _ in range(4):
            para = []
            for _ in range(6):
                n += 1
                para.append(pattern.format(n=n))
            sentences += para
            body.append("<p>" + " ".join(para) + "</p>")
    pdf = D.chromium_pdf("\n".join(body), tmp_path / f"manual-{lang}.pdf", title=title, lang=lang)
    doc = _one(pdf)
    assert doc.title == title and doc.metadata["page_count"] >= 2
    text, _ = take_marks(doc.text)
    flat = text if lang == "zh" else " ".join(text.split())
    positions = []
    for want in sentences:
        at = flat.find(want)
        assert at >= 0, (want, flat[:800])
        positions.append(at)
    assert positions == sorted(positions)  # reading order: column by column, page by page
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    assert not [ln for ln in lines if ln.isdigit()]  # no page number
    assert sum(title in ln for ln in lines) <= 1  # the running head is not text (the title may be a heading once)
    parents, _ = split_document(doc, SplitSettings())
    assert [p.heading_path[-1] for p in parents if p.heading_path][:1] == [heads[0]]
    assert {p.heading_path[-1] for p in parents if p.heading_path} == set(heads)
    pages = {loc[1] for p in parents if (loc := p.location)} | {loc[2] for p in parents if (loc := p.location)}
    assert len(pages) >= 2 and min(pages) == 1


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_slides_are_sections_with_their_numbers(files, lang):
    doc = _one(files[f"{lang}.pptx"])
    parents, _ = split_document(doc, SplitSettings())
    assert doc.metadata["slide_count"] >= 3
    slides = {p.location for p in parents}
    assert all(loc and loc[0] == "slide" for loc in slides) and len(slides) >= 3
    table = next(p for p in parents if FACTS[lang][2] in p.text)
    assert table.heading_path[0].replace(" ", "") == HEADINGS[lang][0].replace(" ", "")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_slides_under_a_section_header_slide_are_its_subsections(tmp_path, lang):
    # pandoc makes a heading above its slide level a "Section Header" slide; PowerPoint users do the same
    part, slides = (("第一部分", ["风扇", "电源"]) if lang == "zh" else ("Part One", ["Fan", "Power"]))
    body = ("风扇转速随温度自动调节。", "电源适配器输出 12 伏。") if lang == "zh" else (
        "The fan speed follows the temperature.", "The adapter gives 12 volts.")
    md = f"---\ntitle: T\n---\n\n# {part}\n\n## {slides[0]}\n\n{body[0]}\n\n## {slides[1]}\n\n{body[1]}\n"
    doc = _one(D.pandoc(md, tmp_path / f"deck-{lang}.pptx"))
    parents, _ = split_document(doc, SplitSettings())
    paths = {p.heading_path for p in parents if any(b in p.text for b in body)}
    assert paths == {(part, slides[0]), (part, slides[1])}, paths


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_sheets_are_tables_whose_chunks_carry_the_header(files, lang, fmt):
    doc = _one(files[f"{lang}.{fmt}"])
    parents, children = split_document(doc, SplitSettings())
    # an XLSX's sheet is named after the CSV LibreOffice read; a CSV has no heading (its title is its name)
    assert parents[0].heading_path == ((f"table-{lang}",) if fmt == "xlsx" else ())
    assert doc.title == f"table-{lang}" and parents[0].text.startswith("| name | voltage | note |")
    assert ("| 风扇 | 5 | 散热 |" if lang == "zh" else "| lamp | 5 | status light |") in parents[0].text
    big = "\n".join(["name,qty"] + [f"item {i} {'零件' if lang == 'zh' else 'part'},{i}" for i in range(400)])
    tsv = files[f"{lang}.csv"].with_name(f"big-{lang}.tsv")
    tsv.write_text(big.replace(",", "\t"), encoding="utf-8")
    parents, children = split_document(_one(tsv), SplitSettings(child_tokens=120, child_overlap_tokens=20))
    assert len(children) > 3
    for c in children:
        for line in c.text.splitlines():
            assert line.startswith("|") and line.endswith("|"), line  # never a row cut in two
        assert c.text.startswith("| name | qty |") or c.context.startswith("| name | qty |\n| --- | --- |")


def test_a_small_table_stays_in_one_chunk_and_prose_around_it_is_sentences():
    text = ("# 规格 Specs\n\n" + "这是一段说明文字。" * 30 + "\n\n| 名称 | 电压 |\n| --- | --- |\n| 风扇 | 12 |\n| 灯 | 5 |\n\n"
            + "After the table comes more text. " * 30)
    from ragsift.types import Document

    doc = Document("d", "s.md", "Specs", text, "h", "md")
    _, children = split_document(doc, SplitSettings(child_tokens=60, child_overlap_tokens=0))
    holding = [c for c in children if "| 名称 | 电压 |" in c.text]
    assert len(holding) == 1 and "| 灯 | 5 |" in holding[0].text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_scanned_pdf_and_an_image_are_read_by_ocr(files, tmp_path, lang):
    scan = D.scanned_pdf(files[f"{lang}.pdf"], tmp_path / f"scan-{lang}.pdf")
    doc = _one(scan)
    assert doc.metadata["ocr_pages"] == [1]
    flat = doc.text.replace(" ", "").lower()
    for fact in (FACTS[lang][0], FACTS[lang][2]):
        assert fact.replace(" ", "").lower() in flat, (fact, doc.text[:500])
    off = load_file(scan, scan.name, LoadLimits(ocr=False))
    assert not off.documents and "needs OCR" in off.skipped[0].reason
    lines = ["恢复出厂设置需要同时按住音量加和电源键十秒。", "Hold the reset button for ten seconds."]
    img = _one(D.text_image(lines, tmp_path / f"note-{lang}.png"))
    flat = img.text.replace(" ", "").lower()
    assert "恢复出厂设置需要同时按住音量加和电源键十秒" in flat and "holdtheresetbuttonfortenseconds" in flat


def test_mail_with_an_attachment_and_an_archive(files, tmp_path):
    eml = D.mail("设备维护通知 Maintenance notice", "各位好：本周六凌晨两点更新固件。\nFirmware updates run on Saturday at 2 am.",
                 {"guide.docx": files["zh.docx"].read_bytes(), "blob.bin": b"\x00\x01"}, tmp_path / "notice.eml")
    doc = _one(eml)
    assert doc.title == "设备维护通知 Maintenance notice" and doc.metadata["from"] == "ops@example.com"
    assert "凌晨两点更新固件" in doc.text and "# Attachment: guide.docx" in doc.text and FACTS["zh"][0] in doc.text
    assert any("blob.bin" in s for s in doc.metadata["attachments_skipped"])
    z = D.zipped({"a/readme.md": "# 说明\n\n压缩包里的说明。\n".encode(), "b/guide.pptx": files["en.pptx"].read_bytes(),
                  ".hidden/x.md": b"# hidden\n", "c/data.bin": b"\x00" * 10}, tmp_path / "bundle.zip")
    res = load_file(z, "bundle.zip", LoadLimits())
    assert sorted(d.source for d in res.documents) == ["bundle.zip/a/readme.md", "bundle.zip/b/guide.pptx"]
    assert [s.path for s in res.skipped] == ["bundle.zip/c/data.bin"]


def test_hostile_files_are_skipped_each_with_its_reason(files, tmp_path):
    good = files["en.docx"]
    cases = {
        "bomb.zip": (D.zip_bomb(tmp_path / "bomb.zip"), "decompression bomb"),
        "pixels.png": (D.pixel_bomb(tmp_path / "pixels.png"), "too many pixels"),
        "laughs.docx": (D.entity_bomb(good, "word/document.xml", tmp_path / "laughs.docx"), ""),
        "laughs.odt": (D.entity_bomb(files["en.odt"], "content.xml", tmp_path / "laughs.odt"), ""),
        "laughs.epub": (D.entity_bomb(files["en.epub"], "META-INF/container.xml", tmp_path / "laughs.epub"), ""),
        "locked.pdf": (D.encrypted_pdf(files["en.pdf"], tmp_path / "locked.pdf"), "encrypted PDF"),
        "cut.docx": (D.truncated(good, tmp_path / "cut.docx"), "Word document"),
        "cut.epub": (D.truncated(files["en.epub"], tmp_path / "cut.epub"), "EPUB"),
        "cut.pdf": (D.truncated(files["en.pdf"], tmp_path / "cut.pdf", 0.3), "PDF"),
        "zip.pdf": (shutil.copy(files["en.docx"], tmp_path / "zip.pdf"), "not a PDF as its name says"),
        "text.docx": (write_files(tmp_path, {"text.docx": "just text"}) / "text.docx", "not a Word document"),
        "page.png": (write_files(tmp_path, {"page.png": "<!doctype html><p>x</p>"}) / "page.png", "its content is HTML"),
    }
    for name, (path, reason) in cases.items():
        res = load_file(Path(path), name, LoadLimits(max_seconds=30))
        assert not res.documents, (name, res.documents[:1])
        assert res.skipped and reason in res.skipped[0].reason, (name, res.skipped)
    macro = _one(D.with_macro(good, tmp_path / "macro.docm"))  # read, never run
    assert FACTS["en"][0] in macro.text


def test_an_ingest_of_every_format_answers_with_pages_in_its_citations(files, tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    for key, path in files.items():
        shutil.copy(path, folder / f"{key.replace('.', '-')}{path.suffix}")
    kb = KnowledgeBase.open(tmp_path / "kb")
    report = kb.ingest(folder)
    assert not report.skipped and len(report.added) == len(files)
    res = kb.query("恢复出厂设置要按哪些键？", filter={"source": "zh-pdf.pdf"}, max_passages=1)
    assert FACTS["zh"][2] in res.passages[0].text and res.passages[0].location == ("page", 1, 1)
    assert "(p. 1)" in res.to_context().splitlines()[0]
    res = kb.query("How do I factory reset the hub?", filter={"source": "en-pptx.pptx"}, max_passages=1)
    assert res.passages[0].location[0] == "slide" and re.search(r"\(slides? \d", res.to_context())
    view = kb.view(res.passages[0].doc_id)
    assert view["document"]["format"] == "pptx" and view["outline"] and all(p["entries"] for p in view["parents"])


# ------------------------------------------------------------------ identity and sync
def _ingest_cli(kb: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", str(kb), "ingest", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_a_file_is_one_document_however_it_is_named(tmp_path):
    docs = write_files(tmp_path / "docs", {"zh/a.md": "# 备份\n\n星云音箱每天凌晨两点自动备份。\n",
                                             "b.md": "# Backups\n\nThe hub backs up every night at 2 am.\n"})
    kb_dir = tmp_path / "kb"
    kb = KnowledgeBase.open(kb_dir, embedder="minilm")
    kb.ingest(docs)
    (docs / "zh" / "a.md").write_text("# 备份\n\n星云音箱每天凌晨两点自动备份，保留三十天。\n", encoding="utf-8")
    kb.close()
    for args, cwd in ((["a.md"], docs / "zh"), ([str(docs / "zh" / "a.md")], tmp_path), (["docs/b.md"], tmp_path),
                      (["../../docs"], docs / "zh")):  # the folder, from inside it
        p = _ingest_cli(kb_dir, *args, cwd=cwd)
        assert p.returncode == 0, p.stderr
    kb = KnowledgeBase.open(kb_dir)
    assert sorted(d.source for d in kb.documents().values()) == ["b.md", "zh/a.md"]
    res = kb.query("备份保留多久？")
    assert len({p.doc_id for p in res.passages}) == len(res.passages) and "三十天" in res.passages[0].text


def test_sync_mirrors_a_folder_in_one_commit(tmp_path):
    docs = write_files(tmp_path / "docs", {
        "keep.md": "# Keep\n\nThis note stays as it is.\n",
        "change.md": "# 变更\n\n原来的内容。\n",
        "old-name.md": "# Moving notes\n\nThe kayak is stored in the boathouse over winter.\n",
        "gone.md": "# 删除\n\n这个文件会被删除。\n",
        "rows.jsonl": '{"_id": "r1", "text": "first row"}\n{"_id": "r2", "text": "second row"}\n'})
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    first = kb.sync(docs)
    assert len(first.added) == 6 and first.generation == 1
    moved_id = next(d.doc_id for d in kb.documents().values() if d.source == "old-name.md")
    before = {ic.child.child_id.split("#")[1]: np.asarray(ic.vector)
              for _, _, cs in kb.store.export(doc_ids=[moved_id]) for ic in cs}
    (docs / "change.md").write_text("# 变更\n\n新的内容：保修期延长到两年。\n", encoding="utf-8")
    (docs / "old-name.md").rename(docs / "new-name.md")
    (docs / "gone.md").unlink()
    (docs / "rows.jsonl").write_text('{"_id": "r1", "text": "first row"}\n', encoding="utf-8")
    write_files(docs, {"new.md": "# New\n\nA brand new note about coffee.\n"})
    plan = kb.sync(docs, dry_run=True)
    assert plan.dry_run and len(plan.added) == 1 and len(plan.updated) == 1 and len(plan.deleted) == 2
    assert [r["source"] for r in plan.renamed] == ["new-name.md"] and kb.stats()["generation"] == 1
    done = kb.sync(docs)
    assert done.generation == 2 and done.checkpoints == 1  # one commit
    assert sorted(d.source for d in kb.documents().values()) == ["change.md", "keep.md", "new-name.md", "new.md",
                                                                  "rows.jsonl"]
    assert {d.doc_id for d in kb.documents().values() if d.source == "rows.jsonl"} == {"r1"}
    new_id = done.renamed[0]["to"]
    after = {ic.child.child_id.split("#")[1]: np.asarray(ic.vector)
             for _, _, cs in kb.store.export(doc_ids=[new_id]) for ic in cs}
    assert after.keys() == before.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    assert kb.query("where is the kayak in winter?", max_passages=1).passages[0].source == "new-name.md"
    assert "两年" in kb.query("保修期多久？", max_passages=1).passages[0].text
    again = kb.sync(docs)
    assert (again.added, again.updated, again.deleted, again.renamed, again.checkpoints) == ([], [], [], [], 0)
    p = _ingest_cli(tmp_path / "kb", "--sync", str(docs), "--dry-run", cwd=tmp_path)
    assert p.returncode == 0 and "dry run (nothing written): 0 to add" in p.stdout, p.stderr
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", str(tmp_path / "kb"), "show", "new-name.md"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "Moving notes" in p.stdout and "1 chunk" in p.stdout, p.stderr


def test_the_server_syncs_the_operators_folder_and_shows_how_a_document_was_read(files, tmp_path):
    """POST /v1/sync mirrors the folder the operator named (--sync-dir): a read key may not, a
    request may name no folder, dry_run writes nothing; the job adds, then deletes and renames.
    GET /v1/documents/{id}/view: the heading tree, sections with their pages and tables."""
    from server_process import READ_KEY, WRITE_KEY, ServerProcess, wait_job

    docs = tmp_path / "team"
    docs.mkdir()
    shutil.copy(files["zh.pdf"], docs / "手册.pdf")
    write_files(docs, {"notes.md": "# Notes\n\nThe kayak is stored in the boathouse over winter.\n"})
    KnowledgeBase.open(tmp_path / "kb", embedder="minilm").close()
    with ServerProcess(["--kb", str(tmp_path / "kb"), "serve", "--sync-dir", str(docs)]) as srv:
        with srv.client(READ_KEY) as c:
            assert c.post("/v1/sync").status_code == 403
        with srv.client(WRITE_KEY) as c:
            for bad in ({"params": {"folder": "/etc"}}, {"json": {"folder": "/etc"}}):
                r = c.post("/v1/sync", **bad)
                assert r.status_code == 400 and "the folder is the operator's" in r.json()["detail"], r.text
            plan = c.post("/v1/sync", params={"dry_run": "true"})
            assert plan.status_code == 200 and sorted(plan.json()["added"]) and plan.json()["dry_run"]
            assert c.get("/v1/stats").json()["documents"] == 0
            job = c.post("/v1/sync")
            assert job.status_code == 202 and job.json()["kind"] == "sync"
            done = wait_job(c, job.json())
            assert done["state"] == "done" and len(done["report"]["added"]) == 2, done
            pdf_id = next(d["doc_id"] for d in c.get("/v1/documents").json()["documents"] if d["source"] == "手册.pdf")
            view = c.get(f"/v1/documents/{quote(pdf_id, safe='')}/view").json()
            assert view["document"]["format"] == "pdf"
            headings = [h for p in view["parents"] for h in p["heading_path"]]
            assert "配对步骤" in "".join(headings).replace(" ", "")
            table = next(p for p in view["parents"] if FACTS["zh"][2] in p["text"])
            assert table["location"] == {"page": 1} and table["tables"] >= 1, table
            assert c.get("/v1/documents/nope/view").status_code == 404
            (docs / "notes.md").rename(docs / "kayak.md")
            (docs / "手册.pdf").unlink()
            done = wait_job(c, c.post("/v1/sync").json())
            report = done["report"]
            assert report["deleted"] == [pdf_id] and [r["source"] for r in report["renamed"]] == ["kayak.md"], report
            passage = c.post("/v1/query", json={"question": "where is the kayak in winter?", "max_passages": 1})
            assert passage.json()["passages"][0]["source"] == "kayak.md"
    with ServerProcess(["--kb", str(tmp_path / "kb"), "serve"]) as srv, srv.client(WRITE_KEY) as c:
        r = c.post("/v1/sync")
        assert r.status_code == 404 and "--sync-dir" in r.json()["detail"]

