"""Outlook messages (``.msg``), read with olefile (BSD) and the MAPI property layout of
[MS-OXMSG] (this package's own code: the readers of .msg on PyPI are GPL): subject (the title),
sender, To, Cc and date as metadata; the body: plain text, else the HTML body read as HTML, else
the compressed RTF body ([MS-OXRTFCP], decompressed here; an RTF that wraps HTML read as that
HTML); each attachment whose type a loader reads a section of its own ("Attachment: name"), an
attached message read as one (as a mail's: ``mail``), within the message's limits. Strings are
UTF-16 where the message stores them so, else in its code page (``PR_MESSAGE_CODEPAGE``,
``PR_INTERNET_CPID``), else in the encoding found (``encoding.decode``)."""
from __future__ import annotations

import struct
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from ragsift.ingest.loaders.base import (
    LOADERS,
    MAX_DEPTH,
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    OverLimit,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.encoding import codec_name, decode
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.mail import MAX_ATTACHMENTS, _nested
from ragsift.ingest.loaders.sniff import Ole
from ragsift.ingest.loaders.text import html_to_text

SUBJECT, BODY, HTML, RTF_COMPRESSED = 0x0037, 0x1000, 0x1013, 0x1009
SENDER_NAME, SENDER_EMAIL, SENDER_SMTP = 0x0C1A, 0x0C1F, 0x5D01
DISPLAY_TO, DISPLAY_CC, HEADERS = 0x0E04, 0x0E03, 0x007D
SUBMIT_TIME, DELIVERY_TIME = 0x0039, 0x0E06
MESSAGE_CODEPAGE, INTERNET_CPID = 0x3FFD, 0x3FDE
ATTACH_LONG_NAME, ATTACH_NAME, ATTACH_DISPLAY, ATTACH_DATA = 0x3707, 0x3704, 0x3001, 0x3701
PT_STRING8, PT_UNICODE, PT_BINARY, PT_OBJECT, PT_LONG, PT_SYSTIME = 0x001E, 0x001F, 0x0102, 0x000D, 0x0003, 0x0040
MAX_RTF = 64 << 20  # bytes a compressed RTF body may unpack to (within the file's limits)

#: the dictionary a compressed RTF starts with ([MS-OXRTFCP] 3.1.3.1)
RTF_PREBUF = (b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript "
              b"\\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par "
              b"\\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx")


@register(".msg", signature=Ole("Outlook message", "__properties_version1.0"))
def load_msg(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    try:
        import olefile
    except ImportError:
        return skipped(source, "reading .msg needs olefile: pip install olefile")
    budget = Budget(limits, packed_bytes=len(data))
    ole = olefile.OleFileIO(data)
    try:
        msg = _Message(ole, [], budget, top=True)
        md = Markdown()
        meta = msg.metadata()
        _write(msg, md, meta, source, limits, budget)
    finally:
        ole.close()
    return structured(source, meta.get("subject") or source_title(source), md, data, "msg", meta)


class _Message:
    """The MAPI properties of a message (or of an attachment) stored under ``prefix`` in an OLE file."""

    def __init__(self, ole: Any, prefix: list[str], budget: Budget, top: bool = False, header: int = 0) -> None:
        self.ole, self.prefix, self.budget = ole, prefix, budget
        self.fixed = self._fixed(header or (32 if top else 24))
        cp = self.fixed.get(MESSAGE_CODEPAGE) or self.fixed.get(INTERNET_CPID)
        self.codepage = codec_name(f"cp{cp}") if isinstance(cp, int) and cp not in (1200, 65001) else (
            "utf-8" if cp == 65001 else None)

    def _stream(self, name: str) -> bytes | None:
        path = self.prefix + [name]
        if not self.ole.exists("/".join(path)):
            return None
        size = self.ole.get_size("/".join(path))
        self.budget.unpacked(size)
        if size > self.budget.limits.max_bytes:
            raise OverLimit(f"a property of {size} bytes, larger than the file's limit")
        return self.ole.openstream(path).read()

    def _fixed(self, header: int) -> dict[int, int | bytes]:
        """The fixed-size properties of ``__properties_version1.0`` (16 bytes each after the header)."""
        raw = self._stream("__properties_version1.0") or b""
        out: dict[int, int | bytes] = {}
        for off in range(header, len(raw) - 15, 16):
            ptype, pid = struct.unpack_from("<HH", raw, off)
            if ptype == PT_LONG:
                out[pid] = struct.unpack_from("<i", raw, off + 8)[0]
            elif ptype == PT_SYSTIME:
                out[pid] = raw[off + 8:off + 16]
        return out

    def string(self, pid: int) -> str:
        raw = self._stream(f"__substg1.0_{pid:04X}{PT_UNICODE:04X}")
        if raw is not None:
            return raw.decode("utf-16-le", errors="replace").replace("\x00", "")
        raw = self._stream(f"__substg1.0_{pid:04X}{PT_STRING8:04X}")
        if raw is None:
            return ""
        return self.text(raw.replace(b"\x00", b""))

    def text(self, raw: bytes, declared: str | None = None) -> str:
        got = decode(raw, declared or self.codepage)
        return got.text if got.text is not None else raw.decode("latin-1")

    def binary(self, pid: int) -> bytes | None:
        return self._stream(f"__substg1.0_{pid:04X}{PT_BINARY:04X}")

    def time(self, pid: int) -> datetime | None:
        v = self.fixed.get(pid)
        if not isinstance(v, bytes):
            return None
        ticks = struct.unpack("<Q", v)[0]
        if not ticks:
            return None
        try:
            return datetime(1601, 1, 1, tzinfo=UTC) + timedelta(microseconds=ticks // 10)
        except OverflowError:
            return None

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        sender = self.string(SENDER_NAME)
        address = self.string(SENDER_SMTP) or self.string(SENDER_EMAIL)
        if address and "@" in address and address not in sender:
            sender = f"{sender} <{address}>" if sender else address
        for key, value in (("from", sender), ("to", self.string(DISPLAY_TO)), ("cc", self.string(DISPLAY_CC)),
                           ("subject", self.string(SUBJECT))):
            value = " ".join(value.split())
            if value:
                meta[key] = value
        sent = self.time(SUBMIT_TIME) or self.time(DELIVERY_TIME)
        if sent is not None:  # a date: a filter compares it as one ({"date": {"gte": "2022-01-01"}})
            meta["date"] = sent
        return meta

    def body(self) -> tuple[str, str]:
        """The body, as ("text", text) or ("markdown", text read from HTML or RTF)."""
        text = self.string(BODY)
        if text.strip():
            return "text", text
        html = self.binary(HTML)
        html_text = self.text(html, _meta_charset(html)) if html is not None else self.string(HTML)
        if html_text.strip():
            return "markdown", html_to_text(html_text)[1]
        rtf = self.binary(RTF_COMPRESSED)
        if rtf:
            from ragsift.ingest.loaders.rtf import read_rtf

            got = read_rtf(decompress_rtf(rtf, min(MAX_RTF, self.budget.limits.max_bytes)), self.budget)
            return "markdown", html_to_text(got.html)[1] if got.html is not None else got.md.text()
        return "text", ""

    def attachments(self) -> list[str]:
        names = {e[len(self.prefix)] for e in self.ole.listdir(streams=True, storages=True)
                 if len(e) > len(self.prefix) and e[:len(self.prefix)] == self.prefix}
        return sorted(n for n in names if n.startswith("__attach_version1.0_#"))


def _write(msg: _Message, md: Markdown, meta: dict[str, Any], source: str, limits: LoadLimits, budget: Budget) -> None:
    """The message's body and attachments into ``md``; what cannot be read named in ``meta``."""
    from ragsift.ingest.loaders.dispatch import load_bytes

    kind, body = msg.body()
    budget.text(len(body))
    md.para(body) if kind == "text" else md.markdown(body)
    skipped_attachments: list[str] = []
    for n, storage in enumerate(msg.attachments()):
        att = _Message(msg.ole, msg.prefix + [storage], budget, header=8)
        name = att.string(ATTACH_LONG_NAME) or att.string(ATTACH_NAME) or att.string(ATTACH_DISPLAY) \
            or f"attachment-{n + 1}"
        if n >= MAX_ATTACHMENTS:
            skipped_attachments.append(f"{name}: more than {MAX_ATTACHMENTS} attachments")
            continue
        budget.earn(1)
        embedded = f"__substg1.0_{ATTACH_DATA:04X}{PT_OBJECT:04X}"
        if msg.ole.exists("/".join(att.prefix + [embedded])) and _is_message(msg.ole, att.prefix + [embedded]):
            if limits.depth >= MAX_DEPTH:
                skipped_attachments.append(f"{name}: an attached message nested too deeply")
                continue
            inner = _Message(msg.ole, att.prefix + [embedded], budget, header=24)
            inner_meta = inner.metadata()
            sub = Markdown()
            _write(inner, sub, inner_meta, f"{source}/{name}", replace(limits, depth=limits.depth + 1), budget)
            md.heading(1, f"Attachment: {inner_meta.get('subject') or name}")
            md.markdown(_nested(sub.text()))
            skipped_attachments += [f"{name}: {s}" for s in inner_meta.get("attachments_skipped", [])]
            continue
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in LOADERS or (suffix in (".eml", ".msg", ".zip") and limits.depth >= MAX_DEPTH):
            skipped_attachments.append(f"{name}: not read ({suffix or 'no suffix'})")
            continue
        payload = att.binary(ATTACH_DATA)
        if payload is None:
            skipped_attachments.append(f"{name}: no data (an OLE object or a link)")
            continue
        got = load_bytes(payload, suffix, f"{source}/{name}", replace(limits, depth=limits.depth + 1))
        skipped_attachments += [f"{name}: {s.reason}" for s in got.skipped]
        for doc in got.documents:
            budget.text(len(doc.text))
            md.heading(1, f"Attachment: {name}")
            md.markdown(_nested(doc.text))
    if skipped_attachments:
        meta["attachments_skipped"] = skipped_attachments


def _is_message(ole: Any, path: list[str]) -> bool:
    return ole.exists("/".join(path + ["__properties_version1.0"]))


def _meta_charset(html: bytes) -> str | None:
    from ragsift.ingest.loaders.encoding import declared_in_markup

    return declared_in_markup(html)


def decompress_rtf(data: bytes, limit: int) -> bytes:
    """A compressed RTF body ([MS-OXRTFCP]): LZFu decompressed (at most ``limit`` bytes), MELA
    stored as it is; in one pass."""
    if len(data) < 16:
        return b""
    _, raw_size, kind = struct.unpack_from("<III", data, 0)
    if kind == 0x414C454D:  # "MELA": not compressed
        return data[16:16 + min(raw_size, limit)]
    if kind != 0x75465A4C:  # "LZFu"
        raise OverLimit("an RTF body compressed in an unknown way")
    window = bytearray(RTF_PREBUF.ljust(4096, b"\x00"))
    write = len(RTF_PREBUF)
    out = bytearray()
    pos, n = 16, len(data)
    cap = min(raw_size, limit)
    while pos < n and len(out) < cap:
        flags = data[pos]
        pos += 1
        for bit in range(8):
            if pos >= n or len(out) >= cap:
                break
            if flags & (1 << bit):
                if pos + 1 >= n:
                    return bytes(out)
                ref = (data[pos] << 8) | data[pos + 1]
                pos += 2
                offset, length = ref >> 4, (ref & 0xF) + 2
                if offset == write:  # the end
                    return bytes(out)
                for i in range(length):
                    c = window[(offset + i) % 4096]
                    out.append(c)
                    window[write] = c
                    write = (write + 1) % 4096
            else:
                c = data[pos]
                pos += 1
                out.append(c)
                window[write] = c
                write = (write + 1) % 4096
    return bytes(out)
