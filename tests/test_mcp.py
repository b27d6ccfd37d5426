"""The MCP server with the official SDK's own client: over stdio (``ragsift mcp``) and over
streamable HTTP (mounted by ``ragsift serve`` at /mcp, behind the same keys), in Chinese and
English; the ingest tool only when enabled, and over HTTP only with a write key."""
from __future__ import annotations

import asyncio
import os
import shutil
import sys

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from server_process import READ_KEY, WRITE_KEY, ServerProcess

pytestmark = pytest.mark.slow  # real MCP server processes


@pytest.fixture(scope="module")
def kb_copy(sample_kb, tmp_path_factory):
    path = tmp_path_factory.mktemp("mcp") / "kb"
    shutil.copytree(sample_kb.path, path)
    return path


def _stdio(kb, *extra: str) -> Client:
    env = {k: v for k, v in os.environ.items() if k.startswith(("RAGSIFT_", "HF_", "TRANSFORMERS_", "PATH", "HOME"))}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "ragsift.cli", "--kb", str(kb), "mcp", *extra],
                                        env=env), read_timeout_seconds=300)


def _http(url: str, key: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=300)
    return Client(streamable_http_client(url + "/mcp/", http_client=http), read_timeout_seconds=300)


async def _search_both_languages(client: Client) -> dict:
    tools = {t.name for t in (await client.list_tools()).tools}
    zh = await client.call_tool("search", {"question": "恢复出厂设置要按哪些键？", "passages": 2})
    assert not zh.is_error, zh.content
    zh = zh.structured_content
    assert len(zh["passages"]) == 2 and zh["passages"][0]["source"] == "speaker_manual_zh.md"
    assert zh["passages"][0]["heading"].endswith("恢复出厂设置") and zh["context"].startswith("[1] speaker_manual_zh.md ›")
    en = (await client.call_tool("search", {"question": "How long do I hold the reset button to wipe the hub?",
                                            "passages": 1})).structured_content
    top = en["passages"][0]
    assert top["source"] == "smarthub_manual_en.md" and top["citation"] == 1
    section = (await client.call_tool("get_section", {"parent_id": top["parent_id"]})).structured_content
    assert section["parent_id"] == top["parent_id"] and top["text"] in section["text"]
    docs = (await client.call_tool("list_documents", {"limit": 2})).structured_content
    assert docs["total"] == 6 and len(docs["documents"]) == 2
    bad = await client.call_tool("search", {"question": "  "})
    assert bad.is_error and "the query is empty" in bad.content[0].text
    missing = await client.call_tool("get_section", {"parent_id": "nope"})
    assert missing.is_error and "no section 'nope'" in missing.content[0].text
    return {"tools": tools}


def test_over_stdio(kb_copy):
    async def run() -> None:
        async with _stdio(kb_copy) as client:
            r = await _search_both_languages(client)
            assert r["tools"] == {"search", "list_documents", "get_section"}  # no ingest unless enabled
    asyncio.run(run())


def test_over_stdio_with_ingest_enabled(kb_copy, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(kb_copy, kb)

    async def run() -> None:
        async with _stdio(kb, "--allow-ingest") as client:
            added = await client.call_tool("add_documents", {"documents": [
                {"id": "mcp-zh", "text": "会议室预订需要提前一天在系统中登记。", "metadata": {"team": "admin"}}]})
            assert not added.is_error and added.structured_content["added"] == ["mcp-zh"]
            found = (await client.call_tool("search", {"question": "会议室怎么预订？", "passages": 1})).structured_content
            assert found["passages"][0]["doc_id"] == "mcp-zh"
    asyncio.run(run())


def test_over_http_behind_the_keys(kb_copy, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(kb_copy, kb)

    async def run(url: str) -> None:
        async with _http(url, READ_KEY) as client:
            r = await _search_both_languages(client)
            assert "add_documents" in r["tools"]
            refused = await client.call_tool("add_documents", {"documents": [{"id": "x", "text": "y"}]})
            assert refused.is_error and "needs a write key" in refused.content[0].text
        async with _http(url, WRITE_KEY) as client:
            added = await client.call_tool("add_documents", {"documents": [
                {"id": "mcp-en", "text": "Meeting rooms are booked a day ahead in the booking system."}]})
            assert not added.is_error and added.structured_content["added"] == ["mcp-en"]
        with pytest.raises(Exception):  # noqa: B017 - the SDK raises its transport's error, of its own type
            async with _http(url, "wrong-key-0123456789abcdef") as client:
                await client.list_tools()

    with ServerProcess(["--kb", str(kb), "serve", "--mcp-ingest"]) as srv:
        asyncio.run(run(srv.url))
