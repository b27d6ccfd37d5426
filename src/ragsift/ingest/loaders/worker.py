"""The process that reads untrusted files (``python -m ragsift.ingest.loaders.worker``), started
and watched by ``isolation.Readers``; never imported by the server itself.

It reads one file at a time, told by frames on its standard input (``isolation.send``: a length,
then a pickle) and answering on its standard output the same way: ``("deadline", cpu)`` each
time the file's CPU budget grows (``base.on_deadline``), then ``("done", LoadResult, stats)``.
Its own limits, set before each file:

- memory: ``RLIMIT_DATA`` (its heap and private writable mappings) at what it holds now plus
  ``max_memory_mb`` (an allocation past it is a MemoryError: the file is skipped, saying so). Not
  the address space: ONNX Runtime's threads reserve far more of it than they ever touch;
- CPU: ``RLIMIT_CPU`` just past the file's deadline; at it the kernel sends SIGXCPU, which stops
  the reader with OverLimit wherever Python code runs (a loop that never checks its budget);
  a loop in C that never returns to Python is killed by the parent's watchdog.

After a file that broke a limit the process exits (its state may be half-changed); the parent
starts another. Anything a library prints goes to standard error, never into the frames.
"""
from __future__ import annotations

import importlib
import logging
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any, BinaryIO

from ragsift.ingest.loaders import base
from ragsift.ingest.loaders.base import LoadLimits, LoadResult, OverLimit, over_time
from ragsift.ingest.loaders.isolation import PARENT_ENV, receive, send
from ragsift.process import die_with_parent

try:
    import resource
except ImportError:  # not on Windows: the parent's watchdog is the only limit there
    resource = None  # type: ignore[assignment]

_limits: LoadLimits | None = None
_started = 0.0  # CPU seconds of this process when the file being read was begun
_deadline = 0.0  # and when it must be done


def main() -> int:
    # the frames travel on private copies of the pipes; fd 0 and 1 become harmless for libraries
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # SIGKILL when the thread that started it ends; the parent names itself (a parent that is pid 1,
    # a server in a container, is no sign that it died)
    die_with_parent(int(os.environ.get(PARENT_ENV, "0")) or os.getppid())
    try:
        os.nice(10)  # queries of the server that started it come first
    except OSError:
        pass
    logging.basicConfig(level=logging.ERROR)
    signal.signal(signal.SIGXCPU, _over_cpu) if hasattr(signal, "SIGXCPU") else None

    import ragsift.ingest.loaders  # noqa: F401  # every loader registered (and its imports paid) once
    from ragsift.ingest.loaders.dispatch import load_file

    send(out, ("ready", os.getpid()))
    while True:
        msg = receive(inp)
        if msg is None:  # the parent closed the pipe: it is gone, or done with us
            return 0
        _, path, source, limits, modules, path_list = msg
        for entry in path_list:  # where the asking process finds its modules (an application's loaders)
            if entry not in sys.path:
                sys.path.append(entry)
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as e:  # its files are skipped as of an unknown type, saying why here
                print(f"ragsift reader: cannot import loader module {module}: {e}", file=sys.stderr)
        clean = _read(out, load_file, Path(path), source, limits)
        if not clean:
            return 0  # a limit was hit: a fresh process reads the next file


def _read(out: BinaryIO, load_file: Any, path: Path, source: str, limits: LoadLimits) -> bool:
    """Read one file within its limits and send what it gave; whether the process is still sound."""
    global _limits, _deadline, _started
    _limits = limits
    cpu0 = _started = base.cpu_seconds()
    _deadline = 0.0
    _set_memory(limits.max_memory_mb)
    _reset_peak()

    def told(deadline: float) -> None:
        global _deadline
        _deadline = deadline
        _set_cpu(deadline)
        send(out, ("deadline", deadline))

    base.on_deadline = told
    told(cpu0 + limits.seconds)  # until the loader's budget says more
    clean = True
    try:
        res = load_file(path, source, limits)
        clean = not any(_broke_limit(s.reason) for s in res.skipped)
    except MemoryError:
        res, clean = LoadResult(), False
        res.skipped.append(_skip(source, f"needed more memory than reading a file may take "
                                         f"({limits.max_memory_mb} MB, setting max_reader_mb)"))
    except OverLimit as e:  # SIGXCPU outside any loader's own handling
        res, clean = LoadResult(), False
        res.skipped.append(_skip(source, str(e)))
    finally:
        base.on_deadline = None
        _set_cpu(None)
        _set_memory(None)
    # the peak since the file began where the kernel resets it (else the process's), and the size
    # now; the parent adds what it saw while watching
    stats = {"cpu_seconds": base.cpu_seconds() - cpu0, "peak_mb": _peak_mb() if _peak_reset else _rss_now_mb()}
    send(out, ("done", res, stats))
    return clean


def _skip(source: str, reason: str) -> Any:
    from ragsift.types import Skipped

    return Skipped(source, reason)


def _broke_limit(reason: str) -> bool:
    return "of CPU time" in reason or "max_reader_mb" in reason


def _over_cpu(signum: int, frame: Any) -> None:
    """SIGXCPU: the file's CPU deadline passed where no budget check ran."""
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # once: the kernel repeats it every second
    raise OverLimit(over_time(_deadline - _started, _limits or LoadLimits()))


def _set_cpu(deadline: float | None) -> None:
    """The process's CPU limit: just past ``deadline`` (process CPU seconds), or none."""
    if resource is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if deadline is None:
        soft = hard
        if hasattr(signal, "SIGXCPU"):
            signal.signal(signal.SIGXCPU, _over_cpu)
    else:
        soft = max(1, math.ceil(deadline) + 1)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):
        pass


def _set_memory(mb: int | None) -> None:
    """The process's data (heap and private writable mappings): what it has now plus ``mb``, or no limit."""
    if resource is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = hard
    if mb is not None:
        soft = _data_bytes() + mb * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    except (ValueError, OSError):
        pass


def _data_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


_peak_reset = False


def _reset_peak() -> None:
    """Linux: the peak resident size (VmHWM) starts again from now, where the kernel allows it."""
    global _peak_reset
    before = _peak_mb()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    _peak_reset = _peak_mb() < before or before <= _rss_now_mb() + 1


def _rss_now_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    if resource is not None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return 0.0


if __name__ == "__main__":
    sys.exit(main())
