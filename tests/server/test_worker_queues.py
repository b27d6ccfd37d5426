"""The job queues of ``ragsift serve --workers 2``, without processes: a write job waits while
another worker holds the writer's lock, then runs, followed through the other worker's queue as a
poll would be; without workers a busy lock fails the job as before. The two real worker processes
are tests/e2e/server/test_workers.py."""
from __future__ import annotations

import time


def _wait_done(q, job_id: str, timeout: float = 30) -> object:
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        job = q.get(job_id)
        if job is not None and job.finished:
            return job
        time.sleep(0.05)
    raise AssertionError("job did not finish")


def test_a_job_waits_for_a_lock_another_worker_holds_then_runs(tmp_path):
    from ragsift.errors import WriterBusy
    from ragsift.server.jobs import JobKind, JobQueue, JobRecords

    # two workers' queues, recording their jobs in the one folder
    mine, other = (JobQueue(records=JobRecords(tmp_path), wait_for_writers=True) for _ in range(2))
    phases: list[str] = []
    tries = []

    def fault_injecting_run(progress):  # a fake write: the lock is busy twice, then the write happens
        tries.append(1)
        if len(tries) < 3:
            raise WriterBusy("another process is writing")
        job = progress.job
        phases.append(other.get(job.id).phase)  # the other worker read "waiting" while it waited
        progress(2, "embedding")
        progress.update(2)
        return {"deleted": ["a"], "generation": 7}
    job = mine.submit("default", JobKind.DELETE, 1, fault_injecting_run)
    done = _wait_done(other, job.id)  # followed through the other worker, as a poll would be
    assert done.state.value == "done" and done.report == {"deleted": ["a"], "generation": 7}
    assert len(tries) == 3 and phases == ["waiting"]
    assert [j.id for j in other.list("default")] == [job.id] and other.list("another") == []
    assert other.get(job.id, kb="another") is None
    assert other.get("../../etc/passwd") is None and other.get("0" * 32) is None  # ids only, no paths
    mine.stop()
    other.stop()


def test_without_workers_a_busy_lock_fails_the_job_as_before(tmp_path):
    from ragsift.errors import WriterBusy
    from ragsift.server.jobs import JobKind, JobQueue

    q = JobQueue()

    def fault_injecting_run(progress):  # a fake write whose lock is always busy
        raise WriterBusy("another process is writing to kb; waited 10 s")
    job = _wait_done(q, q.submit("default", JobKind.DELETE, 1, fault_injecting_run).id)
    assert job.state.value == "failed" and job.error_kind == "WriterBusy"
    q.stop()
