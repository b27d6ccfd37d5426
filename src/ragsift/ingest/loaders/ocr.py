"""Optical character recognition for scanned pages and images: RapidOCR (PP-OCRv4 detection and
recognition, Chinese and English, ONNX models that ship inside the ``rapidocr-onnxruntime``
wheel and load from disk; ``pip install 'ragsift[ocr]'``). The engine loads once per process.

A page is read in three steps, by the engine's parts (its version is pinned: 1.4.4):

- **Lines found** (the detection model), once, on the page as it is.
- **The page turned upright.** Lines whose boxes are taller than wide, by far the most of the
  page's text, mean a page turned sideways (90 or 270 degrees); then the direction classifier
  that ships with the engine (upright or upside down) votes, over pieces of the page's longest
  lines, which way up the text stands. A vote that is close, or of fewer than three pieces, is
  settled by reading the longest lines both ways and keeping the surer reading. A page found
  turned is turned back and its lines found again (``TURN_WORK``: found sideways, close lines
  ran together and were lost), so they come out upright and in reading order. The classifier
  never turns a line on its own: one line in twelve was turned wrongly that way, a page's vote
  is sure.
- **Lines read** (the recognition model), with where each character was read: a space is put
  between two letters, digits or words where the line's image is empty over a stretch as wide as
  a space (``SPACE_GAP`` of the line's ink height; the recognizer, trained mostly on Chinese,
  drops most spaces of small English text). Two Chinese (or Japanese) characters are never
  parted; a space the recognizer put between two is taken out.

What it gives is text lines with their boxes, in the upright page's pixels, which ``layout`` puts
in reading order and paragraphs like the lines of a born-digital page, and how far the page
was turned.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragsift.errors import ModelError
from ragsift.ingest.loaders.base import OCR_PAGE
from ragsift.text.lang import is_cjk_char

_engine: Any = None
_lock = threading.Lock()
MIN_SCORE = 0.5  # recognitions below this confidence are dropped
#: an image whose longer side is longer is read scaled down to it (the engine read no larger
#: before: it scaled pages down to this itself); a bound on what one page costs
MAX_SIDE = 2000
SIDEWAYS = 2.0  # a page is turned sideways when its tall lines are this many times longer than its wide ones
TALL = 1.5  # a box this many times taller than wide is a line standing on its side (the engine's own rule)
VOTE_LINES = 16  # the longest lines whose pieces the direction classifier votes on
PIECE = 4.0  # a piece of a line this many times as wide as it is high (the classifier's input is 192 x 48)
SURE = 0.75  # a vote with this share of the classifier's confidence one way decides it
CHECK_LINES = 3  # the longest lines read both ways when the vote does not decide
#: pages of work (``base.Budget``) that reading them both ways counts, beside the page's own
#: ``OCR_PAGE``: measured, finding a page's lines took 15% of its reading, reading its three
#: longest lines both ways 10%
CHECK_WORK = 0.2 * OCR_PAGE
TURN_WORK = 0.2 * OCR_PAGE  # ... and finding a turned page's lines again
MIN_SIDE = 8  # an image narrower (in pixels) holds no text to read
MAX_ASPECT = 4  # an image is padded to at most this many times as long as wide for the detector
DETECT_SIDE = 32  # ... and to at least this many pixels a side (the engine's own 30)
SPACE_GAP = 0.27  # an empty stretch between two characters this wide (of the line's ink height) is a space
SYMBOL_GAP = 0.4  # ... beside a symbol (a slash, a dash, a quote), where glyphs are narrow
LETTER_GAPS = 2.5  # ... and this many times the line's middle gap between two letters (a spaced-out line)
NO_SPACE_BEFORE = set(",.;:!?)]}%”’»")
NO_SPACE_AFTER = set("([{“‘«")
CJK_PUNCT = set("。，、；：！？（）「」『』【】《》〈〉“”‘’·…—～")


@dataclass(frozen=True)
class OcrLine:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    score: float


@dataclass(frozen=True)
class OcrPage:
    """A page read by OCR: its lines (boxes in the upright page's pixels), how far its text
    stood turned (degrees counterclockwise: 0, 90, 180, 270; it was read turned back), the
    upright page's size, and whether its direction needed lines read both ways."""

    lines: list[OcrLine]
    rotation: int
    width: float
    height: float
    checked: bool = False

    @property
    def extra_work(self) -> float:
        """Pages of work (``base.Budget``) this page took beside an upright page's reading (what
        ``read_image`` told its ``earn``)."""
        return (CHECK_WORK if self.checked else 0) + (TURN_WORK if self.rotation else 0)


def available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def read_image(image: Any, earn: Callable[[float], None] | None = None) -> OcrPage:
    """The text lines of an image (a NumPy array or a PIL image of any mode), turned upright, in no
    particular order (an image larger than ``MAX_SIDE`` is read scaled down; boxes in its own
    pixels). ``earn`` is told the pages of work (``base.Budget.earn``) the page takes beside an
    upright page's reading, before it is done: lines read both ways, lines found again."""
    import numpy as np
    from PIL import Image

    if not hasattr(image, "convert"):
        image = Image.fromarray(np.asarray(image))
    image = _rgb(image)
    scale = 1.0
    if max(image.size) > MAX_SIDE:
        scale = max(image.size) / MAX_SIDE
        image = image.resize((max(1, round(image.size[0] / scale)), max(1, round(image.size[1] / scale))))
    arr = np.asarray(image)
    rotation, checked = 0, False
    with _lock:  # one page at a time: the engine is not safe across threads
        engine = _engine_loaded()
        boxes = _detect(engine, arr)
        if boxes:
            rotation, checked = _orientation(engine, arr, boxes, earn)
            if rotation:  # lines found again on the page turned upright: found sideways, some ran together
                if earn is not None:
                    earn(TURN_WORK)
                arr = np.ascontiguousarray(np.rot90(arr, -(rotation // 90)))
                boxes = _detect(engine, arr)
            crops = engine.get_crop_img_list(arr, boxes)
            recs = engine.text_rec(crops, True)[0] if crops else []
        else:
            crops, recs = [], []
    out = []
    for box, crop, rec in zip(boxes, crops, recs):
        if float(rec[1]) < MIN_SCORE:
            continue
        text = spaced(rec, crop).strip()
        if not text:
            continue
        xs, ys = box[:, 0] * scale, box[:, 1] * scale
        out.append(OcrLine(text, float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()), float(rec[1])))
    return OcrPage(out, rotation, arr.shape[1] * scale, arr.shape[0] * scale, checked)


def _rgb(image: Any) -> Any:
    """A PIL image as 8-bit RGB: what is transparent on white (text drawn on a transparent PNG
    was black on black), 16-bit and float grey scaled to 8 bits (Pillow clips them at 255)."""
    import numpy as np
    from PIL import Image

    if image.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        grey = np.asarray(image, dtype=np.float64)
        top = float(grey.max()) if grey.size else 0.0
        grey = grey * (255.0 / top) if top > 255 else grey
        image = Image.fromarray(grey.clip(0, 255).astype(np.uint8), "L")
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        ground = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(ground, rgba).convert("RGB")
    return image.convert("RGB") if image.mode != "RGB" else image


def _detect(engine: Any, arr: Any) -> list[Any]:
    """The page's text boxes (four corners each, clockwise from the top left), top to bottom. An
    image less than ``MIN_SIDE`` pixels across has none; a narrow one is padded to ``MAX_ASPECT``
    for the detector, which scales an image's shorter side up to 736 pixels (a 2 x 5,000 strip
    was made 736 x 1.8 million, and the process was killed)."""
    import numpy as np

    h, w = arr.shape[:2]
    if min(h, w) < MIN_SIDE:
        return []
    ph, pw = max(h, -(-w // MAX_ASPECT), DETECT_SIDE), max(w, -(-h // MAX_ASPECT), DETECT_SIDE)
    if (ph, pw) != (h, w):  # padded right and below with the ground's colour: boxes keep their place
        ground = np.median(np.concatenate([arr[0], arr[-1], arr[:, 0], arr[:, -1]]), axis=0).astype(arr.dtype)
        padded = np.empty((ph, pw, arr.shape[2]), dtype=arr.dtype)
        padded[...] = ground
        padded[:h, :w] = arr
        arr_det = padded
    else:
        arr_det = arr
    img, record = engine.maybe_add_letterbox(arr_det, {})  # a single line's strip is padded for the detector
    found, _ = engine.text_det(img)
    if found is None or len(found) == 0:
        return []
    found = np.array(found, dtype=np.float32)
    found[:, :, 1] -= record["padding_1"]["top"]
    found[:, :, 0] = found[:, :, 0].clip(0, w - 1)
    found[:, :, 1] = found[:, :, 1].clip(0, h - 1)
    keep = [b for b in found if min(_sides(b)) >= 1.0]  # a box in the padding alone is flat once clipped
    return list(engine.sorted_boxes(np.array(keep))) if keep else []


def _sides(box: Any) -> tuple[float, float]:
    import numpy as np

    w = max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3]))
    h = max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2]))
    return float(w), float(h)


def _orientation(engine: Any, arr: Any, boxes: list[Any], earn: Callable[[float], None] | None) -> tuple[int, bool]:
    """How far the page's text stands turned (counterclockwise), and whether lines were read both
    ways to know it (the module docstring; ``earn`` is told that work before it is done)."""
    import numpy as np

    sides = [_sides(b) for b in boxes]
    tall = sum(h for w, h in sides if h >= TALL * w)
    wide = sum(w for w, h in sides if w >= TALL * h)
    sideways = tall > SIDEWAYS * wide
    kind = [i for i, (w, h) in enumerate(sides) if (h >= TALL * w if sideways else w >= TALL * h)]
    if not kind:
        return 0, False
    longest = sorted(kind, key=lambda i: -max(sides[i]))[:VOTE_LINES]
    # the engine stands a tall crop up by turning it a quarter counterclockwise: the text of a page
    # turned a quarter counterclockwise then stands upside down, of one turned clockwise upright
    crops = engine.get_crop_img_list(arr, [boxes[i] for i in longest])
    pieces = [p for c in crops for p in _pieces(c)]
    _, votes, _ = engine.text_cls(pieces)
    down = sum(float(s) for label, s in votes if label == "180")
    up = sum(float(s) for label, s in votes if label != "180")
    share = down / (down + up) if down + up > 0 else 0.0
    checked = len(pieces) < 3 or 1 - SURE < share < SURE
    if checked:  # read the longest lines as they stand and upside down: the surer reading wins
        if earn is not None:
            earn(CHECK_WORK)
        some = crops[:CHECK_LINES]
        as_is = engine.text_rec(some)[0]
        turned = engine.text_rec([np.ascontiguousarray(np.rot90(c, 2)) for c in some])[0]
        flipped = sum(float(r[1]) for r in turned) > sum(float(r[1]) for r in as_is)
    else:
        flipped = share >= 0.5
    if sideways:
        return (90 if flipped else 270), checked
    return (180 if flipped else 0), checked


def _pieces(crop: Any) -> list[Any]:
    """Up to three pieces of a line's image, each ``PIECE`` times as wide as high (start, middle,
    end): the classifier squeezes a longer line into its input and reads it less surely."""
    h, w = crop.shape[:2]
    size = int(PIECE * h)
    if w <= size * 1.5:
        return [crop]
    return [crop[:, x:x + size] for x in sorted({0, (w - size) // 2, w - size})]


def spaced(rec: Any, crop: Any) -> str:
    """A recognized line's text with spaces where its image has them (the module docstring);
    ``rec`` is the recognizer's (text, score, [columns, words, their columns, ...])."""
    import numpy as np

    text = str(rec[0])
    info = rec[2] if len(rec) > 2 else None
    chars = [c for w in info[1] for c in w] if info else []
    cols = [p for w in info[2] for p in w] if info else []
    if not info or not chars or "".join(chars) != text or len(cols) != len(chars) or crop.size == 0:
        return _unspaced_cjk(_latin_punct(list(text)))
    chars = list(_latin_punct(chars))
    gray = crop.mean(axis=2) if crop.ndim == 3 else crop.astype(float)
    lo, hi = np.percentile(gray, (2, 98))
    if hi - lo < 40:  # no contrast to see gaps by
        return _unspaced_cjk("".join(chars))
    # ink: anything clearly darker than the ground (a link's colour too: a midway cut broke its
    # letters apart, "rel ease"); light text on a dark ground turned round
    ink = gray < hi - 0.3 * (hi - lo)
    if ink.mean() > 0.5:
        ink = gray > lo + 0.3 * (hi - lo)
    cover = ink.mean(axis=1)
    rows = np.nonzero((cover > 0) & (cover < 0.6))[0]  # a rule or an underline across the line aside
    if len(rows) == 0:
        return _unspaced_cjk("".join(chars))
    height = float(rows[-1] - rows[0] + 1)
    blank = ~ink[rows].any(axis=0)
    edges = np.diff(np.concatenate(([0], blank.astype(np.int8), [0])))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]  # empty stretches [start, end)
    xs = [(p + 0.5) / max(1e-6, float(info[0])) * crop.shape[1] for p in cols]
    # the widest empty stretch between each character and the next that is not a space (in line
    # heights), the stretches walked once: the characters stand left to right
    pairs: list[tuple[int, int, float]] = []
    k = 0
    for i in range(len(chars) - 1):
        if chars[i] == " " or chars[i + 1] == " ":
            continue
        a, b = xs[i], xs[i + 1]
        while k < len(ends) and ends[k] <= a:
            k += 1
        gap, j = 0.0, k
        while j < len(starts) and starts[j] < b:
            gap = max(gap, min(float(ends[j]), b) - max(float(starts[j]), a))
            j += 1
        pairs.append((i, i + 1, gap / height))
    # a line set with its letters spaced out (a long link justified): a space stands out of them
    letters = sorted(g for i, j, g in pairs if chars[i].isascii() and chars[i].isalnum() and chars[j].isascii()
                     and chars[j].isalnum())
    floor = LETTER_GAPS * letters[len(letters) // 2] if len(letters) >= 4 else 0.0
    cut = {i for i, j, g in pairs if _space_between(chars[i - 1] if i else "", chars[i], chars[j], g, floor)}
    return _unspaced_cjk("".join(c + (" " if i in cut else "") for i, c in enumerate(chars)))


def _space_between(before: str, a: str, b: str, gap: float, floor: float) -> bool:
    """Whether characters ``a`` and ``b`` (``before`` them: the character before ``a``) stand a
    ``gap`` apart, in line heights, that is a space (at least ``floor``: a spaced-out line's)."""
    if _cjk(a) and _cjk(b):
        return False
    if b in NO_SPACE_BEFORE or a in NO_SPACE_AFTER or b in CJK_PUNCT or a in CJK_PUNCT:
        return False
    if a in ".:" and before.isdigit() and b.isdigit():  # 12.2.0, 10:30 (a monospaced point stands apart)
        return False
    if gap < floor:
        return False
    if (a.isalnum() or a in ",.;:!?)]}") and b.isalnum():  # after a comma: its own narrow glyph, then a space
        return gap >= SPACE_GAP
    return gap >= SYMBOL_GAP


def _latin_punct(chars: list[str]) -> str:
    """Full-width punctuation (the recognizer's habit, "seq(-5，5）") as ASCII between characters
    that are not Chinese (or Japanese)."""
    text = "".join(chars)
    if not any("\uff01" <= c <= "\uff5e" for c in text):
        return text
    n = len(text)
    left, right = [""] * n, [""] * n  # the nearest character that is not a space on each side
    for i in range(1, n):
        left[i] = text[i - 1] if text[i - 1] != " " else left[i - 1]
    for i in range(n - 2, -1, -1):
        right[i] = text[i + 1] if text[i + 1] != " " else right[i + 1]
    out = list(text)
    for i, c in enumerate(text):
        if "\uff01" <= c <= "\uff5e" and not _cjk(left[i]) and not _cjk(right[i]):
            out[i] = chr(ord(c) - 0xFEE0)
    return "".join(out)


def _cjk(ch: str) -> bool:
    return is_cjk_char(ch) or ch in CJK_PUNCT


def _unspaced_cjk(text: str) -> str:
    """``text`` without spaces between two Chinese (or Japanese) characters."""
    if " " not in text:
        return text
    out: list[str] = []
    for i, c in enumerate(text):
        if c == " " and 0 < i < len(text) - 1 and _cjk(out[-1] if out else "") and _cjk(text[i + 1]):
            continue
        out.append(c)
    return "".join(out)


def _engine_loaded() -> Any:
    global _engine
    if _engine is None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise ModelError("reading scanned pages and images needs OCR: pip install 'ragsift[ocr]'") from None
        _engine = RapidOCR()
    return _engine
