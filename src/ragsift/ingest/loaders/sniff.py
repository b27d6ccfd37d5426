"""A file's content against its suffix: a file that says it is a PDF but is a ZIP archive (or a
Word document that is plain text, an image that is HTML, a mail that is a PDF) is skipped with
what it really is, never handed to the wrong reader."""
from __future__ import annotations

import io
import re
import zipfile

ZIP_SUFFIXES = {".docx": "word/", ".docm": "word/", ".pptx": "ppt/", ".pptm": "ppt/", ".xlsx": "xl/",
                ".xlsm": "xl/", ".odt": "content.xml", ".odp": "content.xml", ".ods": "content.xml",
                ".epub": "META-INF/container.xml", ".zip": ""}
KINDS = {".pdf": "PDF", ".png": "PNG image", ".jpg": "JPEG image", ".jpeg": "JPEG image", ".tif": "TIFF image",
         ".tiff": "TIFF image", ".bmp": "BMP image", ".webp": "WebP image", ".heic": "HEIF image",
         ".docx": "Word document", ".docm": "Word document", ".pptx": "PowerPoint deck",
         ".pptm": "PowerPoint deck", ".xlsx": "Excel workbook", ".xlsm": "Excel workbook", ".odt": "OpenDocument text",
         ".odp": "OpenDocument presentation", ".ods": "OpenDocument spreadsheet", ".epub": "EPUB book",
         ".zip": "ZIP archive", ".doc": "Word 97-2003 document", ".xls": "Excel 97-2003 workbook",
         ".ppt": "PowerPoint 97-2003 deck", ".msg": "Outlook message", ".rtf": "RTF document"}
#: what a file of each suffix may really be (its ``what_it_is``): a ZIP archive unless said here
EXPECTED = {"PDF": ("a PDF",), "PNG image": ("a PNG image",), "JPEG image": ("a JPEG image",),
            "TIFF image": ("a TIFF image",), "BMP image": ("a BMP image",), "WebP image": ("a WebP image",),
            "HEIF image": ("a HEIF image",), "Word 97-2003 document": ("an old Office (OLE) file", "RTF",
                                                                       "a Word 2 document"),
            "Excel 97-2003 workbook": ("an old Office (OLE) file", "an Excel 2-4 worksheet"),
            "PowerPoint 97-2003 deck": ("an old Office (OLE) file",), "Outlook message": ("an old Office (OLE) file",),
            "RTF document": ("RTF",)}
#: the stream an OLE file of each suffix holds (a .xls that holds a Word document is not read as one)
OLE_STREAMS = {".doc": ("worddocument",), ".xls": ("workbook", "book"), ".ppt": ("powerpoint document",),
               ".msg": ("__properties_version1.0",)}

#: formats a mail is not, by their first bytes (besides what ``what_it_is`` knows)
NOT_MAIL = ((b"GIF87a", "a GIF image"), (b"GIF89a", "a GIF image"), (b"\x1f\x8b", "a gzip archive"),
            (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (b"Rar!\x1a\x07", "a RAR archive"),
            (b"\x7fELF", "a program (ELF)"))
#: what a ZIP archive holds, by the folder (or file) that marks it
ZIP_KINDS = (("word/", "a Word document"), ("ppt/", "a PowerPoint deck"), ("xl/", "an Excel workbook"),
             ("META-INF/container.xml", "an EPUB book"), ("content.xml", "an OpenDocument file"))
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
    if head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "HTML"
    if b"\x00" not in head:
        return "text"
    return "binary data of an unknown kind"


def mismatch(data: bytes, suffix: str) -> str | None:
    """Why a file's content does not fit its suffix (None when it does, or the suffix is a text format)."""
    if suffix == ".eml":
        return not_a_mail(data)
    kind = KINDS.get(suffix)
    if kind is None:
        return None
    actual = what_it_is(data)
    if actual not in EXPECTED.get(kind, ("a ZIP archive",)):
        if actual == "an old Office (OLE) file" and suffix in ZIP_SUFFIXES and "encrypted" in (
                _ole_mismatch(data, suffix, kind) or ""):
            return f"encrypted {kind} (a password protects it)"
        shown = _zip_kind(data) if actual == "a ZIP archive" else actual
        return f"not {_a(kind)} as its name says: its content is {shown}"
    if actual == "an old Office (OLE) file":
        return _ole_mismatch(data, suffix, kind)
    marker = ZIP_SUFFIXES.get(suffix)
    if marker:
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError, OSError) as e:
            return f"damaged {kind}: {e}"
        if not any(n.startswith(marker) for n in names):
            return f"not {_a(kind)} as its name says: a ZIP archive without {marker}"
    return None


#: what an OLE file holds, by the stream that says so
OLE_KINDS = (("worddocument", "a Word document"), ("workbook", "an Excel workbook"), ("book", "an Excel workbook"),
             ("powerpoint document", "a PowerPoint deck"), ("__properties_version1.0", "an Outlook message"),
             ("encryptedpackage", "an encrypted Office file"),
             ("pp40", "a PowerPoint 4 deck (older than PowerPoint 97: not read)"))


def _ole_mismatch(data: bytes, suffix: str, kind: str) -> str | None:
    """Why an OLE file does not hold what its suffix says (None when it does)."""
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
    if any(s in names for s in OLE_STREAMS.get(suffix, ())):
        return None
    held = next((what for stream, what in OLE_KINDS if stream in names), None)
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
    for marker, kind in ZIP_KINDS:
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
