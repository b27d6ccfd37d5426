"""Conversion by LibreOffice for the formats only it reads here: legacy Word, Excel and
PowerPoint (``.doc``, ``.xls``, ``.ppt``) and RTF become DOCX, XLSX or PPTX, which this package's
own readers then read (``legacy``).

Each conversion runs inside the reading of its file, within the file's limits:

- ``soffice.bin`` itself (not the ``soffice`` script, whose launcher would leave it an orphan) is a
  child of the reading process, in a session of its own, that dies with the thread that started
  it (``PR_SET_PDEATHSIG``, Linux): a reading process killed by its watchdog takes it along;
- its CPU time is limited to what the file has left of its budget (``RLIMIT_CPU``, then SIGKILL),
  its memory to the file's (``RLIMIT_DATA`` at ``max_memory_mb``), its wall-clock time to
  ``WALL_FACTOR`` times that plus ``WALL_EXTRA``; at any limit its process group is killed, and it
  is killed in every case before the conversion returns: no ``soffice`` outlives its file;
- the CPU time it took counts in the file's budget (``Budget.spend``), as if this process had;
- one conversion at a time on the machine (a lock file): LibreOffice takes hundreds of MB;
- in a profile folder of this process's own (``-env:UserInstallation``, made on first use with
  macros disabled, kept between its files: a first start costs a second more; made anew after a
  conversion that failed; removed at exit, and the folder of a process that died removed by the
  next that starts).

Where ``soffice`` is not on the PATH, ``Unavailable`` says what to install.
"""
from __future__ import annotations

import atexit
import contextlib
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ragsift.ingest.loaders.base import BYTES_PER_PAGE, Budget, OverLimit
from ragsift.process import die_with_parent, pid_alive

WALL_FACTOR = 3.0
WALL_EXTRA = 30.0  # seconds: a start on a busy machine
RESTART = 81  # soffice.bin's exit code after it made a new profile: run it again
#: CPU work a conversion may take for each MB of the file, beside the file's own budget (pages of
#: ``Budget.earn``): LibreOffice lays a document out as it loads it
PAGES_PER_MB = 4.0

#: the LibreOffice filter that writes each target, and the Debian package that reads each source
FILTERS = {"docx": "docx:MS Word 2007 XML", "xlsx": "xlsx:Calc MS Excel 2007 XML",
           "pptx": "pptx:Impress MS PowerPoint 2007 XML"}
PACKAGES = {"docx": "libreoffice-writer-nogui", "xlsx": "libreoffice-calc-nogui",
            "pptx": "libreoffice-impress-nogui"}

#: settings of the profile every conversion runs with: macros never run
PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" \
oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" \
oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" \
oor:op="fuse"><value>true</value></prop></item>
</oor:items>
"""


class Unavailable(Exception):
    """LibreOffice is not installed here; the message says what to install."""


class Failed(Exception):
    """LibreOffice could not convert the file; the message says why."""


def soffice() -> str | None:
    """The LibreOffice program to run: ``soffice.bin`` beside the ``soffice`` on the PATH (the
    script's launcher would start it as a grandchild), else ``soffice`` itself; None when absent."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found is None:
        return None
    real = Path(found).resolve()
    binary = real.with_name("soffice.bin")
    return str(binary) if binary.is_file() and os.access(binary, os.X_OK) else str(real)


def install_hint(suffix: str, target: str) -> str:
    """Why a file of ``suffix`` cannot be read without LibreOffice, and what to install."""
    return (f"reading {suffix} needs LibreOffice (soffice on the PATH): apt-get install {PACKAGES[target]} "
            "(or LibreOffice from libreoffice.org)")


def convert(data: bytes, suffix: str, target: str, budget: Budget) -> bytes:
    """``data`` (a file of ``suffix``) converted by LibreOffice to ``target`` (docx, xlsx, pptx),
    within the file's ``budget``. Raises ``Unavailable`` (not installed), ``Failed`` (it could not)
    or ``OverLimit`` (the file's time ran out)."""
    program = soffice()
    if program is None:
        raise Unavailable(install_hint(suffix, target))
    budget.earn(PAGES_PER_MB * len(data) / BYTES_PER_PAGE)
    cpu_left = budget.left()
    if cpu_left <= 1:
        budget.tick()
        raise OverLimit("no CPU time left for LibreOffice's conversion")
    wall_until = time.monotonic() + WALL_FACTOR * cpu_left + WALL_EXTRA
    with tempfile.TemporaryDirectory(prefix="ragsift-convert-") as tmp:
        src = Path(tmp) / f"file{suffix}"
        src.write_bytes(data)
        out = Path(tmp) / "out"
        with _one_at_a_time(wall_until):
            profile = _profile()
            for _ in range(2):  # a new profile: soffice.bin makes it, exits with RESTART, runs again
                code, err, cpu = _run(program, profile, target, src, out, budget.left(), wall_until,
                                      budget.limits.max_memory_mb)
                budget.spend(cpu)
                if code != RESTART:
                    break
        made = out / f"file.{target}"
        if code is None:
            _discard_profile()
            raise OverLimit(f"LibreOffice's conversion took longer than the file's time ({err})")
        if code != 0 or not made.is_file():
            _discard_profile()
            raise Failed(_why(code, err, suffix, target))
        return made.read_bytes()


def _why(code: int, err: str, suffix: str, target: str) -> str:
    if "no export filter" in err.lower() or "source file could not be loaded" in err.lower():
        return (f"LibreOffice could not read this {suffix} file (damaged, encrypted or not of its kind"
                + (f"; or LibreOffice lacks its part: apt-get install {PACKAGES[target]})" if "filter" in err else ")"))
    if code < 0:
        sig = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"LibreOffice stopped ({sig}) converting it: a damaged or hostile file"
    last = err.strip().splitlines()[-1][:200] if err.strip() else "no output"
    return f"LibreOffice could not convert it (exit code {code}: {last})"


def _run(program: str, profile: Path, target: str, src: Path, out: Path, cpu_left: float, wall_until: float,
         memory_mb: int) -> tuple[int | None, str, float]:
    """Run one conversion: its exit code (None when stopped at a limit), what it printed, the CPU
    seconds it took."""
    cmd = [program, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--invisible", "--norestore",
           "--nologo", "--nodefault", "--nolockcheck", "--convert-to", FILTERS[target], "--outdir", str(out), str(src)]
    cpu_limit = max(2, math.ceil(cpu_left))
    parent = os.getpid()
    before = _children_cpu()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SAL_", "LD_PRELOAD"))}
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=str(src.parent), env=env, start_new_session=True,
                            preexec_fn=lambda: _limit_child(parent, cpu_limit, memory_mb))
    try:
        try:
            output, _ = proc.communicate(timeout=max(1.0, wall_until - time.monotonic()))
            code: int | None = proc.returncode
            text = output.decode("utf-8", errors="replace")
            if code == -signal.SIGKILL or code == -signal.SIGXCPU:
                code, text = None, f"{cpu_limit} s of CPU time"
        except subprocess.TimeoutExpired:
            code, text = None, "stopped after its wall-clock time"
    finally:
        _kill_group(proc)
    return code, text, max(0.0, _children_cpu() - before)


def _limit_child(parent: int, cpu_seconds_: int, memory_mb: int) -> None:
    """In the child, before it runs LibreOffice: die with the thread of ``parent`` that started
    it, and the file's CPU and memory limits."""
    die_with_parent(parent)
    try:
        import resource

        for which, soft in ((resource.RLIMIT_CPU, cpu_seconds_), (resource.RLIMIT_DATA, memory_mb * 1024 * 1024)):
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            new_hard = soft + 1 if which == resource.RLIMIT_CPU else soft  # SIGKILL a second past SIGXCPU
            if hard != resource.RLIM_INFINITY:
                new_hard = min(new_hard, hard)
            resource.setrlimit(which, (soft, new_hard))
    except (ImportError, ValueError, OSError):
        pass


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the conversion's process group (whatever it started), and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.kill()
    proc.wait()


def _children_cpu() -> float:
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    except ImportError:
        return 0.0


# ------------------------------------------------------------------ the machine's lock, this process's profile
def _base() -> Path:
    base = Path(tempfile.gettempdir()) / f"ragsift-soffice-{os.getuid() if hasattr(os, 'getuid') else 0}"
    base.mkdir(mode=0o700, exist_ok=True)
    return base


@contextlib.contextmanager
def _one_at_a_time(until: float) -> Iterator[None]:
    """Hold the machine's conversion lock (waiting at most until ``until``, monotonic)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    with open(_base() / "lock", "w") as f:
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > until:
                    raise Failed("LibreOffice was busy converting other files for the file's whole time; "
                                 "try again") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


_made: dict[int, Path] = {}


def _profile() -> Path:
    """This process's profile folder (made with its settings on first use)."""
    pid = os.getpid()
    if pid in _made and _made[pid].is_dir():
        return _made[pid]
    base = _base()
    for old in base.glob("profile-*"):  # of processes that died without removing theirs
        try:
            other = int(old.name.split("-", 1)[1])
        except ValueError:
            continue
        if other != pid and not pid_alive(other):
            shutil.rmtree(old, ignore_errors=True)
    path = base / f"profile-{pid}"
    shutil.rmtree(path, ignore_errors=True)
    (path / "user").mkdir(parents=True)
    (path / "user" / "registrymodifications.xcu").write_text(PROFILE_SETTINGS, encoding="utf-8")
    if not _made:
        atexit.register(_discard_all)
    _made[pid] = path
    return path


def _discard_profile() -> None:
    path = _made.pop(os.getpid(), None)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def _discard_all() -> None:
    if os.getpid() in _made:
        _discard_profile()
