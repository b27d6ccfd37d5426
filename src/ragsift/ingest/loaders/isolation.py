"""Reading untrusted files where they cannot hurt the process that asked: each file is read by
a worker process (``loaders.worker``) within limits that hold whatever the file holds, and a
watchdog here that can stop it. How Tika's forked parser, Unstructured's API and browsers' PDF
viewers hold hostile files; the simplest form that works here.

- **Memory**: the worker's address space is limited to what it holds plus ``max_memory_mb``
  (``RLIMIT_AS``); past it an allocation fails and the file is skipped, saying so.
- **CPU**: the file's CPU budget (``base.Budget``: a base, more per page of real work, an overall
  cap) is the worker's ``RLIMIT_CPU`` (SIGXCPU stops Python code wherever it loops) and, for C code
  that never returns, this watchdog's: it reads the worker's CPU time and kills it a few seconds
  past the deadline.
- **Wall clock**: a worker that stops working (its CPU time has not moved for ``STALL_SECONDS``:
  it waits on something) is killed. A worker that works slowly (a busy machine, and readers run at
  a lower priority than the queries beside them) is never stopped for the time it waited, only
  for its CPU; where the CPU time cannot be read, after ``WALL_FACTOR`` times its allowance plus
  ``WALL_EXTRA`` seconds.
- A worker that dies (a crash in a C library, the kernel's OOM killer) costs its file, which is
  skipped with the reason; nothing else waits on it. The next file gets a fresh worker.

Workers are kept between files (``Readers``: at most ``MAX_IDLE`` idle, each used for at most
``MAX_FILES`` files), so a file costs a round trip on a pipe, not a process start. Where no
worker can start (no interpreter to run, a sandbox without processes) files are read in this
process with the budget's own checks, and a warning says so once.
"""
from __future__ import annotations

import atexit
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from ragsift.ingest.loaders.base import LoadLimits, LoadResult, over_time, skipped

log = logging.getLogger(__name__)

MAX_IDLE = 2  # workers kept waiting for the next file
MAX_FILES = 500  # files one worker reads before it is replaced (memory a library keeps)
START_SECONDS = 120.0  # how long a new worker may take to import the loaders
CPU_GRACE = 5.0  # CPU seconds past a deadline before the watchdog kills (SIGXCPU comes first)
STALL_SECONDS = 120.0  # a worker whose CPU time has not moved for this long waits, not reads
STALL_CPU = 0.05  # what "moved" means (CPU seconds)
WALL_FACTOR = 3.0  # without /proc: the wall-clock stop, in CPU allowances
WALL_EXTRA = 60.0
POLL_SECONDS = 0.25
PARENT_ENV = "RAGSIFT_READER_PARENT"  # the pid a worker dies with (``process.die_with_parent``)
_HEADER = struct.Struct("<Q")


# ------------------------------------------------------------------ frames on a pipe
def send(f: BinaryIO, obj: Any) -> None:
    """One frame: its length, then the pickle."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(_HEADER.pack(len(data)))
    view = memoryview(data)
    while view:
        n = f.write(view)
        view = view[n or 0:]


def receive(f: BinaryIO) -> Any:
    """The next frame (blocking), or None at the end of the pipe."""
    head = _read_exactly(f, _HEADER.size)
    if head is None:
        return None
    body = _read_exactly(f, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(f: BinaryIO, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        chunk = f.read(n - got)
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


class _Frames:
    """Frames read as they arrive on a pipe (never blocking past what ``select`` said is there)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.closed = fd, bytearray(), False
        self.pending: deque[Any] = deque()

    def wait(self, seconds: float) -> Any:
        """The next frame, waiting at most ``seconds``; None when none came (or the pipe closed)."""
        if not self.pending and not self.closed:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, seconds))
            if ready:
                chunk = os.read(self.fd, 1 << 20)
                if chunk:
                    self.buf += chunk
                    self._split()
                else:
                    self.closed = True
        return self.pending.popleft() if self.pending else None

    def _split(self) -> None:
        while len(self.buf) >= _HEADER.size:
            n = _HEADER.unpack_from(self.buf)[0]
            if len(self.buf) < _HEADER.size + n:
                return
            self.pending.append(pickle.loads(bytes(self.buf[_HEADER.size:_HEADER.size + n])))
            del self.buf[:_HEADER.size + n]


# ------------------------------------------------------------------ one worker
class WorkerGone(Exception):
    """The worker died or was stopped; the message says why (the file's skip reason)."""


class Worker:
    """One reading process and the watchdog of the file it reads."""

    def __init__(self) -> None:
        pkg_root = str(Path(__file__).resolve().parents[3])  # where ``ragsift`` is importable from
        env = dict(os.environ)
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[PARENT_ENV] = str(os.getpid())
        # started from one thread that lives as long as this process: the worker dies with the
        # thread that started it (PR_SET_PDEATHSIG), and a thread of an ingest may end before it
        self.proc = _spawner().submit(subprocess.Popen, [sys.executable, "-m", "ragsift.ingest.loaders.worker"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0,
                                      close_fds=True).result()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.frames = _Frames(self.proc.stdout.fileno())
        self.files = 0
        until = time.monotonic() + START_SECONDS
        first = None
        while first is None and not self.frames.closed and time.monotonic() < until:
            first = self.frames.wait(until - time.monotonic())
        if not (isinstance(first, tuple) and first[0] == "ready"):
            self.kill()
            raise WorkerGone(f"the reading process did not start ({self._death()})")

    def read(self, path: Path, source: str, limits: LoadLimits) -> LoadResult:
        """Read one file in the worker; ``WorkerGone`` when it had to be stopped or died."""
        self.files += 1
        started = time.monotonic()
        deadline: float | None = None  # on the worker's CPU clock: it tells each new one
        begun = 0.0  # the worker's CPU seconds when it began the file
        peak = 0.0  # the worker's resident memory, as often as it is watched (MB)
        moved_at, moved_cpu = started, _cpu_of(self.proc.pid)  # when its CPU time last moved, and to what
        assert self.proc.stdin is not None
        try:
            send(self.proc.stdin, ("read", str(path), source, limits,  # type: ignore[arg-type]
                                   _loader_modules(), list(sys.path)))
        except OSError:
            self.proc.wait()
            raise WorkerGone(self._death(limits)) from None
        while True:
            frame = self.frames.wait(POLL_SECONDS)
            if frame is not None and frame[0] == "deadline":
                if deadline is None:
                    begun = float(frame[1]) - limits.seconds
                deadline = float(frame[1])
            elif frame is not None and frame[0] == "done":
                res: LoadResult = frame[1]
                res.stats = dict(frame[2])
                res.stats["peak_mb"] = max(peak, res.stats.get("peak_mb", 0.0))
                return res
            if self.frames.closed or self.proc.poll() is not None:
                self.proc.wait()
                raise WorkerGone(self._death(limits))
            allowance = (deadline - begun) if deadline is not None else limits.seconds
            cpu = _cpu_of(self.proc.pid)
            peak = max(peak, _rss_mb(self.proc.pid))
            if cpu is not None and deadline is not None and cpu > deadline + CPU_GRACE:
                self.kill()
                raise WorkerGone(over_time(allowance, limits))
            now = time.monotonic()
            if cpu is not None and moved_cpu is not None:
                if cpu - moved_cpu >= STALL_CPU:
                    moved_at, moved_cpu = now, cpu
                elif now - moved_at > STALL_SECONDS:
                    self.kill()
                    raise WorkerGone(f"reading stopped working: {now - moved_at:.0f} s without using the CPU "
                                     "(it waited on something); stopped")
            elif now - started > WALL_FACTOR * allowance + WALL_EXTRA:
                self.kill()
                raise WorkerGone(f"reading did not finish in {now - started:.0f} s; stopped")

    def _death(self, limits: LoadLimits | None = None) -> str:
        code = self.proc.poll()
        if code is None:
            return "the reading process stopped answering"
        if code < 0:
            sig = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            if sig == "SIGXCPU" and limits is not None:
                return over_time(limits.seconds, limits)
            if sig == "SIGKILL":
                return ("the reading process was killed (by the system, for memory?)"
                        + (f"; setting max_reader_mb is {limits.max_memory_mb}" if limits else ""))
            return f"the reader crashed ({sig}): a damaged or hostile file"
        return f"the reading process ended (exit code {code})"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()
        self._close()

    def close(self) -> None:
        """Let an idle worker end (its input closes; it exits)."""
        self._close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()

    def _close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass


_spawners: dict[int, ThreadPoolExecutor] = {}


def _spawner() -> ThreadPoolExecutor:
    """The thread (one per process) that starts reading processes."""
    pid = os.getpid()
    if pid not in _spawners:
        _spawners[pid] = ThreadPoolExecutor(1, thread_name_prefix="ragsift-reader-spawner")
    return _spawners[pid]


def _loader_module(suffix: str) -> str:
    """The module that registered the loader of ``suffix`` ("" when none did)."""
    from ragsift.ingest.loaders.base import LOADERS

    return (getattr(LOADERS.factory(suffix), "__module__", "") or "") if suffix in LOADERS else ""


def _loader_modules() -> list[str]:
    """The modules that registered loaders besides ours: the worker imports them (with this
    process's ``sys.path``) so a loader registered by an application reads there too, with its
    signature, and a file no loader reads is told the same suffixes there as here."""
    from ragsift.ingest.loaders.base import LOADERS

    found = {_loader_module(s) for s in LOADERS.names()}
    return sorted(m for m in found if m and m != "__main__" and not m.startswith("ragsift."))


def _rss_mb(pid: int) -> float:
    """A process's resident memory in MB, from /proc (0 where there is none)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE / (1 << 20)
    except (OSError, IndexError, ValueError):
        return 0.0


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") and "SC_PAGE_SIZE" in os.sysconf_names else 4096
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100


def _cpu_of(pid: int) -> float | None:
    """A process's CPU seconds (user and system, every thread), from /proc; None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return None


# ------------------------------------------------------------------ the pool
class Readers:
    """Workers that read files, reused between files; safe to share between threads (each read
    takes a worker of its own)."""

    def __init__(self) -> None:
        self._idle: list[Worker] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._broken: str | None = None  # why no worker can start here

    def read(self, path: Path, source: str, limits: LoadLimits) -> LoadResult:
        """Read ``path`` (named ``source``) in a worker within ``limits``; a file that breaks them
        is skipped with its reason."""
        from ragsift.ingest.loaders.dispatch import load_file

        if _loader_module(path.suffix.lower()) == "__main__":  # a script's own loader: only it has it
            return load_file(path, source, limits)
        worker = self._take()
        if worker is None:
            return load_file(path, source, limits)
        try:
            res = worker.read(path, source, limits)
        except WorkerGone as e:
            kind = path.suffix.lstrip(".").upper() or "file"
            return skipped(source, f"{kind} {e}; skipped")
        except BaseException:  # interrupted here (KeyboardInterrupt): the worker is mid-file
            worker.kill()
            raise
        self._give(worker, clean=not any("of CPU time" in s.reason or "max_reader_mb" in s.reason
                                         for s in res.skipped))
        return res

    def _take(self) -> Worker | None:
        with self._lock:
            if os.getpid() != self._pid:  # forked: the workers are the parent's
                self._idle, self._pid = [], os.getpid()
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
            if self._broken is not None:
                return None
        try:
            return Worker()
        except (OSError, WorkerGone) as e:
            with self._lock:
                if self._broken is None:
                    log.warning("files are read in this process, without its memory and CPU limits: no reading "
                                "process could start (%s)", e)
                self._broken = str(e)
            return None

    def _give(self, w: Worker, clean: bool) -> None:
        if not clean or not w.alive() or w.files >= MAX_FILES:
            w.kill() if w.alive() else w._close()
            return
        with self._lock:
            if os.getpid() == self._pid and len(self._idle) < MAX_IDLE:
                self._idle.append(w)
                return
        w.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for w in idle:
            w.close()


READERS = Readers()
atexit.register(READERS.close)


def read_file(path: Path, source: str, limits: LoadLimits) -> LoadResult:
    """Load one untrusted file in a reading process (``READERS``), within ``limits``."""
    return READERS.read(path, source, limits)
