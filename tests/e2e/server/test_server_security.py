"""What a caller of the server can and cannot make it do (issue 26), against real ``ragsift
serve`` processes on 127.0.0.1 with keys: per-query settings that reach the network or the disk
are refused (no request leaves, no file is made), writes are jobs that never block readers, every
limit is a clear 4xx (rates 429, a full write queue 503, a full disk 507), metrics labels stay
bounded, and jobs and routes answer only for knowledge bases that exist."""
from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
import subprocess

import httpx
import pytest
from fault_llm_server import FaultInjectingLLMServer
from model_servers import RerankServer
from server_process import READ_KEY, WRITE_KEY, ServerProcess, problem, wait_job

from ragsift.config import CALLER_KEYS, OPERATOR_KEYS
from ragsift.kb import KnowledgeBase


@pytest.fixture(scope="module")
def served(sample_kb, tmp_path_factory):
    kb = tmp_path_factory.mktemp("secure") / "kb"
    shutil.copytree(sample_kb.path, kb)
    with ServerProcess(["--kb", str(kb), "serve", "--max-upload-mb", "0.2"]) as srv:
        yield srv


# ------------------------------------------------------------------ the operator's settings
OUTSIDE = {  # per-query settings that would make the server call, read or write what a caller names
    "llm_model": "openai:gpt-x", "llm_base_url": None, "llm_cache": "/tmp/ragsift-elsewhere/cache.sqlite",
    "llm_cache_max_entries": 5, "llm_cache_max_age_days": 1.0, "llm_max_retries": 9, "llm_max_concurrency": 200,
    "prompts": {"hyde.en": {"system": "s", "user": "{question:>30000000}"}},
    "rerank_base_url": None, "max_query_chars": 1_000_000, "max_filter_nodes": 100_000, "tuned_by": "me",
}


@pytest.mark.parametrize("question", ["绿茶怎么保存？", "How is green tea stored?"])
def test_a_read_key_cannot_name_what_the_server_calls(served, question, tmp_path):
    """Every operator setting named in a query is a 400 saying whose setting it is; the outside
    URL gets no request (the server's keys never travel) and no file is made."""
    with FaultInjectingLLMServer("ok") as outside, RerankServer() as rerank, served.client(READ_KEY) as c:
        values = dict(OUTSIDE, llm_base_url=outside.url, rerank_base_url=rerank.url,
                      llm_cache=str(tmp_path / "made" / "cache.sqlite"))
        assert set(values) == set(OPERATOR_KEYS)  # the table above names every operator setting
        for name, value in values.items():
            body = {"question": question, name: value, "channels": ["dense", "hyde"]}
            problem(c.post("/v1/query", json=body), 400, "set by the server's operator")
            problem(c.post("/v1/query/batch", json={"queries": [{"question": question}, body]}), 400,
                     "set by the server's operator")
        problem(c.post("/v1/query", json={"question": question, "reranker": "api:bge", "rerank_base_url": rerank.url}),
                 400, "rerank_base_url")
        problem(c.post("/v1/query", json={"question": question, "reranker": "api:bge"}), 400,
                 "other rerankers are set by the server's operator")
        problem(c.post("/v1/query", json={"question": question, "rerank": "cross-encoder:BAAI/bge-reranker-v2-m3"}),
                 400, "other rerankers")
        problem(c.post("/v1/query", json={"question": question, "embedder": "minilm"}), 400,
                 "index settings cannot change per query")
        assert c.post("/v1/query", json={"question": question, "reranker": ""}).status_code == 200
        assert outside.requests == 0 and rerank.requests == []
    assert not (tmp_path / "made").exists()


def test_the_query_schema_offers_only_how_to_search(served):
    with served.client(READ_KEY) as c:
        body = c.get("/openapi.json").json()["components"]["schemas"]["QueryRequest"]["properties"]
        settings = c.get("/v1/settings").json()
    assert not set(body) & set(OPERATOR_KEYS)
    assert set(CALLER_KEYS) <= set(body) and {"channels", "fusion", "unit", "strategy", "token_budget"} <= set(body)
    assert set(settings["operator_settings"]) == set(OPERATOR_KEYS)
    assert not set(settings["query_schema"]["properties"]) & set(OPERATOR_KEYS)


def test_the_operators_model_serves_queries_that_ask_for_it(sample_kb, tmp_path):
    """A language model the operator configured (its endpoint, its cache) is used by a caller's
    HyDE query; the caller names no endpoint."""
    kb_dir = tmp_path / "kb"
    shutil.copytree(sample_kb.path, kb_dir)
    with FaultInjectingLLMServer("ok", answer="绿茶应密封避光冷藏保存。") as llm:
        KnowledgeBase.open(kb_dir).set_defaults(llm_model="openai:stub", llm_base_url=llm.url, llm_cache=False,
                                                rerank_base_url="http://ops:s3cret@127.0.0.1:9/v1?token=t0ken")
        with ServerProcess(["--kb", str(kb_dir), "serve", "--no-mcp"]) as srv, srv.client(READ_KEY) as c:
            offered = c.get("/v1/settings").json()  # with the operator's model, what needs one is offered
            assert {"hyde", "hyde_bm25", "multi_query"} <= set(offered["channels"])
            assert "hyde" not in offered["unavailable"].get("channels", {}) and "strategy" not in offered["unavailable"]
            shown = c.get("/v1/settings").text + c.get("/v1/stats").text
            assert "s3cret" not in shown and "t0ken" not in shown and "http://***@127.0.0.1:9/v1" in shown
            r = c.post("/v1/query", json={"question": "绿茶怎么保存？", "channels": ["dense", "bm25", "hyde"],
                                         "trace": True})
            assert r.status_code == 200, r.text
            hyde = next(ch for ch in r.json()["trace"]["channels"] if ch["name"] == "hyde")
            assert hyde["error"] is None and hyde["hits"]
            assert llm.requests >= 1
            # the judge on the operator's model is a way to search a caller may ask for
            r = c.post("/v1/query", json={"question": "How is green tea stored?", "reranker": "llm-judge",
                                         "rerank_top_n": 2})
            assert r.status_code == 200, r.text


# ------------------------------------------------------------------ writes are jobs; readers never wait
def _docs(n: int, prefix: str, words: int = 120) -> list[dict]:
    out = []
    for i in range(n):
        if i % 2:
            text = "".join(f"第{i}号设备的第{j}条说明：按住电源键五秒可以重启。" for j in range(words // 12))
        else:
            text = " ".join(f"Device {i} note {j}: hold the power key for five seconds to restart." for j in range(words // 12))
        out.append({"id": f"{prefix}{i}", "text": text, "title": f"{prefix} {i}"})
    return out


def test_deletes_queue_as_jobs_and_queries_answer_while_an_ingest_runs(tmp_path):
    with ServerProcess(["serve", "--kb-root", str(tmp_path / "kbs"), "--default-kb", "w", "--embedder", "minilm",
                        "--no-mcp", "--max-queued-jobs", "80", "--rate-limit", "1000", "--rate-burst", "1000",
                        "--max-inflight", "100"]) as srv, srv.client(WRITE_KEY) as c:
        first = c.post("/v1/documents", json={"documents": _docs(50, "old-")}).json()
        assert wait_job(c, first)["state"] == "done"
        big = c.post("/v1/documents", json={"documents": _docs(250, "new-", words=240)}).json()
        assert big["state"] in ("queued", "running")

        def delete(i: int) -> httpx.Response:
            with srv.client(WRITE_KEY) as own:
                return own.delete(f"/v1/documents/old-{i}")
        with cf.ThreadPoolExecutor(50) as pool:
            deletes = list(pool.map(delete, range(50)))
        assert [r.status_code for r in deletes] == [202] * 50, [r.text for r in deletes if r.status_code != 202][:2]
        assert {r.json()["kind"] for r in deletes} == {"delete"}
        # a reader is answered while the ingest runs and the deletes wait behind it
        with srv.client(READ_KEY) as r:
            assert r.get("/healthz").json() == {"status": "ok"}
            q = r.post("/v1/query", json={"question": "怎么重启设备？"})
            assert q.status_code == 200 and q.json()["passages"]
            assert c.get(f"/v1/jobs/{big['id']}").json()["state"] in ("queued", "running")  # still writing
        assert wait_job(c, big, timeout=900)["state"] == "done"
        done = [wait_job(c, d.json()) for d in deletes]
        assert {d["state"] for d in done} == {"done"}
        assert sorted(x for d in done for x in d["report"]["deleted"]) == sorted(f"old-{i}" for i in range(50))
        listing = c.get("/v1/documents", params={"limit": 500}).json()
        assert listing["total"] == 250 and not any(d["doc_id"].startswith("old-") for d in listing["documents"])
        problem(c.delete("/v1/documents/old-1"), 404, "no document")


def test_a_full_write_queue_is_a_503_with_retry_after(tmp_path):
    with ServerProcess(["serve", "--kb-root", str(tmp_path / "kbs"), "--default-kb", "q", "--embedder", "minilm",
                        "--no-mcp", "--max-queued-jobs", "2"]) as srv, srv.client(WRITE_KEY) as c:
        statuses = []
        for i in range(6):
            r = c.post("/v1/documents", json={"documents": _docs(40, f"b{i}-", words=240)})
            statuses.append(r.status_code)
            if r.status_code == 503:
                body = problem(r, 503, "writes already wait")
                assert int(r.headers["Retry-After"]) >= 1 and body["title"] == "Busy"
        assert statuses[:2] == [202, 202] and 503 in statuses


def test_a_callers_rate_and_concurrency_are_bounded(tmp_path):
    keys = tmp_path / "keys"
    keys.write_text(f"{WRITE_KEY} write\n{READ_KEY} read\nsecond-reader-0123456789 read\n", encoding="utf-8")
    with ServerProcess(["serve", "--kb-root", str(tmp_path / "kbs"), "--default-kb", "r", "--embedder", "minilm",
                        "--no-mcp", "--keys-file", str(keys), "--rate-limit", "0.5", "--rate-burst", "3"],
                       keys=False) as srv:
        with srv.client(READ_KEY) as c:
            codes = [c.get("/v1/stats").status_code for _ in range(5)]
            assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
            r = c.get("/v1/stats")
            problem(r, 429, "requests a second")
            assert int(r.headers["Retry-After"]) >= 1
            assert c.get("/healthz").status_code == 200  # liveness is never limited
        with srv.client("second-reader-0123456789") as other:  # another key has its own budget
            assert other.get("/v1/stats").status_code == 200


# ------------------------------------------------------------------ metrics, routes, jobs, bodies
def test_made_up_methods_do_not_grow_the_metrics(served):
    with served.client(None) as anon, served.client(READ_KEY) as reader:
        before = len(reader.get("/metrics").text)
        for i in range(300):  # without a key: each a 401, each counted
            anon.request(f"BREW{i}", "/v1/query")
            anon.request(f"X{i}", f"/nowhere/{i}")
        text = reader.get("/metrics").text
    assert len(text) - before < 4000, len(text) - before
    assert 'method="other"' in text and "BREW" not in text and "nowhere" not in text


def test_routes_and_jobs_answer_only_for_their_knowledge_base(tmp_path):
    with ServerProcess(["serve", "--kb-root", str(tmp_path / "kbs"), "--default-kb", "alpha", "--embedder", "minilm",
                        "--no-mcp", "--max-upload-mb", "0.1"]) as srv, srv.client(WRITE_KEY) as c:
        job = c.post("/v1/documents", json={"documents": [{"id": "a1", "text": "Alpha holds the red key. 红色钥匙。"}]})
        job = wait_job(c, job.json())
        assert job["state"] == "done"
        for path in ("jobs", "stats", "settings", "documents", f"jobs/{job['id']}", "documents/a1"):
            problem(c.get(f"/v1/kbs/nothing/{path}"), 404, "no knowledge base 'nothing'")
        problem(c.post("/v1/kbs/nothing/query", json={"question": "red key"}), 404, "no knowledge base")
        assert c.get(f"/v1/kbs/alpha/jobs/{job['id']}").status_code == 200
        # another knowledge base's jobs are not visible through this one
        beta = wait_job(c, c.post("/v1/kbs/beta/documents", json={"documents": [{"id": "b1", "text": "Beta. 乙。"}]}).json())
        problem(c.get(f"/v1/kbs/alpha/jobs/{beta['id']}"), 404, "no job")
        assert [j["id"] for j in c.get("/v1/kbs/beta/jobs").json()["jobs"]] == [beta["id"]]
        # a refused upload to a new name creates nothing
        files = [("files", ("big.md", b"x" * 200_000, "text/markdown"))]
        problem(c.post("/v1/kbs/gamma/files", files=files), 413, "an upload may be at most")
        problem(c.post("/v1/kbs/gamma/files", files=[("files", ("../evil.md", b"# x\n", "text/markdown"))]), 400,
                 "refused file name")
        assert not (tmp_path / "kbs" / "gamma").exists() and c.get("/v1/kbs").json()["kbs"] == ["alpha", "beta"]


def test_bodies_ids_and_keys_checked_in_the_right_order(served):
    with served.client(READ_KEY) as r:
        # a read key is refused before its body is read: 403, not 422
        problem(r.post("/v1/documents", content=b"{not json", headers={"content-type": "application/json"}), 403,
                 "read only")
        problem(r.delete("/v1/documents/anything"), 403, "read only")
    with served.client(WRITE_KEY) as w:
        for bad in ("a\x00b", "line\nbreak", "tab\there"):
            problem(w.post("/v1/documents", json={"documents": [{"id": bad, "text": "x"}]}), 422, "control characters")
        # a chunked upload past the limit is 413, like one that declares its length
        def chunks():  # a well-formed multipart body, sent chunked (no Content-Length)
            yield (b'--zz\r\nContent-Disposition: form-data; name="files"; filename="big.md"\r\n'
                   b"Content-Type: text/markdown\r\n\r\n")
            for _ in range(40):
                yield b"y" * 10_000
            yield b"\r\n--zz--\r\n"
        r = w.post("/v1/files", content=chunks(), headers={"content-type": "multipart/form-data; boundary=zz"})
        problem(r, 413, "an upload may be at most")
        r = w.post("/v1/query", content=b"{\"question\": ", headers={"content-type": "application/json"})
        body = problem(r, 422, "not valid JSON")
        assert "send a JSON object" in body["detail"]


def test_ids_with_control_characters_are_skipped_in_python(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    report = kb.add_documents([{"id": "ok", "text": "Fine text. 正常文本。"}, {"id": "n\x00l", "text": "x"}])
    assert report.added == ["ok"] and "control character" in report.skipped[0].reason


def test_a_full_disk_is_a_507(tmp_path):
    """An upload onto a full disk: a tmpfs of 4 MB holds the knowledge bases (needs root, as CI runs)."""
    if os.geteuid() != 0:
        pytest.fail("this test mounts a small tmpfs and needs root (CI runs as root)")
    root = tmp_path / "small"
    root.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root)], check=True)
    try:
        with ServerProcess(["serve", "--kb-root", str(root), "--default-kb", "full", "--embedder", "minilm",
                            "--no-mcp", "--max-upload-mb", "20"]) as srv, srv.client(WRITE_KEY) as c:
            free = shutil.disk_usage(root).free
            r = c.post("/v1/files", files=[("files", ("big.txt", b"z" * (free + 1_000_000), "text/plain"))])
            problem(r, 507, "disk is full")
            assert not any((root / ".uploads").rglob("*.txt"))  # nothing half-written is left
            assert c.get("/healthz").status_code == 200 and c.get("/v1/stats").status_code == 200
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


def test_mcp_offers_no_setting_of_the_operator(served):
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def tools() -> list:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {READ_KEY}"}, timeout=300)
        async with Client(streamable_http_client(served.url + "/mcp/", http_client=http),
                          read_timeout_seconds=300) as client:
            return (await client.list_tools()).tools
    found = asyncio.run(tools())
    assert {t.name for t in found} >= {"search"}
    for t in found:
        assert not set(t.input_schema.get("properties", {})) & set(OPERATOR_KEYS), t.name


# ------------------------------------------------------------------ a write that once froze the server
def test_one_write_of_long_runs_never_stalls_the_server(served):
    """A 200 KB document of long runs (spaces without a newline, dots, single Chinese characters),
    sent with a write key, once held the interpreter for minutes in text normalization (a
    quadratic regular expression): /healthz and every query timed out. Now the server answers
    at once while the job runs, and the document is found after."""
    # each run ends in a letter: the regular expressions failed only after scanning it, from every
    # start, inside C, holding the interpreter's lock
    text = ("重置说明 reset notes " + " " * 120_000 + "x " + "." * 40_000 + "y " + "设" * 20_000
            + " 按住复位键十秒 hold the reset button")
    with served.client(WRITE_KEY) as c, served.client(READ_KEY, timeout=10) as fast:
        job = c.post("/v1/documents", json={"documents": [{"id": "runs", "title": "长串 runs", "text": text}]}).json()
        for q in ("绿茶怎么保存？", "How is green tea stored?"):
            assert fast.get("/healthz").status_code == 200  # within 10 s, while the write runs
            assert fast.post("/v1/query", json={"question": q, "max_passages": 1}).json()["passages"]
        done = wait_job(c, job, timeout=600)
        assert done["state"] == "done" and done["report"]["added"] == ["runs"], done
        hit = fast.post("/v1/query", json={"question": "按住复位键十秒", "filter": {"doc_id": "runs"}}).json()
        assert hit["passages"] and hit["passages"][0]["doc_id"] == "runs"
        assert wait_job(c, c.delete("/v1/documents/runs").json())["state"] == "done"
