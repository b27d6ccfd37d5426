"""Per-caller limits: a token bucket (a rate with a burst) and a cap on requests in flight, so
that one caller cannot fill the server's worker threads. A caller is its API key (a digest of
it, never the key itself), or its address when the server has no keys."""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

MAX_CALLERS = 10_000  # callers remembered (addresses are many); the least recently seen go first


@dataclass
class _Bucket:
    tokens: float
    at: float
    inflight: int = 0


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: int, max_inflight: int) -> None:
        self.rate, self.burst, self.max_inflight = rate_per_s, burst, max_inflight
        self._callers: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def acquire(self, caller: str) -> tuple[float, str] | None:
        """Admit a request (None), or say how long to wait and why: (seconds, reason). An
        admitted request must be ``release``d when answered."""
        now = time.monotonic()
        with self._lock:
            b = self._callers.get(caller)
            if b is None:
                b = self._callers[caller] = _Bucket(float(self.burst), now)
                while len(self._callers) > MAX_CALLERS:
                    oldest, ob = next(iter(self._callers.items()))
                    if ob.inflight:  # never forget a caller with requests in flight
                        self._callers.move_to_end(oldest)
                        break
                    self._callers.popitem(last=False)
            else:
                self._callers.move_to_end(caller)
            b.tokens = min(float(self.burst), b.tokens + (now - b.at) * self.rate)
            b.at = now
            if b.inflight >= self.max_inflight:
                return 1.0, f"at most {self.max_inflight} requests of one caller at a time"
            if b.tokens < 1.0:
                return max(1.0, math.ceil((1.0 - b.tokens) / self.rate)), \
                    f"at most {self.rate:g} requests a second (bursts of {self.burst})"
            b.tokens -= 1.0
            b.inflight += 1
            return None

    def release(self, caller: str) -> None:
        with self._lock:
            b = self._callers.get(caller)
            if b is not None and b.inflight > 0:
                b.inflight -= 1
