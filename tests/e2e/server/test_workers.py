"""``ragsift serve --workers 2``: two real worker processes on one port answering queries in
Chinese and English, a write job readable from whichever worker a poll reaches, concurrent writes
sent to different workers all done (one waits for the other's lock, none fails), and a clean stop."""
from __future__ import annotations

import shutil
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from server_process import WRITE_KEY, ServerProcess, child_pids

QUESTIONS = ["恢复出厂设置要按哪些键？", "How do I factory reset the hub?"]


def _fresh(srv: ServerProcess, method: str, path: str, **kw) -> httpx.Response:
    """A request on a new connection (the kernel may hand it to either worker)."""
    with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {WRITE_KEY}"}, timeout=120) as c:
        return c.request(method, path, **kw)


@pytest.fixture(scope="module")
def two_workers(sample_kb, tmp_path_factory):
    kb = tmp_path_factory.mktemp("workers") / "kb"
    shutil.copytree(sample_kb.path, kb)
    srv = ServerProcess(["--kb", str(kb), "serve", "--no-mcp", "--workers", "2"]).start()
    yield srv
    srv.stop()


def test_two_workers_answer_queries_in_both_languages(two_workers):
    assert len(child_pids(two_workers.proc.pid)) == 2
    for i in range(12):
        r = _fresh(two_workers, "POST", "/v1/query", json={"question": QUESTIONS[i % 2]})
        assert r.status_code == 200, r.text
        assert r.json()["passages"][0]["heading_path"][-1] in ("恢复出厂设置", "Factory reset")


def test_a_job_is_read_from_any_worker_and_writes_from_both_are_done(two_workers):
    docs = [[{"id": f"w{i}-zh", "text": f"第{i}号仓库的钥匙挂在门卫室的蓝色柜子里。"},
             {"id": f"w{i}-en", "text": f"The key of warehouse {i} hangs in the blue cabinet of the guard room."}]
            for i in range(4)]
    ids: list[str] = []
    lock = threading.Lock()

    def send(batch):
        r = _fresh(two_workers, "POST", "/v1/documents", json={"documents": batch})
        assert r.status_code == 202, r.text
        with lock:
            ids.append(r.json()["id"])
    threads = [threading.Thread(target=send, args=(b,)) for b in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 300
    states: dict[str, dict] = {}
    while time.monotonic() < deadline:
        for job_id in ids:  # every poll on a new connection: either worker answers for every job
            r = _fresh(two_workers, "GET", f"/v1/jobs/{job_id}")
            assert r.status_code == 200, r.text
            states[job_id] = r.json()
        if all(s["state"] in ("done", "failed") for s in states.values()):
            break
        time.sleep(0.5)
    assert {s["state"] for s in states.values()} == {"done"}, [s["error"] for s in states.values()]
    listed = {j["id"] for j in _fresh(two_workers, "GET", "/v1/jobs").json()["jobs"]}
    assert set(ids) <= listed
    for i in range(6):  # every worker moved to the new generation
        q = "第2号仓库的钥匙在哪里？" if i % 2 == 0 else "Where is the key of warehouse 2?"
        r = _fresh(two_workers, "POST", "/v1/query", json={"question": q, "max_passages": 2})
        assert r.json()["passages"][0]["doc_id"] in ("w2-zh", "w2-en"), r.json()["passages"][0]


def test_sigterm_stops_every_worker(sample_kb, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(sample_kb.path, kb)
    srv = ServerProcess(["--kb", str(kb), "serve", "--no-mcp", "--workers", "2"]).start()
    workers = child_pids(srv.proc.pid)
    assert len(workers) == 2
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(60) == 0
    assert not [p for p in workers if Path(f"/proc/{p}").exists() and "Z" not in
                Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]]
