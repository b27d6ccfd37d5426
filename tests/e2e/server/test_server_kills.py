"""Jobs survive a restart of a real ``ragsift serve`` process killed with SIGKILL while writing
Chinese and English documents: after a restart on the same knowledge bases each job answers its
true state, checkpoints included, and a job that had finished still answers done with its report;
and one worker of two killed mid-job: its replacement fails that job, the other runs on. The job
queue alone is tests/server/test_jobs_restart.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

from conftest import write_files
from server_process import WRITE_KEY, ServerProcess, child_pids, problem, wait_job

from ragsift.kb import KnowledgeBase


def _docs(prefix: str, n: int, sentences: int) -> list[dict]:
    out = []
    for i in range(n):
        if i % 2:
            text = "".join(f"第{i}号设备的第{j}项功能需要按照说明书的步骤逐一检查，并记录每次维护的结果。"
                           for j in range(sentences))
            out.append({"id": f"{prefix}-zh-{i}", "text": text, "title": f"设备{i}维护记录"})
        else:
            text = " ".join(f"Device {i} feature {j} is checked step by step as the manual says, and each service "
                            "is written down." for j in range(sentences))
            out.append({"id": f"{prefix}-en-{i}", "text": text, "title": f"Device {i} service log"})
    return out


def _job(c, job: dict) -> dict:
    r = c.get(f"/v1/kbs/{job['kb']}/jobs/{job['id']}")
    assert r.status_code == 200, r.text
    return r.json()


def _until(c, job: dict, ok, timeout: float = 300) -> dict:
    t = time.monotonic()
    while True:
        now = _job(c, job)
        if ok(now):
            return now
        assert now["state"] in ("queued", "running") and time.monotonic() - t < timeout, now
        time.sleep(0.05)


def test_a_killed_server_answers_every_job_it_accepted_after_a_restart(sample_kb, tmp_path):
    root = tmp_path / "kbs"
    shutil.copytree(sample_kb.path, root / "main")
    every = 40  # the "ckpt" knowledge base commits its ingests every 40 documents
    KnowledgeBase.open(root / "ckpt", checkpoint_documents=every).close()
    args = ["serve", "--kb-root", str(root), "--default-kb", "main", "--no-mcp"]
    srv = ServerProcess(args).start()
    try:
        with srv.client(WRITE_KEY) as c:
            # finished before the kill: answers done with its report after it
            r = c.post("/v1/kbs/main/documents", json={"documents": [
                {"id": "tea-zh", "text": "绿茶应密封冷藏保存，避免阳光直射和受潮。", "title": "绿茶保存"},
                {"id": "tea-en", "text": "Keep green tea sealed and cold, away from sunlight and damp."}]})
            finished = wait_job(c, r.json())
            assert finished["state"] == "done" and sorted(finished["report"]["added"]) == ["tea-en", "tea-zh"]
            # running when killed: a long ingest of Chinese and English documents, one commit at its end
            slow = c.post("/v1/kbs/main/documents", json={"documents": _docs("slow", 300, 12)}).json()
            # queued behind it: an upload (its files wait in a folder) and a delete
            files = write_files(tmp_path / "up", {"咖啡手册.md": "# 咖啡\n\n## 冲泡\n\n手冲咖啡的水温应在九十到九十六摄氏度之间。\n",
                                                  "bikes.md": "# Bicycles\n\nRoad tyres take six to eight bar.\n"})
            r = c.post("/v1/kbs/main/files", files=[("files", (p.name, p.read_bytes(), "text/markdown"))
                                                    for p in sorted(files.iterdir())])
            upload = r.json()
            delete = c.delete("/v1/kbs/main/documents/tea-zh").json()
            _until(c, slow, lambda j: j["phase"] == "embedding" and j["progress"]["done"] > 0)
            assert _job(c, upload)["state"] == "queued" and _job(c, delete)["state"] == "queued"
            assert [p.name for p in (root / ".uploads" / "main").iterdir()] != []
            # a checkpointed ingest beside them, killed once a checkpoint is done and the next one's
            # documents are embedding (not in the middle of a commit: that leaves doubt, tested alone)
            part = c.post("/v1/kbs/ckpt/documents", json={"documents": _docs("part", 300, 12)}).json()
            assert part["committed"] is None and part["progress"]["commits"] == 0
            _until(c, part, lambda j: j["progress"]["commits"] >= 1 and j["phase"] == "embedding")
        srv.proc.kill()  # SIGKILL: nothing of the server runs after this
        srv.proc.wait(30)

        srv = ServerProcess(args).start()  # the same knowledge bases, a new process
        with srv.client(WRITE_KEY) as c:
            assert _job(c, finished) == finished  # as it finished, report and all
            a = _job(c, slow)
            assert a["state"] == "failed" and a["committed"] == "none", a
            assert re.fullmatch(r"the server stopped before it finished; nothing of it was committed \(the knowledge "
                                r"base is at generation \d+\): send it again", a["error"]), a["error"]
            for d in ("slow-zh-1", "slow-en-0"):
                assert c.get(f"/v1/kbs/main/documents/{d}").status_code == 404
            for queued in (upload, delete):
                a = _job(c, queued)
                assert a["state"] == "failed" and a["committed"] == "none" and "had not started" in a["error"], a
            assert c.get("/v1/kbs/main/documents/tea-zh").status_code == 200  # the delete never ran
            assert list((root / ".uploads" / "main").iterdir()) == []  # the upload's files are gone
            a = _job(c, part)
            assert a["state"] == "failed" and a["committed"] == "part", a
            n = a["progress"]["commits"]
            assert f"the {n} checkpoint(s) it committed are kept" in a["error"] and "send it again to resume" \
                in a["error"], a["error"]
            stored = c.get("/v1/kbs/ckpt/documents", params={"limit": 500}).json()
            assert stored["total"] == every * n < 300  # what the checkpoints held, nothing after them
            assert {d["doc_id"] for d in stored["documents"]} >= {"part-en-0", "part-zh-1"}
            ids = {d["doc_id"] for d in stored["documents"]}
            for question in ("设备的功能怎么检查？", "How is a device feature checked?"):  # nothing after them is found
                hits = c.post("/v1/kbs/ckpt/query", json={"question": question}).json()["passages"]
                assert hits and {h["doc_id"] for h in hits} <= ids
            # listed with their knowledge base, never through another
            assert {j["id"] for j in c.get("/v1/kbs/main/jobs").json()["jobs"]} >= \
                {finished["id"], slow["id"], upload["id"], delete["id"]}
            problem(c.get(f"/v1/kbs/ckpt/jobs/{finished['id']}"), 404, "no job")
            problem(c.get(f"/v1/kbs/main/jobs/{part['id']}"), 404, "no job")
            # the knowledge base writes on: sending the stopped ingest again resumes it
            again = wait_job(c, c.post("/v1/kbs/ckpt/documents", json={"documents": _docs("part", 300, 12)[:60]}).json())
            assert again["state"] == "done" and len(again["report"]["unchanged"]) == min(60, every * n)
        # a clean stop, and a restart: the failed jobs answer the same
        srv.stop()
        srv = ServerProcess(args).start()
        with srv.client(WRITE_KEY) as c:
            assert _job(c, slow)["committed"] == "none" and _job(c, finished)["state"] == "done"
    finally:
        srv.stop()
    owners = list((root / ".jobs" / ".owners").iterdir())
    assert len(owners) <= 1 and not [p for p in (root / ".jobs").rglob("*.tmp")], owners


def _holder(pids: list[int], path: Path) -> int:
    """The process that holds ``path`` open."""
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == str(path):
                    return pid
            except OSError:
                continue
    raise AssertionError(f"no process holds {path}")


def test_a_worker_killed_mid_job_leaves_it_failed_and_the_other_worker_untouched(sample_kb, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(sample_kb.path, kb)
    with ServerProcess(["--kb", str(kb), "serve", "--no-mcp", "--workers", "2"]) as srv, \
            srv.client(WRITE_KEY) as c:
        workers = child_pids(srv.proc.pid)
        assert len(workers) == 2
        slow = c.post("/v1/documents", json={"documents": _docs("slow", 300, 12)}).json()
        _until(c, slow, lambda j: j["phase"] == "embedding" and j["progress"]["done"] > 0)
        owner = json.loads((kb / ".jobs" / "default" / f"{slow['id']}.json").read_text())["owner"]
        victim = _holder(workers, kb / ".jobs" / ".owners" / owner)
        os.kill(victim, signal.SIGKILL)
        t = time.monotonic()
        while True:  # the other worker answers at once; the dead one's replacement fails the job when it starts
            with srv.client(WRITE_KEY) as fresh:
                a = _job(fresh, slow)
            if a["state"] != "running":
                break
            assert time.monotonic() - t < 180, a
            time.sleep(0.5)
        assert a["state"] == "failed" and a["committed"] == "none", a
        assert "nothing of it was committed" in a["error"]
        survivors = child_pids(srv.proc.pid)
        assert len(survivors) == 2 and [p for p in workers if p != victim][0] in survivors
        # the server writes and answers on, in both languages
        for i in range(2):  # on new connections: either worker
            with srv.client(WRITE_KEY) as fresh:
                job = fresh.post("/v1/documents", json={"documents": [
                    {"id": f"after-zh-{i}", "text": f"第{i}次重启后写入的文档：备用钥匙放在前台抽屉里。"},
                    {"id": f"after-en-{i}", "text": f"Written after restart {i}: the spare key is in the front desk drawer."}]}).json()
                assert wait_job(fresh, job)["state"] == "done"
        for q in ("备用钥匙放在哪里？", "Where is the spare key?"):
            with srv.client(WRITE_KEY) as fresh:
                hits = fresh.post("/v1/query", json={"question": q, "max_passages": 2}).json()["passages"]
            assert hits[0]["doc_id"].startswith("after-"), hits[0]
        assert c.get("/v1/documents/slow-zh-1").status_code == 404
