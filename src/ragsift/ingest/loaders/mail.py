"""Mail messages (EML), read with the standard library (``email``, the default policy): From,
To, Cc, Date and Subject as metadata (the subject is the title), the body (plain text, else the
HTML part read as HTML), and each attachment whose type a loader reads, as a section of its own
("Attachment: name"), within the message's limits; an attachment that cannot be read is named
with its reason in ``attachments_skipped``."""
from __future__ import annotations

import email
import email.policy
from pathlib import PurePosixPath
from typing import Any

from ragsift.ingest.loaders.base import (
    LOADERS,
    MAX_DEPTH,
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.sniff import CONTROL
from ragsift.ingest.loaders.text import html_to_text

MAX_ATTACHMENTS = 50


@register(".eml")
def load_eml(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from dataclasses import replace

    from ragsift.ingest.loaders.dispatch import load_bytes  # the loaders of every format, registered by then

    budget = Budget(limits)
    msg = email.message_from_bytes(_as_utf8(data), policy=email.policy.default)
    meta: dict[str, Any] = {}
    for h in ("from", "to", "cc", "date", "subject"):
        v = msg.get(h)
        if v:
            meta[h] = " ".join(str(v).split())
    md = Markdown()
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is not None:
        content = _text_of(body)
        if _binary(content):  # headers over bytes that are no text: the body is not read
            meta["body_skipped"] = "binary data, not text"
        elif body.get_content_subtype() == "html":
            _, content = html_to_text(content)
            md.markdown(content)
        else:
            md.para(content)
        budget.text(len(content))
    skipped_attachments = []
    for n, part in enumerate(msg.iter_attachments()):
        name = part.get_filename() or f"attachment-{n + 1}"
        if n >= MAX_ATTACHMENTS:
            skipped_attachments.append(f"{name}: more than {MAX_ATTACHMENTS} attachments")
            continue
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in LOADERS or (suffix in (".eml", ".zip") and limits.depth >= MAX_DEPTH):
            skipped_attachments.append(f"{name}: not read ({suffix or 'no suffix'})")
            continue
        raw = part.get_payload(decode=True)
        payload = raw if isinstance(raw, bytes) else b""
        if len(payload) > limits.max_bytes:
            skipped_attachments.append(f"{name}: larger than max_file_mb")
            continue
        got = load_bytes(payload, suffix, f"{source}/{name}", replace(limits, depth=limits.depth + 1))
        for r in got.skipped:
            skipped_attachments.append(f"{name}: {r.reason}")
        for doc in got.documents:
            budget.text(len(doc.text))
            md.heading(1, f"Attachment: {name}")
            md.markdown(_nested(doc.text))
    if skipped_attachments:
        meta["attachments_skipped"] = skipped_attachments
    if "body_skipped" in meta and not md.has_text():
        return skipped(source, "a mail whose body is binary data, not text")
    return structured(source, meta.get("subject") or source_title(source), md, data, "eml", meta)


def _nested(text: str) -> str:
    """An attachment's text with its headings one level down (under "Attachment: name")."""
    return "\n".join("#" + ln if ln.startswith("#") and not ln.startswith("#######") else ln for ln in text.split("\n"))


def _as_utf8(data: bytes) -> bytes:
    """A mail saved with a byte-order mark (UTF-8, or UTF-16 as some Windows programs save text) as
    the UTF-8 bytes the parser reads."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            return data
    return data


def _text_of(part: Any) -> str:
    """A text part's content, as its charset says. A part that names no charset (or ASCII) but
    holds 8-bit UTF-8 is read as UTF-8 (a body saved without its headers, a Chinese mail whose
    program left the charset out), and an unknown charset as UTF-8, a bad byte replaced."""
    charset = str(part.get_param("charset") or "").lower()
    raw = part.get_payload(decode=True)
    raw = raw if isinstance(raw, bytes) else b""
    if charset in ("", "us-ascii", "ascii") and not raw.isascii():
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    try:
        return str(part.get_content())
    except LookupError:  # a charset Python does not know
        return raw.decode("utf-8", errors="replace")


def _binary(text: str) -> bool:
    """Text that is binary data: NUL, or more than one character in a hundred a control character."""
    sample = text[:65536].encode("utf-8", errors="replace")
    return b"\x00" in sample or len(CONTROL.findall(sample)) > len(sample) // 100
