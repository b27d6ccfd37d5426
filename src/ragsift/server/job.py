"""A write job as the server holds it and records it (``Job``, its kind and state), and what is
true of a job whose server stopped before it ended (``interrupted``: what of it was committed,
asked of the knowledge base through a ``Probe``)."""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger("ragsift.server.jobs")
JOB_ID_RE = re.compile(r"^[0-9a-f]{32}$")
STOPPED = "the server stopped before it finished"


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
