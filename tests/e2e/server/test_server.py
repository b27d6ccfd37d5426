"""The HTTP API against a real `ragsift serve` process on 127.0.0.1: questions in Chinese and
English, batches, uploads and JSON documents as jobs (progress, then searchable), deletes,
every limit a 4xx problem, keys (401, read-only 403), hostile file names, metrics, the OpenAPI
schema from the settings, several knowledge bases by name, and a client that goes away."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from urllib.parse import quote

import httpx
import pytest
from conftest import write_files
from fault_llm_server import FaultInjectingLLMServer
from server_process import PROBLEM, READ_KEY, WRITE_KEY, ServerProcess, problem, wait_job

from ragsift.config import Settings
from ragsift.demo import expected_rank
from ragsift.kb import KnowledgeBase
from ragsift.server.config import ServerConfig


@pytest.fixture(scope="module")
def server(sample_kb, tmp_path_factory):
    kb = tmp_path_factory.mktemp("served") / "kb"
    shutil.copytree(sample_kb.path, kb)
    with ServerProcess(["--kb", str(kb), "serve", "--max-body-mb", "0.05", "--max-upload-mb", "0.2",
                        "--max-batch", "4", "--mcp-ingest"]) as srv:
        yield srv






@pytest.mark.parametrize("lang", ["zh", "en"])
def test_questions_in_chinese_and_english(server, questions, lang):
    qs = [q for q in questions if (q["lang"] if "lang" in q else ("zh" if any("\u4e00" <= c <= "\u9fff"
                                                                             for c in q["question"]) else "en")) == lang]
    with server.client(READ_KEY) as c:
        firsts = 0
        for q in qs:
            r = c.post("/v1/query", json={"question": q["question"]})
            assert r.status_code == 200, r.text
            body = r.json()
            assert "trace" not in body and body["generation"] >= 1 and body["timings_ms"]["total"] > 0

            class Res:  # expected_rank reads passages with attributes
                passages = [type("P", (), p) for p in body["passages"]]
            firsts += expected_rank(Res, q) == 1
        assert firsts >= len(qs) - 1  # the demo's own bar: the expected section first


def test_the_trace_when_asked_and_settings_per_query(server):
    with server.client(READ_KEY) as c:
        r = c.post("/v1/query", json={"question": "恢复出厂设置要按哪些键？", "trace": True, "unit": "child",
                                      "channels": ["bm25"], "max_passages": 2}).json()
        assert [ch["name"] for ch in r["trace"]["channels"]] == ["bm25"]
        assert len(r["passages"]) == 2 and all(p["unit"] == "child" for p in r["passages"])
        assert r["trace"]["fusion"]["note"].startswith("single channel")
        s = c.get("/v1/settings").json()
        assert s["settings"]["index"]["embedder"] == "e5-small" and "dense" in s["channels"]


@pytest.mark.parametrize("question", ["恢复出厂设置要按哪些键？", "How do I reset the hub?"])
def test_a_caller_is_offered_only_what_runs_here_and_told_who_can_change_it(server, question):
    """No language model, LanceDB: the channels and values that need a model or Milvus are not
    offered (``unavailable``, with why; left out of the query schema's choices), and a query that
    asks for one is told who can change that (the operator), never to set a setting it may not."""
    with server.client(READ_KEY) as c:
        s = c.get("/v1/settings").json()
        assert s["channels"] == ["dense", "bm25"]
        off = s["unavailable"]
        assert {"hyde", "hyde_bm25", "multi_query", "engine_hybrid", "keywords", "sparse"} <= set(off["channels"])
        assert "needs a language model" in off["channels"]["multi_query"] and "operator" in off["channels"]["hyde"]
        assert "Milvus" in off["channels"]["engine_hybrid"] and "lancedb" in off["channels"]["engine_hybrid"]
        assert set(off["strategy"]) == {"hyde", "combined"} and set(off["multihop_mode"]) == {"llm"}
        assert off["rewrite"] == {"true": off["channels"]["hyde"]} and set(off["store_fusion"]) == {"engine"}
        props = s["query_schema"]["properties"]
        assert props["channels"]["anyOf"][0]["items"]["enum"] == ["dense", "bm25"]
        enums = s["query_schema"]["$defs"]
        assert set(enums["Strategy"]["enum"]) == {"auto", "settings", "hybrid", "multihop"}
        assert enums["MultiHop"]["enum"] == ["off", "keywords"] and enums["StoreFusion"]["enum"] == ["ragsift"]
        assert props["rewrite"]["anyOf"][0] == {"type": "boolean", "const": False}
        assert "Not on this knowledge base" in props["channels"]["description"]
        for body, says in (({"channels": ["dense", "hyde"]}, "hyde needs a language model"),
                           ({"channels": ["multi_query"]}, "multi_query needs a language model"),
                           ({"rewrite": True}, "rewrite = 'true' is not available"),
                           ({"strategy": "hyde"}, "strategy = 'hyde' is not available"),
                           ({"reranker": "llm-judge"}, "reranker = 'llm-judge' is not available"),
                           ({"channels": ["engine_hybrid"]}, "needs a store that fuses in its own engine (Milvus)"),
                           ({"store_fusion": "engine"}, "this knowledge base is on lancedb")):
            told = problem(c.post("/v1/query", json={"question": question, **body}), 400, says)["detail"]
            assert "set llm_model" not in told and "store = " not in told  # nothing a caller may not set
            if "model" in says:
                assert "the server's operator can configure one" in told
            if "channels" in body:
                assert told.endswith("Channels available: dense, bm25")
        # the caller who then names the model is told whose it is, as before
        problem(c.post("/v1/query", json={"question": question, "llm_model": "local:qwen2.5-coder-1.5b"}), 400,
                "llm_model: set by the server's operator")
        # a misspelled setting: the nearest one
        problem(c.post("/v1/query", json={"question": question, "max_passage": 2}), 422,
                "max_passage: unknown field; did you mean 'max_passages'?")
        assert c.post("/v1/query", json={"question": question, "channels": ["bm25"]}).status_code == 200


def test_batches(server):
    with server.client(READ_KEY) as c:
        r = c.post("/v1/query/batch", json={"queries": [{"question": "How do I reset the hub?"},
                                                        {"question": "绿茶怎么保存？", "max_parents": 1}]})
        assert r.status_code == 200, r.text
        a, b = r.json()["results"]
        assert a["query"] == "How do I reset the hub?" and len(b["passages"]) == 1
        problem(c.post("/v1/query/batch", json={"queries": [{"question": "x"}] * 5}), 413, "at most 4 queries")
        problem(c.post("/v1/query/batch", json={"queries": [{"question": "x"}, {"question": "y", "channels": ["bm52"]}]}),
                 400, "unknown channel 'bm52'")


def test_upload_job_progress_then_searchable_then_deleted(server, tmp_path):
    docs = write_files(tmp_path / "up", {
        "咖啡手册.md": "# 咖啡\n\n## 冲泡\n\n手冲咖啡的水温应在九十到九十六摄氏度之间，研磨度接近砂糖。\n",
        "bikes.md": "# Bicycles\n\n## Tyres\n\nRoad bike tyres are inflated to six to eight bar before a long ride.\n"})
    with server.client(WRITE_KEY) as c:
        files = [("files", (p.name, p.read_bytes(), "text/markdown")) for p in sorted(docs.iterdir())]
        r = c.post("/v1/files", files=files)
        assert r.status_code == 202, r.text
        job = r.json()
        assert job["kind"] == "files" and job["items"] == 2 and job["state"] in ("queued", "running", "done")
        # the progress stream: Server-Sent Events until the job ends
        states = []
        with c.stream("GET", f"/v1/jobs/{job['id']}/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    states.append(json.loads(line[6:]))
        assert states[-1]["state"] == "done" and states[-1]["progress"]["done"] == states[-1]["progress"]["total"] > 0
        done = wait_job(c, job)
        assert sorted(done["report"]["added"]) and done["report"]["skipped"] == []
        zh = c.post("/v1/query", json={"question": "手冲咖啡水温多少度？", "max_passages": 1}).json()["passages"][0]
        assert zh["source"] == "咖啡手册.md" and "九十六" in zh["text"]
        en = c.post("/v1/query", json={"question": "What pressure for road bike tyres?", "max_passages": 1}).json()
        doc_id = en["passages"][0]["doc_id"]
        assert en["passages"][0]["source"] == "bikes.md"
        doc = c.get(f"/v1/documents/{doc_id}").json()
        assert doc["source"] == "bikes.md" and doc["sections"][0]["heading_path"] == ["Bicycles", "Tyres"]
        section = c.get(f"/v1/sections/{quote(doc['sections'][0]['parent_id'], safe='')}").json()
        assert "six to eight bar" in section["text"]
        listing = c.get("/v1/documents", params={"limit": 500}).json()
        assert any(d["source"] == "bikes.md" for d in listing["documents"]) and listing["total"] >= 8
        r = c.delete(f"/v1/documents/{doc_id}")  # a delete is a job on the writer, like an ingest
        assert r.status_code == 202 and r.json()["kind"] == "delete"
        deleted = wait_job(c, r.json())
        assert deleted["state"] == "done" and deleted["report"]["deleted"] == [doc_id]
        assert c.get(f"/v1/documents/{doc_id}").status_code == 404
        after = c.post("/v1/query", json={"question": "What pressure for road bike tyres?"}).json()["passages"]
        assert all(p["doc_id"] != doc_id for p in after)
        assert not list((server_kb(server) / ".uploads").glob("*"))  # the upload folder is gone with the job


def server_kb(srv: ServerProcess):
    """The served knowledge base's directory (the operator's: /v1/stats does not name it)."""
    from pathlib import Path

    return Path(srv.args[srv.args.index("--kb") + 1])


def test_documents_sent_as_json(server):
    with server.client(WRITE_KEY) as c:
        r = c.post("/v1/documents", json={"documents": [
            {"id": "policy-zh", "text": "员工每年有十五天带薪年假，需提前两周申请。", "title": "年假制度",
             "metadata": {"team": "hr", "year": 2025}},
            {"id": "policy-en", "text": "Employees get fifteen days of paid leave a year.", "metadata": {"team": "hr"}}]})
        job = wait_job(c, r.json())
        assert job["state"] == "done" and sorted(job["report"]["added"]) == ["policy-en", "policy-zh"]
        res = c.post("/v1/query", json={"question": "年假有几天？", "filter": {"team": "hr"}, "max_passages": 1}).json()
        assert res["passages"][0]["doc_id"] == "policy-zh" and res["passages"][0]["metadata"]["year"] == 2025
        problem(c.post("/v1/query", json={"question": "x", "filter": {"colour": "red"}}), 400, "unknown filter field")


def test_keys(server):
    with server.client(None) as c:
        for method, path in (("POST", "/v1/query"), ("GET", "/v1/documents"), ("GET", "/v1/stats"),
                             ("GET", "/metrics")):
            r = c.request(method, path, json={"question": "x"})
            problem(r, 401, "API key")
            assert r.headers["www-authenticate"] == "Bearer"
        r = c.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})  # what MCP clients show
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert "API key" in r.json()["error"]["message"] and "API key" in r.json()["detail"]
        assert c.get("/healthz").status_code == 200 and c.get("/").status_code == 200
    with server.client("wrong-key-0123456789abcdef") as c:
        problem(c.post("/v1/query", json={"question": "x"}), 401, "API key")
    with server.client(READ_KEY) as c:
        assert c.post("/v1/query", json={"question": "绿茶"}).status_code == 200
        problem(c.post("/v1/documents", json={"documents": [{"id": "x", "text": "y"}]}), 403, "read only")
        problem(c.post("/v1/files", files=[("files", ("a.md", b"# A\n\ntext\n", "text/markdown"))]), 403, "read only")
        doc_id = c.get("/v1/documents").json()["documents"][0]["doc_id"]
        problem(c.delete(f"/v1/documents/{doc_id}"), 403, "read only")
        assert c.get(f"/v1/documents/{doc_id}").status_code == 200  # nothing was deleted


def test_without_keys_the_server_binds_loopback_only(tmp_path):
    with pytest.raises(Exception, match="refusing to serve 0.0.0.0 without API keys"):
        ServerConfig(kb=tmp_path, host="0.0.0.0").check_bind()
    ServerConfig(kb=tmp_path, host="0.0.0.0", insecure=True).check_bind()
    ServerConfig(kb=tmp_path, host="0.0.0.0", keys={"k" * 16: "write"}).check_bind()
    ServerConfig(kb=tmp_path, host="::1").check_bind()
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("RAGSIFT_") or k == "RAGSIFT_CACHE_DIR"}
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", str(tmp_path / "kb"), "serve", "--host",
                        "0.0.0.0"], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 2 and "refusing to serve 0.0.0.0 without API keys" in p.stderr


def _raw_upload(name: str, data: bytes) -> tuple[bytes, dict[str, str]]:
    """A multipart body whose file name is exactly ``name`` (a client library would escape it)."""
    boundary = "ragsift-test-boundary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
            "Content-Type: text/markdown\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), {"content-type": f"multipart/form-data; boundary={boundary}"}


@pytest.mark.parametrize("name", ["../evil.md", "..", "/etc/passwd", "sub/dir.md", "..\\evil.md", ".hidden.md",
                                  "a\x01b.md", " spaced.md", "a\u202eb.md", "\u2028x.md"])
def test_hostile_file_names_are_refused(server, name):
    with server.client(WRITE_KEY) as c:
        kb_dir = server_kb(server)
        before = {p for p in kb_dir.parent.rglob("*")}
        body, headers = _raw_upload(name, b"# Evil\n\nowned\n")
        r = c.post("/v1/files", content=body, headers=headers)
        assert r.status_code == 400, (name, r.text)
        assert r.headers["content-type"].startswith(PROBLEM)
        assert {p for p in kb_dir.parent.rglob("*")} == before  # nothing written anywhere


def test_a_windows_path_keeps_only_its_file_name(server):
    """The multipart parser keeps the last part of a Windows path (as browsers once sent it)."""
    with server.client(WRITE_KEY) as c:
        r = c.post("/v1/files", files=[("files", ("C:\\Users\\x\\notes.md", b"# Notes\n\nwindows path\n", "text/markdown"))])
        job = wait_job(c, r.json())
        assert job["state"] == "done"
        doc = c.get(f"/v1/documents/{job['report']['added'][0]}").json()
        assert doc["source"] == "notes.md"
        assert wait_job(c, c.delete(f"/v1/documents/{doc['doc_id']}").json())["state"] == "done"


def test_every_limit_is_a_clear_4xx(server):
    with server.client(WRITE_KEY) as c:
        problem(c.post("/v1/query", json={"question": "x" * 5000}), 400, "limit is 4000")
        problem(c.post("/v1/query", json={"question": "   "}), 400, "the query is empty")
        problem(c.post("/v1/query", content=b"{not json", headers={"content-type": "application/json"}), 422, "")
        problem(c.post("/v1/query", json={"question": "x", "unit": "page"}), 400, "unknown unit 'page'")
        problem(c.post("/v1/query", json={"question": "x", "colour": "red"}), 422, "colour")
        problem(c.post("/v1/query", json={"question": "x", "channel_depth": 10**9}), 422, "channel_depth")
        problem(c.post("/v1/query", json={"question": "x", "embedder": "minilm"}), 400, "embedder")
        problem(c.post("/v1/query", json={"question": "x", "filter": {"a": {"b": {"c": {"d": {"e": {}}}}}}}), 400, "")
        big = {"documents": [{"id": "big", "text": "字" * 60_000}]}
        problem(c.post("/v1/documents", json=big), 413, "at most 52428 bytes")
        problem(c.post("/v1/files", files=[("files", ("big.md", b"x" * 300_000, "text/markdown"))]), 413,
                 "an upload may be at most")
        problem(c.get("/v1/documents", params={"limit": 10_000}), 413, "a page may hold at most")
        problem(c.get("/v1/jobs/nope"), 404, "no job")
        problem(c.get("/v1/documents/nope"), 404, "no document")
        problem(c.get("/v1/kbs/other/stats"), 404, "no knowledge base 'other'")


def test_metrics_and_the_openapi_schema(server):
    with server.client(READ_KEY) as c:
        c.post("/v1/query", json={"question": "绿茶怎么保存？"})
        text = c.get("/metrics").text
        assert 'ragsift_requests_total{method="POST",route="/v1/query",status="200"}' in text
        assert "ragsift_request_seconds_bucket" in text and "ragsift_active_channels 0.0" in text
        api = c.get("/openapi.json").json()
    body = api["components"]["schemas"]["QueryRequest"]["properties"]
    mine = Settings.query_model().model_json_schema()["properties"]
    assert set(mine) <= set(body) and {"question", "filter", "trace"} <= set(body)
    assert api["components"]["schemas"]["Unit"]["enum"] == ["parent", "child", "document", "window", "auto"]
    def same(d: dict) -> dict:
        return {k: v for k, v in d.items() if k != "default"}  # OpenAPI leaves out a None default
    assert same(body["channel_depth"]) == same(mine["channel_depth"])  # one definition, not written twice
    assert {"/v1/query", "/v1/kbs/{kb_name}/query", "/v1/files", "/v1/jobs/{job_id}/events"} <= set(api["paths"])


def test_a_client_that_goes_away_cancels_its_channels(sample_kb, tmp_path):
    kb_dir = tmp_path / "kb"
    shutil.copytree(sample_kb.path, kb_dir)
    with FaultInjectingLLMServer("hang") as llm:
        # the language model is the operator's: set with the knowledge base, never by a query
        KnowledgeBase.open(kb_dir).set_defaults(llm_model="openai:stub", llm_base_url=llm.url, llm_cache=False)
        with ServerProcess(["--kb", str(kb_dir), "serve", "--no-mcp"]) as srv, srv.client(READ_KEY) as c:
            body = {"question": "绿茶怎么保存？", "channels": ["dense", "hyde"], "channel_timeout_s": 120}
            with pytest.raises(httpx.ReadTimeout):
                c.post("/v1/query", json=body, timeout=4)
            t = time.monotonic()
            while time.monotonic() - t < 30:
                text = c.get("/metrics").text
                if 'ragsift_channel_errors_total{channel="hyde"}' in text and "ragsift_active_channels 0.0" in text:
                    break
                time.sleep(0.5)
            else:
                pytest.fail("the hung channel kept running after its client went away")
            assert time.monotonic() - t < 30 < 120  # long before the channel's own 120 s timeout
            # the model call itself was abandoned: its socket shut (the stub notices at its next 50 ms
            # poll, which may come after the metrics say the channel ended)
            while llm.disconnects < 1 and time.monotonic() - t < 35:
                time.sleep(0.05)
            assert llm.disconnects >= 1 and llm.requests >= 1


def test_several_knowledge_bases_by_name(tmp_path):
    with ServerProcess(["serve", "--kb-root", str(tmp_path / "kbs"), "--default-kb", "alpha", "--embedder", "minilm",
                        "--no-mcp"]) as srv, srv.client(WRITE_KEY) as c:
        assert c.get("/v1/kbs").json() == {"default": "alpha", "kbs": ["alpha"]}
        job = c.post("/v1/kbs/beta/documents", json={"documents": [
            {"id": "b1", "text": "Beta knowledge base: the launch code is blue."}]}).json()
        assert wait_job(c, job)["state"] == "done"
        assert c.get("/v1/kbs").json()["kbs"] == ["alpha", "beta"]
        r = c.post("/v1/kbs/beta/query", json={"question": "launch code"}).json()
        assert r["passages"][0]["doc_id"] == "b1"
        assert c.post("/v1/query", json={"question": "launch code"}).json()["passages"] == []  # alpha is empty
        problem(c.get("/v1/kbs/%2E%2E/stats"), 404, "bad knowledge-base name")
        problem(c.post("/v1/kbs/bad name/query", json={"question": "x"}), 404, "bad knowledge-base name")
