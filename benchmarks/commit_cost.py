"""What a small commit costs in a large store, and what readers see of it (segments).

For each size, a store of N synthetic children is built as ``benchmarks/scale.py`` builds it
(one commit; its segment saved by the writer). Then, side by side, alternating sizes:

- ``commit``: 100 new real documents (SciFact abstracts, each once) added through
  ``KnowledgeBase.add_documents`` (split, query-free embedding with the real model, write,
  commit): seconds per commit;
- ``first_query``: a reader that answered before the commit asks its next question: refresh,
  the new segment read and indexed, the query (embedding included);
- ``steady``: query p50 of a reader while another process commits 100 documents every 10 s,
  against the same reader idle (hybrid dense + BM25, the real query path).

    .venv/bin/python benchmarks/commit_cost.py --sizes 10000,1000000 --rounds 5 \\
        --dataset ../shared/datasets/scifact --work-dir /tmp/ragsift-commit --out benchmarks/results/commit_cost.json

The floor beside each figure: the embedding of the 100 documents alone (``embed_s``) and of one
query (``query_embedding_ms``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness import percentile, write_result
from scale import queries, run_phase

DOCS_PER_COMMIT = 100


def corpus(dataset: Path) -> list[dict]:
    with open(dataset / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def batch(docs: list[dict], tag: str, start: int) -> list[dict]:
    """100 documents with ids of their own (``tag``: the size and round)."""
    out = []
    for j in range(DOCS_PER_COMMIT):
        d = docs[(start + j) % len(docs)]
        out.append({"id": f"{tag}-{d['_id']}", "title": d.get("title", ""), "text": d["text"]})
    return out


def build(n: int, work: Path, dataset: Path) -> None:
    """The store of n synthetic children, built by ``scale.py`` in a process of its own."""
    if (work / f"scale-{n}" / "manifest.json").exists():
        return
    info = run_phase(n, argparse.Namespace(work_dir=str(work), dataset=str(dataset), out="/dev/null"), "build")
    print(f"built {n}: {json.dumps(info)}", flush=True)


def query_loop(kb, qs: list[str], seconds: float) -> list[float]:
    out: list[float] = []
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end:
        t = time.perf_counter()
        kb.query(qs[i % len(qs)], channels=["dense", "bm25"])
        out.append((time.perf_counter() - t) * 1000)
        i += 1
    return out


def writer(kb_path: str, dataset: str, every: float, duration: float, tag: str, start: int, flag: str) -> None:
    """Another process's steady ingest: 100 documents every ``every`` seconds while the file
    ``flag`` exists (the busy windows), idle otherwise, for ``duration`` seconds; ``flag.ready``
    is written once the knowledge base and the model are loaded."""
    from ragsift.kb import KnowledgeBase

    kb = KnowledgeBase.open(kb_path, create=False)
    docs = corpus(Path(dataset))
    kb.embedder().embed_passages(["warm"])
    Path(flag + ".ready").touch()
    end = time.time() + duration
    r = 0
    while time.time() < end:
        if not os.path.exists(flag):
            time.sleep(0.1)
            continue
        t = time.time()
        kb.add_documents(batch(docs, f"{tag}-{r}", start + r * DOCS_PER_COMMIT))
        r += 1
        time.sleep(max(0.0, every - (time.time() - t)))


def steady(kb, n: int, work: Path, dataset: Path, qs: list[str], seconds: float, windows: int,
           threads: str, tag: str, start: int) -> tuple[list[float], list[float]]:
    """Query times of one reader in alternating windows, idle then busy (another process
    committing 100 documents every 10 s), ``windows`` of each, ``seconds`` of each kind in all:
    the two are measured side by side, not one after the other."""
    flag = work / f"busy-{tag}"
    flag.unlink(missing_ok=True)
    Path(str(flag) + ".ready").unlink(missing_ok=True)
    env = {**os.environ, "RAGSIFT_THREADS": threads}  # the writer's threads: its default, or as an operator sets them
    proc = subprocess.Popen([sys.executable, __file__, "--out", "-", "--dataset", str(dataset), "--writer",
                             str(work / f"scale-{n}"), "10", str(seconds * 2 + 600), tag, str(start), str(flag)],
                            env=env)
    try:
        while not Path(str(flag) + ".ready").exists():
            time.sleep(0.2)
        query_loop(kb, qs, 5)  # warm: every segment read and indexed
        idle: list[float] = []
        busy: list[float] = []
        for _ in range(windows):
            idle += query_loop(kb, qs, seconds / windows)
            flag.touch()
            busy += query_loop(kb, qs, seconds / windows)
            flag.unlink()
    finally:
        proc.kill()
        proc.wait()
    return idle, busy


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,1000000")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steady-s", type=float, default=60.0)
    p.add_argument("--writer-threads", default="0,1",
                   help="RAGSIFT_THREADS of the steady writer, one run each (0: its default)")
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--work-dir", default="/tmp/ragsift-commit")
    p.add_argument("--out", required=True)
    p.add_argument("--windows", type=int, default=4, help="idle and busy windows, alternating")
    p.add_argument("--writer", nargs=6, help=argparse.SUPPRESS)  # internal: kb every duration tag start flag
    args = p.parse_args()
    if args.writer:
        kb_path, every, duration, tag, start, flag = args.writer
        writer(kb_path, args.dataset, float(every), float(duration), tag, int(start), flag)
        return 0
    from ragsift.kb import KnowledgeBase

    work, dataset = Path(args.work_dir), Path(args.dataset)
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        build(n, work, dataset)
    docs = corpus(dataset)
    qs = queries(dataset, 200)
    stamp = int(time.time())
    writers = {n: KnowledgeBase.open(work / f"scale-{n}", create=False) for n in sizes}
    readers = {n: KnowledgeBase.open(work / f"scale-{n}", create=False) for n in sizes}
    for n in sizes:
        for q in qs[:5]:
            readers[n].query(q, channels=["dense", "bm25"])  # opened, model loaded, indexes read
    res: dict = {n: {"commit_s": [], "first_query_s": [], "segments": []} for n in sizes}
    emb = writers[sizes[0]].embedder()
    t = time.perf_counter()
    emb.embed_passages([d["text"] for d in batch(docs, "floor", 0)])
    floor_embed = time.perf_counter() - t
    for r in range(args.rounds):
        for n in sizes:  # side by side: one commit into each size per round
            t = time.perf_counter()
            writers[n].add_documents(batch(docs, f"c{stamp}-{r}", r * DOCS_PER_COMMIT))
            res[n]["commit_s"].append(time.perf_counter() - t)
            t = time.perf_counter()
            readers[n].query(qs[r], channels=["dense", "bm25"])
            res[n]["first_query_s"].append(time.perf_counter() - t)
            res[n]["segments"].append([s[2] for s in readers[n].store.manifest.get("segments", [])])
            print(f"{n:>9}: commit {res[n]['commit_s'][-1]:.2f} s, first query {res[n]['first_query_s'][-1]:.3f} s, "
                  f"segments {res[n]['segments'][-1]}", flush=True)
    for n in sizes:
        kb = readers[n]
        for k, threads in enumerate(args.writer_threads.split(",")):
            idle, busy = steady(kb, n, work, dataset, qs, args.steady_s, args.windows, threads, f"s{stamp}-{k}",
                                5000 + 2000 * k)
            key = "steady" if threads == "0" else f"steady_threads_{threads}"
            res[n][f"{key}_idle_p50_ms"] = percentile(idle, 50)
            res[n][f"{key}_p50_ms"], res[n][f"{key}_p95_ms"] = percentile(busy, 50), percentile(busy, 95)
            res[n][f"{key}_ratio"] = percentile(busy, 50) / percentile(idle, 50)
        t = time.perf_counter()
        for q in qs[:50]:
            kb.embedder().embed_queries([q])
        res[n]["query_embedding_ms"] = (time.perf_counter() - t) * 1000 / 50
        res[n]["children"] = kb.stats()["children"]
        res[n]["commit_p50_s"], res[n]["first_query_p50_s"] = percentile(res[n]["commit_s"], 50), percentile(res[n]["first_query_s"], 50)
        print(f"{n:>9}: steady p50 {res[n]['steady_p50_ms']:.1f} ms against idle {res[n]['steady_idle_p50_ms']:.1f} ms "
              "in the windows between", flush=True)
    big, small = sizes[-1], sizes[0]
    out = {"date": time.strftime("%Y-%m-%d"), "command": ".venv/bin/python benchmarks/commit_cost.py " + " ".join(sys.argv[1:]),
           "docs_per_commit": DOCS_PER_COMMIT, "embed_100_docs_s": floor_embed,
           "results": res, "commit_ratio": res[big]["commit_p50_s"] / res[small]["commit_p50_s"]}
    write_result(args.out, out)
    print(f"commit p50 {big} / {small}: {out['commit_ratio']:.2f}x; embedding 100 documents alone {floor_embed:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
