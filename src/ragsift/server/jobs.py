"""Write jobs: an upload, a batch of documents or a delete becomes a job with an id, run by the
one writer thread of its knowledge base. Jobs of one knowledge base queue (at most
``max_queued`` waiting: past that ``submit`` raises ``Busy``); queries never wait for them,
and no request thread waits on the write lock. A job's progress and result are readable while
it runs, through its own knowledge base only.

With several worker processes (``ragsift serve --workers N``) each worker runs the jobs it was
sent, and writes each job's state to a folder the workers share (``shared_dir``, made by the
supervisor, readable by this user only): any worker answers for any job, whichever took it. The
knowledge base's write lock orders the writers of different workers."""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ragsift.errors import Busy, RagsiftError, StorageFull, WriterBusy

KEEP_JOBS = 200  # finished jobs remembered
PUBLISH_EVERY_S = 0.5  # a running job's progress reaches the other workers at most this often
JOB_ID_RE = re.compile(r"^[0-9a-f]{32}$")
WRITER_WAIT_POLL_S = 1.0  # with workers: how often a job tries again for a lock another worker holds


class JobKind(StrEnum):
    FILES = "files"  # an upload
    DOCUMENTS = "documents"  # documents sent as JSON
    DELETE = "delete"  # documents deleted
    SYNC = "sync"  # the operator's folder mirrored


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass
class Job:
    id: str
    kb: str
    kind: JobKind
    items: int  # files, documents or ids sent
    state: JobState = JobState.QUEUED
    # queued | loading | embedding | committing | deleting | waiting (another worker writes) | done | failed
    phase: str = "queued"
    done: int = 0  # chunks embedded so far
    total: int | None = 0  # chunks to embed (known once loading ends; None for a checkpointed ingest, which streams)
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    report: dict[str, Any] | None = None  # an ingest's report, or a delete's {"deleted", "generation"}
    error: str | None = None
    error_kind: str | None = None  # the error's class (StorageFull, StoreError, ...) when failed

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Job:
        """A job as another worker wrote it (``to_dict`` and its error kind)."""
        progress = d.get("progress") or {}
        return cls(d["id"], d["kb"], JobKind(d["kind"]), int(d["items"]), JobState(d["state"]), d["phase"],
                   int(progress.get("done") or 0), progress.get("total"), d["created_at"], d.get("started_at"),
                   d.get("finished_at"), d.get("report"), d.get("error"), d.get("error_kind"))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kb": self.kb, "kind": self.kind.value, "items": self.items,
                "state": self.state.value, "phase": self.phase, "progress": {"done": self.done, "total": self.total},
                "created_at": self.created_at, "started_at": self.started_at, "finished_at": self.finished_at,
                "report": self.report, "error": self.error}

    @property
    def finished(self) -> bool:
        return self.state in (JobState.DONE, JobState.FAILED)


class _Progress:
    """What KnowledgeBase.ingest reports progress to, for one job."""

    def __init__(self, job: Job, publish: Callable[[Job, bool], None]) -> None:
        self.job, self.publish = job, publish

    def __call__(self, total: int | None, desc: str) -> _Progress:
        self.job.total, self.job.phase = total, "embedding"
        self.publish(self.job, True)
        return self

    def update(self, n: int) -> None:
        self.job.done += n
        self.publish(self.job, False)

    def close(self) -> None:
        self.job.phase = "committing"
        self.publish(self.job, True)


#: a job's work: given a progress factory, returns an IngestReport (``to_dict``) or a mapping
Run = Callable[[Callable[[int | None, str], Any]], Any]


class JobQueue:
    def __init__(self, on_finish: Callable[[Job], None] | None = None, max_queued: int = 64,
                 shared_dir: Path | None = None) -> None:
        self.shared_dir = shared_dir
        self._published: dict[str, float] = {}
        self._jobs: dict[str, Job] = {}
        self._queues: dict[str, queue.Queue] = {}
        self._lock = threading.Lock()
        self._on_finish = on_finish
        self._stop = threading.Event()
        self.max_queued = max_queued

    def submit(self, kb: str, kind: JobKind, items: int, run: Run, cleanup: Path | None = None) -> Job:
        """Queue a write on ``kb``'s writer; ``Busy`` when ``max_queued`` jobs already wait."""
        with self._lock:
            waiting = sum(1 for j in self._jobs.values() if j.kb == kb and j.state is JobState.QUEUED)
            if waiting >= self.max_queued:
                raise Busy(f"{waiting} writes already wait for knowledge base {kb!r}; try again when some have "
                           "finished", retry_after=5.0)
            job = Job(uuid.uuid4().hex, kb, kind, items)
            self._jobs[job.id] = job
            self._forget_old()
        self._publish(job, True)
        with self._lock:
            q = self._queues.get(kb)
            if q is None:
                q = self._queues[kb] = queue.Queue()
                threading.Thread(target=self._worker, args=(q,), name=f"ragsift-writer-{kb}", daemon=True).start()
        q.put((job, run, cleanup))
        return job

    def get(self, job_id: str, kb: str | None = None) -> Job | None:
        """A job by id (this worker's, or another's from the shared folder); with ``kb``, only if
        it belongs to that knowledge base."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None and self.shared_dir is not None and JOB_ID_RE.match(job_id):
            job = self._read(self.shared_dir / f"{job_id}.json")
        return job if job is not None and (kb is None or job.kb == kb) else None

    def list(self, kb: str | None = None) -> list[Job]:
        """Jobs, newest first (with workers: every worker's)."""
        with self._lock:
            jobs = list(self._jobs.values())
        if self.shared_dir is not None:
            mine = {j.id for j in jobs}
            others = [self._read(f) for f in self.shared_dir.glob("*.json") if f.stem not in mine]
            jobs += [j for j in others if j is not None]
            jobs.sort(key=lambda j: j.created_at)
        return [j for j in reversed(jobs) if kb is None or j.kb == kb]

    def _publish(self, job: Job, force: bool) -> None:
        """Write the job's state for the other workers (at most every ``PUBLISH_EVERY_S`` unless
        ``force``): a whole file replaced at once, never half written."""
        if self.shared_dir is None:
            return
        now = time.monotonic()
        if not force and now - self._published.get(job.id, 0.0) < PUBLISH_EVERY_S:
            return
        self._published[job.id] = now
        d = job.to_dict()
        d["error_kind"] = job.error_kind
        tmp = self.shared_dir / f".{job.id}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(d), encoding="utf-8")
        os.replace(tmp, self.shared_dir / f"{job.id}.json")

    @staticmethod
    def _read(path: Path) -> Job | None:
        try:
            return Job.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):  # gone, or not a job file
            return None

    def active(self) -> int:
        with self._lock:
            return sum(not j.finished for j in self._jobs.values())

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            for q in self._queues.values():
                q.put(None)

    def _run(self, job: Job, run: Run) -> Any:
        """Run a job's work. With workers, a write lock held by another worker's job is waited
        for (the job says ``waiting``), however long that write takes: the lock is taken before
        anything is written, so the work starts again from its beginning."""
        while True:
            try:
                return run(_Progress(job, self._publish))
            except WriterBusy:
                if self.shared_dir is None or self._stop.is_set():
                    raise
                job.phase, job.done = "waiting", 0
                self._publish(job, True)
                self._stop.wait(WRITER_WAIT_POLL_S)

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.finished]
        for j in done[: max(0, len(done) - KEEP_JOBS)]:
            del self._jobs[j.id]
            self._published.pop(j.id, None)
            if self.shared_dir is not None:
                (self.shared_dir / f"{j.id}.json").unlink(missing_ok=True)

    def _worker(self, q: queue.Queue) -> None:
        while not self._stop.is_set():
            item = q.get()
            if item is None:
                return
            job, run, cleanup = item
            job.state, job.started_at = JobState.RUNNING, time.time()
            job.phase = "deleting" if job.kind is JobKind.DELETE else "loading"
            self._publish(job, True)
            try:
                result = self._run(job, run)
                job.report = result.to_dict() if hasattr(result, "to_dict") else dict(result)
                job.state, job.phase = JobState.DONE, "done"
            except RagsiftError as e:
                job.error, job.error_kind = f"{type(e).__name__}: {e}", type(e).__name__
                job.state, job.phase = JobState.FAILED, "failed"
            except OSError as e:  # a full disk, an I/O error: said plainly, the server goes on
                job.error = str(StorageFull(f"no space left on the disk: {e}")) if _disk_full(e) else \
                    f"OSError: {e}"
                job.error_kind = "StorageFull" if _disk_full(e) else "OSError"
                job.state, job.phase = JobState.FAILED, "failed"
            except Exception as e:  # a bug: reported in the job, the server goes on
                job.error, job.error_kind = f"internal error: {type(e).__name__}: {e}", "internal"
                job.state, job.phase = JobState.FAILED, "failed"
                traceback.print_exc()
            finally:
                job.finished_at = time.time()
                self._publish(job, True)
                if cleanup is not None:
                    shutil.rmtree(cleanup, ignore_errors=True)
                if self._on_finish is not None:
                    self._on_finish(job)


def _disk_full(e: OSError) -> bool:
    import errno

    return e.errno in (errno.ENOSPC, errno.EDQUOT)
