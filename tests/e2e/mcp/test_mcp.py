"""The MCP server with the official SDK's own client: over stdio (``ragsift mcp``) and over
streamable HTTP (mounted by ``ragsift serve`` at /mcp, behind the same keys), in Chinese and
English; the ingest tool only when enabled, and over HTTP only with a write key. What an agent
sees: every parameter described (the filter's fields and operators), the tools' hints, a text
result that is the cited context once (the passages and their metadata are the structured
result, which matches the tool's output schema), ``kb`` only where there are knowledge bases to
name, and a refused key said as such."""
from __future__ import annotations

import asyncio
import os
import shutil
import sys

import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from server_process import READ_KEY, WRITE_KEY, ServerProcess

ZH = "恢复出厂设置要按哪些键？"
EN = "How long do I hold the reset button to wipe the hub?"


@pytest.fixture(scope="module")
def kb_copy(sample_kb, tmp_path_factory):
    path = tmp_path_factory.mktemp("mcp") / "kb"
    shutil.copytree(sample_kb.path, path)
    return path


def _stdio(kb, *extra: str) -> Client:
    env = {k: v for k, v in os.environ.items() if k.startswith(("RAGSIFT_", "HF_", "TRANSFORMERS_", "PATH", "HOME"))}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "ragsift.cli", "--kb", str(kb), "mcp", *extra],
                                        env=env), read_timeout_seconds=300)


def _http(url: str, key: str | None) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=300)
    return Client(streamable_http_client(url + "/mcp/", http_client=http), read_timeout_seconds=300)


def _check_tools(tools: list, named: bool) -> dict:
    """Every parameter described, ``kb`` offered only when ``named``, the hints, the output schemas."""
    by = {t.name: t for t in tools}
    for t in tools:
        props = t.input_schema["properties"]
        assert t.input_schema["additionalProperties"] is False, t.name  # an unknown argument is refused
        assert ("kb" in props) == named, (t.name, list(props))
        assert all(p.get("description") for p in props.values()), (t.name, props)
        assert t.title and t.description and t.annotations.open_world_hint is False
    for name in ("search", "list_documents", "get_section"):
        hints = by[name].annotations
        assert hints.read_only_hint is True and hints.destructive_hint is False, name
        assert by[name].output_schema["type"] == "object", name
    search = by["search"].input_schema["properties"]
    assert search["passages"]["minimum"] == 1 and search["passages"]["maximum"] == 20
    # the budget names its unit: the tokens ragsift counts (ragsift.text.tokens)
    assert search["max_tokens"]["default"] == 3000 and search["max_tokens"]["minimum"] == 100
    assert "ragsift tokens: one per Chinese character" in search["max_tokens"]["description"]
    assert {"no_good_match", "reason", "warnings", "max_tokens", "tokens", "dropped"} <= set(
        by["search"].output_schema["properties"])
    described = search["filter"]["description"]
    for word in ("doc_id", "source", "title", "list_documents", "eq", "ne", "gte", "lte", "nin", "$in", "contains",
                 "and / or", "not", "ISO 8601"):
        assert word in described, word
    assert "question" in by["search"].output_schema["properties"]
    assert set(by["search"].output_schema["$defs"]["Passage"]["properties"]) >= {
        "citation", "source", "heading", "parent_id", "doc_id", "unit", "score", "similarity", "term_match",
        "location", "text"}
    if "add_documents" in by:
        hints = by["add_documents"].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is True and hints.idempotent_hint is True
        doc = by["add_documents"].input_schema["$defs"]["NewDocument"]
        assert doc["required"] == ["id", "text"] and "replaced" in doc["properties"]["id"]["description"]
    return by


def _context_once(result, tool, n: int) -> dict:
    """The text result is a one-line header and the cited context, each passage once; the
    structured result holds the passages, as the output schema says."""
    assert not result.is_error, result.content
    found = result.structured_content
    jsonschema.validate(found, tool.output_schema)
    assert "context" not in found and len(found["passages"]) == n
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    context = "\n\n".join(f"[{p['citation']}] {p['source']}" + (f" › {p['heading']}" if p["heading"] else "")
                          + f"\n{p['text']}" for p in found["passages"])
    header, _, body = text.partition("\n\n")
    weak = header.split("\n")[0] if found["no_good_match"] else ""  # a first line: no good match, and why
    assert weak == ("" if not found["no_good_match"] else
                    f"No good match: {found['reason']}. These passages are weak: do not take them as an answer.")
    header = header[len(weak):].lstrip("\n")
    assert body == context and "\n" not in header
    assert len(text) <= len(weak) + len(context) + 80 + 30 * n  # the header: a count and each passage's section id
    for p in found["passages"]:
        assert text.count(p["text"]) == 1 and f"[{p['citation']}] {p['parent_id']}" in header
    return found


async def _search_both_languages(client: Client, named: bool) -> dict:
    tools = _check_tools((await client.list_tools()).tools, named)
    zh_result = await client.call_tool("search", {"question": ZH, "passages": 2})
    zh = _context_once(zh_result, tools["search"], 2)
    assert zh["question"] == ZH and zh["passages"][0]["source"] == "speaker_manual_zh.md" and zh["warnings"] == []
    assert zh["passages"][0]["heading"].endswith("恢复出厂设置") and zh["passages"][0]["unit"] == "parent"
    assert zh_result.content[0].text.startswith("2 passages, cite as [n]")
    assert "\n\n[1] speaker_manual_zh.md › " in zh_result.content[0].text
    en = _context_once(await client.call_tool("search", {"question": EN, "passages": 1}), tools["search"], 1)
    top = en["passages"][0]
    assert top["source"] == "smarthub_manual_en.md" and top["citation"] == 1 and "12 seconds" in top["text"]
    filtered = _context_once(await client.call_tool("search", {"question": EN, "passages": 2, "filter": {
        "item_name": {"$in": ["星云智能音箱 S2"]}}}), tools["search"], 2)  # the Chinese manual only
    assert {p["source"] for p in filtered["passages"]} == {"speaker_manual_zh.md"}
    # a filter value no document holds: why nothing was found, with the values to try instead
    for question, flt, told in (
            (ZH, {"item_name": "星云音箱"}, 'no document has item_name "星云音箱" (did you mean "星云智能音箱 S2"'),
            (EN, {"source": "smarthub_manual.md"},
             'no document has source "smarthub_manual.md" (did you mean "smarthub_manual_en.md"')):
        none = await client.call_tool("search", {"question": question, "filter": flt})
        jsonschema.validate(none.structured_content, tools["search"].output_schema)
        assert none.structured_content["passages"] == [] and none.structured_content["no_good_match"]
        [warning] = none.structured_content["warnings"]
        assert warning.startswith(told)
        assert none.content[0].text.split("\n") == ["No good match: no passage was found.", f"Why: {warning}"]
    unknown = await client.call_tool("search", {"question": ZH, "filter": {"colour": "red"}})
    assert unknown.is_error and "unknown filter field 'colour'" in unknown.content[0].text
    assert "item_name" in unknown.content[0].text  # the known fields, to try again with
    section = await client.call_tool("get_section", {"parent_id": top["parent_id"]})
    jsonschema.validate(section.structured_content, tools["get_section"].output_schema)
    assert section.structured_content["parent_id"] == top["parent_id"] and top["text"] in section.content[0].text
    assert section.content[0].text.startswith("smarthub_manual_en.md › ")
    docs = await client.call_tool("list_documents", {"limit": 2})
    jsonschema.validate(docs.structured_content, tools["list_documents"].output_schema)
    assert docs.structured_content["total"] == 6 and len(docs.structured_content["documents"]) == 2
    assert docs.structured_content["fields"]["item_name"] == "string"
    assert docs.content[0].text.startswith("6 documents; filter fields: doc_id (string)")
    for q, sources in (("manual", ["smarthub_manual_en.md", "speaker_manual_zh.md"]), ("说明书", ["speaker_manual_zh.md"])):
        found = await client.call_tool("list_documents", {"q": q, "sort": "source", "order": "desc"})
        assert [d["source"] for d in found.structured_content["documents"]] == sorted(sources, reverse=True)
    bad_sort = await client.call_tool("list_documents", {"sort": "colour"})
    assert bad_sort.is_error and "sort must be one of source" in bad_sort.content[0].text
    bad = await client.call_tool("search", {"question": "  "})
    assert bad.is_error and "the query is empty" in bad.content[0].text
    too_many = await client.call_tool("search", {"question": ZH, "passages": 21})
    assert too_many.is_error and "less than or equal to 20" in too_many.content[0].text
    missing = await client.call_tool("get_section", {"parent_id": "nope"})
    assert missing.is_error and "no section 'nope'" in missing.content[0].text
    # an argument the tool does not take is refused with the ones it does, not dropped (a misspelled
    # filter would otherwise search everything)
    kb = ", kb" if named else ""
    for tool, args, told in (
            ("search", {"question": EN, "filtre": {"category": "faq"}},
             f"unknown argument 'filtre' for search: it takes question, filter, passages, max_tokens{kb}; "
             "did you mean 'filter'?"),
            ("search", {"问题": ZH, "passages": 1, "过滤": {}},
             f"unknown arguments '问题', '过滤' for search: it takes question, filter, passages, max_tokens{kb}"),
            ("list_documents", {"page": 2}, "unknown argument 'page' for list_documents: it takes offset, limit, q, "
                                            f"sort, order{kb}"),
            ("get_section", {"parent_id": top["parent_id"], "text": True},
             f"unknown argument 'text' for get_section: it takes parent_id{kb}")):
        refused = await client.call_tool(tool, args)
        assert refused.is_error and refused.content[0].text == told, refused.content
    if not named:  # over stdio there is one knowledge base: no kb to name
        one = await client.call_tool("search", {"question": EN, "kb": "default"})
        assert one.is_error and "unknown argument 'kb' for search" in one.content[0].text
    return tools


def test_over_stdio(kb_copy):
    async def run() -> None:
        async with _stdio(kb_copy) as client:
            tools = await _search_both_languages(client, named=False)
            assert set(tools) == {"search", "list_documents", "get_section"}  # no ingest unless enabled
            # one knowledge base: its own metadata fields are named in the filter's description
            described = tools["search"].input_schema["properties"]["filter"]["description"]
            assert "item_name (string)" in described and "category (string)" in described
    asyncio.run(run())


def test_over_stdio_with_ingest_enabled(kb_copy, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(kb_copy, kb)

    async def run() -> None:
        async with _stdio(kb, "--allow-ingest") as client:
            _check_tools((await client.list_tools()).tools, named=False)
            added = await client.call_tool("add_documents", {"documents": [
                {"id": "mcp-zh", "text": "会议室预订需要提前一天在系统中登记。", "metadata": {"team": "admin"}}]})
            assert not added.is_error and added.structured_content["added"] == ["mcp-zh"]
            found = await client.call_tool("search", {"question": "会议室怎么预订？", "passages": 1})
            assert found.structured_content["passages"][0]["doc_id"] == "mcp-zh"
            assert found.content[0].text.endswith("\n会议室预订需要提前一天在系统中登记。")
            # a misspelled key is refused, not dropped (the metadata would be lost), and nothing is written
            typo = await client.call_tool("add_documents", {"documents": [
                {"id": "mcp-en", "text": "Meeting rooms are booked a day ahead.", "metdata": {"team": "admin"}}]})
            assert typo.is_error and typo.content[0].text == ("unknown key 'metdata' in documents[0]: a document "
                                                              "takes id, text, title, source, metadata; "
                                                              "did you mean 'metadata'?")
            extra = await client.call_tool("add_documents", {"documents": [{"id": "mcp-en", "text": "x"}], "替换": 1})
            assert extra.is_error and extra.content[0].text == ("unknown argument '替换' for add_documents: it takes "
                                                                "documents")
            listed = await client.call_tool("list_documents", {"q": "mcp"})
            assert [d["doc_id"] for d in listed.structured_content["documents"]] == ["mcp-zh"]
    asyncio.run(run())


def test_over_http_behind_the_keys(kb_copy, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(kb_copy, kb)

    async def refused(url: str, key: str | None) -> str:
        try:
            async with _http(url, key) as client:
                await client.list_tools()
        except Exception as e:  # the SDK raises the server's error inside its task groups
            error: BaseException | None = e
            while isinstance(error, BaseExceptionGroup):
                error = error.split(MCPError)[0]
                error = error.exceptions[0] if error is not None else None
            assert isinstance(error, MCPError), e
            return f"{error.code}: {error.message}"
        raise AssertionError("the server let a client in without a valid key")

    async def run(url: str) -> None:
        async with _http(url, READ_KEY) as client:
            tools = await _search_both_languages(client, named=True)
            assert "add_documents" not in tools  # a read key is offered what it may call
            named = await client.call_tool("search", {"question": EN, "passages": 1, "kb": "default"})
            assert named.structured_content["passages"][0]["source"] == "smarthub_manual_en.md"
            other = await client.call_tool("search", {"question": EN, "kb": "other"})
            assert other.is_error and "no knowledge base 'other'" in other.content[0].text
            refused_write = await client.call_tool("add_documents", {"documents": [{"id": "x", "text": "y"}]})
            assert refused_write.is_error and "needs a write key" in refused_write.content[0].text
        async with _http(url, WRITE_KEY) as client:
            assert "add_documents" in {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool("add_documents", {"documents": [
                {"id": "mcp-en", "text": "Meeting rooms are booked a day ahead in the booking system."}]})
            assert not added.is_error and added.structured_content["added"] == ["mcp-en"]
        # what the client's user reads when the key is missing or wrong (not "Server returned an error response")
        for key in (None, "wrong-key-0123456789abcdef"):
            assert await refused(url, key) == ("-32001: 401 Unauthorized: a valid API key is required: "
                                               "Authorization: Bearer <key>")

    with ServerProcess(["--kb", str(kb), "serve", "--mcp-ingest"]) as srv:
        asyncio.run(run(srv.url))
        r = httpx2.post(srv.url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        body = r.json()  # a JSON-RPC error that is also a problem, for clients of either
        assert r.status_code == 401 and r.headers["content-type"] == "application/json"
        assert r.headers["www-authenticate"] == "Bearer" and body["status"] == 401 and body["error"]["code"] == -32001
