"""A long checkpointed ingest over real text, killed with SIGKILL at random moments, then resumed.

    .venv/bin/python benchmarks/kill_ingest.py --out benchmarks/results/kill_ingest.json

- Corpus: the first --docs documents of each of --datasets (default: SciFact English abstracts and
  CMRC 2018 Chinese paragraphs), one Markdown file each, the two languages alternating.
- Baseline: the same files ingested into a new knowledge base in one commit (the default), timed.
- Killed runs: a knowledge base with ``checkpoint_documents`` = --every is ingested by a child
  process --kills times, each killed by SIGKILL. About six in ten die inside a checkpoint's commit,
  at one of its steps or at a random moment (the child patches its own commit to kill itself:
  after ``generations/<N>.json`` is written, after ``manifest.json`` is replaced, inside a table's
  optimize, or on a timer started at the commit's beginning); the rest are killed from this process
  at a random time of the ingest. After each kill the knowledge base is opened and checked as the
  crash tests check it (tests/e2e/kb/test_checkpoints.py): it is at the last checkpoint the child reported
  (or at the one being committed, if the kill came after its manifest was replaced); ``check()``,
  ``check_integrity()``, every kept generation read whole, each document's recorded counts against
  its rows, whole checkpoints only (--every documents each) and every document held equal to the
  baseline's. Then the next run resumes.
- Last run: the same ingest runs to its end; its documents must equal the baseline's (ids, content
  hashes, parent and child counts, sorted child texts).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import lancedb  # noqa: E402

from ragsift.kb import KnowledgeBase  # noqa: E402
from ragsift.store.lance_files import generation_file, saved_generations  # noqa: E402
from ragsift.store.lance_upkeep import check_generation  # noqa: E402

EMBEDDER = "minilm"

# The child: one checkpointed ingest of the folder, which may kill itself inside its k-th commit
# (how, k, seed on the command line). It prints "ingesting", "committing N", "committed N", "done N".
CHILD = textwrap.dedent("""
    import os, random, signal, sys, threading, time
    import lancedb.table
    import ragsift.store.lance as lance
    import ragsift.store.lance_files as files
    kb_path, docs, how, at, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed)
    state = {"commits": 0, "in_commit": False, "writes": 0, "optimizes": 0, "durations": []}
    stop_at = rng.randint(1, 3)  # which optimize call of the commit (one per table)

    def die(*_):
        os.kill(os.getpid(), signal.SIGKILL)

    real_commit = lance.LanceTransaction.commit
    def commit(self, **kw):
        state["commits"] += 1
        mine = state["commits"] == at
        print("committing", self.generation, flush=True)
        if mine and how == "in-commit":  # a random moment of the commit, from the ones before it
            d = rng.uniform(0.0, 0.9 * min(state["durations"] or [0.2]))
            print("timer", f"{d:.3f}", flush=True)
            t = threading.Timer(d, die)
            t.daemon = True
            t.start()
        state["in_commit"] = mine
        t0 = time.perf_counter()
        generation = real_commit(self, **kw)
        state["durations"].append(time.perf_counter() - t0)
        state["in_commit"] = False
        print("committed", generation, flush=True)
        if mine and how == "in-commit":
            die()                          # the timer missed the commit: die at once after it
        return generation
    lance.LanceTransaction.commit = commit

    real_write = files.write_atomic
    def write_atomic(path, data):          # a commit's publish: generations/<N>.json, then manifest.json
        real_write(path, data)
        if state["in_commit"]:
            state["writes"] += 1
            if (how, state["writes"]) in (("generation-file", 1), ("manifest", 2)):
                die()
    files.write_atomic = write_atomic

    real_optimize = lancedb.table.LanceTable.optimize
    def optimize(self, *args, **kwargs):   # a commit folds the new rows into each table
        if state["in_commit"] and how == "optimize":
            state["optimizes"] += 1
            if state["optimizes"] == stop_at:
                die()
        return real_optimize(self, *args, **kwargs)
    lancedb.table.LanceTable.optimize = optimize

    from ragsift.kb import KnowledgeBase
    kb = KnowledgeBase.open(kb_path)
    kb.embedder()                          # the model is loaded before the clock of a timed kill starts
    print("ingesting", flush=True)
    report = kb.ingest(docs)
    print("done", report.generation, len(report.added), len(report.unchanged), flush=True)
""")

INSIDE = ["generation-file", "manifest", "optimize", "in-commit", "in-commit", "in-commit"]
LABELS = {"generation-file": "inside commit: its generation file written, manifest.json not yet",
          "manifest": "inside commit: right after manifest.json was replaced",
          "optimize": "inside commit: in a table's optimize",
          "in-commit": "inside commit: random moment"}


def write_corpus(folder: Path, datasets: list[Path], n: int) -> dict[str, int]:
    """The first ``n`` non-empty rows of each dataset as Markdown files, the datasets alternating."""
    folder.mkdir(parents=True)
    rows = {}
    for ds in datasets:
        rows[ds.name] = []
        with open(ds / "corpus.jsonl", encoding="utf-8") as f:
            for line in f:
                if len(rows[ds.name]) >= n:
                    break
                row = json.loads(line)
                if row.get("text", "").strip():
                    rows[ds.name].append(row)
    for i in range(max(map(len, rows.values()))):
        for name, rs in rows.items():
            if i < len(rs):
                (folder / f"{i:05d}-{name}.md").write_text(f"# {rs[i].get('title') or rs[i]['_id']}\n\n{rs[i]['text']}\n",
                                                           encoding="utf-8")
    return {name: len(rs) for name, rs in rows.items()}


def snapshot(kb: KnowledgeBase) -> tuple[dict[str, tuple], list[str]]:
    """Per document: content hash, parent and child counts and sorted child texts; and the
    documents whose recorded counts are not their rows (half documents)."""
    out, half = {}, []
    docs = kb.documents()
    with kb.reading() as store:
        for doc, parents, children in store.export():
            d = docs[doc.doc_id]
            if (d.parents, d.children) != (len(parents), len(children)):
                half.append(f"{doc.doc_id}: records {d.parents}/{d.children} parents/children, holds "
                            f"{len(parents)}/{len(children)}")
            out[doc.doc_id] = (doc.content_hash, len(parents), len(children), sorted(c.child.text for c in children))
    return out, half


def kept_generation_problems(path: Path) -> list[str]:
    """Every kept generation read whole and checked (each child's parent, each parent's document)."""
    db = lancedb.connect(str(path / "lance"))
    problems = []
    for g in saved_generations(path):
        m = json.loads(generation_file(path, g).read_text(encoding="utf-8"))
        problems += check_generation(path, db, m, whole=True)
    return problems


def run_child(script: Path, kb: Path, docs: Path, how: str, at: int, seed: int,
              kill_after: float | None) -> tuple[int | None, list[list[str]], str, float]:
    """Run the child; ``kill_after``: SIGKILL it that many seconds after it starts ingesting.
    Returns its return code, its lines, its stderr's end and the run's seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(script), str(kb), str(docs), how, str(at), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT / "src")})
    lines: list[list[str]] = []
    started = threading.Event()
    err: list[str] = []

    def read_out():
        for line in proc.stdout:
            if line.split():
                lines.append(line.split())
            if line.startswith("ingesting"):
                started.set()
        started.set()  # ended (or died) without ingesting

    def read_err():
        err.append(proc.stderr.read())

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    if kill_after is not None:
        started.wait(timeout=600)
        time.sleep(kill_after)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    try:
        rc = proc.wait(timeout=3600)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = None
    for r in readers:
        r.join(timeout=10)
    return rc, lines, "".join(err)[-1500:], time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="../shared/datasets/scifact,../shared/datasets/cmrc2018-dev",
                   help="comma-separated dataset folders, each with a corpus.jsonl")
    p.add_argument("--docs", type=int, default=300, help="documents taken from each dataset")
    p.add_argument("--every", type=int, default=25, help="checkpoint_documents")
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--work-dir", default="/tmp/ragsift-kill-ingest")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "kill_ingest.json"))
    args = p.parse_args()
    command = " ".join([".venv/bin/python benchmarks/kill_ingest.py", *map(shlex.quote, sys.argv[1:])])
    t_start = time.perf_counter()

    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    docs = work / "docs"
    sizes = write_corpus(docs, [Path(d) for d in args.datasets.split(",")], args.docs)
    n_docs = sum(sizes.values())
    n_checkpoints = math.ceil(n_docs / args.every)
    print(f"{n_docs} documents ({sizes}), a checkpoint every {args.every}: {n_checkpoints} checkpoints", flush=True)

    one = KnowledgeBase.open(work / "baseline", embedder=EMBEDDER)
    one.embedder()
    t = time.perf_counter()
    base_report = one.ingest(docs)
    baseline_s = time.perf_counter() - t
    expected, half = snapshot(one)
    one.close()
    assert not half and len(expected) == n_docs, (half, len(expected))
    print(f"baseline: one commit, {base_report.children} children in {baseline_s:.1f} s", flush=True)

    path = work / "kb"
    KnowledgeBase.open(path, embedder=EMBEDDER, checkpoint_documents=args.every).close()
    script = work / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    rng = random.Random(args.seed)
    n_inside = max(1, round(0.6 * args.kills)) if args.kills else 0
    kinds = [INSIDE[i % len(INSIDE)] for i in range(n_inside)] + ["timed"] * (args.kills - n_inside)
    rng.shuffle(kinds)
    checkpoint_s = baseline_s * args.every / n_docs  # a checkpoint's worth of embedding and writing
    kills, generation = [], 0
    for run, how in enumerate(kinds):
        at = rng.randint(2 if how == "in-commit" else 1, 3)  # the commit of this run to die in
        kill_after = rng.uniform(0.3, 3.0) * checkpoint_s if how == "timed" else None
        rc, lines, err, seconds = run_child(script, path, docs, how, at, rng.randrange(10**6), kill_after)
        committed = [int(w[1]) for w in lines if w[0] == "committed"]
        started = [int(w[1]) for w in lines if w[0] == "committing"]
        in_progress = started[-1] if started and (not committed or started[-1] > committed[-1]) else None
        last = committed[-1] if committed else generation
        if how == "timed":
            moment = f"random at {kill_after:.1f} s of the ingest ({'inside a commit' if in_progress is not None else 'embedding/writing'})"
        elif how == "in-commit":
            timer = next((float(w[1]) for w in lines if w[0] == "timer"), None)
            landed = "landed inside" if in_progress is not None else "commit ended first: killed right after it"
            moment = f"{LABELS[how]} ({timer:.3f} s into commit {at}; {landed})" if timer is not None else LABELS[how]
        else:
            moment = f"{LABELS[how]} (commit {at})"
        problems = []
        if rc != -signal.SIGKILL:
            problems.append(f"the child was not killed (return code {rc}): {err.strip()[-300:]}")
        kb = KnowledgeBase.open(path, create=False)
        now = kb.store.generation
        if how == "generation-file" and not (now == last and in_progress is not None):
            problems.append(f"generation {now}: expected the last checkpoint {last} (commit of {in_progress} unfinished)")
        elif how == "manifest" and now != in_progress:
            problems.append(f"generation {now}: expected {in_progress}, whose manifest was replaced")
        elif now not in {last, in_progress}:
            problems.append(f"generation {now}: expected the last checkpoint {last} or the one in commit {in_progress}")
        if now < generation:
            problems.append(f"generation went back from {generation} to {now}")
        report = kb.check()
        problems += [f"check: {x}" for x in report.problems]
        if report.generation != now:
            problems.append(f"check read generation {report.generation}, the store is at {now}")
        problems += [f"integrity: {x}" for x in kb.store.check_integrity()]
        problems += [f"kept generations: {x}" for x in kept_generation_problems(path)]
        held, half = snapshot(kb)
        problems += [f"half document: {x}" for x in half]
        if len(held) != min(args.every * now, n_docs):
            problems.append(f"{len(held)} documents at generation {now}: not whole checkpoints of {args.every}")
        problems += [f"differs from the baseline: {d}" for d, v in held.items() if expected.get(d) != v][:10]
        kb.close()
        kills.append({"run": run, "kind": how, "moment": moment, "run_s": round(seconds, 1),
                      "last_checkpoint_reported": last, "commit_in_progress": in_progress, "generation_after": now,
                      "documents": len(held), "checks_ok": not problems, "problems": problems})
        print(f"kill {run + 1}/{len(kinds)}: {moment}: generation {now}, {len(held)} documents, "
              f"{'checks ok' if not problems else problems}", flush=True)
        generation = now

    rc, lines, err, resume_s = run_child(script, path, docs, "none", 0, 0, None)
    done = next((w for w in lines if w[0] == "done"), None)
    kb = KnowledgeBase.open(path, create=False)
    check = kb.check()
    problems = ([] if rc == 0 else [f"the last run failed (return code {rc}): {err.strip()[-300:]}"])
    problems += [f"check: {x}" for x in check.problems] + [f"integrity: {x}" for x in kb.store.check_integrity()]
    final, half = snapshot(kb)
    problems += [f"half document: {x}" for x in half]
    resumed = {"generation": kb.store.generation, "added": int(done[2]) if done else None,
               "unchanged": int(done[3]) if done else None, "seconds": round(resume_s, 1), "problems": problems}
    kb.close()
    mismatched = sorted(d for d in set(final) | set(expected) if final.get(d) != expected.get(d))
    result = {
        "date": time.strftime("%Y-%m-%d"), "command": command, "datasets": sizes, "docs": n_docs,
        "every": args.every, "checkpoints": n_checkpoints, "embedder": EMBEDDER, "seed": args.seed,
        "baseline_s": round(baseline_s, 1), "baseline_children": base_report.children,
        "kills": kills, "kills_inside_commit": sum(k["commit_in_progress"] is not None for k in kills),
        "all_checks_ok": all(k["checks_ok"] for k in kills) and not problems,
        "resumed": resumed, "resumed_equal": not mismatched and not problems,
        "mismatched": mismatched[:20], "total_s": round(time.perf_counter() - t_start, 1),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(args.out, result)
    print(f"resumed at generation {resumed['generation']} ({resumed['unchanged']} unchanged, {resumed['added']} added): "
          f"{'the same documents as the baseline' if result['resumed_equal'] else f'DIFFERS: {mismatched[:5]} {problems}'}; "
          f"total {result['total_s']:.0f} s -> {args.out}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if result["resumed_equal"] and result["all_checks_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
