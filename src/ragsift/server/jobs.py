"""Ingest jobs: an upload or a batch of documents becomes a job with an id, run by the one
writer thread of its knowledge base (jobs of one knowledge base queue; queries never wait for
them), its progress and report readable while it runs."""
from __future__ import annotations

import queue
import shutil
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ragsift.errors import RagsiftError
from ragsift.types import IngestReport

KEEP_JOBS = 200  # finished jobs remembered


@dataclass
class Job:
    id: str
    kb: str
    kind: str  # files | documents
    items: int  # files or documents sent
    state: str = "queued"  # queued | running | done | failed
    phase: str = "queued"  # queued | loading | embedding | committing | done | failed
    done: int = 0  # chunks embedded so far
    total: int | None = 0  # chunks to embed (known once loading ends; None for a checkpointed ingest, which streams)
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    report: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kb": self.kb, "kind": self.kind, "items": self.items, "state": self.state,
                "phase": self.phase, "progress": {"done": self.done, "total": self.total},
                "created_at": self.created_at, "started_at": self.started_at, "finished_at": self.finished_at,
                "report": self.report, "error": self.error}

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")


class _Progress:
    """What KnowledgeBase.ingest reports progress to, for one job."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def __call__(self, total: int, desc: str) -> "_Progress":
        self.job.total, self.job.phase = total, "embedding"
        return self

    def update(self, n: int) -> None:
        self.job.done += n

    def close(self) -> None:
        self.job.phase = "committing"


Run = Callable[[Callable[[int, str], Any]], IngestReport]


class JobQueue:
    def __init__(self, on_finish: Callable[[Job], None] | None = None) -> None:
        self._jobs: dict[str, Job] = {}
        self._queues: dict[str, queue.Queue] = {}
        self._lock = threading.Lock()
        self._on_finish = on_finish
        self._stop = threading.Event()

    def submit(self, kb: str, kind: str, items: int, run: Run, cleanup: Path | None = None) -> Job:
        job = Job(uuid.uuid4().hex, kb, kind, items)
        with self._lock:
            self._jobs[job.id] = job
            self._forget_old()
            q = self._queues.get(kb)
            if q is None:
                q = self._queues[kb] = queue.Queue()
                threading.Thread(target=self._worker, args=(q,), name=f"ragsift-ingest-{kb}", daemon=True).start()
        q.put((job, run, cleanup))
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

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
            job.state, job.phase, job.started_at = "running", "loading", time.time()
            try:
                report = run(_Progress(job))
                job.report = report.to_dict()
                job.state = job.phase = "done"
            except RagsiftError as e:
                job.error, job.state, job.phase = f"{type(e).__name__}: {e}", "failed", "failed"
            except Exception as e:  # a bug: reported in the job, the server goes on
                job.error = f"internal error: {type(e).__name__}: {e}"
                job.state = job.phase = "failed"
                traceback.print_exc()
            finally:
                job.finished_at = time.time()
                if cleanup is not None:
                    shutil.rmtree(cleanup, ignore_errors=True)
                if self._on_finish is not None:
                    self._on_finish(job)
