"""The product talks in names, not ids, and says why it found nothing (issue 53): an ingest report,
a sync's dry run, a trace and a delete name documents by their source (and sections by their
heading path), the ids beside only in ``--json``; a document added from code is named by its
title; an empty knowledge base and a filter value no document holds say so, in Python, on the
command line and over HTTP; a mail's date is a date to filters; ``check --restore`` on a healthy
knowledge base commits nothing. Real stores, real files, the command line run by its ``main``."""
from __future__ import annotations

import json
import re

import documents as D
import pytest
from conftest import write_files

from ragsift.cli import main
from ragsift.kb import KnowledgeBase

FILE_ID = re.compile(r"d-[0-9a-f]{16}")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def synced(tmp_path_factory):
    """A folder synced into a knowledge base (minilm), then changed: one file renamed, one gone, one new."""
    root = tmp_path_factory.mktemp("names")
    docs = write_files(root / "docs", {
        "手册.md": "# 星云音箱\n\n## 恢复出厂设置\n\n同时按住音量加和电源键十秒。指示灯闪烁三次后松开。\n",
        "guide.md": "# Guide\n\n## Backups\n\nBackups run nightly at two.\n\n| kept | where |\n|---|---|\n| 30 days | S3 |\n",
        "old.md": "# Old\n\nThis note goes away.\n"})
    kb = KnowledgeBase.open(root / "kb", embedder="minilm")
    first = kb.sync(docs)
    (docs / "手册.md").rename(docs / "说明书.md")
    (docs / "old.md").unlink()
    write_files(docs, {"new.md": "# New\n\nA new note about coffee.\n"})
    return root, docs, kb, first


def test_reports_traces_and_deletes_name_documents_by_source(synced, capsys):
    root, docs, kb, first = synced
    # Python: the report in words, and each id's source
    assert sorted(first.names(first.added)) == ["guide.md", "old.md", "手册.md"]
    assert str(first).startswith("generation 1: 3 added") and not FILE_ID.search(str(first))
    # the dry run says which files it would add, rename and delete, by name
    code, out, err = cli(capsys, "--kb", str(root / "kb"), "ingest", "--sync", str(docs), "--dry-run")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("dry run (nothing written): 1 to add, 0 to update, 1 unchanged, 1 renamed, 1 to delete")
    assert lines[1:] == ["  add new.md", "  renamed 手册.md -> 说明书.md", "  delete old.md"]
    # --json: the ids as before, each named in sources; a rename names both ends
    code, out, _ = cli(capsys, "--kb", str(root / "kb"), "ingest", "--sync", str(docs), "--dry-run", "--json")
    report = json.loads(out)
    assert [report["sources"][i] for i in report["deleted"]] == ["old.md"] and FILE_ID.fullmatch(report["deleted"][0])
    assert [report["sources"][i] for i in report["added"]] == ["new.md"]
    assert [(r["from_source"], r["source"]) for r in report["renamed"]] == [("手册.md", "说明书.md")]
    # a trace names each hit as the web page does, and the matches by sentence or line
    code, out, _ = cli(capsys, "--kb", str(root / "kb"), "query", "恢复出厂设置要按哪些键？", "--trace")
    assert code == 0 and not FILE_ID.search(out) and "matched children" not in out
    assert "[1] 手册.md › 星云音箱 > 恢复出厂设置" in out and "    matched: sentences 1-" in out
    assert re.search(r"    #1 手册\.md › 星云音箱 > 恢复出厂设置  raw score \d\.\d{4}", out), out
    code, out, _ = cli(capsys, "--kb", str(root / "kb"), "query", "How long are backups kept?", "--trace")
    assert "[1] guide.md › Guide > Backups" in out and re.search(r"matched: lines? \d", out), out
    # a document added from code is named by its title (else its id), not "api"
    added = kb.add_documents([{"id": "faq-7", "title": "退货政策", "text": "商品签收后三十天内可以退货。"},
                              {"id": "faq-8", "text": "Refunds reach the card within five days."}])
    assert added.names(added.added) == ["退货政策 (faq-7)", "faq-8"]
    assert kb.query("多少天内可以退货？", max_passages=1).passages[0].source == "退货政策"
    # a delete says what it deleted by name
    code, out, _ = cli(capsys, "--kb", str(root / "kb"), "delete", next(i for i in first.added
                                                                          if first.sources[i] == "old.md"))
    assert out.strip() == "deleted 1 document(s): old.md"
    code, out, _ = cli(capsys, "--kb", str(root / "kb"), "delete", "faq-7")
    assert out.strip() == "deleted 1 document(s): 退货政策 (faq-7)"


def test_an_empty_knowledge_base_and_a_filter_value_no_document_holds_say_so(tmp_path, capsys):
    from starlette.testclient import TestClient

    from ragsift.server.app import create_app
    from ragsift.server.config import ServerConfig

    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    assert kb.query("备份保留多久？").warnings == ("the knowledge base holds no documents: ingest some first "
                                              "(`ragsift ingest PATH`, KnowledgeBase.ingest, or POST /v1/files)",)
    code, out, err = cli(capsys, "--kb", str(tmp_path / "kb"), "query", "How long are backups kept?")
    assert code == 1 and "no good match: the knowledge base is empty" in out
    assert f"the knowledge base at {tmp_path / 'kb'} holds no documents: add some with `ragsift --kb " in err
    code, out, _ = cli(capsys, "--kb", str(tmp_path / "kb"), "list")
    assert code == 0 and out.startswith(f"the knowledge base at {tmp_path / 'kb'} holds no documents")
    kb.ingest(write_files(tmp_path / "docs", {
        "zh/guide.md": "---\nitem_name: 星云智能音箱 S2\n---\n# 备份\n\n备份每天凌晨两点运行，保留三十天。\n",
        "notes.md": "# Notes\n\nBackups are kept for thirty days.\n"}))
    res = kb.query("备份保留多久？", filter={"source": "guide.md"})
    assert res.passages == () and res.warnings == ('no document has source "guide.md" (did you mean "zh/guide.md"?)',)
    res = kb.query("备份", filter={"item_name": {"in": ["星云音箱", "星云智能音箱 S2"]}})
    assert res.passages and res.warnings == ()  # found: nothing to say
    res = kb.query("备份", filter={"and": [{"item_name": "星云音箱"}, {"source": "zh/guide.md"}]})
    assert res.warnings == ('no document has item_name "星云音箱" (did you mean "星云智能音箱 S2"?)',)
    code, out, err = cli(capsys, "--kb", str(tmp_path / "kb"), "query", "backups", "--filter", '{"source": "Notes.md"}')
    assert code == 0 and "no good match: no passage was found" in out
    assert err.strip() == 'ragsift: no document has source "Notes.md" (did you mean "notes.md"?)'
    kb.close()
    with TestClient(create_app(ServerConfig(kb=tmp_path / "kb"))) as c:
        r = c.post("/v1/query", json={"question": "backups", "filter": {"source": "guide.md"}})
        assert r.status_code == 200 and r.json()["passages"] == []
        assert r.json()["warnings"] == ['no document has source "guide.md" (did you mean "zh/guide.md"?)']
        assert c.post("/v1/query", json={"question": "backups"}).json()["warnings"] == []


def test_mail_dates_are_dates_to_filters(tmp_path):
    folder = tmp_path / "mail"
    folder.mkdir()
    for name, date, body in (("old.eml", "Tue, 01 Mar 2021 10:00:00 +0800", "去年的维护通知：周六停机。"),
                             ("new.eml", "Wed, 09 Feb 2022 09:30:00 -0500", "The new maintenance window is Sunday."),
                             ("dec.eml", "Thu, 15 Dec 2022 08:00:00 +0000", "十二月的备份策略更新。")):
        D.mail(name.split(".")[0], body, {}, folder / name)
        raw = (folder / name).read_bytes().replace(b"Subject:", f"Date: {date}\nSubject:".encode(), 1)
        (folder / name).write_bytes(raw)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(folder)
    assert kb.stats()["fields"]["date"] == "date"
    # as text, "Wed, 09 Feb 2022" < "Thu, 15 Dec 2022" < "Tue, 01 Mar 2021": as dates, 2021 < Feb < Dec
    found = {p.source for p in kb.query("maintenance backup 维护 备份", filter={"date": {"gte": "2022-01-01"}},
                                        max_passages=10).passages}
    assert found == {"new.eml", "dec.eml"}
    found = {p.source for p in kb.query("maintenance backup 维护 备份", filter={"date": {"lt": "2022-06-01"}},
                                        max_passages=10).passages}
    assert found == {"old.eml", "new.eml"}
    meta = {d.source: d.metadata["date"] for d in kb.documents().values()}
    assert meta["new.eml"] == "2022-02-09T14:30:00"  # in UTC


def test_check_restore_on_a_healthy_knowledge_base_commits_nothing_and_says_so(tmp_path, capsys):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(write_files(tmp_path / "docs", {"a.md": "# 备份\n\n备份保留三十天。Backups are kept 30 days.\n"}))
    generation = kb.stats()["generation"]
    kb.close()
    code, out, err = cli(capsys, "--kb", str(tmp_path / "kb"), "check", "--restore")
    assert code == 0, err
    assert out.startswith(f"nothing to restore: generation {generation} checks out and stays the newest")
    assert KnowledgeBase.open(tmp_path / "kb").stats()["generation"] == generation
