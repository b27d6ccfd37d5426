"""Write jobs: an upload, a batch of documents or a delete becomes a job with an id, run by the
one writer thread of its knowledge base. Jobs of one knowledge base queue (at most
``max_queued`` waiting: past that ``submit`` raises ``Busy``); queries never wait for them,
and no request thread waits on the write lock. A job's progress and result are readable while
it runs, through its own knowledge base only."""
from __future__ import annotations

import queue
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

from ragsift.errors import Busy, RagsiftError, StorageFull

KEEP_JOBS = 200  # finished jobs remembered


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
    phase: str = "queued"  # queued | loading | embedding | committing | deleting | done | failed
    done: int = 0  # chunks embedded so far
    total: int | None = 0  # chunks to embed (known once loading ends; None for a checkpointed ingest, which streams)
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    report: dict[str, Any] | None = None  # an ingest's report, or a delete's {"deleted", "generation"}
    error: str | None = None
    error_kind: str | None = None  # the error's class (StorageFull, StoreError, ...) when failed

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

    def __init__(self, job: Job) -> None:
        self.job = job

    def __call__(self, total: int | None, desc: str) -> _Progress:
        self.job.total, self.job.phase = total, "embedding"
        return self

    def update(self, n: int) -> None:
        self.job.done += n

    def close(self) -> None:
        self.job.phase = "committing"


#: a job's work: given a progress factory, returns an IngestReport (``to_dict``) or a mapping
Run = Callable[[Callable[[int | None, str], Any]], Any]


class JobQueue:
    def __init__(self, on_finish: Callable[[Job], None] | None = None, max_queued: int = 64) -> None:
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
            q = self._queues.get(kb)
            if q is None:
                q = self._queues[kb] = queue.Queue()
                threading.Thread(target=self._worker, args=(q,), name=f"ragsift-writer-{kb}", daemon=True).start()
        q.put((job, run, cleanup))
        return job

    def get(self, job_id: str, kb: str | None = None) -> Job | None:
        """A job by id; with ``kb``, only if it belongs to that knowledge base."""
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None and (kb is None or job.kb == kb) else None

    def list(self, kb: str | None = None) -> list[Job]:
        with self._lock:
            jobs = list(self._jobs.values())
        return [j for j in reversed(jobs) if kb is None or j.kb == kb]

    def active(self) -> int:
        with self._lock:
            return sum(not j.finished for j in self._jobs.values())

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            for q in self._queues.values():
                q.put(None)

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.finished]
        for j in done[: max(0, len(done) - KEEP_JOBS)]:
            del self._jobs[j.id]

    def _worker(self, q: queue.Queue) -> None:
        while not self._stop.is_set():
            item = q.get()
            if item is None:
                return
            job, run, cleanup = item
            job.state, job.started_at = JobState.RUNNING, time.time()
            job.phase = "deleting" if job.kind is JobKind.DELETE else "loading"
            try:
                result = run(_Progress(job))
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
                if cleanup is not None:
                    shutil.rmtree(cleanup, ignore_errors=True)
                if self._on_finish is not None:
                    self._on_finish(job)


def _disk_full(e: OSError) -> bool:
    import errno

    return e.errno in (errno.ENOSPC, errno.EDQUOT)
