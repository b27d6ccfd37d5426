"""Records: JSONL files (BEIR corpus rows, one document a line), JSON files (an array of such
records, or any other JSON read as text: its values after their key paths) and documents held in
code (mappings, or the document types of LangChain, LlamaIndex and Haystack)."""
from __future__ import annotations

import json
from typing import Any, cast

from ragsift.ingest.loaders.base import (
    LoadLimits,
    LoadResult,
    clean_metadata,
    doc_id_for,
    normalize_text,
    register,
    sha256,
)
from ragsift.ingest.loaders.text import text_of
from ragsift.text.clean import clean_str
from ragsift.types import Document, Skipped


@register(".jsonl")
def load_jsonl_file(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    text, res = text_of(data, source)
    return res if text is None else load_jsonl(text, source)


def load_jsonl(text: str, source: str) -> LoadResult:
    """One document per line: ``{"_id", "title"?, "text", "metadata"?}`` (BEIR corpus rows).

    ``id`` is accepted for ``_id``. A malformed line is reported and skipped.
    """
    res = LoadResult()
    seen: set[str] = set()
    # lines end at "\n" only: U+2028, U+2029 and U+0085 inside a row's strings are text
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            row = json.loads(line.rstrip("\r"))
        except json.JSONDecodeError as e:
            res.skipped.append(Skipped(where, f"malformed JSON: {e.msg} at column {e.colno}"))
            continue
        except RecursionError:
            res.skipped.append(Skipped(where, "JSON nested too deeply"))
            continue
        res.add(record_document(row, where, source, seen))
    return res


def as_record(obj: Any) -> Any:
    """A document object as a record mapping (mappings and anything unrecognised pass through):
    a ragsift Document, or the document types of LangChain, LlamaIndex and Haystack."""
    if isinstance(obj, dict) or obj is None or isinstance(obj, (str, bytes, int, float)):
        return obj
    if isinstance(obj, Document):
        return {"id": obj.doc_id, "text": obj.text, "title": obj.title, "source": obj.source,
                "metadata": obj.metadata}
    text = next((getattr(obj, a) for a in ("text", "page_content", "content")
                 if isinstance(getattr(obj, a, None), str)),
                None)
    if text is None:
        return obj
    rid = next((getattr(obj, a) for a in ("id", "id_", "doc_id") if getattr(obj, a, None)), None)
    meta = getattr(obj, "metadata", None) or getattr(obj, "meta", None) or {}
    meta = dict(meta) if isinstance(meta, dict) else {}
    rec = {"id": rid if rid is not None else meta.get("id"), "text": text,
           "metadata": {k: v for k, v in meta.items() if k not in ("id", "title", "source")}}
    for key in ("title", "source"):
        if isinstance(meta.get(key), str):
            rec[key] = meta[key]
    return rec


def record_document(row: Any, where: str, source: str, seen: set[str], fmt: str = "jsonl") -> Document | Skipped:
    """A document from a record ``{"_id" or "id", "text", "title"?, "metadata"?}`` (a JSONL row,
    or a document sent as JSON): its id is kept; ``seen`` holds the ids taken so far."""
    if not isinstance(row, dict):
        return Skipped(where, "a document must be an object")
    rid = row.get("_id", row.get("id"))
    body = row.get("text")
    if rid is None or not isinstance(body, str):
        return Skipped(where, "a document needs '_id' (or 'id') and a string 'text'")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return Skipped(where, f"'_id' must be a string or an integer, not {type(rid).__name__}")
    rid = clean_str(str(rid))
    if not rid.strip() or len(rid) > 512:
        return Skipped(where, "'_id' must be 1 to 512 characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in rid):
        return Skipped(where, f"'_id' {rid[:60]!r} contains a control character (NUL, newline, ...)")
    if rid in seen:
        return Skipped(where, f"duplicate _id {rid!r} in the same batch")
    seen.add(rid)
    title = row.get("title") or ""
    if not isinstance(title, str):
        title = str(title)
    title = clean_str(title)
    if not body.strip() and not title.strip():
        return Skipped(where, "empty text")
    meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    try:
        meta = clean_metadata(cast("dict[str, Any]", meta))  # a dict: checked above
    except ValueError as e:
        return Skipped(where, str(e))
    body = normalize_text(body)
    payload = json.dumps([title, body, meta], ensure_ascii=False, sort_keys=True, default=str).encode()
    return Document(rid, source, title, body, sha256(payload), fmt, meta)



# ------------------------------------------------------------------ JSON files
MAX_PATH = 120  # characters of a value's key path written before it (its last ones)


@register(".json")
def load_json_file(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    """A JSON file: an array of records (objects with ``_id`` or ``id`` and a string ``text``, as
    a JSONL file's rows) is one document a record; any other JSON is one document of its values,
    each on a line after its key path (``sections[0].title: Pairing``), its title the top-level
    ``title`` (or ``name``) where it has one."""
    from ragsift.ingest.loaders.base import Budget
    from ragsift.ingest.loaders.files import source_title

    text, res = text_of(data, source)
    if text is None:
        return res
    budget = Budget(limits)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return LoadResult(skipped=[Skipped(source, f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno}")])
    except RecursionError:
        return LoadResult(skipped=[Skipped(source, "JSON nested too deeply")])
    if _records(value):
        seen: set[str] = set()
        for n, row in enumerate(value):
            budget.tick()
            res.add(record_document(row, f"{source}:[{n}]", source, seen, fmt="json"))
        return res
    lines = []
    for path, leaf in _leaves(value):
        budget.text(len(path) + len(leaf))
        lines.append(f"{path}: {leaf}" if path else leaf)
    body = normalize_text("\n".join(lines))
    if not body.strip():
        return LoadResult(skipped=[Skipped(source, "no text content")])
    title = next((value[k] for k in ("title", "name") if isinstance(value, dict) and isinstance(value.get(k), str)),
                 "") or source_title(source)
    return LoadResult(documents=[Document(doc_id_for(source), source, clean_str(title.strip()), body, sha256(data),
                                          "json", {})])


def _records(value: Any) -> bool:
    """Whether a JSON value is an array of records (its first element is one)."""
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return False
    first = value[0]
    return isinstance(first.get("text"), str) and ("_id" in first or "id" in first)


def _leaves(value: Any) -> Any:
    """A JSON value's scalars with their key paths, in order (iteratively: any depth)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            stack.extend(reversed([(f"{path}.{k}" if path else str(k), x) for k, x in v.items()]))
        elif isinstance(v, list):
            stack.extend(reversed([(f"{path}[{i}]", x) for i, x in enumerate(v)]))
        elif v is not None and v != "":
            leaf = v if isinstance(v, str) else json.dumps(v)
            yield (path if len(path) <= MAX_PATH else "…" + path[-MAX_PATH:]), leaf
