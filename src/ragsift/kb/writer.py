"""One write of a knowledge base on a store object of its own, and what its failure says: a
failure that is not one of ours (a full disk, an I/O error, the store's own exception) becomes
one StoreError saying that nothing was committed and which generation the knowledge base stays
at; after an ingest's checkpoints, that they are kept and only the rest was rolled back."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ragsift.errors import RagsiftError, StoreError
from ragsift.store.base import Store
from ragsift.types import IngestReport


@contextmanager
def explained_failures(writer: Store, what: str, report: IngestReport | None = None) -> Iterator[Store]:
    """Run a write on ``writer``; its failure explained (see the module docstring)."""
    try:
        yield writer
    except RagsiftError as e:
        if report is not None and report.checkpoints:
            e.args = (f"{e}; {_checkpoints_kept(report, writer)}",)
        raise
    except Exception as e:
        if report is not None and report.checkpoints:
            raise StoreError(f"{what} failed: {_first_line(e)}; {_checkpoints_kept(report, writer)}") from e
        raise StoreError(f"{what} failed: {_first_line(e)}; nothing was committed and the knowledge "
                         f"base stays at generation {_committed_generation(writer)}") from e


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0][:300] if text else type(e).__name__)


def _checkpoints_kept(report: IngestReport, writer: Store) -> str:
    return (f"the {report.checkpoints} checkpoint(s) this ingest committed are kept (the knowledge base is at "
            f"generation {_committed_generation(writer)}) and only what was written since the last one was "
            "rolled back; run the same ingest again to resume (unchanged documents are skipped)")


def _committed_generation(store: Store) -> int | str:
    """The generation committed now (re-read: the failure may have come after the commit)."""
    try:
        store.refresh()
        return store.generation
    except Exception:
        return "its last committed one"


