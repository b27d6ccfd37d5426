"""Text that every later step can hold: no lone surrogates (they cannot be encoded as UTF-8,
so no tokenizer, model or store takes them)."""
from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_str(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
