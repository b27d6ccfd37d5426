"""The text of bytes in whatever encoding they came: a byte order mark (UTF-8, UTF-16, UTF-32)
first; then UTF-16 or UTF-32 without one, told by where their NUL bytes stand (an ASCII letter
is ``x 00`` in UTF-16LE, ``x 00 00 00`` in UTF-32LE); then UTF-8; then an encoding the file
declares (a mail part's charset, an HTML ``<meta charset>``, an RTF or Outlook code page); then a
legacy single-byte or CJK encoding (GB18030/GBK, Big5, Shift-JIS, EUC-KR, Windows-1252, ...)
found by charset-normalizer (MIT) from the bytes' statistics. Bytes that are none of these (NUL
bytes that are not UTF-16/32 text, or no encoding fits) are binary, never guessed: the caller
says why it skips them."""
from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
SAMPLE = 1 << 16  # bytes looked at to tell UTF-16 and UTF-32 by their NULs
MAX_ODD = 0.01  # at most this share of characters may be controls, unassigned or private use in real text

#: what a detector's or a file's name of an encoding is read as: the superset Windows and
#: browsers use (a GB2312 file may hold GBK characters, a Big5 one Microsoft's, ...)
SUPERSET = {"gb2312": "gb18030", "gbk": "gb18030", "cp936": "gb18030", "big5": "cp950", "shift_jis": "cp932",
            "euc_kr": "cp949", "ks_c_5601_1987": "cp949", "iso8859_1": "cp1252", "latin_1": "cp1252",
            "ascii": "utf-8", "us_ascii": "utf-8", "iso8859_8_i": "iso8859_8", "x_mac_chinesesimp": "gb18030"}
#: where a detector finds several encodings equally likely, the one more often written (Windows-1252
#: over Windows-1250 for text both decode alike, GB18030 over Big5 for the punctuation both hold);
#: lower is preferred, an encoding not named here last
PREFERRED = {"utf_8": 0, "cp1252": 1, "gb18030": 1, "cp950": 1.2, "cp932": 1.3, "cp949": 1.4, "cp1251": 1.5,
             "euc_jp": 1.6, "koi8_r": 2, "cp1250": 2, "cp1253": 2, "cp1254": 2, "cp1255": 2, "cp1256": 2,
             "cp1257": 2, "cp874": 2, "iso8859_2": 3, "iso8859_5": 3, "iso8859_7": 3, "big5hkscs": 3}


@dataclass(frozen=True)
class Decoded:
    """Text decoded from bytes (``text`` None when they are not text, with ``reason`` why), and
    the encoding it was read in (Python's name)."""

    text: str | None
    encoding: str = ""
    reason: str = ""


def codec_name(name: str | None) -> str | None:
    """Python's name of an encoding a file or a detector names, its superset where one exists;
    None when Python knows no such encoding."""
    if not name:
        return None
    try:
        canon = codecs.lookup(name.strip().strip("\"'").lower()).name
    except (LookupError, ValueError):
        return None
    canon = canon.replace("-", "_")
    return SUPERSET.get(canon, canon)


#: encodings written in 7-bit bytes with escape sequences (a declared one is believed for ASCII bytes)
SEVEN_BIT = ("iso2022", "utf_7", "hz")


def decode(data: bytes, declared: str | None = None) -> Decoded:
    """The text of ``data``: by its byte order mark, as UTF-16/32 by its NULs, as UTF-8, in the
    ``declared`` encoding, or in the encoding detected; else not text, with the reason."""
    for bom, enc in BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode(enc), enc)
            except UnicodeDecodeError as e:
                return Decoded(None, enc, f"invalid {enc.upper()} at byte {e.start + len(bom)}")
    if b"\x00" in data[:SAMPLE] or b"\x00" in data[-SAMPLE:]:
        wide = _wide(data)
        if wide is not None:
            return wide
        return Decoded(None, "", "binary content (NUL bytes) in a text file")
    enc = codec_name(declared) or ""
    if enc.startswith(SEVEN_BIT) and data.isascii():  # ISO-2022-JP and the like are ASCII bytes: UTF-8 would
        try:                                          # read their escape sequences as text
            return Decoded(data.decode(enc), enc)
        except (UnicodeDecodeError, LookupError):
            pass
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as e:
        bad = e
    if enc and enc != "utf_8":
        try:
            return Decoded(data.decode(enc), enc)
        except (UnicodeDecodeError, LookupError):
            pass
    found = detect(data)
    if found is not None:
        return Decoded(data.decode(found, errors="replace"), found)
    if enc and enc != "utf_8":  # the file's own word, with what does not fit it replaced
        return Decoded(data.decode(enc, errors="replace"), enc)
    return Decoded(None, "", f"not valid UTF-8 (byte 0x{data[bad.start]:02x} at offset {bad.start}) and no other "
                            "encoding fits it; convert the file to UTF-8 and ingest again")


def detect(data: bytes) -> str | None:
    """The legacy encoding charset-normalizer finds for ``data`` (None when none fits: binary
    data, or too little to tell); UTF-16 and UTF-32 are told by ``decode`` itself."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - a dependency
        return None
    best: tuple[float, float, float] | None = None
    found = None
    for match in from_bytes(data):
        # the encodings that decode these bytes to the same text (the detector reports one of them)
        for name in [match.encoding, *getattr(match, "could_be_from_charset", [])]:
            enc = codec_name(name)
            if enc is None or enc.startswith(("utf_16", "utf_32")):
                continue
            key = (round(match.chaos, 2), -round(match.coherence, 2), PREFERRED.get(enc, 4))
            if best is None or key < best:
                best, found = key, enc
    return found


def _wide(data: bytes) -> Decoded | None:
    """``data`` as UTF-32 or UTF-16 without a byte order mark, when its NULs stand where those
    encodings put them and what it decodes to is text; else None."""
    head = data[:SAMPLE]
    candidates = []
    if len(data) % 4 == 0:
        s = head[:len(head) - len(head) % 4]
        units = len(s) // 4
        if units and s[3::4].count(0) == units and max(s[2::4]) <= 0x10:
            candidates.append("utf-32-le")
        if units and s[0::4].count(0) == units and max(s[1::4]) <= 0x10:
            candidates.append("utf-32-be")
    if len(data) % 2 == 0:
        s = head[:len(head) - len(head) % 2]
        even, odd = s[0::2].count(0), s[1::2].count(0)
        if odd > 4 * even:
            candidates.append("utf-16-le")
        elif even > 4 * odd:
            candidates.append("utf-16-be")
    for enc in candidates:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        if plausible(text):
            return Decoded(text, enc)
    return None


_ODD_CATEGORIES = frozenset({"Cc", "Cn", "Co", "Cs"})
_CONTROLS_OK = frozenset("\t\n\r\f\v\x1b")


def plausible(text: str) -> bool:
    """Whether ``text`` reads as text: at most ``MAX_ODD`` of its first characters are control
    characters (but tabs and line ends), unassigned, private-use or surrogates (random bytes
    decoded as UTF-16 are many of these)."""
    sample = text[:20000]
    if not sample:
        return False
    odd = sum(1 for c in sample if c not in _CONTROLS_OK and unicodedata.category(c) in _ODD_CATEGORIES)
    return odd <= MAX_ODD * len(sample)


_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)
_XML_ENCODING = re.compile(
    rb"""\A(?:\xef\xbb\xbf)?\s{0,100}<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9_.:-]{1,40})""")


def declared_in_markup(data: bytes) -> str | None:
    """The encoding an HTML page (``<meta charset>``, within its first 4 KB) or an XML file (its
    declaration) says it is in."""
    head = data[:4096]
    m = _XML_ENCODING.match(head) or _META_CHARSET.search(head)
    return m.group(1).decode("ascii") if m else None
