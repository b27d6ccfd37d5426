"""Records: JSONL files (BEIR corpus rows, one document a line) and documents held in code
(mappings, or the document types of LangChain, LlamaIndex and Haystack)."""
from __future__ import annotations

import json
from typing import Any, cast

from ragsift.ingest.loaders.base import LoadLimits, LoadResult, clean_metadata, normalize_text, register, sha256
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

