"""Native resources of long-running processes (a server, an MCP server, a watcher that ingests):
malloc arenas, freed memory, BLAS threads.

glibc's malloc gives each thread that allocates its own arena (up to eight per core) and keeps
freed memory in them; under LanceDB's and ONNX Runtime's thread pools a process that ingests
again and again grows by megabytes a round although nothing it holds grows (the soak benchmark,
docs/benchmarks.md). Two remedies, both no-ops where the C library is not glibc:

- ``limit_arenas(n)``: at most ``n`` arenas (``mallopt(M_ARENA_MAX)``, what the environment
  variable ``MALLOC_ARENA_MAX`` sets at start-up; an operator's variable wins). The faces that
  run for long call it at start; a library user may call it.
- ``release()``: hand freed memory back to the system (``malloc_trim(0)``); the knowledge base
  calls it after each write.

BLAS threads: NumPy's OpenBLAS starts a thread per core for a matrix product and keeps them
spinning after it; a query's one product (the question against the vectors, a few milliseconds)
then costs the spin of every core, beside ONNX Runtime's own threads. On this 2-core machine one
SciFact query took 63 ms of CPU for 32 ms of wall time; with one BLAS thread 32 ms of CPU for 26 ms
(docs/benchmarks.md). ``limit_blas_threads(1)`` (threadpoolctl; an operator's
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` wins) is what a serving process wants.
``for_serving()`` does all of it: the faces that run for long call it at start.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import signal
import sys
from functools import cache
from pathlib import Path
from typing import Any

M_ARENA_MAX = -8  # glibc's mallopt parameter
DEFAULT_ARENAS = 2


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  # glibc only (musl has no malloc_trim)
        libc.malloc_trim, libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(n: int = DEFAULT_ARENAS) -> bool:
    """At most ``n`` malloc arenas from now on (arenas made before stay). Skipped when the
    environment sets ``MALLOC_ARENA_MAX`` (the operator's choice) or the C library is not glibc.
    Returns whether the limit was set."""
    libc = _libc()
    if libc is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(max(1, int(n)))))


def limit_blas_threads(n: int = 1) -> bool:
    """At most ``n`` BLAS threads from now on (all BLAS libraries loaded). Skipped when the environment
    sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``. Returns whether it set it."""
    if any(os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        return False
    import numpy  # noqa: F401  # its BLAS must be loaded to be limited
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, int(n)), user_api="blas")  # stays until changed
    return True


def model_threads() -> int:
    """The threads a model runs on (ONNX Runtime's intra-op threads, llama.cpp's, the sparse
    encoder's): ``$RAGSIFT_THREADS`` when set, else the cores up to four."""
    return int(os.environ.get("RAGSIFT_THREADS", "0")) or min(4, os.cpu_count() or 1)


def file_key(path: str | Path) -> str:
    """A short key for a file as installed: its absolute path, size and mtime (a changed or
    upgraded file gets a new key, so a cache named by it is never stale), without reading it."""
    st = os.stat(path)
    return hashlib.sha1(f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:12]


def cache_dir() -> Path:
    """The per-user cache directory (the segmenter's dictionary, derived model files, the LLM's
    answers): ``$RAGSIFT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragsift``, else ``~/.cache/ragsift``."""
    d = os.environ.get("RAGSIFT_CACHE_DIR")
    if d:
        return Path(d)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ragsift"


def for_serving() -> dict[str, bool]:
    """What a long-running face calls at start: two malloc arenas, one BLAS thread."""
    return {"arenas": limit_arenas(), "blas": limit_blas_threads()}


def release() -> bool:
    """Return the free memory of every arena to the system (glibc); whether any was returned."""
    libc = _libc()
    return bool(libc.malloc_trim(ctypes.c_size_t(0))) if libc is not None else False


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _prctl_libc() -> Any:
    """The C library for ``prctl``, loaded when this module is: ``die_with_parent`` may then run
    in a child between fork and exec, where loading a library is not safe."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_PRCTL: Any = _prctl_libc()


def die_with_parent(parent: int) -> None:
    """Linux: this process gets SIGKILL when the thread of ``parent`` (its pid) that started it
    ends (``PR_SET_PDEATHSIG``); it exits at once when ``parent`` died before the call (it has
    another parent by now). A no-op elsewhere. Safe in a child between fork and exec."""
    if _PRCTL is None:
        return
    try:
        _PRCTL.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except AttributeError:
        return
    if os.getppid() != parent:
        os._exit(0)
