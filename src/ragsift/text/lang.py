"""Language detection good enough to pick an analyzer and prompt: Chinese or English."""
from __future__ import annotations

import re

# CJK Unified Ideographs (+ extension A, compatibility ideographs)
CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")


def is_cjk_char(ch: str) -> bool:
    return bool(CJK_RE.match(ch))


def detect_language(text: str) -> str:
    """'zh' when CJK characters make up a real share of the text, else 'en'.

    One CJK character counts against one Latin word, so "什么是 BERT?" is 'zh'.
    """
    cjk = len(CJK_RE.findall(text))
    words = len(_LATIN_WORD_RE.findall(text))
    if cjk == 0:
        return "en"
    return "zh" if cjk >= words * 0.5 else "en"
