"""A file's content against its suffix: a file that says it is a PDF but is a ZIP archive (or a
Word document that is plain text, an image that is HTML) is skipped with what it really is,
never handed to the wrong reader."""
from __future__ import annotations

import io
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
    kind = KINDS.get(suffix)
    if kind is None:
        return None
    actual = what_it_is(data)
    if actual not in EXPECTED.get(kind, ("a ZIP archive",)):
        if actual == "an old Office (OLE) file" and suffix in ZIP_SUFFIXES and "encrypted" in (
                _ole_mismatch(data, suffix, kind) or ""):
            return f"encrypted {kind} (a password protects it)"
        return f"not {_a(kind)} as its name says: its content is {actual}"
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
