"""A spreadsheet cell's value as its number format shows it (ECMA-376 number formats, as Excel
and LibreOffice write them): dates and times by their codes (``yyyy-mm-dd``, ``d-mmm-yy``,
``h"时"mm"分"``, ``[h]:mm``), numbers with their decimals, thousands separators, percent, scientific
notation, currency and literal text, the section for negative numbers and zero; booleans as
``TRUE`` / ``FALSE``. The formats whose look depends on the reader's locale (Excel's built-in
short date, 14, which openpyxl names ``mm-dd-yy``, and its date and time, 22) are written as ISO
dates. Fractions, and anything not understood here, fall back to the number written shortest
(at most 15 significant digits, so a float's noise such as 0.30000000000000004 is not shown).

One pass over the format's characters (a format is at most ``MAX_FORMAT`` characters; each is
parsed once and kept)."""
from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

MAX_FORMAT = 255  # Excel's own limit for a number format
LOCALE_FORMATS = {"mm-dd-yy": "yyyy-mm-dd", "m/d/yy h:mm": "yyyy-mm-dd h:mm", "m/d/yyyy": "yyyy-mm-dd",
                  "m/d/yy": "yyyy-mm-dd"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DATE_TOKEN = re.compile(r'"[^"]*"|\\.|_.|\*.|\[[^\]]*\]|yyyy|yy|e|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|'
                        r"am/pm|a/p|\.0+|.", re.IGNORECASE | re.DOTALL)
ELAPSED = re.compile(r"\[(h+|m+|s+)\]", re.IGNORECASE)


def shown(value: Any, fmt: str | None) -> str:
    """``value`` (what openpyxl reads: None, bool, int, float, str, datetime, date, time,
    timedelta) as the number format ``fmt`` shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return value
    fmt = (fmt or "General")[:MAX_FORMAT]
    if fmt == "General" and isinstance(value, (int, float)):
        return general(value)
    try:
        if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
            return _date(value, fmt).strip()
        if isinstance(value, (int, float)):
            return _number(value, fmt).strip()
    except (ValueError, OverflowError, InvalidOperation, ArithmeticError):
        pass
    return general(value) if isinstance(value, (int, float)) else str(value)


def general(v: float | int) -> str:
    """A number written shortest: an integer as one, else at most 15 significant digits, in
    positional notation unless it is very large or very small."""
    if isinstance(v, int):
        return str(v)
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    s = f"{v:.15g}"
    if "e" in s and 1e-10 <= abs(v) < 1e15:
        s = format(Decimal(s), "f")
    return s


# ------------------------------------------------------------------ sections
@lru_cache(maxsize=1024)
def _sections(fmt: str) -> list[str]:
    """A format's sections (positive; negative; zero; text), split on ``;`` outside quotes."""
    out, cur, quoted, escaped = [], [], False, False
    for ch in fmt:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            cur.append(ch)
            escaped = True
        elif ch == '"':
            quoted = not quoted
            cur.append(ch)
        elif ch == ";" and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _pick(fmt: str, v: float) -> tuple[str, bool]:
    """The section that shows ``v``, and whether its sign is in the section (no ``-`` to add)."""
    secs = _sections(fmt)
    conditional = [s for s in secs if re.match(r"\s*(\[[^\]]*\]\s*)*\[[<>=]", s)]
    if conditional:  # [>=100]"big";[<0]... : the first whose condition holds
        for s in secs:
            m = re.search(r"\[([<>=]{1,2})\s*(-?[\d.]+)\]", s)
            if m is None:
                return s, False
            op, bound = m.group(1), float(m.group(2))
            if {"<": v < bound, ">": v > bound, "=": v == bound, "<=": v <= bound, ">=": v >= bound,
                    "<>": v != bound}.get(op, False):
                return s, v < 0
        return secs[-1], False
    if v < 0 and len(secs) >= 2 and secs[1].strip():
        return secs[1], True
    if v == 0 and len(secs) >= 3 and secs[2].strip():
        return secs[2], True
    return secs[0], False


# ------------------------------------------------------------------ numbers
@lru_cache(maxsize=1024)
def _parse_number(section: str) -> tuple[str, str, str, int, int, bool, int, int, bool] | None:
    """A number section: (prefix, suffix, exponent sign or "", decimals (-1: General, -2: literal
    text only), integer zeros, grouping, percents, thousands scaling, General); None when it is not
    one read here (fractions, text between digits)."""
    tokens = _number_tokens(section)
    places = [k for k, (kind, _) in enumerate(tokens) if kind in ("digit", "general")]
    if not places:
        return ("".join(t for _, t in tokens), "", "", -2, 0, False, 0, 0, False)
    first, last = places[0], places[-1]
    while first > 0 and tokens[first - 1][0] == "point":
        first -= 1
    while last + 1 < len(tokens) and tokens[last + 1][0] in ("comma", "point"):
        last += 1
    core = tokens[first:last + 1]
    if any(kind == "lit" for kind, t in core) or "/" in "".join(t for _, t in core):
        return None  # fractions, digits with text between them: written shortest
    prefix = "".join(t for _, t in tokens[:first])
    suffix = "".join(t for _, t in tokens[last + 1:])
    percents = sum(t.count("%") for kind, t in tokens if kind == "lit")
    if any(kind == "general" for kind, _ in core):
        return (prefix, suffix, "", -1, 0, False, percents, 0, True)
    exp = next((t for kind, t in core if kind == "exp"), "")
    mant = core[:next((k for k, (kind, _) in enumerate(core) if kind == "exp"), len(core))]
    point = next((k for k, (kind, _) in enumerate(mant) if kind == "point"), len(mant))
    ip, dp = mant[:point], mant[point + 1:]
    scale = 0
    while ip and ip[-1][0] == "comma":  # #,##0, : thousands
        scale += 1
        ip = ip[:-1]
    while dp and dp[-1][0] == "comma":
        scale += 1
        dp = dp[:-1]
    decimals = sum(1 for kind, _ in dp if kind == "digit")
    digits = [t for kind, t in ip if kind == "digit"]
    zeros = len(digits) - digits.index("0") if "0" in digits else 0  # "0#", "000": digits always shown
    return (prefix, suffix, exp, decimals, zeros, any(kind == "comma" for kind, _ in ip), percents, scale, False)


def _number_tokens(section: str) -> list[tuple[str, str]]:
    """A number section's tokens as (kind, text): lit (literal text: quoted, escaped, a space for
    ``_x``, a currency symbol), digit, point, comma, exp (its sign), general."""
    tokens: list[tuple[str, str]] = []  # (kind, text): lit, digit, point, comma, exp, general
    i, n = 0, len(section)
    while i < n:
        ch = section[i]
        if ch == '"':
            j = section.find('"', i + 1)
            j = n if j < 0 else j
            tokens.append(("lit", section[i + 1:j]))
            i = j + 1
        elif ch == "\\" and i + 1 < n:
            tokens.append(("lit", section[i + 1]))
            i += 2
        elif ch == "_" and i + 1 < n:
            tokens.append(("lit", " "))
            i += 2
        elif ch == "*" and i + 1 < n:
            i += 2
        elif ch == "[":
            j = section.find("]", i)
            j = n if j < 0 else j
            inner = section[i + 1:j]
            if inner.startswith("$"):  # [$€-407]: the currency symbol
                tokens.append(("lit", inner[1:].split("-")[0]))
            i = j + 1
        elif section[i:i + 7].lower() == "general":
            tokens.append(("general", ""))
            i += 7
        elif ch in "0#?":
            tokens.append(("digit", ch))
            i += 1
        elif ch in "Ee" and section[i + 1:i + 2] in ("+", "-") and any(k == "digit" for k, _ in tokens):
            tokens.append(("exp", section[i + 1]))
            i += 2
        else:
            tokens.append(("point" if ch == "." else "comma" if ch == "," else "lit", ch))
            i += 1
    return tokens


def _number(v: float | int, fmt: str) -> str:
    fmt = LOCALE_FORMATS.get(fmt, fmt)
    section, signed = _pick(fmt, v)
    if _is_date(section):
        from openpyxl.utils.datetime import from_excel

        return _date(from_excel(v), section)
    parsed = _parse_number(section)
    if parsed is None:
        return general(v)
    prefix, suffix, exp_sign, decimals, zeros, grouping, percents, scale, is_general = parsed
    x = abs(v) if (signed or v >= 0) else -v
    neg = v < 0 and not signed
    if decimals == -2:  # literal text only
        return prefix.replace("@", general(v))
    x = x * (100 ** percents) / (1000 ** scale)
    if is_general:
        body = general(x)
    elif exp_sign:
        mant = f"{x:.{decimals}E}"
        m, _, e = mant.partition("E")
        e_val = int(e)
        body = f"{m}E{'-' if e_val < 0 else '+' if exp_sign == '+' else ''}{abs(e_val):02d}"
    else:
        q = Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
        ip, _, fp = f"{q:f}".partition(".")
        ip = ip.lstrip("0")
        ip = ip.rjust(zeros, "0") if zeros else ip
        if grouping and ip:
            ip = f"{int(ip):,}"
        body = ip + ("." + fp if decimals else "")
        if not body:
            body = "0" if zeros or not decimals else body
    text = (prefix + body + suffix).replace("@", "")
    return ("-" + text) if neg and any(c.isdigit() and c != "0" for c in body) else text


# ------------------------------------------------------------------ dates and times
@lru_cache(maxsize=1024)
def _is_date(section: str) -> bool:
    """Whether a section shows a date or time (a date code outside quotes and brackets, or an
    elapsed time ``[h]``)."""
    if ELAPSED.search(section):
        return True
    for m in DATE_TOKEN.finditer(section):
        t = m.group(0)
        if t[0] in '"\\_*[':
            continue
        if t.lower()[0] in "ymdhse" and t.lower() not in ("e",):
            return True
    return False


def _date(value: Any, fmt: str) -> str:
    fmt = LOCALE_FORMATS.get(fmt, fmt)
    section = _sections(fmt)[0]
    if isinstance(value, dt.timedelta):
        return _elapsed(value, section)
    if isinstance(value, (int, float)):
        from openpyxl.utils.datetime import from_excel

        value = from_excel(value)
    if not _is_date(section):
        if isinstance(value, dt.datetime):
            return value.isoformat(sep=" ", timespec="seconds").removesuffix(" 00:00:00")
        return value.isoformat()
    if ELAPSED.search(section):
        if isinstance(value, dt.datetime):
            value = value - dt.datetime(1899, 12, 30)
        elif isinstance(value, dt.time):
            value = dt.timedelta(hours=value.hour, minutes=value.minute, seconds=value.second)
        if isinstance(value, dt.timedelta):
            return _elapsed(value, section)
    d = value if isinstance(value, (dt.datetime, dt.date)) else None
    t = value if isinstance(value, dt.time) else (value.time() if isinstance(value, dt.datetime) else dt.time())
    tokens, twelve = _date_tokens(section)
    return "".join(_date_part(tokens, i, d, t, twelve) for i in range(len(tokens))).strip()


def _date_part(tokens: list[str], i: int, d: dt.date | None, t: dt.time, twelve: bool) -> str:  # noqa: C901 (one branch per date token, as the spec lists them)
    """What the date section's token ``i`` shows of the date ``d`` and the time ``t``."""
    tok = tokens[i]
    low = tok.lower()
    if tok[0] == '"':
        return tok[1:-1]
    if tok[0] == "\\" and len(tok) > 1:
        return tok[1]
    if tok[0] == "_":
        return " "
    if tok[0] in "*[":
        return ""
    if low in ("yyyy", "e"):
        return f"{d.year:04d}" if d else ""
    if low == "yy":
        return f"{d.year % 100:02d}" if d else ""
    if low in ("m", "mm") and _minutes(tokens, i):
        return f"{t.minute:02d}" if low == "mm" else str(t.minute)
    if low in ("m", "mm", "mmm", "mmmm", "mmmmm"):
        if not d:
            return ""
        name = MONTHS[d.month - 1]
        return {"m": str(d.month), "mm": f"{d.month:02d}", "mmm": name[:3], "mmmm": name, "mmmmm": name[0]}[low]
    if low in ("d", "dd"):
        return (str(d.day) if low == "d" else f"{d.day:02d}") if d else ""
    if low in ("ddd", "dddd"):
        return (DAYS[d.weekday()][:3] if low == "ddd" else DAYS[d.weekday()]) if d else ""
    if low in ("h", "hh"):
        h = t.hour % 12 or 12 if twelve else t.hour
        return str(h) if low == "h" else f"{h:02d}"
    if low in ("s", "ss"):
        return str(t.second) if low == "s" else f"{t.second:02d}"
    if low.startswith(".0"):
        return f"{t.microsecond / 1e6:.{len(low) - 1}f}"[1:]
    if low == "am/pm":
        return "AM" if t.hour < 12 else "PM"
    if low == "a/p":
        return "A" if t.hour < 12 else "P"
    return tok


@lru_cache(maxsize=1024)
def _date_tokens(section: str) -> tuple[list[str], bool]:
    """A date section's tokens (parsed once), and whether it shows a 12-hour clock."""
    tokens = [m.group(0) for m in DATE_TOKEN.finditer(section)]
    return tokens, any(x.lower() in ("am/pm", "a/p") for x in tokens)


def _minutes(tokens: list[str], i: int) -> bool:
    """Whether ``m``/``mm`` at ``i`` means minutes: after an hour or before a second (literals between)."""
    for j in range(i - 1, -1, -1):
        low = tokens[j].lower()
        if low in ("h", "hh") or low.startswith("[h"):
            return True
        if low[0] in "ymd" and low[0] != "[":
            break
    for j in range(i + 1, len(tokens)):
        low = tokens[j].lower()
        if low in ("s", "ss") or low.startswith("[s"):
            return True
        if low[0] in "ymdh":
            break
    return False


def _elapsed(value: dt.timedelta, section: str) -> str:
    """A duration as ``[h]:mm:ss`` and the like show it."""
    total = int(value.total_seconds())
    sign = "-" if total < 0 else ""
    total = abs(total)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    low = section.lower()
    if "[m" in low:
        return f"{sign}{total // 60}:{s:02d}" if "s" in low.replace("[m", "") else f"{sign}{total // 60}"
    if "[s" in low:
        return f"{sign}{total}"
    if "s" in low:
        return f"{sign}{h}:{m:02d}:{s:02d}"
    return f"{sign}{h}:{m:02d}"
