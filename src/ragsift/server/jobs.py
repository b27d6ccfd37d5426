"""Write jobs: an upload, a batch of documents, a delete or a sync becomes a job with an id, run
by the one writer thread of its knowledge base. Jobs of one knowledge base queue (at most
``max_queued`` waiting: past that ``submit`` raises ``Busy``); queries never wait for them,
and no request thread waits on the write lock. A job's progress and result are readable while
it runs, through its own knowledge base only.

A server's jobs are recorded in a folder (``JobRecords``: ``<kb>/.jobs`` beside one knowledge
base, ``<kb-root>/.jobs`` beside several), one folder a knowledge base, one file a job, each
write a whole file replaced at once and synced to the disk when the job changes state. So a job
outlives the process that accepted it: after a crash or a restart its id still answers, as it
finished (with its report), or, if it was queued or running, as ``failed`` saying what of it
was committed (``interrupted``). To know that exactly, a job records each commit before it
begins and after it is done (a checkpointed ingest commits several times). The newest
``KEEP_JOBS`` finished jobs of each knowledge base are kept.

Each process holding jobs holds a lock file of its own in the folder (``.owners/``) for as long
as it lives; a job is another process's until that lock is free (the kernel frees it when the
process dies, ``kill -9`` included), and only then is it taken as interrupted. So with several
worker processes (``ragsift serve --workers N``) the folder is also what they share: any worker
answers for any job, whichever took it, and a worker started again after a crash fails the
jobs of the one that died, not those of the others. The knowledge base's write lock orders the
writers of different workers."""
from __future__ import annotations

import errno
import queue
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragsift.errors import Busy, RagsiftError, StorageFull, WriterBusy
from ragsift.server.job import JOB_ID_RE, STOPPED, Committed, Job, JobKind, JobState, Probe, _ask, interrupted, log
from ragsift.server.job_records import OWNERS, JobRecords

__all__ = ["JOB_ID_RE", "KEEP_JOBS", "OWNERS", "STOPPED", "Committed", "Job", "JobKind", "JobQueue", "JobRecords",
           "JobState", "Probe", "Run", "interrupted"]

KEEP_JOBS = 200  # finished jobs remembered (by a process, and on disk for each knowledge base)
PUBLISH_EVERY_S = 0.5  # a running job's progress reaches its record at most this often
WRITER_WAIT_POLL_S = 1.0  # with workers: how often a job tries again for a lock another worker holds
STRAY_UPLOAD_S = 3600.0  # an upload folder no job names is removed after this long while other servers run


class _Progress:
    """What a job's work reports to (``ingest.pipeline.ProgressFactory``, naming its phases): the
    chunks embedded, and each commit, recorded on the disk before it begins and after it is done,
    so that a server that stops mid-job knows what of it was committed."""

    phases = True

    def __init__(self, job: Job, queue: JobQueue) -> None:
        self.job, self.queue = job, queue

    def __call__(self, total: int | None, desc: str) -> Any:
        if desc == "writing":
            self.commit_begins()
            return _Commit(self)
        if desc != "embedding":  # reading, splitting
            if self.job.phase != "loading":
                self.job.phase = "loading"
                self.queue._publish(self.job, True)
            return _Quiet()
        self.job.total, self.job.done, self.job.phase = total, 0, "embedding"  # the count starts again after
        self.queue._publish(self.job, True)  # a checkpoint: the pipeline replays it
        return self

    def update(self, n: int) -> None:
        self.job.done += n
        self.queue._publish(self.job, False)

    def close(self) -> None:
        """The embedding's end: what follows is a commit, which says so itself."""

    def commit_begins(self) -> None:
        """Recorded before a commit begins (a failure to record it fails the job before it commits)."""
        job = self.job
        probe = self.queue.probe
        job.before = _ask(probe.generation, job.kb) if probe is not None else None
        job.committing = True
        if job.kind is not JobKind.DELETE:
            job.phase = "committing"
        self.queue._publish(job, True, strict=True)

    def commit_done(self) -> None:
        job = self.job
        job.commits += 1
        job.committing = False
        if job.checkpointing and job.kind is not JobKind.DELETE:  # a checkpoint: the next documents embed
            job.phase = "embedding"
        self.queue._publish(job, True)


class _Commit:
    def __init__(self, progress: _Progress) -> None:
        self.progress = progress

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        self.progress.commit_done()


class _Quiet:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


#: a job's work: given its progress (``_Progress``), returns an IngestReport (``to_dict``) or a mapping
Run = Callable[[_Progress], Any]


class JobQueue:
    """The writer queues of a server's knowledge bases. ``records``: where jobs are recorded (none:
    in memory only, gone with the process); ``probe``: what a record and a recovery read of a
    knowledge base; ``wait_for_writers``: a job whose write lock another process holds waits for
    it (workers) rather than fail."""

    def __init__(self, on_finish: Callable[[Job], None] | None = None, max_queued: int = 64,
                 records: JobRecords | None = None, probe: Probe | None = None,
                 wait_for_writers: bool = False) -> None:
        self.records = records
        self.probe = probe
        self.wait_for_writers = wait_for_writers
        self._published: dict[str, float] = {}
        self._jobs: dict[str, Job] = {}
        self._queues: dict[str, queue.Queue] = {}
        self._lock = threading.Lock()
        self._on_finish = on_finish
        self._stop = threading.Event()
        self.max_queued = max_queued

    def submit(self, kb: str, kind: JobKind, items: int, run: Run, cleanup: Path | None = None,
               targets: list[str] | None = None, checkpointing: bool = False) -> Job:
        """Queue a write on ``kb``'s writer, recorded on the disk before this returns; ``Busy`` when
        ``max_queued`` jobs already wait. ``cleanup``: a folder removed when the job ends (its
        uploads); ``targets``: a delete's ids; ``checkpointing``: it may commit in parts."""
        with self._lock:
            waiting = sum(1 for j in self._jobs.values() if j.kb == kb and j.state is JobState.QUEUED)
            if waiting >= self.max_queued:
                raise Busy(f"{waiting} writes already wait for knowledge base {kb!r}; try again when some have "
                           "finished", retry_after=5.0)
            job = Job(uuid.uuid4().hex, kb, kind, items, owner=self.records.token if self.records else "",
                      checkpointing=checkpointing, targets=list(targets or []),
                      uploads=cleanup.name if cleanup is not None else None, cleanup=cleanup)
            self._jobs[job.id] = job
            self._forget_old()
        try:
            self._publish(job, True, strict=True)
        except BaseException:
            with self._lock:
                self._jobs.pop(job.id, None)
            raise
        with self._lock:
            q = self._queues.get(kb)
            if q is None:
                q = self._queues[kb] = queue.Queue()
                threading.Thread(target=self._worker, args=(q,), name=f"ragsift-writer-{kb}", daemon=True).start()
        q.put((job, run))
        return job

    def get(self, job_id: str, kb: str | None = None) -> Job | None:
        """A job by id (this process's, or one recorded by another or before a restart); with
        ``kb``, only if it belongs to that knowledge base (only its folder is read)."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is not None:
            return job if kb is None or job.kb == kb else None
        if self.records is None or not JOB_ID_RE.match(job_id):
            return None
        for name in [kb] if kb is not None else self.records.kbs():
            found = self.records.read(name, job_id)
            if found is not None:
                return found
        return None

    def running(self) -> list[Job]:
        """This process's jobs queued or running."""
        with self._lock:
            return [j for j in self._jobs.values() if not j.finished]

    def active(self) -> int:
        return len(self.running())

    # ---------------------------------------------------------------- after a restart
    def recover(self) -> list[Job]:
        """Fail the recorded jobs of every process that is gone (this one's predecessor, a worker
        that died) with what of each was committed (``interrupted``); returns them."""
        if self.records is None:
            return []
        unfinished: dict[str, list[Job]] = {}
        for kb in self.records.kbs():
            for j in self.records.all(kb):
                if not j.finished and j.owner != self.records.token:
                    unfinished.setdefault(j.owner, []).append(j)
        recovered = []
        for owner in sorted(set(unfinished) | set(self.records.owners())):
            with self.records.claim(owner) as gone:
                if not gone:
                    continue
                for old in unfinished.get(owner, []):
                    again = self.records.read(old.kb, old.id)  # now that no one else may change it
                    if again is None or again.finished:
                        continue
                    j = again
                    j.error, j.committed = interrupted(j, self.probe)
                    j.error_kind, j.state, j.phase = "Interrupted", JobState.FAILED, "failed"
                    j.finished_at = time.time()
                    self.records.write(j, True)
                    recovered.append(j)
                    log.warning("job %s (%s, knowledge base %r): %s", j.id, j.kind.value, j.kb, j.error)
        for kb in {j.kb for j in recovered}:
            self.records.prune(kb, KEEP_JOBS)
        return recovered

    def sweep_uploads(self, roots: dict[str, Path]) -> list[Path]:
        """Remove the upload folders (``roots``: each knowledge base's) that no queued or running
        job needs: a finished or interrupted job's, and one no job names (a crash between saving
        an upload and accepting it) when no other server process runs, or once it is old."""
        if self.records is None:
            return []
        needed, named = set(), set()
        for kb in self.records.kbs():
            for j in self.records.all(kb):
                if j.uploads:
                    named.add((kb, j.uploads))
                    if not j.finished:
                        needed.add((kb, j.uploads))
        with self._lock:
            needed |= {(j.kb, j.uploads) for j in self._jobs.values() if j.uploads and not j.finished}
        others = self.records.others_alive()
        removed = []
        for kb, root in roots.items():
            try:
                folders = [d for d in root.iterdir() if d.is_dir() and JOB_ID_RE.match(d.name)]
            except OSError:
                continue
            for d in folders:
                key = (kb, d.name)
                if key in needed:
                    continue
                try:
                    old = time.time() - d.stat().st_mtime > STRAY_UPLOAD_S
                except OSError:
                    continue
                if key in named or not others or old:
                    shutil.rmtree(d, ignore_errors=True)
                    removed.append(d)
        return removed

    # ---------------------------------------------------------------- the writer
    def _publish(self, job: Job, force: bool, strict: bool = False) -> None:
        """Record the job's state (at most every ``PUBLISH_EVERY_S`` unless ``force``; forced:
        synced to the disk). ``strict``: a failure to record raises (a job accepted, a commit
        about to begin); otherwise it is logged and the job goes on."""
        if self.records is None:
            return
        now = time.monotonic()
        if not force and now - self._published.get(job.id, 0.0) < PUBLISH_EVERY_S:
            return
        self._published[job.id] = now
        try:
            self.records.write(job, force)
        except OSError as e:
            if strict:
                if _disk_full(e):
                    raise StorageFull(f"no space left on the disk to record the job: {e}") from None
                raise
            log.warning("job %s: could not record its state: %s", job.id, e)

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
                return run(_Progress(job, self))
            except WriterBusy:
                if not self.wait_for_writers or self._stop.is_set():
                    raise
                job.phase, job.done = "waiting", 0
                self._publish(job, True)
                self._stop.wait(WRITER_WAIT_POLL_S)

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.finished]
        for j in done[: max(0, len(done) - KEEP_JOBS)]:
            del self._jobs[j.id]
            self._published.pop(j.id, None)

    def _worker(self, q: queue.Queue) -> None:
        while not self._stop.is_set():
            item = q.get()
            if item is None:
                return
            job, run = item
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
                if job.cleanup is not None:  # before the end is recorded: a record that says
                    shutil.rmtree(job.cleanup, ignore_errors=True)  # "finished" needs no folder
                job.finished_at = time.time()
                self._publish(job, True)
                if self.records is not None:
                    try:
                        self.records.prune(job.kb, KEEP_JOBS)
                    except OSError as e:
                        log.warning("jobs: could not forget old jobs of %r: %s", job.kb, e)
                if self._on_finish is not None:
                    self._on_finish(job)

    def list(self, kb: str | None = None) -> list[Job]:  # last: its name would shadow the type above
        """Jobs, newest first: this process's and those recorded (by other workers, or before a
        restart)."""
        with self._lock:
            mine = {j.id: j for j in self._jobs.values() if kb is None or j.kb == kb}
        jobs = dict(mine)
        if self.records is not None:
            for name in [kb] if kb is not None else self.records.kbs():
                for j in self.records.all(name, skip=mine):  # this process's own are read from memory
                    jobs.setdefault(j.id, j)
        return sorted(jobs.values(), key=lambda j: j.created_at, reverse=True)


def _disk_full(e: OSError) -> bool:
    return e.errno in (errno.ENOSPC, errno.EDQUOT)
