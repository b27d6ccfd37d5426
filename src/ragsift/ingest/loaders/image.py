"""Images (PNG, JPEG, TIFF, BMP, WebP; every frame of a multi-page TIFF; HEIF/HEIC where a HEIF
decoder is installed: ``pip install pi-heif``, not a dependency as its libraries are LGPL), read by
OCR (``ocr``: RapidOCR, Chinese and English; ``pip install 'ragsift[ocr]'``). Pillow opens them with a pixel limit
(``MAX_PIXELS``: a decompression bomb is skipped, not decoded); each frame is a page, turned
as its EXIF orientation says, then upright by its text (``ocr``). The document's metadata
names the pages read (``ocr_pages``), those found turned and by how much (``ocr_rotated``:
degrees counterclockwise by page) and those that gave no text (``ocr_empty``)."""
from __future__ import annotations

import io
from typing import Any

import ragsift.ingest.loaders.layout as layout
import ragsift.ingest.loaders.ocr as ocr
from ragsift.ingest.loaders.base import (
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    OverLimit,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.layout import Word
from ragsift.ingest.loaders.sniff import Magic

MAX_PIXELS = 60_000_000  # about 7,700 x 7,700: a page scanned at 600 dpi is 35 million


@register(".png", signature=Magic("PNG image", "a PNG image"))
@register(".jpg", ".jpeg", signature=Magic("JPEG image", "a JPEG image"))
@register(".tif", ".tiff", signature=Magic("TIFF image", "a TIFF image"))
@register(".bmp", signature=Magic("BMP image", "a BMP image"))
@register(".webp", signature=Magic("WebP image", "a WebP image"))
def load_image(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from PIL import Image, ImageSequence

    if not limits.ocr or not ocr.available():
        return skipped(source, "an image: reading its text needs OCR: pip install 'ragsift[ocr]'")
    budget = Budget(limits, packed_bytes=len(data))
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        img = Image.open(io.BytesIO(data))
        img.size  # noqa: B018 - the header is read (and checked) here
    except Image.DecompressionBombError as e:
        raise OverLimit(f"an image of too many pixels (a decompression bomb?): {e}") from None
    md = Markdown()
    pages = 0
    rotated: dict[str, int] = {}
    empty: list[int] = []
    for n, frame in enumerate(ImageSequence.Iterator(img), 1):
        budget.page(ocr=True)
        if frame.size[0] * frame.size[1] > MAX_PIXELS:
            raise OverLimit(f"frame {n} has {frame.size[0] * frame.size[1]} pixels; at most {MAX_PIXELS}")
        page = ocr.read_image(_as_shown(frame), budget.earn)
        words = []
        for ln in page.lines:
            budget.text(len(ln.text) + 1)
            words.append(Word(ln.text, ln.x0, ln.top, ln.x1, ln.bottom, ln.bottom - ln.top))
        lines = layout.lines_of(words, page.width, n)
        md.mark("page", n)
        for text, _ in layout.paragraphs(lines):
            md.para(text)
        pages = n
        if page.rotation:
            rotated[str(n)] = page.rotation
        if not lines:
            empty.append(n)
    meta: dict[str, object] = {"ocr_pages": list(range(1, pages + 1))}
    if rotated:
        meta["ocr_rotated"] = rotated
    if empty:
        meta["ocr_empty"] = empty
    if len(empty) == pages:
        return skipped(source, f"an image: OCR found no text on its {pages} page(s)" if pages > 1
                       else "an image: OCR found no text in it")
    return structured(source, source_title(source), md, data, "image", meta)


def _as_shown(frame: Any) -> Any:
    """A frame turned as its EXIF orientation says (as a viewer shows it); as it is when its EXIF
    cannot be read."""
    from PIL import ImageOps

    try:
        return ImageOps.exif_transpose(frame)
    except Exception:  # noqa: BLE001 - damaged EXIF: Pillow raises what its parsers raise
        return frame


@register(".heic", signature=Magic("HEIF image", "a HEIF image"))
@register(".heif")
def load_heif(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    """A HEIF image (an iPhone's photo), where a HEIF decoder that Pillow opens with is installed."""
    try:
        from pi_heif import register_heif_opener
    except ImportError:
        try:
            from pillow_heif import register_heif_opener
        except ImportError:
            return skipped(source, "a HEIF image: reading it needs a HEIF decoder, not installed with ragsift "
                                   "(its libraries are LGPL): pip install pi-heif")
    register_heif_opener()
    return load_image(data, source, limits)
