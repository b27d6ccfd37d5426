"""A file's content against its suffix: a file that says it is a PDF but is a ZIP archive (or a
Word document that is plain text, an image that is HTML) is skipped with what it really is,
never handed to the wrong reader."""
from __future__ import annotations

import io
import zipfile

ZIP_SUFFIXES = {".docx": "word/", ".docm": "word/", ".pptx": "ppt/", ".pptm": "ppt/", ".xlsx": "xl/",
                ".xlsm": "xl/", ".odt": "content.xml", ".epub": "META-INF/container.xml", ".zip": ""}
KINDS = {".pdf": "PDF", ".png": "PNG image", ".jpg": "JPEG image", ".jpeg": "JPEG image", ".tif": "TIFF image",
         ".tiff": "TIFF image", ".docx": "Word document", ".docm": "Word document", ".pptx": "PowerPoint deck",
         ".pptm": "PowerPoint deck", ".xlsx": "Excel workbook", ".xlsm": "Excel workbook", ".odt": "OpenDocument text",
         ".epub": "EPUB book", ".zip": "ZIP archive"}


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
    expected = {"PDF": "a PDF", "PNG image": "a PNG image", "JPEG image": "a JPEG image",
                "TIFF image": "a TIFF image"}.get(kind, "a ZIP archive")
    if actual != expected:
        return f"not a {kind} as its name says: its content is {actual}"
    marker = ZIP_SUFFIXES.get(suffix)
    if marker:
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError, OSError) as e:
            return f"damaged {kind}: {e}"
        if not any(n.startswith(marker) for n in names):
            return f"not a {kind} as its name says: a ZIP archive without {marker}"
    return None
