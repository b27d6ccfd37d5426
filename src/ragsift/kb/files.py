"""A knowledge base's files: its settings file (``ragsift.toml``) checked against what its store
recorded at creation, written back from it, and the checks and restores that work on a
knowledge base that cannot open."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsift.config import INDEX_KEYS, Settings, current_name
from ragsift.errors import ConfigError, StoreError, os_reason
from ragsift.store import check_store, open_store, placed, restore_store, stored_identity
from ragsift.store.base import CheckReport, Store, StoredDocument, StoredParent
from ragsift.types import Child

SETTINGS_FILE = "ragsift.toml"


#: the identity settings named when a settings file is missing (the rest are in the store's manifest)
IDENTITY_SHOWN = ("embedder", "analyzer", "child_tokens", "small_index")


def check_identity(settings: Settings, recorded: dict[str, Any] | None, sfile: Path) -> None:
    """A settings file that disagrees with what the store recorded at creation (edited, emptied)
    is an error naming each setting; a store made before identities were recorded takes the
    file's (it records them at its next commit)."""
    if not recorded:
        return
    recorded = recorded_identity(recorded)
    mine = settings.identity()
    wrong = [k for k in INDEX_KEYS if k in recorded and k in mine and _same(recorded[k]) != _same(mine[k])]
    if wrong:
        raise ConfigError(f"{sfile} does not match the knowledge base it belongs to: "
                          + "; ".join(f"{k} is {shown(mine[k])} there, but the knowledge base was built with "
                                      f"{shown(recorded[k])}" for k in wrong)
                          + ". Index settings cannot change after creation: restore them in the file (`ragsift "
                            "check --rewrite-settings` writes back what the store recorded), or create a new "
                            "knowledge base")


def recorded_identity(recorded: dict[str, Any]) -> dict[str, Any]:
    """What a store recorded, in the current names and spellings (read through the settings, so
    ``small_index = ["chunks"]`` and ``["chunk"]`` are the same); as recorded when it does not read."""
    named = {current_name(k, warn=False): v for k, v in recorded.items()}
    try:
        return Settings().replace(**{k: v for k, v in named.items() if k in INDEX_KEYS}).identity()
    except ConfigError:
        return named


def _same(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def rewrite_settings(path: str | Path) -> Settings:
    """Write ``ragsift.toml`` of a knowledge base whose store is kept in its directory from the
    index settings its store recorded at creation (query defaults go back to the package's); for a settings file that
    was lost, emptied or edited. Returns the settings written."""
    path = Path(path)
    recorded = stored_identity(path)
    if recorded is None:
        raise StoreError(f"no embedded knowledge base at {path} (manifest.json missing)")
    if not recorded:
        raise StoreError(f"the store at {path} was made before ragsift recorded its settings; its settings file "
                         "cannot be rebuilt from it")
    settings = Settings().replace(**recorded_identity(recorded))
    settings.save(path / SETTINGS_FILE)
    return settings


def missing_settings(path: Path) -> ConfigError | None:
    """The error for a directory that holds a store but no settings file (None when it holds no
    store): never made again with defaults over the old store."""
    recorded = stored_identity(path)
    if recorded is None:
        return None
    named = ", ".join(f"{k}={shown(v)}" for k, v in recorded.items() if k in IDENTITY_SHOWN)
    return ConfigError(f"{path / SETTINGS_FILE} is missing, but {path} holds a knowledge base"
                       + (f" (made with {named})" if named else "")
                       + f"; put its settings file back, or run `ragsift --kb {path} check --rewrite-settings` to "
                       "write the settings its store recorded")


def shown(v: Any) -> str:
    return repr(list(v) if isinstance(v, tuple) else str(v) if isinstance(v, str) else v)


def check_knowledge_base(path: str | Path) -> CheckReport:
    """Check the knowledge base at ``path`` without opening it: a damaged settings file,
    manifest or data file is a problem in the report, naming the file."""
    path = _existing(path)
    settings, trouble = _settings_of(path)
    report = check_store(path, settings)
    if trouble:
        report.problems.insert(0, trouble)
    return report


def restore_knowledge_base(path: str | Path, generation: int | None = None) -> int:
    """Commit a kept generation (default: the newest that checks out) as the newest one;
    returns its new number. For a knowledge base that a damaged manifest or data file keeps
    from opening, or to undo a commit. On a healthy knowledge base, asked for no generation (or
    its own), nothing is committed: its generation is returned as it is."""
    settings, _ = _settings_of(_existing(path))
    return restore_store(path, settings, generation)


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not (path / SETTINGS_FILE).exists() and not (path / "manifest.json").exists():
        raise StoreError(f"no knowledge base at {path}")
    return path


def _settings_of(path: Path) -> tuple[Settings, str | None]:
    """The settings of a knowledge base, or (when its file is damaged) the defaults (an
    embedded store) and what is wrong."""
    try:
        return Settings.load(path / SETTINGS_FILE), None
    except ConfigError as e:
        return Settings(), str(e)


def copy_settings(settings: Settings, path: Path, store: dict[str, Any]) -> Settings:
    """The settings of a copy at ``path`` on another store: only store settings may change."""
    store = {current_name(k): v for k, v in store.items()}
    bad = set(store) - {"store_kind", "store_uri", "store_name", "store_index"}
    if bad:
        raise ConfigError(f"only store settings can change in a copy, not {', '.join(sorted(bad))}")
    try:
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path} is not a directory; copy into a new directory")
        if (path / SETTINGS_FILE).exists():
            raise StoreError(f"{path} already holds a knowledge base; copy into a new directory")
    except OSError as e:
        raise StoreError(f"cannot copy the knowledge base to {path}: {os_reason(e, path)}") from None
    return placed(settings.replace(**{"store_name": "", **store}), path)


def copy_store(src: Store, path: Path, settings: Settings, progress: Any = None) -> Store:
    """Every document of ``src`` copied as stored (no re-embedding) into a new store at ``path``
    in one commit; the settings file written after it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot copy the knowledge base to {path}: {os_reason(e, path)}") from None
    vectors = {name: int(v["dim"]) for name, v in src.manifest.get("vectors", {}).items()}
    dest = open_store(path, settings, dim=src.dim, vectors=vectors)
    if dest.generation != 0:
        raise StoreError(f"the destination store already holds a knowledge base (generation {dest.generation})")
    bar = progress(src.stats()["documents"], "copying") if progress else None
    try:
        with dest.begin() as txn:
            for doc, parents, children in src.export():
                txn.put_document(doc, parents, children)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    settings.save(path / SETTINGS_FILE)
    return dest


def document_view(doc: StoredDocument, parents: list[StoredParent], entries: list[Child]) -> dict[str, Any]:
    """A stored document as it was read: the heading tree (each heading once, in order, with its
    depth), each parent with its location, size, tables and entries (chunks and the rest of its
    small index), and the pages read by OCR (or left for want of it), each with what became of it
    (``scanned_pages``)."""
    from ragsift.ingest.splitter import table_blocks
    from ragsift.types import located

    by_parent: dict[str, list[Child]] = {}
    for e in entries:
        by_parent.setdefault(e.parent_id, []).append(e)
    outline: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    out_parents = []
    for sp in parents:
        p = sp.parent
        for depth in range(1, len(p.heading_path) + 1):
            path = p.heading_path[:depth]
            if path not in seen:
                seen.add(path)
                outline.append({"level": depth, "heading": path[-1], "parent_id": p.parent_id})
        mine = by_parent.get(p.parent_id, [])
        out_parents.append({
            "parent_id": p.parent_id, "heading_path": list(p.heading_path), "location": located(p.location),
            "synthetic": p.synthetic, "tokens": p.tokens, "tables": len(table_blocks(p.text)), "text": p.text,
            "entries": [{"child_id": e.child_id, "kind": e.kind, "start": e.start, "end": e.end, "tokens": e.tokens}
                        for e in mine]})
    meta = doc.metadata
    return {"document": {k: getattr(doc, k) for k in ("doc_id", "source", "title", "format", "content_hash",
                                                       "generation", "parents", "children", "metadata")},
            "outline": outline, "parents": out_parents,
            "pages": meta.get("page_count") or meta.get("slide_count"),
            "ocr_pages": _page_list(meta.get("ocr_pages")), "ocr_missing": _page_list(meta.get("ocr_missing")),
            "scanned_pages": scanned_pages(meta)}


def scanned_pages(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """What became of each page of a document that had no text to take (a scan, an image), from
    its loader's metadata, in page order: ``state`` "ocr" (read by OCR), "rotated" (found turned
    by ``rotated`` degrees counterclockwise and read upright), "empty" (read by OCR, no text
    found) or "ocr_missing" (left out: OCR is not installed)."""
    turned: dict[int, int] = {}
    raw = meta.get("ocr_rotated")
    for k, v in (raw.items() if isinstance(raw, dict) else ()):
        if str(k).isdigit() and isinstance(v, int) and v % 360:
            turned[int(k)] = v % 360
    empty = set(_page_list(meta.get("ocr_empty")))
    out: dict[int, dict[str, Any]] = {}
    for n in _page_list(meta.get("ocr_pages")):
        state = "empty" if n in empty else "rotated" if n in turned else "ocr"
        out[n] = {"page": n, "state": state, "rotated": turned.get(n, 0)}
    for n in _page_list(meta.get("ocr_missing")):
        out[n] = {"page": n, "state": "ocr_missing", "rotated": 0}
    return [out[n] for n in sorted(out)]


def _page_list(value: Any) -> list[int]:
    """Page numbers from a metadata value (a document's metadata may hold anything)."""
    if not isinstance(value, list | tuple):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
