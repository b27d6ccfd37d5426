"""Checking and restoring an embedded (LanceDB) knowledge base, from its files alone: both
work when ``manifest.json`` or a data file is damaged, which is when they are needed.

``check`` reads the committed generation whole (every row of every table, so a missing or
corrupted data file is found and named), checks that every child has its parent and every
parent its document, that the counts agree with the documents, that vectors have the
manifest's dimensions and finite values, and that the full-text index exists; then that
each generation kept in ``generations/`` still has its table versions and data files (those
are the generations ``restore`` can go back to).

``restore`` makes a kept generation the newest one again: each table is restored to that
generation's version (a new version with its rows) and a new generation is committed with
them; nothing is deleted, so a restore can itself be undone while the generation is kept.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ragsift.errors import StoreError
from ragsift.store.base import CheckReport, StoredDocument, integrity_problems
from ragsift.store.lance_files import (
    MANIFEST,
    TABLES,
    WriteLock,
    connect,
    generation_file,
    manifest_problem,
    publish,
    saved_generations,
)

_NOT_FOUND = re.compile(r"Not found: (/?[^,\s]+)")


def _load(file: Path) -> dict[str, Any]:
    """A manifest, or ValueError saying what is wrong with the file."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError("missing") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"unreadable ({e})") from None
    try:
        m = json.loads(text)
    except json.JSONDecodeError as e:
        ends_early = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated")
        what = "truncated" if ends_early else "corrupted"
        raise ValueError(f"{what} ({e.msg} at line {e.lineno} column {e.colno})") from None
    wrong = manifest_problem(m)
    if wrong:
        raise ValueError(f"corrupted ({wrong})")
    return m


def _short(path: Path, e: Exception) -> str:
    """An error of Lance as one line, naming a missing file relative to the knowledge base."""
    text = str(e)
    m = _NOT_FOUND.search(text)
    if m:
        missing = Path("/" + m.group(1).lstrip("/"))
        try:
            missing = missing.relative_to(path.resolve())
        except ValueError:
            pass
        return f"file {missing} is missing"
    return text.splitlines()[0][:300] if text else type(e).__name__


def _open(db: Any, path: Path, name: str, version: int, label: str) -> tuple[Any, str | None]:
    try:
        t = db.open_table(name)
    except Exception as e:
        return None, f"{label}: table {name} cannot be opened: {_short(path, e)}"
    try:
        t.checkout(version)
    except Exception as e:
        if "no longer exists" in str(e) or "Not found" in str(e):
            return None, (f"{label}: version {version} of table {name} is missing "
                          f"(lance/{name}.lance/_versions/{version}.manifest)")
        return None, f"{label}: table {name} version {version}: {_short(path, e)}"
    return t, None


def _read(t: Any, columns: list[str] | None) -> pa.Table:
    q = t.search()
    if columns is not None:
        q = q.select(columns)
    return q.limit(None).to_arrow()


def check_generation(path: Path, db: Any, m: dict[str, Any], whole: bool,
                     counts: dict[str, int] | None = None) -> list[str]:
    """The problems of one generation's tables. ``whole``: read every column and check the
    rows against each other; else read the id columns only (enough to find missing files)."""
    label = f"generation {m['generation']}"
    problems: list[str] = []
    tables: dict[str, pa.Table] = {}
    light = {"documents": ["doc_id"], "parents": ["parent_id"], "children": ["child_id"]}
    for name in TABLES:
        t, problem = _open(db, path, name, int(m["versions"][name]), label)
        if problem:
            problems.append(problem)
            continue
        try:
            tables[name] = _read(t, None if whole else light[name])
        except Exception as e:
            problems.append(f"{label}: table {name}: {_short(path, e)}")
            continue
        if counts is not None:
            counts[name] = tables[name].num_rows
        if whole and name == "children":
            problems += _vector_problems(tables[name], m, label)
            if m.get("fts") and tables[name].num_rows and not any("terms" in i.columns for i in t.list_indices()):
                problems.append(f"{label}: the full-text index on children.terms is missing")
    if whole and len(tables) == len(TABLES):
        docs = {r["doc_id"]: StoredDocument(r["doc_id"], r["source"], r["title"], r["format"], r["content_hash"],
                                            r["gen"], r["parents"], r["children"], {})
                for r in tables["documents"].select(["doc_id", "source", "title", "format", "content_hash", "gen",
                                                      "parents", "children"]).to_pylist()}
        found = integrity_problems(tables["parents"].select(["parent_id", "doc_id", "gen"]).to_pylist(),
                                   tables["children"].select(["child_id", "parent_id", "doc_id", "gen"]).to_pylist(),
                                   docs)
        problems += [f"{label}: {p}" for p in found[:20]]
        if len(found) > 20:
            problems.append(f"{label}: ... and {len(found) - 20} more row problems")
    return problems


def _vector_problems(children: pa.Table, m: dict[str, Any], label: str) -> list[str]:
    columns = {"vector": int(m["dim"]), **{v["column"]: int(v["dim"]) for v in m.get("vectors", {}).values()}}
    problems = []
    for column, dim in columns.items():
        if column not in children.column_names:
            problems.append(f"{label}: children have no column {column}")
            continue
        ftype = children.schema.field(column).type
        size = getattr(ftype, "list_size", None)
        if size != dim:
            problems.append(f"{label}: children.{column} holds {size}-d vectors; the manifest says {dim}")
            continue
        if children.num_rows:
            values = np.asarray(children.column(column).combine_chunks().flatten(), np.float32).reshape(-1, dim)
            bad = int((~np.isfinite(values).all(axis=1)).sum())
            if bad:
                problems.append(f"{label}: {bad} children have non-finite values in {column}")
    return problems


def check(path: str | Path) -> CheckReport:
    """Check the knowledge base at ``path`` (see the module's docstring)."""
    path = Path(path)
    report = CheckReport("lancedb")
    manifest: dict[str, Any] | None = None
    try:
        manifest = _load(path / MANIFEST)
    except ValueError as e:
        report.problems.append(f"{MANIFEST}: {e}")
    kept: dict[int, dict[str, Any]] = {}
    for g in saved_generations(path):
        try:
            kept[g] = _load(generation_file(path, g))
        except ValueError as e:
            report.problems.append(f"{generation_file(path, g).relative_to(path)}: {e}")
    db = connect(path / "lance")
    current_ok = False
    if manifest is not None:
        report.generation = int(manifest["generation"])
        found = check_generation(path, db, manifest, whole=True, counts=report.counts)
        report.problems += found
        current_ok = not found
    for g, m in sorted(kept.items()):
        if report.generation is not None and g > report.generation:
            continue  # written by a writer that died before its commit: never committed
        if g == 0:
            continue  # the empty knowledge base made at creation: restoring it would delete every document
        if manifest is not None and g == report.generation and m["versions"] == manifest["versions"]:
            if current_ok:
                report.restorable.append(g)
            continue
        if not check_generation(path, db, m, whole=False):
            report.restorable.append(g)
    return report


def restore(path: str | Path, generation: int | None = None, *, lock_timeout_s: float = 10.0,
            keep: int = 2) -> int:
    """Commit a kept generation (default: the newest one that checks out) as a new generation;
    returns the new generation's number. A healthy knowledge base asked for no generation, or for
    the one it is at, is left as it is (no new generation): its generation is returned."""
    path = Path(path)
    with WriteLock(path, lock_timeout_s):
        report = check(path)
        if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int)
                                       or generation < 0):
            raise StoreError(f"a generation is a number >= 1, not {generation!r}")
        if report.ok and report.generation is not None and generation in (None, report.generation):
            return report.generation  # nothing to restore: the newest generation checks out
        if generation == 0:
            raise StoreError("generation 0 is the empty knowledge base made at creation: restoring it would "
                             "delete every document (`ragsift delete` removes documents on purpose); restorable: "
                             f"{', '.join(map(str, report.restorable)) or 'none'}")
        if not report.restorable:
            raise StoreError("no kept generation can be restored" + (": " + "; ".join(report.problems[:3])
                                                                     if report.problems else " (none is kept but "
                                                                     "generation 0, the empty one made at creation)"))
        chosen = max(report.restorable) if generation is None else generation
        if chosen not in report.restorable:
            raise StoreError(f"generation {chosen} cannot be restored; restorable: "
                             f"{', '.join(map(str, report.restorable))}")
        m = _load(generation_file(path, chosen))
        new = max([report.generation or 0, *saved_generations(path)]) + 1
        db = connect(path / "lance")
        versions = {}
        for name in TABLES:
            t = db.open_table(name)
            latest = t.version
            t.checkout(int(m["versions"][name]))
            if t.version != latest:
                t.restore()
            versions[name] = t.version
        # the restored rows are read afresh: a new epoch names new segments (a segment read after
        # the chosen generation may lack rows that the restore brings back)
        publish(path, {**m, "generation": new, "versions": versions, "committed_at": time.time(),
                       "restored_from": chosen, "epoch": new}, keep)
        return new
