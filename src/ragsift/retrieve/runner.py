"""The channel runner: channels run concurrently, each with its own deadline.

- A channel that fails or runs out of time contributes nothing; its error is recorded.
- Each channel gets a :class:`~ragsift.cancel.Deadline`. Model calls bound their network
  timeouts by it and local generation checks it between tokens, so the work ends when the
  deadline passes; the runner cancels the deadlines of late channels and waits a short grace
  period for them to end before it returns. ``active_channels()`` counts channel functions
  still running (zero after a query returns, unless a channel ignores its deadline).
- End-to-end time is that of the slowest channel (bounded by its timeout), not the sum.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, TypeVar

from ragsift.cancel import Cancelled, Deadline

T = TypeVar("T")
ChannelFn = Callable[[Deadline], T]

CANCEL_GRACE_S = 1.0
_pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="ragsift-channel")
_active = 0
_active_lock = threading.Lock()


def active_channels() -> int:
    """Channel functions still running in this process."""
    return _active


@dataclass(frozen=True)
class ChannelOutcome(Generic[T]):
    value: T | None
    elapsed_ms: float
    error: str | None = None


def _run(fn: ChannelFn, deadline: Deadline) -> tuple[object, float, str | None, bool]:
    """(value, ms, error, whether the deadline had passed when the channel returned)."""
    global _active
    with _active_lock:
        _active += 1
    t = time.perf_counter()
    try:
        value = fn(deadline)
        return value, (time.perf_counter() - t) * 1000, None, deadline.expired
    except Exception as e:  # a channel's failure is recorded, never raised
        return None, (time.perf_counter() - t) * 1000, f"{type(e).__name__}: {e}", deadline.expired
    finally:
        with _active_lock:
            _active -= 1


def run_channels(channels: dict[str, ChannelFn], timeouts: dict[str, float],
                 parent: Deadline | None = None) -> dict[str, ChannelOutcome]:
    """Run ``channels`` concurrently; ``timeouts[name]`` bounds each one (seconds); cancelling
    ``parent`` (the query's deadline) ends them all."""
    t0 = time.perf_counter()
    deadlines = {name: parent.child(timeouts[name]) if parent else Deadline(timeouts[name]) for name in channels}

    def ended(name: str) -> str:
        return "cancelled" if parent is not None and parent.expired else f"timed out after {timeouts[name]:g}s"

    futures: dict[str, Future] = {name: _pool.submit(_run, fn, deadlines[name]) for name, fn in channels.items()}
    out: dict[str, ChannelOutcome] = {}
    pending = dict(futures)
    late: list[Future] = []
    while pending:
        next_deadline = min(deadlines[n].remaining() for n in pending)
        wait(list(pending.values()), timeout=next_deadline, return_when=FIRST_COMPLETED)
        for name in list(pending):
            fut = pending[name]
            if fut.done():
                value, ms, err, late_return = fut.result()
                if parent is not None and parent.expired:  # the query was cancelled: say so
                    value, err = None, "cancelled" + (f" ({err})" if err else "")
                elif err is None and late_return:  # it gave up at its deadline: what it has may be partial
                    value, err = None, ended(name)
                out[name] = ChannelOutcome(value if err is None else None, ms, err)
                del pending[name]
            elif deadlines[name].expired:
                deadlines[name].cancel()
                late.append(fut)
                out[name] = ChannelOutcome(None, (time.perf_counter() - t0) * 1000, ended(name))
                del pending[name]
    if late:
        # cancelled work ends at its next deadline check; wait for it so nothing outlives the query
        wait(late, timeout=CANCEL_GRACE_S)
        for name, fut in futures.items():
            if fut in late and not fut.done():
                o = out[name]
                out[name] = ChannelOutcome(None, o.elapsed_ms, f"{o.error}; still running after "
                                           f"{CANCEL_GRACE_S:g}s grace (it ignores its deadline)")
    return {name: out[name] for name in channels}


class Shared(Generic[T]):
    """A step several channels need (a HyDE hypothesis, a rewrite): computed once, in the thread
    of the first channel that asks, under the deadline it is given; every channel waits for it
    within its own deadline."""

    def __init__(self, fn: Callable[[Deadline], T]) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def get(self, deadline: Deadline) -> T:
        with self._lock:
            first = not self._started
            self._started = True
        if first:
            try:
                self._value = self._fn(deadline)
            except BaseException as e:
                self._error = e
            finally:
                self._done.set()
        elif not self._done.wait(timeout=min(deadline.remaining(), 3600.0)):
            raise Cancelled("out of time waiting for a shared step")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def outcome(self) -> tuple[T | None, BaseException | None]:
        """(value, error) once done; (None, None) if it never ran or is still running."""
        if not self._done.is_set():
            return None, None
        return self._value, self._error

    @property
    def done(self) -> bool:
        return self._done.is_set()
