"""Issue 51: an ingested or synced folder's files stay inside it, and where they are on the server
is the operator's.

- A symbolic link in the folder whose target is outside it (``/etc/passwd``, a file in a sibling
  folder) is skipped with its reason unless the operator's ``follow_outside_links`` is on (then it
  is known by where the link sits, and a sync deletes it when the link goes); a link inside the
  folder works as before; a document whose file has left the folder (a link ingested by a version
  that followed it) is deleted by the next sync.
- ``metadata.path`` (the absolute path, a file's identity) reaches no face: the Python API's
  results, the CLI (text and ``--json``, ``show``), the HTTP routes, the MCP tools, the LangChain /
  LlamaIndex / Haystack retrievers and the web page. Each face is searched whole for the folder's
  absolute path; a filter naming ``path`` is an error on every face; ``file_paths`` gives it to
  the operator; a knowledge base made before (``path`` recorded as a filter field) keeps working.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files

from ragsift.config import Settings
from ragsift.errors import ConfigError, FilterError
from ragsift.kb import KnowledgeBase

OUTSIDE = "symbolic link to a file outside the folder (not followed; setting follow_outside_links)"
TOKEN = "srvdocs-5c1e"  # in the folder's name only: any text that names the folder names it
DOCS = {
    "茶叶/绿茶保存.md": "# 绿茶保存\n\n绿茶应密封后放入冰箱冷藏，避免受潮和串味。\n\n## 保质期\n\n密封冷藏的绿茶可保存一年。\n",
    "guides/kayak storage.md": "# Kayak storage\n\nThe kayak is stored upside down in the boathouse over winter.\n",
    "年报 annual-2024.txt": "2024 年度报告：销售额增长百分之十二。The 2024 annual report: sales grew twelve percent.\n",
}
SECRET = {"秘密笔记.md": "# 保险箱\n\n保险箱的密码是四七一一。\n",
          "vault notes.md": "# Vault\n\nThe vault combination is forty-seven eleven.\n"}
QUESTIONS = ["绿茶怎么保存？", "Where is the kayak stored over winter?"]
PATH_FILTERS = [{"path": "/etc/passwd"}, {"path": {"gte": "/"}}, {"path": {"lt": "~", "gt": "/h"}},
                {"path": {"$in": ["/etc/passwd"]}}, {"or": [{"source": "x.md"}, {"path": {"gte": "/"}}]},
                {"not": {"path": {"ne": ""}}}, {"$and": [{"lang": "zh"}, {"path": {"lte": "/zzz"}}]}]


def _folder(root: Path) -> Path:
    return write_files(root / f"服务器 文件夹 {TOKEN}", DOCS)


def _sibling(root: Path) -> Path:
    return write_files(root / "邻居 sibling", SECRET)


def _shown(*things: object) -> str:
    """Everything a face returned, as text: JSON (non-ASCII as is) where it is JSON, else its repr."""
    return "\n".join(json.dumps(t, ensure_ascii=False, default=repr) for t in things)


def _none_of(folder: Path, text: str) -> None:
    """No trace of the folder's absolute path in ``text``: the path itself, resolved or not, or its
    name's ASCII token (a path escaped or cut still names it)."""
    for needle in {str(folder), folder.resolve().as_posix(), TOKEN}:
        assert needle not in text, f"{needle!r} found in: ...{text[max(0, text.find(needle) - 300):][:600]}..."


# ------------------------------------------------------------------ the folder's files stay inside it
def test_a_link_out_of_the_folder_is_skipped_with_its_reason_and_one_inside_works(tmp_path):
    docs, sibling = _folder(tmp_path), _sibling(tmp_path)
    (docs / "邻居的秘密.md").symlink_to(sibling / "秘密笔记.md")  # a file in a sibling folder
    (docs / "guides" / "vault.md").symlink_to(Path("..") / ".." / "邻居 sibling" / "vault notes.md")  # relative
    (docs / "passwd.txt").symlink_to("/etc/passwd")
    (docs / "茶叶" / "绿茶 link.md").symlink_to(docs / "茶叶" / "绿茶保存.md")  # inside: read as before
    (docs / "kayak.md").symlink_to(Path("guides") / "kayak storage.md")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    first = kb.ingest(docs)
    assert len(first.added) == len(DOCS) + 2  # the links inside read as before
    for report in (first, kb.sync(docs)):
        assert {s.path: s.reason for s in report.skipped} == {
            "邻居的秘密.md": OUTSIDE, "guides/vault.md": OUTSIDE, "passwd.txt": OUTSIDE}
    sources = {d.source for d in kb.documents().values()}
    assert sources <= {*DOCS, "茶叶/绿茶 link.md", "kayak.md"} and len(sources) >= len(DOCS)
    for question, fact in (("绿茶怎么保存？", "密封"), ("Where is the kayak stored over winter?", "boathouse")):
        assert fact in kb.query(question, max_passages=1).passages[0].text
    for question in ("保险箱的密码是多少？", "What is the vault combination?", "root:x:0:0 bin bash nologin"):
        assert not any(p.source in ("邻居的秘密.md", "guides/vault.md", "passwd.txt")
                       for p in kb.query(question, max_passages=10).passages)
    assert "四七一一" not in _shown(kb.query("保险箱的密码是多少？", max_passages=10).to_dict())
    # a file named alone is the operator's choice: read wherever its link leads
    alone = kb.ingest(docs / "邻居的秘密.md")
    assert len(alone.added) == 1 and not alone.skipped


def test_a_document_whose_file_has_left_the_folder_is_deleted_by_the_next_sync(tmp_path):
    docs, sibling = _folder(tmp_path), _sibling(tmp_path)
    (docs / "外部笔记.md").symlink_to(sibling / "秘密笔记.md")
    (docs / "vault.md").symlink_to(sibling / "vault notes.md")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.sync(docs)
    # what a version that followed links made: the link's document recording its target's path
    old = kb.ingest([docs / "外部笔记.md", docs / "vault.md"])
    assert len(old.added) == 2
    linked = {d.doc_id for d in kb.documents().values() if d.source in ("外部笔记.md", "vault.md")}
    assert sorted(kb.file_paths(linked).values()) == sorted((sibling / n).as_posix() for n in SECRET)
    plan = kb.sync(docs, dry_run=True)
    assert sorted(plan.deleted) == sorted(linked) and not plan.added and not plan.updated
    done = kb.sync(docs)
    assert sorted(done.deleted) == sorted(linked)
    assert {s.path: s.reason for s in done.skipped} == {"外部笔记.md": OUTSIDE, "vault.md": OUTSIDE}
    assert not linked & set(kb.documents()) and sorted(d.source for d in kb.documents().values()) == sorted(DOCS)
    assert not any(p.source in ("外部笔记.md", "vault.md") for p in kb.query("保险箱的密码是多少？").passages)
    again = kb.sync(docs)
    assert (again.added, again.updated, again.deleted) == ([], [], [])
    # another folder's documents are not this folder's: a sync leaves them alone
    other = KnowledgeBase.open(tmp_path / "kb2", embedder="minilm")
    other.ingest(sibling, prefix="sibling/")
    assert len(other.sync(docs).deleted) == 0 and len(other.documents()) == len(SECRET) + len(DOCS)


def test_following_links_out_of_the_folder_is_the_operators_setting(tmp_path):
    docs, sibling = _folder(tmp_path), _sibling(tmp_path)
    (docs / "外部笔记.md").symlink_to(sibling / "秘密笔记.md")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", follow_outside_links=True)
    assert kb.settings.ingest.follow_outside_links and Settings().ingest.follow_outside_links is False  # off by default
    first = kb.sync(docs)
    assert not first.skipped and len(first.added) == len(DOCS) + 1
    linked = next(d.doc_id for d in kb.documents().values() if d.source == "外部笔记.md")
    assert kb.file_paths([linked]) == {linked: (docs.resolve() / "外部笔记.md").as_posix()}  # where the link sits
    assert kb.query("保险箱的密码是多少？", max_passages=1).passages[0].doc_id == linked
    (docs / "外部笔记.md").unlink()
    assert kb.sync(docs).deleted == [linked]  # the link gone: its document with it
    with pytest.raises(ConfigError, match="cannot change per query: follow_outside_links"):
        kb.query("绿茶", follow_outside_links=False)
    # turned off again: the link is skipped and its document deleted
    (docs / "vault.md").symlink_to(sibling / "vault notes.md")
    kb.sync(docs)
    kb.close()
    off = KnowledgeBase.open(tmp_path / "kb", follow_outside_links=False)
    done = off.sync(docs)
    assert [s.reason for s in done.skipped] == [OUTSIDE] and len(done.deleted) == 1
    assert sorted(d.source for d in off.documents().values()) == sorted(DOCS)


# ------------------------------------------------------------------ where files are is the operator's
@pytest.fixture
def path_kb(tmp_path, backend):
    docs = _folder(tmp_path)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **backend)
    reports = [kb.ingest(docs).to_dict(), kb.sync(docs).to_dict()]
    yield kb, docs, reports
    kb.close()


def test_the_python_api_returns_no_absolute_path_and_filters_on_none(path_kb):
    kb, docs, reports = path_kb
    shown = list(reports)
    for question in QUESTIONS:
        for unit in ("parent", "child", "document", "window", "auto"):
            res = kb.query(question, unit=unit, max_passages=3)
            assert res.passages
            shown += [res.to_dict(trace=True), res.to_context(), res.passages, res.trace]
        shown += [kb.search(question), kb.rank_documents(question, 5)]
    total, page = kb.list_documents(limit=100)
    assert total == len(DOCS)
    shown += [page, kb.documents(), kb.stats()]
    for d in page:
        doc, sections = kb.document(d.doc_id)
        shown += [doc, sections, kb.view(d.doc_id), kb.sections(s.parent.parent_id for s in sections)]
        assert "path" not in doc.metadata and all("path" not in s.metadata for s in sections)
    _none_of(docs, _shown(*shown))
    assert "path" not in kb.stats()["fields"] and "path" not in kb.store.fields()
    # the operator's own method
    paths = kb.file_paths()
    assert sorted(paths.values()) == sorted((docs / name).as_posix() for name in DOCS)
    for spec in PATH_FILTERS:
        with pytest.raises(FilterError, match="'path' is not a filter field: .*filter by source"):
            kb.query(QUESTIONS[0], filter=spec)
    zh = kb.query(QUESTIONS[0], filter={"source": "茶叶/绿茶保存.md"}, max_passages=1)
    assert zh.passages[0].source == "茶叶/绿茶保存.md"  # the name a caller filters by


def test_a_record_may_not_set_the_path_and_a_files_own_is_dropped(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    report = kb.add_documents([
        {"id": "zh", "text": "绿茶应密封冷藏。", "metadata": {"path": "/srv/机密/绿茶.md", "team": "茶"}},
        {"id": "en", "text": "The kayak is stored in the boathouse.", "metadata": {"path": "/etc/passwd"}},
        {"id": "ok", "text": "Green tea keeps a year when sealed.", "metadata": {"doc_path": "tea/green.md"}}])
    assert report.added == ["ok"] and [s.path for s in report.skipped] == ["documents[0]", "documents[1]"]
    assert all("metadata 'path' is ragsift's own" in s.reason for s in report.skipped)
    assert kb.documents()["ok"].metadata == {"doc_path": "tea/green.md"} and not kb.file_paths()
    # a file's own "path" (front matter, a JSONL row's metadata) is not what it is shown with
    docs = write_files(tmp_path / f"front {TOKEN}", {
        "博客.md": "---\npath: /blog/绿茶\ntags: [茶]\n---\n# 绿茶\n\n绿茶应密封冷藏。\n",
        "rows.jsonl": json.dumps({"_id": "row-en", "text": "Kayaks winter in the boathouse.",
                                  "metadata": {"path": "/data/rows", "year": 2024}}) + "\n"})
    kb.ingest(docs)
    meta = {d.source if d.format != "jsonl" else d.doc_id: d.metadata for d in kb.documents().values()}
    assert meta["博客.md"] == {"tags": ["茶"]} and meta["row-en"] == {"year": 2024}
    assert sorted(kb.file_paths().values()) == sorted((docs / n).as_posix() for n in ("博客.md", "rows.jsonl"))
    _none_of(docs, _shown(kb.query("绿茶", max_passages=5).to_dict(), kb.documents()))


def test_a_knowledge_base_made_before_keeps_working(tmp_path, backend, monkeypatch):
    """One made by a version that recorded ``path`` as a filter field: its queries, listings and
    syncs work, the field is neither listed nor filterable, and the operator still reads it."""
    import ragsift.store.base as store_base

    docs = _folder(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "INTERNAL_METADATA", {})  # as a knowledge base made before: path filterable
        old = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **backend)
        old.ingest(docs)
        assert old.store.manifest["fields"]["path"] == "string"
        old.close()
    kb = KnowledgeBase.open(tmp_path / "kb", **backend)
    assert "path" not in kb.store.fields() and "path" not in kb.stats()["fields"]
    with pytest.raises(FilterError, match="'path' is not a filter field"):
        kb.query(QUESTIONS[1], filter={"path": {"gte": "/"}})
    res = kb.query(QUESTIONS[1], max_passages=2)
    assert res.passages[0].source == "guides/kayak storage.md"
    _none_of(docs, _shown(res.to_dict(trace=True), kb.list_documents(), kb.documents()))
    (docs / "guides" / "kayak storage.md").rename(docs / "guides" / "皮划艇 kayak.md")
    done = kb.sync(docs)  # identity and sync as before: a rename, nothing re-embedded
    assert [r["source"] for r in done.renamed] == ["guides/皮划艇 kayak.md"] and not done.added
    assert sorted(kb.file_paths().values()) == sorted(
        (docs / n).as_posix() for n in ["茶叶/绿茶保存.md", "guides/皮划艇 kayak.md", "年报 annual-2024.txt"])


# ------------------------------------------------------------------ every other face (processes)
def _cli(kb: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", str(kb), *args], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 0 or not check, p.stderr
    return p


@pytest.mark.slow  # the command line as subprocesses
def test_the_command_line_shows_no_absolute_path(tmp_path):
    docs = _folder(tmp_path)
    (docs / "外部.md").symlink_to(_sibling(tmp_path) / "秘密笔记.md")
    kb = tmp_path / "kb"
    outs = [_cli(kb, "ingest", str(docs), "--embedder", "minilm"), _cli(kb, "ingest", str(docs), "--json"),
            _cli(kb, "ingest", "--sync", str(docs)), _cli(kb, "ingest", "--sync", str(docs), "--dry-run", "--json")]
    assert f"skipped 外部.md: {OUTSIDE}" in outs[0].stdout
    for q in QUESTIONS:
        outs += [_cli(kb, "query", q, "--json", "--trace"), _cli(kb, "query", q, "--trace"),
                 _cli(kb, "query", q, "--format", "context"), _cli(kb, "query", q, "--unit", "document", "--json")]
    outs += [_cli(kb, "list", "--json"), _cli(kb, "list")]
    for source in DOCS:
        outs += [_cli(kb, "show", source, "--json"), _cli(kb, "show", source, "--text")]
    _none_of(docs, "\n".join(p.stdout + p.stderr for p in outs))
    listed = json.loads(outs[-2 - 2 * len(DOCS)].stdout)
    assert sorted(d["source"] for d in listed) == sorted(DOCS) and all("path" not in d["metadata"] for d in listed)
    bad = _cli(kb, "query", "绿茶", "--filter", json.dumps({"path": {"gte": "/"}}), check=False)
    assert bad.returncode != 0 and "'path' is not a filter field" in bad.stderr and "Traceback" not in bad.stderr
    follow = _cli(kb, "ingest", str(docs), "--follow-outside-links", "--json")
    assert json.loads(follow.stdout)["added"] and not json.loads(follow.stdout)["skipped"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server mirroring a folder (with a link out of it) into its knowledge base, MCP on."""
    from server_process import WRITE_KEY, ServerProcess, wait_job

    root = tmp_path_factory.mktemp("paths")
    docs = _folder(root)
    (docs / "passwd.txt").symlink_to("/etc/passwd")
    (docs / "邻居.md").symlink_to(_sibling(root) / "秘密笔记.md")
    # operator settings that name files on the server: a read key sees their file names only
    KnowledgeBase.open(root / "kb", embedder="minilm", llm_cache=str(root / f"cache {TOKEN}" / "answers.sqlite")).close()
    with ServerProcess(["--kb", str(root / "kb"), "serve", "--sync-dir", str(docs), "--mcp-ingest"]) as srv:
        with srv.client(WRITE_KEY) as c:
            job = wait_job(c, c.post("/v1/sync").json())
            assert job["state"] == "done", job
        yield srv, docs, job


@pytest.mark.slow  # a server process
def test_no_http_route_shows_or_filters_on_the_servers_path(served):
    from urllib.parse import quote

    from server_process import READ_KEY, WRITE_KEY, problem

    srv, docs, job = served
    assert len(job["report"]["added"]) == len(DOCS), job  # the links out of the folder were not followed
    assert {s["path"]: s["reason"] for s in job["report"]["skipped"]} == {"passwd.txt": OUTSIDE, "邻居.md": OUTSIDE}
    texts = []
    with srv.client(READ_KEY) as c:
        def get(url: str, **kw) -> dict:
            r = c.get(url, **kw)
            assert r.status_code == 200, r.text
            texts.append(r.text)
            return r.json()

        def post(url: str, body: dict) -> dict:
            r = c.post(url, json=body)
            assert r.status_code == 200, r.text
            texts.append(r.text)
            return r.json()

        for q in QUESTIONS:
            for unit in ("parent", "child", "document"):
                res = post("/v1/query", {"question": q, "trace": True, "unit": unit})
                assert res["passages"] and all("path" not in p["metadata"] for p in res["passages"])
        post("/v1/query/batch", {"queries": [{"question": q, "trace": True} for q in QUESTIONS]})
        listing = get("/v1/documents", params={"limit": 100})
        assert sorted(d["source"] for d in listing["documents"]) == sorted(DOCS)
        for d in listing["documents"]:
            detail = get(f"/v1/documents/{quote(d['doc_id'], safe='')}")
            get(f"/v1/documents/{quote(d['doc_id'], safe='')}/view")
            for s in detail["sections"]:
                get(f"/v1/sections/{quote(s['parent_id'], safe='')}")
        stats = get("/v1/stats")
        assert "path" not in stats["fields"]
        for route in ("/v1/settings", "/v1/kbs", "/v1/jobs", "/openapi.json"):
            get(route)
        for spec in PATH_FILTERS:
            problem(c.post("/v1/query", json={"question": QUESTIONS[0], "filter": spec}), 400,
                    "'path' is not a filter field")
        for body in ({"question": QUESTIONS[1], "follow_outside_links": True},  # the operator's, never a caller's
                     {"queries": [{"question": QUESTIONS[1], "follow_outside_links": True}]}):
            problem(c.post("/v1/query" if "question" in body else "/v1/query/batch", json=body), 400,
                    "cannot change per query: follow_outside_links")
    with srv.client(WRITE_KEY) as c:
        texts.append(c.post("/v1/sync", params={"dry_run": "true"}).text)
        r = c.post("/v1/documents", json={"documents": [{"id": "x", "text": "绿茶", "metadata": {"path": "/etc"}}]})
        problem(r, 422, "metadata 'path' is ragsift's own")
    text = "\n".join(texts)
    _none_of(docs, text + _shown([json.loads(t) for t in texts]))
    assert "root:x:0:0" not in text and "四七一一" not in text


@pytest.mark.slow  # a server process and the MCP client
def test_no_mcp_tool_shows_or_filters_on_the_servers_path(served):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from server_process import READ_KEY

    srv, docs, _ = served
    shown: list = []

    async def run() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {READ_KEY}"}, timeout=300)
        async with Client(streamable_http_client(srv.url + "/mcp/", http_client=http), read_timeout_seconds=300) as c:
            tools = (await c.list_tools()).tools
            shown.append([t.model_dump(mode="json") for t in tools])
            described = json.dumps([t.input_schema for t in tools], ensure_ascii=False)
            assert "lang (the language detected" in described and "path (string)" not in described
            for q in QUESTIONS:
                r = await c.call_tool("search", {"question": q, "passages": 5})
                assert not r.is_error
                shown.append(r.model_dump(mode="json"))
                for p in r.structured_content["passages"]:
                    sec = await c.call_tool("get_section", {"parent_id": p["parent_id"]})
                    shown.append(sec.model_dump(mode="json"))
            docs_listed = await c.call_tool("list_documents", {"limit": 100})
            shown.append(docs_listed.model_dump(mode="json"))
            listed = docs_listed.structured_content
            assert "path" not in listed["fields"] and all("path" not in d["metadata"] for d in listed["documents"])
            for spec in PATH_FILTERS[:3]:
                bad = await c.call_tool("search", {"question": QUESTIONS[0], "filter": spec})
                assert bad.is_error and "'path' is not a filter field" in bad.content[0].text
    asyncio.run(run())
    _none_of(docs, _shown(shown))


@pytest.mark.slow  # the framework packages
def test_no_framework_retriever_shows_or_filters_on_the_servers_path(path_kb):
    from haystack import Pipeline
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from ragsift.integrations.haystack import RagsiftRetriever as HaystackRetriever
    from ragsift.integrations.langchain import RagsiftRetriever as LCRetriever
    from ragsift.integrations.llamaindex import RagsiftRetriever as LIRetriever

    kb, docs, _ = path_kb
    shown: list = []
    lc, li = LCRetriever(kb=kb, k=3), LIRetriever(kb, k=3)
    pipe = Pipeline()
    pipe.add_component("retriever", HaystackRetriever(kb, top_k=3))
    for q in QUESTIONS:
        for unit in ("parent", "child"):
            got = lc.invoke(q, unit=unit)
            assert got and all("path" not in d.metadata for d in got)
            shown += [(d.page_content, d.metadata, d.id) for d in got]
            nodes = li.with_options(unit=unit).retrieve(q)
            assert nodes and all("path" not in n.node.metadata for n in nodes)
            shown += [(n.node.get_content(metadata_mode="all"), n.node.metadata, n.score) for n in nodes]
        hs = pipe.run({"retriever": {"query": q}})["retriever"]["documents"]
        assert hs and all("path" not in d.meta for d in hs)
        shown += [d.to_dict() for d in hs]
    _none_of(docs, _shown(shown))
    with pytest.raises(FilterError, match="'path' is not a filter field"):
        LCRetriever(kb=kb, filter={"$and": [{"path": {"$gte": "/"}}]})
    with pytest.raises(FilterError, match="'path' is not a filter field"):
        LIRetriever(kb, filter=MetadataFilters(filters=[MetadataFilter(key="path", value="/", operator=">=")]))
    with pytest.raises(FilterError, match="'path' is not a filter field"):
        HaystackRetriever(kb, filters={"field": "meta.path", "operator": ">=", "value": "/"})
    with pytest.raises(FilterError, match="'path' is not a filter field"):
        lc.invoke(QUESTIONS[0], filter={"path": "/etc/passwd"})


@pytest.mark.slow  # a real browser
def test_the_web_page_shows_no_absolute_path(served):
    from playwright.sync_api import expect, sync_playwright
    from server_process import READ_KEY

    srv, docs, _ = served
    bodies: list[str] = []
    executable = shutil.which("chromium")
    assert executable, "the browser tests need Debian's chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 1000})

        def keep(resp) -> None:
            try:
                bodies.append(resp.text())
            except Exception:  # a body the browser did not keep (a redirect)
                pass
        page.on("response", keep)
        page.goto(srv.url + "/")
        page.fill("#apikey", READ_KEY)
        page.dispatch_event("#apikey", "change")
        expect(page.locator("#status")).to_have_text("ready")
        for q in QUESTIONS:
            page.fill("#question", q)
            page.click("#ask-button")
            expect(page.locator(".result-column .passage").first).to_be_visible()
            bodies.append(page.content())
        page.locator("#documents li.doc").first.locator("button.view").click()
        expect(page.locator("#document-view")).to_be_visible()
        bodies.append(page.content())
        browser.close()
    assert any("绿茶" in b for b in bodies)
    _none_of(docs, "\n".join(bodies))
