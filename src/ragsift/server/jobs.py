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

import contextlib
import errno
import json
import logging
import os
import queue
import re
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from ragsift.errors import Busy, RagsiftError, StorageFull, WriterBusy

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no other process is known to be alive
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
KEEP_JOBS = 200  # finished jobs remembered (by a process, and on disk for each knowledge base)
PUBLISH_EVERY_S = 0.5  # a running job's progress reaches its record at most this often
JOB_ID_RE = re.compile(r"^[0-9a-f]{32}$")
WRITER_WAIT_POLL_S = 1.0  # with workers: how often a job tries again for a lock another worker holds
STRAY_UPLOAD_S = 3600.0  # an upload folder no job names is removed after this long while other servers run
STOPPED = "the server stopped before it finished"
OWNERS = ".owners"


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


class Committed(StrEnum):
    """What of a job the server stopped before it ended the knowledge base holds."""

    NONE = "none"  # nothing
    PART = "part"  # the checkpoints it committed (a checkpointed ingest), not what came after
    ALL = "all"  # its one commit (or its delete) landed; only its report was lost
    UNKNOWN = "unknown"  # it stopped during a commit that may have landed


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
    error_kind: str | None = None  # the error's class (StorageFull, StoreError, Interrupted, ...) when failed
    committed: Committed | None = None  # set when the server stopped before the job ended (``interrupted``)
    # recorded, never answered:
    owner: str = ""  # the process that runs it (JobRecords.token)
    checkpointing: bool = False  # the knowledge base commits ingests in checkpoints
    commits: int = 0  # commits of this job done
    committing: bool = False  # a commit has begun and is not known to be done
    before: int | None = None  # the committed generation when that commit began
    targets: list[str] = field(default_factory=list)  # a delete's document ids
    uploads: str | None = None  # the name of the folder its uploaded files wait in
    cleanup: Path | None = field(default=None, repr=False)  # that folder (this process's own jobs)

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> Job:
        """A job as ``to_record`` wrote it."""
        progress = d.get("progress") or {}
        uploads = d.get("uploads")
        return cls(str(d["id"]), str(d["kb"]), JobKind(d["kind"]), int(d["items"]), JobState(d["state"]),
                   str(d["phase"]), int(progress.get("done") or 0), progress.get("total"), float(d["created_at"]),
                   d.get("started_at"), d.get("finished_at"), d.get("report"), d.get("error"), d.get("error_kind"),
                   Committed(d["committed"]) if d.get("committed") else None, str(d.get("owner") or ""),
                   bool(d.get("checkpointing")), int(progress.get("commits") or 0), bool(d.get("committing")),
                   d.get("before"), [str(t) for t in d.get("targets") or []],
                   uploads if isinstance(uploads, str) and JOB_ID_RE.match(uploads) else None)

    def to_dict(self) -> dict[str, Any]:
        """The job as the API answers it."""
        return {"id": self.id, "kb": self.kb, "kind": self.kind.value, "items": self.items,
                "state": self.state.value, "phase": self.phase,
                "progress": {"done": self.done, "total": self.total, "commits": self.commits},
                "created_at": self.created_at, "started_at": self.started_at, "finished_at": self.finished_at,
                "report": self.report, "error": self.error,
                "committed": self.committed.value if self.committed else None}

    def to_record(self) -> dict[str, Any]:
        """The job as its record holds it: what the API answers and what a restart needs."""
        return {**self.to_dict(), "error_kind": self.error_kind, "owner": self.owner,
                "checkpointing": self.checkpointing, "committing": self.committing,
                "before": self.before, "targets": self.targets, "uploads": self.uploads}

    @property
    def finished(self) -> bool:
        return self.state in (JobState.DONE, JobState.FAILED)


class Probe(Protocol):
    """What the server can tell of a knowledge base, for a job's record and its recovery."""

    def generation(self, kb: str) -> int | None:
        """Its committed generation now (None: not known)."""

    def stored(self, kb: str, ids: list[str]) -> set[str] | None:
        """Which of ``ids`` it holds (None: not known)."""


def _ask(fn: Callable[..., Any], *args: Any) -> Any:
    """A probe's answer, or None when asking failed (a recovery says "not known" rather than fail)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001  # a knowledge base that cannot be opened: not known
        log.warning("jobs: could not look at knowledge base %r: %s", args[0] if args else "", e)
        return None


def interrupted(job: Job, probe: Probe | None) -> tuple[str, Committed]:
    """What is true of a job whose server stopped before it ended: the error it answers with and
    what of it the knowledge base holds. A commit is recorded before it begins and after it is
    done, so only a server stopped during a commit leaves doubt, which the generation settles
    (unchanged: it did not land) or, for a delete, whether its documents are still stored."""
    if job.state is JobState.QUEUED or job.started_at is None:
        return f"{STOPPED} (it had not started); nothing of it was committed: send it again", Committed.NONE
    now = _ask(probe.generation, job.kb) if probe is not None else None
    at = f" (the knowledge base is at generation {now})" if now is not None else ""
    landed: bool | None = False
    if job.committing:
        landed = None
        if job.kind is JobKind.DELETE and job.targets and probe is not None:
            stored = _ask(probe.stored, job.kb, job.targets)
            if stored is not None and not stored:
                landed = True
            elif stored is not None and stored == set(job.targets):
                landed = False
        elif job.before is not None and now is not None and now == job.before:
            landed = False
    commits = job.commits + (landed is True)
    named = ", ".join(repr(t) for t in job.targets[:10])
    if landed is None:
        moved = (f"the knowledge base went from generation {job.before} to {now} since"
                 if job.before is not None and now is not None else "its generation then is not known")
        kept = f"; the {job.commits} checkpoint(s) it committed before are kept" if job.commits else ""
        how = (f"GET /documents/ID tells whether {named} is still stored" if job.kind is JobKind.DELETE else
               "GET /documents shows what is stored, and sending it again is safe (unchanged documents are skipped)")
        return f"{STOPPED}, during a commit that may have landed ({moved}){kept}; {how}", Committed.UNKNOWN
    if commits == 0:
        return f"{STOPPED}; nothing of it was committed{at}: send it again", Committed.NONE
    gen = f"; the knowledge base is at generation {now}" if now is not None else ""
    if job.kind is JobKind.DELETE:
        return (f"{STOPPED}, but its delete was committed ({named} no longer stored{gen}): only its report was "
                "lost", Committed.ALL)
    if not job.checkpointing:
        return (f"{STOPPED}, but its commit had landed{at}: all of it was committed, only its report was lost",
                Committed.ALL)
    return (f"{STOPPED}; the {commits} checkpoint(s) it committed are kept{at}, nothing after the last one: send "
            "it again to resume (the documents they hold are skipped as unchanged)", Committed.PART)


class JobRecords:
    """The jobs of a server on disk: ``folder/<kb>/<id>.json``, and ``folder/.owners/<token>``,
    the lock file of each live process that records jobs there (this one's is ``token``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.token = uuid.uuid4().hex
        self._owner_fd: int | None = None
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- files
    def path(self, kb: str, job_id: str) -> Path:
        return self.folder / kb / f"{job_id}.json"

    def write(self, job: Job, sync: bool) -> None:
        """The job's record, replaced whole (never half written); ``sync``: on the disk before this
        returns (a change of state; progress alone is not worth a sync)."""
        self.own()
        target = self.path(job.kb, job.id)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = target.with_name(f".{job.id}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(json.dumps(job.to_record(), ensure_ascii=False))
                if sync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if sync:
            _sync_dir(target.parent)

    def read(self, kb: str, job_id: str) -> Job | None:
        if not JOB_ID_RE.match(job_id):
            return None
        return self._read(self.path(kb, job_id), kb)

    @staticmethod
    def _read(path: Path, kb: str) -> Job | None:
        try:
            job = Job.from_record(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):  # gone, or not a job's record
            return None
        return job if job.kb == kb and job.id == path.stem else None

    def kbs(self) -> list[str]:
        try:
            return sorted(p.name for p in self.folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            return []

    def all(self, kb: str, skip: Collection[str] = ()) -> list[Job]:
        """The jobs recorded for ``kb`` (but those of ids in ``skip``: known already)."""
        try:
            files = [f for f in (self.folder / kb).iterdir()
                     if f.suffix == ".json" and JOB_ID_RE.match(f.stem) and f.stem not in skip]
        except OSError:
            return []
        return [j for j in (self._read(f, kb) for f in files) if j is not None]

    def prune(self, kb: str) -> None:
        """Forget the finished jobs of ``kb`` past the newest ``KEEP_JOBS``."""
        done = sorted((j for j in self.all(kb) if j.finished), key=lambda j: j.finished_at or j.created_at)
        for j in done[: max(0, len(done) - KEEP_JOBS)]:
            self.path(kb, j.id).unlink(missing_ok=True)

    # ---------------------------------------------------------------- owners
    def own(self) -> None:
        """Hold this process's lock file (made locked: its name never names a free lock while this
        process lives)."""
        if self._owner_fd is not None or fcntl is None:
            return
        with self._lock:
            if self._owner_fd is not None:
                return
            owners = self.folder / OWNERS
            owners.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = owners / f".{self.token}.tmp"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.replace(tmp, owners / self.token)
            except BaseException:
                os.close(fd)
                raise
            self._owner_fd = fd

    def release(self) -> None:
        """Let go of the lock (the process ends; its unfinished jobs become another's to recover)."""
        with self._lock:
            if self._owner_fd is not None:
                os.close(self._owner_fd)
                self._owner_fd = None

    @contextlib.contextmanager
    def claim(self, token: str) -> Iterator[bool]:
        """Whether the process ``token`` is gone: its lock taken (then kept while the block runs,
        and its lock file removed after), so one process alone recovers its jobs."""
        if token == self.token:
            yield False
            return
        if fcntl is None:  # pragma: no cover
            yield True
            return
        if not JOB_ID_RE.match(token):
            yield False
            return
        path = self.folder / OWNERS / token
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield False
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            gone = True
        except OSError:  # alive (or being recovered by another process)
            gone = False
        try:
            yield gone
            if gone:
                path.unlink(missing_ok=True)
        finally:
            os.close(fd)

    def owners(self) -> list[str]:
        try:
            return [p.name for p in (self.folder / OWNERS).iterdir() if JOB_ID_RE.match(p.name)]
        except OSError:
            return []

    def others_alive(self) -> bool:
        """Whether another process records jobs here now."""
        for token in self.owners():
            if token != self.token:
                with self.claim(token) as gone:
                    if not gone:
                        return True
        return False


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # a file system that cannot sync a directory
        pass
    finally:
        os.close(fd)


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
            self.records.prune(kb)
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
                        self.records.prune(job.kb)
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
