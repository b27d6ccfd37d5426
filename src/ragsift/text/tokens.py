"""Token counting for size caps and budgets.

ragsift counts *approximate tokens*: one per CJK character and one per Latin word,
number or other symbol run. That is close to what LLM tokenizers give for Chinese
(about one token a character) and a little under them for English (about 1.3 a word),
and it needs no model. Budgets and chunk sizes in the settings use this unit.
"""
from __future__ import annotations

import re

_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN_RE.finditer(text))


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of each counted token, for cutting text at a token boundary."""
    return [m.span() for m in _TOKEN_RE.finditer(text)]


def cut_to_tokens(text: str, max_tokens: int, marker: str = "") -> str:
    """``text`` cut after ``max_tokens`` counted tokens; ``marker`` is appended when it was cut."""
    spans = token_spans(text)
    return text if len(spans) <= max_tokens else text[: spans[max_tokens - 1][1]] + marker
