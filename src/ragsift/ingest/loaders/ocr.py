"""Optical character recognition for scanned pages and images: RapidOCR (PP-OCRv4 detection and
recognition, Chinese and English, ONNX models that ship inside the ``rapidocr-onnxruntime``
wheel and load from disk; ``pip install 'ragsift[ocr]'``). The engine loads once per process.

What it gives is text lines with their boxes, which ``layout`` puts in reading order and
paragraphs like the lines of a born-digital page.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from ragsift.errors import ModelError

_engine: Any = None
_lock = threading.Lock()
MIN_SCORE = 0.5  # recognitions below this confidence are dropped
#: an image whose longer side is longer is read scaled down to it: about 350 dpi on an A4 page, and a
#: bound on what one page costs (an image just under Pillow's pixel limit took 100 s and 1.3 GB)
MAX_SIDE = 4096


@dataclass(frozen=True)
class OcrLine:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    score: float


def available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def read_image(image: Any) -> list[OcrLine]:
    """The text lines of an image (a NumPy array or a PIL image), in no particular order; boxes in
    the image's own pixels (an image larger than ``MAX_SIDE`` is read scaled down)."""
    import numpy as np
    from PIL import Image

    if not hasattr(image, "convert"):
        image = Image.fromarray(np.asarray(image))
    scale = 1.0
    if max(image.size) > MAX_SIDE:
        scale = max(image.size) / MAX_SIDE
        image = image.resize((max(1, round(image.size[0] / scale)), max(1, round(image.size[1] / scale))))
    arr = np.asarray(image.convert("RGB"))
    with _lock:  # one recognition at a time: the engine is not safe across threads
        # no per-line direction classifier: it took some upright lines for upside-down ones,
        # turned them and lost them (measured: one English line in twelve at 150 dpi)
        result, _ = _engine_loaded()(arr, use_cls=False)
    out = []
    for box, text, score in result or []:
        if float(score) < MIN_SCORE or not str(text).strip():
            continue
        xs = [float(p[0]) * scale for p in box]
        ys = [float(p[1]) * scale for p in box]
        out.append(OcrLine(str(text).strip(), min(xs), min(ys), max(xs), max(ys), float(score)))
    return out


def _engine_loaded() -> Any:
    global _engine
    if _engine is None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise ModelError("reading scanned pages and images needs OCR: pip install 'ragsift[ocr]'") from None
        _engine = RapidOCR()
    return _engine
