"""Mirroring a folder: what the knowledge base must write, move and delete so that it holds the
folder's files as they are now, in one commit.

- **New and changed** files are loaded, split and embedded (``IngestRun``).
- **Renamed (or moved) files** are recognised by their content: a new file whose content hash,
  format and title (unless the title is made from the file's name) are those of a document whose
  file is gone takes that document's parents, entries and vectors under its new name and title;
  nothing is embedded again (the entries keep the words of the old title they were indexed with,
  until the file changes).
- **Files gone** from the folder have their documents deleted; so do the documents a file no
  longer makes (rows gone from a JSONL file, members gone from an archive). A file that is still
  there but could not be read this time keeps its documents (the report says why it was skipped).
- Documents the knowledge base holds from elsewhere (other folders, uploads, records added from
  code) are left alone: a document belongs to the folder by the path it records (``PATH_KEY``).
- **The sync stays inside the folder**: a symbolic link to a file outside it is skipped with its
  reason (unless the operator's ``follow_outside_links``; a link so followed is known by where it
  sits, so it is the folder's). A document named by a link in the folder whose recorded path is
  outside the folder has left it (such a link ingested by a version that followed them) and is
  deleted, unless the sync writes it again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragsift.errors import InputError
from ragsift.ingest.loaders import LoadLimits
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.pipeline import FileInput, Input, file_path, input_files, known_sources, load_input, within
from ragsift.store.base import Store, StoredDocument
from ragsift.types import PATH_KEY, Document, IngestReport


@dataclass
class SyncPlan:
    docs: list[Document] = field(default_factory=list)  # the folder's documents now (renamed ones left out)
    deletes: list[str] = field(default_factory=list)  # stored documents whose file is gone
    moves: list[tuple[str, Document]] = field(default_factory=list)  # stored id -> the same content renamed
    sources: dict[str, str] = field(default_factory=dict)  # every id named above -> its source (stored or new)

    def report_into(self, report: IngestReport) -> None:
        """What the plan deletes and renames into ``report``, each document named by its source."""
        report.deleted = list(self.deletes)
        report.renamed = [{"from": old, "to": new.doc_id, "from_source": self.sources.get(old, ""),
                           "source": new.source} for old, new in self.moves]
        report.sources.update(self.sources)


def plan_sync(folder: str | Path, prefix: str, store: Store, limits: LoadLimits, report: IngestReport,
              follow_outside_links: bool = False) -> SyncPlan:
    """What mirroring ``folder`` takes (files are loaded, nothing is written)."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"sync needs a folder: {folder} is {'a file' if root.exists() else 'not there'}")
    top = file_path(root)
    items = list(input_files([root], prefix, known_sources(store), follow_outside_links))
    docs = [d for item in items for d in load_input(item, report, limits)]
    present = {d.doc_id for d in docs}
    existing = {item.identity for item in items if isinstance(item, FileInput)}
    links = _links(root, prefix, items)
    loaded = {d.metadata.get(PATH_KEY) for d in docs}
    stored = store.get_documents()
    gone: list[StoredDocument] = []
    for s in stored.values():
        path = s.metadata.get(PATH_KEY)
        if not isinstance(path, str):
            continue  # not a file's (an upload, records from code)
        if not within(path, top):  # another folder's, unless a link of this one is named by it: it has left
            if s.source in links and s.doc_id not in present:
                gone.append(s)
            continue
        if path not in existing or (path in loaded and s.doc_id not in present):
            gone.append(s)
    by_content: dict[tuple[str, str, str], list[StoredDocument]] = {}
    for g in gone:
        by_content.setdefault(_content_key(g), []).append(g)
    moves = []
    for d in docs:
        if d.doc_id in stored:
            continue
        same = by_content.get(_content_key(d))
        if same:
            moves.append((same.pop(0).doc_id, d))
    moved_to = {d.doc_id for _, d in moves}
    moved_from = {old for old, _ in moves}
    sources = {g.doc_id: g.source for g in gone} | {d.doc_id: d.source for d in docs}
    return SyncPlan([d for d in docs if d.doc_id not in moved_to],
                    [g.doc_id for g in gone if g.doc_id not in moved_from], moves, sources)


def _content_key(d: Document | StoredDocument) -> tuple[str, str, str]:
    """What a renamed file is recognised by: its content (the hash of its bytes), its format, and
    its title when the content gives it one; a title made from the file's name (a DOCX, a PPTX,
    an image with none of its own: ``source_title``) is left out, or no such file would be known
    under a new name."""
    return d.content_hash, d.format, "" if d.title == source_title(d.source) else d.title


def _links(root: Path, prefix: str, items: list[Input]) -> set[str]:
    """The names (``prefix`` + path in the folder) of the folder's entries that are symbolic links,
    read or skipped: a document named so whose recorded path is outside the folder came through
    one (a version that followed links out of the folder)."""
    out = set()
    for item in items:
        if isinstance(item, FileInput):
            if item.path.is_symlink():
                out.add(prefix + item.path.relative_to(root).as_posix())
        elif item.path.startswith(prefix) and (root / item.path[len(prefix):]).is_symlink():
            out.add(item.path)
    return out


def dry_run_report(plan: SyncPlan, store: Store, report: IngestReport) -> IngestReport:
    """What a sync would do, written nowhere: added, updated, unchanged, renamed, deleted."""
    stored = store.get_documents([d.doc_id for d in plan.docs])
    for d in plan.docs:
        old = stored.get(d.doc_id)
        if old is None:
            report.added.append(d.doc_id)
        elif old.content_hash != d.content_hash:
            report.updated.append(d.doc_id)
        else:
            report.unchanged.append(d.doc_id)
    plan.report_into(report)
    report.dry_run = True
    return report
