"""The exceptions ragsift raises. Each carries a message meant for a user."""
from __future__ import annotations

import os


class RagsiftError(Exception):
    """Base class: every error ragsift raises on purpose derives from it."""


class ConfigError(RagsiftError):
    """A setting is missing, unknown or conflicts with the knowledge base."""


class FilterError(RagsiftError):
    """A metadata filter is malformed or names an unknown field."""


class QueryError(RagsiftError):
    """A query cannot be run as given (empty, too long, bad parameters)."""


class StoreError(RagsiftError):
    """The store is unreadable, locked or inconsistent."""


class WriterBusy(StoreError):
    """Another process holds the knowledge base's write lock (it waited ``lock_timeout_s``)."""


class ModelError(RagsiftError):
    """A model could not be found or loaded."""


class RetrievalError(RagsiftError):
    """Every channel of a query failed (the store is damaged or unreachable, every deadline
    passed): nothing was searched, which is not the same as nothing found."""


class InputError(RagsiftError):
    """An argument or input is missing or malformed (a flag, a file of settings, a dataset folder)."""


class NotFound(RagsiftError):
    """What was asked for does not exist (a document id, a section, a job)."""


class UnknownKB(NotFound):
    """No knowledge base by that name."""


class UploadError(RagsiftError):
    """An upload cannot be accepted (its name, its size)."""


class LimitError(RagsiftError):
    """A request or an input is over one of the operator's limits (size, count, rate)."""


class Busy(RagsiftError):
    """The work cannot be taken now (a full queue, a writer holding the lock); try again later.
    ``retry_after`` is a suggested wait in seconds."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageFull(StoreError):
    """The disk (or quota) is full: nothing was committed."""


class LLMError(RagsiftError):
    """A language-model call failed (endpoint down, bad answer, out of time)."""


class Cancelled(RagsiftError):
    """The work was cancelled or ran out of time."""


def os_reason(e: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """What the system said, for a message about ``path``: its reason, and the file it concerns
    when that is another ("Permission denied (/srv/kb/ragsift.toml)")."""
    reason = e.strerror or type(e).__name__
    where = os.fsdecode(e.filename) if isinstance(e.filename, (str, bytes)) else None
    if not where or (path is not None and where == os.fsdecode(path)):
        return reason
    return f"{reason} ({where if len(where) <= 200 else where[:200] + '…'})"
