"""How fast the ``ragsift`` command starts: each command a fresh process (cold: nothing of
ragsift in memory; the OS file cache and the on-disk caches warm, as on a user's second
command), the median of ``--runs``, side by side for an older checkout (``--before``, e.g. a
``git worktree`` of the commit before) and this one, interleaved run by run so that the
machine's load falls on both alike.

    git worktree add /tmp/cli-before <commit>
    python benchmarks/cli_start.py --before /tmp/cli-before --runs 7

The knowledge base is the bundled sample (``src/ragsift/sample/kb``, what ``make demo``
ingests), ingested once by this checkout. The floors are ``python -c pass``, ``python -c
"import numpy"`` and ``python -c "import lancedb"`` (what a command that opened the store paid
before it was read through LanceDB's native core alone, ``ragsift.store.lance_read``). Each
checkout's ``src`` is byte-compiled first (``compileall``, as ``pip install`` does) and the
commands run without ``PYTHONDONTWRITEBYTECODE``: a module whose ``.pyc`` is stale is otherwise
compiled from source on every start (0.1 s of CPU for the modules a query imports), which no
installed copy pays. Writes
``benchmarks/results/cli_start.json`` and prints a Markdown table. The OS page cache is not
dropped between runs (that needs root over the host, which this sandbox does not give): "cold"
is a new process each time, its files in the page cache.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src" / "ragsift" / "sample" / "kb"
TARGETS = {"--version": 0.2, "stats": 1.0, "list": 1.0, "query (zh)": 1.0, "query (en)": 1.0}


def commands(kb: Path) -> dict[str, list[str]]:
    return {"--version": ["--version"], "stats": ["--kb", str(kb), "stats"], "list": ["--kb", str(kb), "list"],
            "query (zh)": ["--kb", str(kb), "query", "什么是监督学习？"],
            "query (en)": ["--kb", str(kb), "query", "How do I reset the hub?"]}


def timed(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return seconds


# where a cold query's time goes, step by step in one new process (what ``ragsift query`` does)
STEPS = r"""
import json, sys, time
t = [time.perf_counter()]
def lap():
    t.append(time.perf_counter())
    return round(t[-1] - t[-2], 4)
out = {}
from ragsift.kb import KnowledgeBase
out["import ragsift.kb"] = lap()
kb = KnowledgeBase.open(sys.argv[1])
out["open (manifest, 3 tables)"] = lap()
kb.embedder().embed_queries(["warm"])
out["embedding model load (ONNX, tokenizer)"] = lap()
kb.store.segments()
out["segment rows read"] = lap()
kb.query(sys.argv[2], trace=False)  # as ``ragsift query`` asks (no --trace)
out["query (indexes built, segmenter, search)"] = lap()
out["pandas imported"] = "pandas" in sys.modules
out["lancedb imported"] = "lancedb" in sys.modules
print(json.dumps(out))
"""


def steps(kb: Path, question: str, env: dict[str, str]) -> dict[str, float | bool]:
    p = subprocess.run([sys.executable, "-c", STEPS, str(kb), question], env=env, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"the steps failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def env_for(src: Path, cache: Path) -> dict[str, str]:
    compileall.compile_dir(str(src), quiet=1)  # as installed: every module's .pyc current
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "RAGSIFT_CACHE_DIR": str(cache)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, help="an older checkout (its src/ is put first on PYTHONPATH)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work-dir", type=Path, help="where the knowledge base is kept (default: a temporary folder)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "cli_start.json")
    args = ap.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="cli-start-"))
    kb, cache = work / "kb", work / "cache"
    py = sys.executable
    now_env = env_for(ROOT / "src", cache)
    versions = {"now": now_env}
    if args.before:
        versions = {"before": env_for(args.before / "src", cache), **versions}
    if not (kb / "manifest.json").exists():
        subprocess.run([py, "-m", "ragsift.cli", "--kb", str(kb), "ingest", str(SAMPLE), "--no-progress"],
                       env=now_env, check=True, capture_output=True, timeout=3600)
    cmds = commands(kb)
    for env in versions.values():  # the on-disk caches (jieba's dictionary) written once, not timed
        timed([py, "-m", "ragsift.cli", *cmds["query (zh)"]], env)
    load_before = os.getloadavg()
    floors: dict[str, list[float]] = {"python -c pass": [], "python -c 'import numpy'": [],
                                      "python -c 'import lancedb'": []}
    runs: dict[str, dict[str, list[float]]] = {name: {v: [] for v in versions} for name in cmds}
    for _ in range(args.runs):
        for code, key in (("pass", "python -c pass"), ("import numpy", "python -c 'import numpy'"),
                          ("import lancedb", "python -c 'import lancedb'")):
            floors[key].append(timed([py, "-c", code], now_env))
        for name, cmd in cmds.items():
            for version, env in versions.items():  # interleaved: the load of the moment falls on both
                runs[name][version].append(timed([py, "-m", "ragsift.cli", *cmd], env))
    med = {name: {v: statistics.median(r) for v, r in by.items()} for name, by in runs.items()}
    step_runs = {q: [steps(kb, cmds[q][-1], now_env) for _ in range(args.runs)] for q in ("query (zh)", "query (en)")}
    step_med = {q: {k: (statistics.median(r[k] for r in rs) if isinstance(rs[0][k], float) else rs[0][k])
                    for k in rs[0]} for q, rs in step_runs.items()}
    result = {
        "command": "python benchmarks/cli_start.py" + (f" --before {args.before}" if args.before else "")
                   + f" --runs {args.runs}",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "loadavg_start": load_before, "loadavg_end": os.getloadavg()},
        "knowledge_base": {"documents": str(SAMPLE.relative_to(ROOT)), "path": str(kb)},
        "floors_s": {k: statistics.median(v) for k, v in floors.items()},
        "floors_runs_s": floors,
        "median_s": med, "runs_s": runs, "targets_s": TARGETS, "query_steps_median_s": step_med,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.out, result)
    head = "| command | " + " | ".join(f"{v} (s)" for v in versions) + (" | before/now" if "before" in versions else "") \
        + " | target | met |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name, by in med.items():
        ratio = f" | {by['before'] / by['now']:.1f}x" if "before" in by else ""
        print(f"| `{name}` | " + " | ".join(f"{by[v]:.2f}" for v in versions) + ratio
              + f" | < {TARGETS[name]} | {'yes' if by['now'] < TARGETS[name] else 'no'} |")
    for k, v in result["floors_s"].items():
        print(f"| floor: `{k}` | {v:.2f} |")
    print("\n| step of a cold query (one process) | zh (s) | en (s) |\n|---|---|---|")
    for k in step_med["query (zh)"]:
        print(f"| {k} | {step_med['query (zh)'][k]} | {step_med['query (en)'][k]} |")
    print(f"\n{args.runs} runs each; load average {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}; wrote {args.out}")


if __name__ == "__main__":
    main()
