"""One retry loop for every HTTP client of a model (embedders, the LLM client, rerankers): an
attempt either returns, raises ``Transient`` for a failure that may pass (a connection error, a
429, a 5xx), or raises anything else, which ends the call at once. Retries are bounded in
number and by the deadline, with an exponential back-off between them."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from ragsift.cancel import Deadline

T = TypeVar("T")


class Transient(Exception):
    """An attempt's failure that may pass; its message is the reason kept for the final error."""


def transient_status(code: int) -> bool:
    """HTTP statuses worth retrying: too many requests and server errors."""
    return code == 429 or code >= 500


def retried(attempt: Callable[[float], T], *, deadline: Deadline, retries: int, fail: Callable[[str], Exception],
            backoff: float = 0.25, max_backoff: float = 2.0) -> T:
    """``attempt(seconds_left)`` until it returns, at most ``retries`` more times after a
    ``Transient`` failure, within ``deadline``; then ``fail(reasons)`` is raised, the reasons
    being "failed after N attempt(s): ..." (or "out of time" when no attempt could start)."""
    reasons: list[str] = []
    for i in range(retries + 1):
        left = deadline.remaining()
        if left <= 0:
            break
        try:
            return attempt(left)
        except Transient as e:
            reasons.append(str(e))
        pause = min(backoff * 2 ** i, max_backoff)
        if i == retries or deadline.remaining() <= pause:
            break
        time.sleep(pause)
    raise fail(f"failed after {len(reasons)} attempt(s): {'; '.join(reasons)}" if reasons else "out of time")
