"""Jobs survive a restart: the queue alone. A job is recorded before it is accepted, a process
that dies leaves its jobs to the next one, which fails each saying exactly what of it was
committed (nothing, its checkpoints, its one commit, or, during a commit, what the knowledge base
shows), never another live process's jobs; the uploads of dead jobs are removed and the records
bounded. A real ``ragsift serve`` process killed while writing is tests/e2e/server/test_server_kills.py."""
from __future__ import annotations

import json
import threading
import time

from conftest import write_files

from ragsift.server import jobs as jobs_module
from ragsift.server.jobs import Committed, Job, JobKind, JobQueue, JobRecords, JobState, interrupted


class FakeProbe:
    """A knowledge base at a generation, holding some documents."""

    def __init__(self, generation: int | None = 7, stored: set[str] | None = None) -> None:
        self.g, self.docs = generation, stored or set()

    def generation(self, kb: str) -> int | None:
        return self.g

    def stored(self, kb: str, ids: list[str]) -> set[str]:
        return self.docs & set(ids)


def _wait(predicate, timeout: float = 30) -> None:
    t = time.monotonic()
    while not predicate():
        assert time.monotonic() - t < timeout, "timed out"
        time.sleep(0.02)


def _died(q: JobQueue) -> None:
    """What a kill does to a process's jobs: its lock goes (its threads go on here, unseen)."""
    assert q.records is not None
    q.records.release()


def test_a_dead_process_leaves_each_job_answering_what_of_it_was_committed(tmp_path):
    gate = threading.Event()
    probe = FakeProbe(generation=7, stored={"doc-zh"})
    dead = JobQueue(records=JobRecords(tmp_path), probe=probe)

    def finished(progress):
        return {"added": ["faq-zh", "faq-en"], "generation": 6}

    def embedding(progress):  # running, nothing committed yet
        bar = progress(40, "embedding")
        bar.update(12)
        gate.wait()
        return {}

    def checkpoints(progress):  # a checkpointed ingest: two commits done, then the server dies
        for _ in range(2):
            progress(None, "embedding").update(8)
            progress(None, "writing").close()
        gate.wait()
        return {}

    def deleting(progress):  # a delete whose commit began (the document is gone: it landed)
        progress.commit_begins()
        gate.wait()
        return {}

    def deleting_not_landed(progress):  # its document still stored: it did not land
        progress.commit_begins()
        gate.wait()
        return {}

    def committing(progress):  # the one commit of an ingest began; the generation moved since
        progress(3, "embedding").update(3)
        progress(None, "writing")
        gate.wait()
        return {}

    done = dead.submit("main", JobKind.DOCUMENTS, 2, finished)
    _wait(lambda: dead.get(done.id).finished)
    running = dead.submit("main", JobKind.DOCUMENTS, 40, embedding)
    queued = dead.submit("main", JobKind.FILES, 2, embedding, cleanup=tmp_path / "up" / "main" / ("a" * 32))
    part = dead.submit("ckpt", JobKind.DOCUMENTS, 100, checkpoints, checkpointing=True)
    gone = dead.submit("del", JobKind.DELETE, 1, deleting, targets=["doc-en"])
    kept = dead.submit("del2", JobKind.DELETE, 1, deleting_not_landed, targets=["doc-zh"])
    doubt = dead.submit("doubt", JobKind.FILES, 1, committing)
    _wait(lambda: all(dead.get(j.id).state is JobState.RUNNING for j in (running, part, gone, kept, doubt)))
    _wait(lambda: dead.get(part.id).commits == 2 and dead.get(doubt.id).committing)
    # another process, alive, with a job of its own running: never touched
    alive = JobQueue(records=JobRecords(tmp_path), probe=probe)
    theirs = alive.submit("main", JobKind.DOCUMENTS, 1, embedding)
    _wait(lambda: alive.get(theirs.id).state is JobState.RUNNING)
    try:
        _died(dead)
        for j in dead.running():  # what the dead process's commit recorded: the generation before it
            if j.id == doubt.id:
                assert j.before == 7
        probe.g = 8  # the commit in doubt: the knowledge base moved on since it began
        fresh = JobQueue(records=JobRecords(tmp_path), probe=probe)
        recovered = {j.id: j for j in fresh.recover()}
        assert set(recovered) == {running.id, queued.id, part.id, gone.id, kept.id, doubt.id}
        got = {j.id: fresh.get(j.id, kb=j.kb) for j in (done, running, queued, part, gone, kept, doubt, theirs)}

        def answer_of(j):
            return got[j.id]
        assert answer_of(done).state is JobState.DONE and answer_of(done).report == {"added": ["faq-zh", "faq-en"],
                                                                              "generation": 6}
        assert answer_of(theirs).state is JobState.RUNNING  # a live process's job
        for j in (running, queued, part, gone, kept, doubt):
            a = answer_of(j)
            assert a.state is JobState.FAILED and a.phase == "failed" and a.error_kind == "Interrupted", a
            assert a.error.startswith("the server stopped before it finished") and a.finished_at
        assert answer_of(running).committed is Committed.NONE
        assert "nothing of it was committed (the knowledge base is at generation 8)" in answer_of(running).error
        assert answer_of(running).total == 40 and answer_of(running).phase == "failed"  # its progress as last recorded
        assert answer_of(queued).committed is Committed.NONE and "had not started" in answer_of(queued).error
        assert answer_of(part).committed is Committed.PART and answer_of(part).commits == 2
        assert "the 2 checkpoint(s) it committed are kept" in answer_of(part).error
        assert answer_of(gone).committed is Committed.ALL and "'doc-en' no longer stored" in answer_of(gone).error
        assert answer_of(kept).committed is Committed.NONE and "nothing of it was committed" in answer_of(kept).error
        assert answer_of(doubt).committed is Committed.UNKNOWN
        assert "from generation 7 to 8" in answer_of(doubt).error and "may have landed" in answer_of(doubt).error
        # the API's answer says the same
        d = answer_of(part).to_dict()
        assert d["state"] == "failed" and d["committed"] == "part" and d["progress"]["commits"] == 2
        assert "owner" not in d and "targets" not in d and "uploads" not in d
        # a job is read through its own knowledge base only, by id only
        assert fresh.get(running.id, kb="ckpt") is None and fresh.get(running.id, kb="main") is not None
        assert fresh.get("../main/" + running.id, kb="main") is None
        assert [j.id for j in fresh.list("ckpt")] == [part.id]
        assert fresh.recover() == []  # once
        assert JobQueue(records=JobRecords(tmp_path), probe=probe).recover() == []
    finally:
        gate.set()
        for q in (dead, alive):
            q.stop()


def test_what_a_stopped_job_says_in_each_case():
    def job(**kw) -> Job:
        return Job("a" * 32, "main", kw.pop("kind", JobKind.DOCUMENTS), 3, state=JobState.RUNNING,
                   started_at=1.0, **kw)

    assert interrupted(Job("b" * 32, "main", JobKind.FILES, 1), FakeProbe())[1] is Committed.NONE
    error, committed = interrupted(job(), FakeProbe(4))
    assert committed is Committed.NONE and error == ("the server stopped before it finished; nothing of it was "
                                                     "committed (the knowledge base is at generation 4): send it again")
    # a commit that began and did not land: the generation is still the one before it
    assert interrupted(job(committing=True, before=4), FakeProbe(4))[1] is Committed.NONE
    assert interrupted(job(committing=True, before=4, commits=2, checkpointing=True), FakeProbe(4))[1] \
        is Committed.PART
    # its one commit done, the server gone before it reported
    error, committed = interrupted(job(commits=1), FakeProbe(5))
    assert committed is Committed.ALL and "all of it was committed, only its report was lost" in error
    # a store whose generation cannot be read: in doubt, said so
    assert interrupted(job(committing=True, before=None), FakeProbe(None))[1] is Committed.UNKNOWN
    # a delete in doubt: another writer removed one of two documents
    assert interrupted(job(kind=JobKind.DELETE, committing=True, targets=["x", "y"]), FakeProbe(stored={"x"}))[1] \
        is Committed.UNKNOWN


def test_records_are_whole_synced_files_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(jobs_module, "KEEP_JOBS", 3)
    q = JobQueue(records=JobRecords(tmp_path))
    ids = []
    for i in range(5):
        job = q.submit("main", JobKind.DOCUMENTS, 1, lambda progress, i=i: {"added": [f"d{i}"]})
        # on the disk before submit returned: another process reads it
        assert JobRecords(tmp_path).read("main", job.id) is not None
        ids.append(job.id)
        _wait(lambda job=job: q.get(job.id).finished)
    q.stop()
    # the newest three; no temporary file left (old ones are pruned just after a job's end is recorded)
    _wait(lambda: sorted(p.name for p in (tmp_path / "main").iterdir()) == sorted(f"{i}.json" for i in ids[2:]))
    rec = json.loads((tmp_path / "main" / f"{ids[-1]}.json").read_text())
    assert rec["state"] == "done" and rec["report"] == {"added": ["d4"]} and rec["owner"] == q.records.token
    assert [p.name for p in (tmp_path / ".owners").iterdir()] == [q.records.token]


def test_uploads_of_dead_jobs_are_removed_and_live_ones_kept(tmp_path):
    uploads = tmp_path / "uploads"
    gate, theirs_gate = threading.Event(), threading.Event()
    dead = JobQueue(records=JobRecords(tmp_path / "jobs"))
    alive = JobQueue(records=JobRecords(tmp_path / "jobs"))
    folders = {name: uploads / (name * 32) for name in "abcd"}
    for f in folders.values():
        write_files(f, {"说明.md": "# 说明\n\n内容。", "notes.md": "# Notes\n\nText."})
    first = dead.submit("main", JobKind.FILES, 2, lambda p: (gate.wait(), {})[1], cleanup=folders["a"])
    dead.submit("main", JobKind.FILES, 2, lambda p: {}, cleanup=folders["b"])  # queued behind
    theirs = alive.submit("main", JobKind.FILES, 2, lambda p: (theirs_gate.wait(), {})[1], cleanup=folders["c"])
    _wait(lambda: dead.get(first.id).state is JobState.RUNNING and alive.get(theirs.id).state is JobState.RUNNING)
    # "d": a folder no job names (a crash between saving an upload and accepting it)
    try:
        _died(dead)
        fresh = JobQueue(records=JobRecords(tmp_path / "jobs"))
        assert len(fresh.recover()) == 2
        removed = fresh.sweep_uploads({"main": uploads})
        assert sorted(p.name[0] for p in removed) == ["a", "b"]  # "c" is a live job's, "d" young beside a live server
        assert sorted(p.name[0] for p in uploads.iterdir()) == ["c", "d"]
        theirs_gate.set()
        _wait(lambda: alive.get(theirs.id).finished)
        alive.stop()
        _died(alive)  # no other server now: a folder no job names goes too
        assert sorted(p.name[0] for p in fresh.sweep_uploads({"main": uploads})) == ["d"]
        assert list(uploads.iterdir()) == []
    finally:
        gate.set()
        theirs_gate.set()
        dead.stop()
