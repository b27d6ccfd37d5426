"""A file's content against its suffix: a file that says it is a PDF but is a ZIP archive (or a
Word document that is plain text, an image that is HTML, a mail that is a PDF) is skipped with
what it really is, never handed to the wrong reader.

The mechanism only: each binary format's signature is given where its loader registers
(``base.register(".docx", signature=Zip("Word document", "word/"))``) and kept in ``SIGNATURES``
by suffix. ``Magic``: a format known by its first bytes (what ``what_it_is`` says of them, or
the bytes a new format's files start with);
``Zip``: a ZIP archive holding a member that marks the format; ``Ole``: an old Office (OLE) file
holding one of the format's streams; ``Mail``: headers, or text. A suffix without a signature
(a text format) is not checked."""
from __future__ import annotations

import io
import re
import zipfile

ZIP = "a ZIP archive"
OLE = "an old Office (OLE) file"


class Magic:
    """A format known by its first bytes: ``what_it_is`` says one of ``what`` of a file of it;
    ``kind`` names it in messages ("PDF": "not a PDF as its name says: ..."). A format
    ``what_it_is`` does not know gives the bytes its files start with (``starts``): then
    ``what_it_is`` knows it too, by ``kind``, for a file of it under another suffix."""

    def __init__(self, kind: str, *what: str, starts: bytes | tuple[bytes, ...] = ()) -> None:
        self.starts = (starts,) if isinstance(starts, bytes) else tuple(starts)
        self.kind, self.what = kind, what or ((_a(kind),) if self.starts else ())

    def mismatch(self, data: bytes) -> str | None:
        """Why ``data`` is not a file of this format (None when it is)."""
        actual = what_it_is(data)
        if actual not in self.what:
            return self.wrong(data, actual)
        return self.inside(data, actual)

    def wrong(self, data: bytes, actual: str) -> str:
        shown = _zip_kind(data) if actual == ZIP else actual
        return f"not {_a(self.kind)} as its name says: its content is {shown}"

    def inside(self, data: bytes, actual: str) -> str | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind!r})"


class Zip(Magic):
    """A ZIP archive that holds a member whose name starts with ``marker`` ("": any ZIP archive);
    ``holds``: what a ZIP archive with that member is called when it comes under another suffix
    (default: ``kind``, "a Word document")."""

    def __init__(self, kind: str, marker: str = "", holds: str = "") -> None:
        super().__init__(kind, ZIP)
        self.marker, self.holds = marker, holds or _a(kind)

    def wrong(self, data: bytes, actual: str) -> str:
        if actual == OLE and "encrypted" in (_ole_mismatch(data, (), self.kind) or ""):
            return f"encrypted {self.kind} (a password protects it)"  # Office keeps it in an OLE file
        return super().wrong(data, actual)

    def inside(self, data: bytes, actual: str) -> str | None:
        if not self.marker:
            return None
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError, OSError) as e:
            return f"damaged {self.kind}: {e}"
        if not any(n.startswith(self.marker) for n in names):
            return f"not {_a(self.kind)} as its name says: a ZIP archive without {self.marker}"
        return None


class Ole(Magic):
    """An old Office (OLE) file holding one of ``streams`` (lower case); ``also``: what else
    ``what_it_is`` may say of a file of it ("RTF" for a .doc); ``holds``: what an OLE file with
    those streams is called when it comes under another suffix."""

    def __init__(self, kind: str, *streams: str, also: tuple[str, ...] = (), holds: str = "") -> None:
        super().__init__(kind, OLE, *also)
        self.streams, self.holds = streams, holds or _a(kind)

    def inside(self, data: bytes, actual: str) -> str | None:
        return _ole_mismatch(data, self.streams, self.kind) if actual == OLE else None


class Mail(Magic):
    """A mail: headers, or a body alone that is text (``not_a_mail``)."""

    def __init__(self) -> None:
        super().__init__("mail")

    def mismatch(self, data: bytes) -> str | None:
        return not_a_mail(data)


#: each suffix's signature, as its loader registered it (``base.register(..., signature=)``)
SIGNATURES: dict[str, Magic] = {}

#: formats a mail is not, by their first bytes (besides what ``what_it_is`` knows)
NOT_MAIL = ((b"GIF87a", "a GIF image"), (b"GIF89a", "a GIF image"), (b"\x1f\x8b", "a gzip archive"),
            (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (b"Rar!\x1a\x07", "a RAR archive"),
            (b"\x7fELF", "a program (ELF)"))
#: a mail's first line: a header field ("Subject: ...", RFC 5322 field names) or an mbox "From " line
HEADER = re.compile(rb"(?:From |[\x21-\x39\x3b-\x7e]+[ \t]*:)")
#: a mail header a little further down (after a program's preamble line, such as Outlook's
#: "Microsoft Mail Internet Headers Version 2.0")
MAIL_HEADER = re.compile(rb"(?mi)^(?:from|to|subject|date|received|message-id|mime-version|content-type|"
                         rb"return-path|delivered-to)[ \t]*:")
SAMPLE = 64 * 1024
#: control bytes no text holds (tab, newlines, form feed, ESC, SO and SI, which ISO-2022 mail uses, left out)
CONTROL = re.compile(rb"[\x00-\x08\x0b\x10-\x1a\x1c-\x1f\x7f]")


def what_it_is(data: bytes) -> str:
    """What a file's first bytes say it is."""
    head = data[:1024]
    if head.startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return "a PDF"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "a ZIP archive"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "a PNG image"
    if head.startswith(b"\xff\xd8\xff"):
        return "a JPEG image"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "a TIFF image"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return "an old Office (OLE) file"
    if head.startswith(b"BM") and len(data) >= 26 and data[14] in (12, 40, 52, 56, 64, 108, 124):
        return "a BMP image"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "a WebP image"
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"hevc", b"hevx", b"mif1", b"msf1", b"heim", b"heis"):
        return "a HEIF image"
    if head.lstrip()[:5] == b"{\\rtf":
        return "RTF"
    if head.startswith((b"\xdb\xa5", b"\x31\xbe\x00\x00")):
        return "a Word 2 document"
    if head[:2] in (b"\x09\x00", b"\x09\x02", b"\x09\x04") and head[2:4] in (b"\x04\x00", b"\x06\x00"):
        return "an Excel 2-4 worksheet"
    for sig in SIGNATURES.values():  # formats registered with the bytes their files start with
        if sig.starts and head.startswith(sig.starts):
            return _a(sig.kind)
    if head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "HTML"
    if b"\x00" not in head:
        return "text"
    return "binary data of an unknown kind"


def mismatch(data: bytes, suffix: str) -> str | None:
    """Why a file's content does not fit its suffix (None when it does, or the suffix has no
    signature: a text format)."""
    signature = SIGNATURES.get(suffix)
    return signature.mismatch(data) if signature is not None else None


#: what an OLE file holds besides the formats registered (``Ole.holds``), by the stream that says so
OLE_OTHERS = (("encryptedpackage", "an encrypted Office file"),
              ("pp40", "a PowerPoint 4 deck (older than PowerPoint 97: not read)"))


def _ole_kinds() -> list[tuple[str, str]]:
    """What an OLE file holds, by the stream that says so: the registered formats', then others."""
    return [(stream, sig.holds) for sig in SIGNATURES.values() if isinstance(sig, Ole)
            for stream in sig.streams] + list(OLE_OTHERS)


def _zip_kinds() -> list[tuple[str, str]]:
    """What a ZIP archive holds, by the member that marks it (the registered formats')."""
    out: dict[str, str] = {}
    for sig in SIGNATURES.values():
        if isinstance(sig, Zip) and sig.marker:
            out.setdefault(sig.marker, sig.holds)
    return list(out.items())


def _ole_mismatch(data: bytes, streams: tuple[str, ...], kind: str) -> str | None:
    """Why an OLE file does not hold one of ``streams``, as a file of ``kind`` does (None when it does)."""
    try:
        import olefile
    except ImportError:  # the msg reader says what to install
        return None
    try:
        ole = olefile.OleFileIO(data)
    except Exception as e:  # olefile raises its own kinds, and OSError, on a damaged file
        return f"damaged {kind}: {str(e).strip()[:200] or type(e).__name__}"
    try:
        names = {e[0].lower() for e in ole.listdir(streams=True, storages=False)}
    finally:
        ole.close()
    if "encryptedpackage" in names:
        return f"encrypted {kind} (a password protects it)"
    if any(s in names for s in streams):
        return None
    held = next((what for stream, what in _ole_kinds() if stream in names), None)
    if held is None:
        return f"damaged {kind}: an OLE file without the streams of any document (cut short?)"
    return f"not {_a(kind)} as its name says: an OLE file holding {held}"


def _a(kind: str) -> str:
    return ("an " if kind[0] in "AEIOU" else "a ") + kind


def _zip_kind(data: bytes) -> str:
    """A ZIP archive named by what it holds ("a ZIP archive (a Word document)") when an Office,
    OpenDocument or EPUB file."""
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return "a ZIP archive"
    for marker, kind in _zip_kinds():
        if any(n.startswith(marker) for n in names):
            return f"a ZIP archive ({kind})"
    return "a ZIP archive"


def not_a_mail(data: bytes) -> str | None:
    """Why the bytes of an ``.eml`` are not a mail (None when they are): a file of a known binary
    format (a ZIP archive, an Office file, a PDF, an image), or bytes without mail headers that are
    no text in any encoding (a mail body alone, without headers, is read when it is text)."""
    from ragsift.ingest.loaders.encoding import decode

    head = data[:1024]
    kind = next((k for magic, k in NOT_MAIL if head.startswith(magic)), None) or what_it_is(data)
    if kind == "a PDF" and not head.startswith(b"%PDF"):  # a mail that mentions "%PDF-1.7" is a mail
        kind = "text"
    if kind not in ("text", "HTML", "binary data of an unknown kind"):
        if kind == "a ZIP archive":
            kind = _zip_kind(data)
        elif kind == "an old Office (OLE) file":
            kind += ", such as an Outlook .msg (save the mail as .eml from the mail program, or name it .msg)"
        return f"not a mail as its name says: its content is {kind}"
    sample = data[:SAMPLE]
    raw = sample.removeprefix(b"\xef\xbb\xbf")
    if HEADER.match(raw) or MAIL_HEADER.search(raw[:4096]):
        return None  # ASCII headers, whatever bytes follow them (a binary body is refused by mail.py)
    got = decode(sample)  # UTF-16/32 (a mail saved as "Unicode"), UTF-8, a legacy encoding
    text = got.text.encode("utf-8") if got.text is not None else b""
    if got.text is not None and (HEADER.match(text.removeprefix(b"\xef\xbb\xbf")) or MAIL_HEADER.search(text[:4096])):
        return None  # a header block: a mail, whatever its body (mail.py reads a binary body as none)
    if got.text is None or "\x00" in got.text:
        return "not a mail as its name says: its content is binary data of an unknown kind (no mail headers)"
    return None
