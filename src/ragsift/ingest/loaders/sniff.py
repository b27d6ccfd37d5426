"""A file's content against its suffix: a file that says it is a PDF but is a ZIP archive (or a
Word document that is plain text, an image that is HTML, a mail that is a PDF) is skipped with
what it really is, never handed to the wrong reader."""
from __future__ import annotations

import io
import re
import zipfile

ZIP_SUFFIXES = {".docx": "word/", ".docm": "word/", ".pptx": "ppt/", ".pptm": "ppt/", ".xlsx": "xl/",
                ".xlsm": "xl/", ".odt": "content.xml", ".epub": "META-INF/container.xml", ".zip": ""}
KINDS = {".pdf": "PDF", ".png": "PNG image", ".jpg": "JPEG image", ".jpeg": "JPEG image", ".tif": "TIFF image",
         ".tiff": "TIFF image", ".docx": "Word document", ".docm": "Word document", ".pptx": "PowerPoint deck",
         ".pptm": "PowerPoint deck", ".xlsx": "Excel workbook", ".xlsm": "Excel workbook", ".odt": "OpenDocument text",
         ".epub": "EPUB book", ".zip": "ZIP archive"}
#: formats known by their first bytes
MAGIC = ((b"%PDF", "a PDF"), (b"PK\x03\x04", "a ZIP archive"), (b"PK\x05\x06", "a ZIP archive"),
         (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"II*\x00", "a TIFF image"),
         (b"MM\x00*", "a TIFF image"), (b"\xd0\xcf\x11\xe0", "an old Office (OLE) file"),
         (b"GIF87a", "a GIF image"), (b"GIF89a", "a GIF image"), (b"\x1f\x8b", "a gzip archive"),
         (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (b"Rar!\x1a\x07", "a RAR archive"),
         (b"\x7fELF", "a program (ELF)"))
#: what a ZIP archive holds, by the folder (or file) that marks it
ZIP_KINDS = (("word/", "a Word document"), ("ppt/", "a PowerPoint deck"), ("xl/", "an Excel workbook"),
             ("META-INF/container.xml", "an EPUB book"), ("content.xml", "an OpenDocument file"))
#: control bytes no text holds (tab, newlines, form feed, ESC, SO and SI, which ISO-2022 mail uses, left out)
CONTROL = re.compile(rb"[\x00-\x08\x0b\x10-\x1a\x1c-\x1f\x7f]")
#: a mail's first line: a header field ("Subject: ...", RFC 5322 field names) or an mbox "From " line
HEADER = re.compile(rb"(?:From |[\x21-\x39\x3b-\x7e]+[ \t]*:)")
#: a mail header a little further down (after a program's preamble line, such as Outlook's
#: "Microsoft Mail Internet Headers Version 2.0")
MAIL_HEADER = re.compile(rb"(?mi)^(?:from|to|subject|date|received|message-id|mime-version|content-type|"
                         rb"return-path|delivered-to)[ \t]*:")
SAMPLE = 64 * 1024


def what_it_is(data: bytes) -> str:
    """What a file's first bytes say it is."""
    head = data[:1024]
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    if b"%PDF-" in head:
        return "a PDF"
    if head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "HTML"
    if b"\x00" not in head:
        return "text"
    return "binary data of an unknown kind"


def _zip_kind(data: bytes) -> str:
    """A ZIP archive named by what it holds ("a ZIP archive (a Word document)") when an Office,
    OpenDocument or EPUB file."""
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return "a ZIP archive"
    for marker, kind in ZIP_KINDS:
        if any(n.startswith(marker) for n in names):
            return f"a ZIP archive ({kind})"
    return "a ZIP archive"


def mismatch(data: bytes, suffix: str) -> str | None:
    """Why a file's content does not fit its suffix (None when it does, or the suffix is a text format)."""
    if suffix == ".eml":
        return not_a_mail(data)
    kind = KINDS.get(suffix)
    if kind is None:
        return None
    actual = what_it_is(data)
    expected = {"PDF": "a PDF", "PNG image": "a PNG image", "JPEG image": "a JPEG image",
                "TIFF image": "a TIFF image"}.get(kind, "a ZIP archive")
    if actual != expected:
        return f"not a {kind} as its name says: its content is {_zip_kind(data) if 'ZIP' in actual else actual}"
    marker = ZIP_SUFFIXES.get(suffix)
    if marker:
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError, OSError) as e:
            return f"damaged {kind}: {e}"
        if not any(n.startswith(marker) for n in names):
            return f"not a {kind} as its name says: a ZIP archive without {marker}"
    return None


def not_a_mail(data: bytes) -> str | None:
    """Why the bytes of an ``.eml`` are not a mail (None when they are): a file of a known binary
    format (a ZIP archive, an Office file, a PDF, an image), or bytes without mail headers that are
    not UTF-8 text (binary data; a mail body alone, without headers, is read when it is text)."""
    head = data[:1024]
    for magic, kind in MAGIC:
        if head.startswith(magic):
            if kind == "a ZIP archive":
                kind = _zip_kind(data)
            elif magic == b"\xd0\xcf\x11\xe0":
                kind += ", such as an Outlook .msg (save the mail as .eml from the mail program)"
            return f"not a mail as its name says: its content is {kind}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text with its byte-order mark: read as text
        return None
    sample = data[:SAMPLE].removeprefix(b"\xef\xbb\xbf")
    if HEADER.match(sample) or MAIL_HEADER.search(sample[:4096]):
        return None  # a header block: a mail, whatever its body (mail.py reads a binary body as none)
    if b"\x00" in sample or len(CONTROL.findall(sample)) > len(sample) // 100:
        return "not a mail as its name says: its content is binary data of an unknown kind (no mail headers)"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(sample) - 3:  # not a character cut at the sample's end
            return (f"not a mail as its name says: no mail headers, and its content is not UTF-8 text (byte "
                    f"0x{sample[e.start]:02x} at offset {e.start})")
    return None
