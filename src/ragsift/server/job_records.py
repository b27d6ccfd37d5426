"""A server's jobs on disk (``JobRecords``): one folder a knowledge base, one file a job, each
write a whole file replaced at once; and the lock file of each live process that records jobs
there (``.owners/``), so a job is another process's until that process is gone."""
from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from collections.abc import Collection, Iterator
from pathlib import Path

from ragsift.server.job import JOB_ID_RE, Job

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no other process is known to be alive
    fcntl = None  # type: ignore[assignment]

OWNERS = ".owners"


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

    def prune(self, kb: str, keep: int) -> None:
        """Forget the finished jobs of ``kb`` past the newest ``keep`` (the queue's ``KEEP_JOBS``)."""
        done = sorted((j for j in self.all(kb) if j.finished), key=lambda j: j.finished_at or j.created_at)
        for j in done[: max(0, len(done) - keep)]:
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
