"""The language-model protocol every implementation follows, its error, and the helpers that
turn next-token log-probabilities into a yes/no score (the LLM judge)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from ragsift.cancel import Deadline
from ragsift.errors import LLMError  # noqa: F401 - re-exported (the error lives in ragsift.errors)

Messages = Sequence[dict[str, str]]

YES_WORDS = ("yes", "是")
NO_WORDS = ("no", "否", "不")



class LLM(Protocol):
    name: str  # identifies the model (and endpoint) in cache keys and traces

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str: ...

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        """log P(yes) - log P(no) for the model's next token after ``messages``."""
        ...


def yes_no_from_logprobs(pairs: Sequence[tuple[str, float]]) -> float | None:
    """Combine next-token log-probabilities of yes-like and no-like tokens."""
    yes, no = [], []
    for tok, lp in pairs:
        t = tok.strip().lower()
        if t in YES_WORDS:
            yes.append(lp)
        elif t in NO_WORDS:
            no.append(lp)
    if not yes and not no:
        return None
    floor = min(lp for _, lp in pairs) - 1.0  # a token outside the top list is less likely than all in it
    return logsumexp(yes or [floor]) - logsumexp(no or [floor])


def logsumexp(xs: Sequence[float]) -> float:
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))



def short(s: str, n: int = 200) -> str:
    """One line of at most ``n`` characters, for error messages."""
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"
