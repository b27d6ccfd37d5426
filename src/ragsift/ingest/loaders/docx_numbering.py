"""Word's list numbers as Word shows them (``numbering.xml``: each list's counters and level
texts, decimal, letters, Roman, Chinese numerals), and the WordprocessingML namespace and value
readers the DOCX reader (``docx``) shares with them."""
from __future__ import annotations

import re
from typing import Any

from ragsift.ingest.loaders.base import MAX_LIST_LEVEL

UNORDERED = {"bullet", "none", ""}  # list formats that are not numbers
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _attr(el: Any, child: str) -> str | None:
    """The ``w:val`` of ``el``'s child ``w:<child>`` (None when absent)."""
    if el is None:
        return None
    c = el.find(W + child)
    return None if c is None else c.get(W + "val")


def _int(v: str | None, default: int) -> int:
    try:
        return int(v) if v is not None else default
    except ValueError:
        return default


# ---------------------------------------------------------------- list numbers as Word shows them
NUMERALS = "〇一二三四五六七八九"
STEMS = "甲乙丙丁戊己庚辛壬癸"
LEGAL = "零壹贰叁肆伍陆柒捌玖"
ROMAN = [(1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"),
         (9, "ix"), (5, "v"), (4, "iv"), (1, "i")]


def number_as(n: int, fmt: str) -> str:
    """``n`` in a numbering format of Word's (``w:numFmt``); decimal for formats not known here
    and for numbers out of a format's range."""
    if fmt in ("lowerLetter", "upperLetter") and 1 <= n <= 26 * 30:
        s = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return s.upper() if fmt == "upperLetter" else s
    if fmt in ("lowerRoman", "upperRoman") and 1 <= n < 4000:
        out = []
        for v, sym in ROMAN:
            while n >= v:
                out.append(sym)
                n -= v
        s = "".join(out)
        return s.upper() if fmt == "upperRoman" else s
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt in ("chineseCounting", "chineseCountingThousand", "taiwaneseCounting", "japaneseCounting",
               "ideographLegalTraditional", "chineseLegalSimplified") and 0 <= n < 100_000:
        digits = LEGAL if "Legal" in fmt else NUMERALS
        return _chinese(n, digits, "拾佰仟万" if "Legal" in fmt else "十百千万")
    if fmt == "ideographDigital" and n >= 0:
        return "".join(NUMERALS[int(d)] for d in str(n))
    if fmt in ("ideographTraditional", "ideographZodiac") and n >= 1:
        return STEMS[(n - 1) % 10]
    if fmt == "decimalEnclosedCircle" and 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if fmt == "decimalFullWidth" and n >= 0:
        return "".join(chr(0xFF10 + int(d)) for d in str(n))
    return str(n)


def _chinese(n: int, digits: str, units: str) -> str:
    """``n`` (below 100,000) in Chinese numerals: 十一, 二十, 一百零五."""
    if n == 0:
        return digits[0]
    out: list[str] = []
    zero = False
    for i, p in enumerate((10_000, 1000, 100, 10, 1)):
        d = n // p % 10
        if d == 0:
            zero = bool(out)
            continue
        if zero:
            out.append(digits[0])
            zero = False
        unit = "" if p == 1 else units[3 - i] if i < 4 else ""
        out.append(("" if p == 10 and d == 1 and not out and digits is NUMERALS else digits[d]) + unit)
    return "".join(out)


class _Numbering:
    """A document's numbering (``numbering.xml``): each list's counters, kept per abstract list
    (list instances of one abstract list continue it, unless they restart a level)."""

    def __init__(self, root: Any) -> None:
        self.abstract: dict[str, dict[int, tuple[str, str, int, bool]]] = {}  # level -> fmt, text, start, legal
        self.nums: dict[str, tuple[str, dict[int, int]]] = {}  # numId -> abstract id, restarts
        self.counts: dict[str, list[int | None]] = {}
        self.begun: set[str] = set()
        if root is None:
            return
        for a in root.iter(W + "abstractNum"):
            levels = {}
            for lvl in a.iter(W + "lvl"):
                i, start = _int(lvl.get(W + "ilvl"), 0), _int(_attr(lvl, "start"), 1)
                if 0 <= i <= MAX_LIST_LEVEL:
                    levels[i] = (_attr(lvl, "numFmt") or "bullet", (_attr(lvl, "lvlText") or "")[:64],
                                 max(0, min(start, 1 << 30)), lvl.find(W + "isLgl") is not None)
            self.abstract[a.get(W + "abstractNumId") or ""] = levels
        for n in root.iter(W + "num"):
            restarts = {}
            for o in n.iter(W + "lvlOverride"):
                i, override = _int(o.get(W + "ilvl"), -1), _attr(o, "startOverride")
                if 0 <= i <= MAX_LIST_LEVEL and override is not None:
                    restarts[i] = max(0, min(_int(override, 1), 1 << 30))
            self.nums[n.get(W + "numId") or ""] = (_attr(n, "abstractNumId") or "", restarts)

    def next(self, num_id: str, level: int) -> tuple[str | None, int | None]:
        """The next item of list ``num_id`` at ``level``: (its label as shown, or None for a
        bullet; its number when the label is a plain "N." or "N)")."""
        aid, restarts = self.nums.get(num_id, ("", {}))
        levels = self.abstract.get(aid, {})
        fmt, text, start, legal = levels.get(level, ("bullet", "", 1, False))
        if fmt in UNORDERED:
            return None, None
        counts = self.counts.setdefault(aid, [None] * (MAX_LIST_LEVEL + 1))
        if num_id not in self.begun:
            self.begun.add(num_id)
            for i, s in restarts.items():
                counts[i] = s - 1
        counts[level] = start if counts[level] is None else (counts[level] or 0) + 1
        for deeper in range(level + 1, MAX_LIST_LEVEL + 1):
            counts[deeper] = None
        number = counts[level] or 0

        def shown(m: re.Match[str]) -> str:
            i = int(m.group(1)) - 1
            f, _, s, _ = levels.get(i, ("decimal", "", 1, False))
            n = counts[i] if i <= MAX_LIST_LEVEL and counts[i] is not None else s
            return number_as(n or 0, "decimal" if legal and i < level else f)

        label = re.sub(r"%([1-9])", shown, text).strip() or number_as(number, fmt)
        plain = fmt == "decimal" and re.fullmatch(rf"%{level + 1}[.)]", text) is not None
        return label, number if plain else None

