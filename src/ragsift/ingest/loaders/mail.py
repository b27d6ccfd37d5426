"""Mail messages (EML), read with the standard library (``email``, the default policy): From,
To, Cc, Date (a date, so filters compare it as one) and Subject as metadata (the subject is the
title), the body (plain text, else the HTML part read as HTML), and each attachment whose type a
loader reads, as a section of its own ("Attachment: name"), within the message's limits; an
attachment that cannot be read is named with its reason in ``attachments_skipped``.

Encodings: a message saved as UTF-16 or UTF-32 is read as the text it is; the body and each text
attachment are decoded by the charset they declare, else by the encoding found
(``encoding.decode``); a header of raw 8-bit bytes (no MIME encoded words) likewise."""
from __future__ import annotations

import datetime
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
from ragsift.ingest.loaders.encoding import decode
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.sniff import CONTROL, Mail
from ragsift.ingest.loaders.text import html_to_text

MAX_ATTACHMENTS = 50


@register(".eml", signature=Mail())
def load_eml(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from dataclasses import replace

    from ragsift.ingest.loaders.dispatch import load_bytes  # the loaders of every format, registered by then

    budget = Budget(limits)
    msg = email.message_from_bytes(_as_bytes(data.removeprefix(b"\xef\xbb\xbf")), policy=email.policy.default)
    meta: dict[str, Any] = {}
    raw_headers = {k.lower(): v for k, v in msg.raw_items()}
    for h in ("from", "to", "cc", "date", "subject"):
        v = msg.get(h)
        if v:
            meta[h] = " ".join(header_text(str(v), raw_headers.get(h, "")).split())
    if "date" in meta:
        meta["date"] = mail_date(meta["date"])
    md = Markdown()
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is not None:
        content = part_text(body)
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
        budget.earn(1)  # an attachment is a page of work (and what it holds counts for the mail too)
        raw = part.get_payload(decode=True)
        payload = raw if isinstance(raw, bytes) else b""
        if suffix in TEXT_SUFFIXES and part.get_content_charset():  # read in the charset it declares
            text = decode(payload, part.get_content_charset()).text
            payload = text.encode("utf-8") if text is not None else payload
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


#: attachments whose declared charset is how their bytes are read (other formats say their own)
TEXT_SUFFIXES = {".txt", ".text", ".md", ".markdown", ".csv", ".tsv", ".json", ".jsonl", ".html", ".htm"}


def mail_date(text: str) -> datetime.datetime | str:
    """A Date header as a date and time (with its zone; stored in UTC, ``filters.iso_date``), so a
    filter compares it as a date (``{"date": {"gte": "2022-01-01"}}``); a header that is no date
    (RFC 5322 or ISO 8601) stays its text."""
    import email.utils

    try:
        return email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        pass
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return text


def _as_bytes(data: bytes) -> bytes:
    """A message saved as UTF-16 or UTF-32 (NUL bytes between its letters) as the UTF-8 bytes of
    its text; any other message as it is."""
    if b"\x00" not in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data
    got = decode(data)
    if got.text is None or not got.encoding.startswith(("utf-16", "utf-32")):
        return data
    return got.text.encode("utf-8")


def part_text(part: Any) -> str:
    """A text part's text: its bytes decoded by the charset it declares, else by the encoding found."""
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return str(part.get_content())
    got = decode(raw, part.get_content_charset())
    return got.text if got.text is not None else raw.decode("utf-8", errors="replace")


def header_text(value: str, raw: str) -> str:
    """A header as text: one of raw 8-bit bytes (no MIME encoded words; the parser keeps them as
    surrogates in ``raw`` and replaces them in ``value``) decoded by the encoding found."""
    if not any("\udc80" <= c <= "\udcff" for c in raw):
        return value
    got = decode(raw.encode("utf-8", errors="surrogateescape").strip())
    return got.text if got.text is not None else value


def _nested(text: str) -> str:
    """An attachment's text with its headings one level down (under "Attachment: name")."""
    return "\n".join("#" + ln if ln.startswith("#") and not ln.startswith("#######") else ln for ln in text.split("\n"))


def _binary(text: str) -> bool:
    """Text that is binary data: NUL, or more than one character in a hundred a control character."""
    sample = text[:65536].encode("utf-8", errors="replace")
    return b"\x00" in sample or len(CONTROL.findall(sample)) > len(sample) // 100
