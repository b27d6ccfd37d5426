"""Deadlines and cancellation shared by channels and the model calls they make, and the
reader-writer lock that lets queries run beside a writer.

A ``Deadline`` is handed to every channel; model calls bound their network timeouts by it and
check it between tokens, so a channel's work really ends when its time is up (Python threads
cannot be killed, so each blocking call must end by itself).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ragsift.errors import Cancelled  # noqa: F401 - re-exported (the error lives in ragsift.errors)


class Deadline:
    def __init__(self, seconds: float | None = None, parent: Deadline | None = None) -> None:
        self._at = None if seconds is None else time.monotonic() + seconds
        self._event = threading.Event()
        self._parent = parent
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def child(self, seconds: float) -> Deadline:
        """A deadline ``seconds`` from now that also ends when this one does."""
        return Deadline(seconds, parent=self)

    @classmethod
    def never(cls) -> Deadline:
        return cls(None)

    def remaining(self) -> float:
        """Seconds left (``inf`` without a deadline; 0 once cancelled)."""
        if self._event.is_set():
            return 0.0
        own = float("inf") if self._at is None else max(0.0, self._at - time.monotonic())
        return own if self._parent is None else min(own, self._parent.remaining())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def cancel(self) -> None:
        """End this deadline (and its children) now, and run what was registered to stop the
        work waiting on it (``on_cancel``)."""
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            try:
                fn()
            except Exception:  # a callback that fails must not stop the others
                pass

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Run ``fn`` when this deadline or a parent is cancelled (at once if it already is):
        how blocking work that cannot check the deadline is interrupted (an HTTP read is
        aborted by shutting its socket). Returns a function that unregisters ``fn``."""
        chain: list[Deadline] = []
        d: Deadline | None = self
        while d is not None:
            with d._lock:
                if d._event.is_set():
                    break
                d._callbacks.append(fn)
            chain.append(d)
            d = d._parent
        else:
            return lambda: _unregister(chain, fn)
        _unregister(chain, fn)  # one in the chain was cancelled already
        fn()
        return lambda: None

    def check(self, what: str = "work") -> None:
        if self.expired:
            raise Cancelled(f"{what} cancelled: out of time")

    def bound(self, seconds: float) -> float:
        """``seconds`` capped by the time left; raises when nothing is left."""
        left = self.remaining()
        if left <= 0:
            raise Cancelled("out of time")
        return min(seconds, left)


def _unregister(chain: list[Deadline], fn: Callable[[], None]) -> None:
    for d in chain:
        with d._lock:
            if fn in d._callbacks:
                d._callbacks.remove(fn)


class RWLock:
    """Many readers or one writer; a waiting writer goes before readers that arrive after it,
    so a steady stream of queries cannot starve a refresh."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()
