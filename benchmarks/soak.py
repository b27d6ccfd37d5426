"""Soak: 100 re-ingests of a changing corpus with queries in between, on two knowledge bases
side by side in one process: the default (``optimize_every=20``: every 20th commit compacts
and drops the table versions of generations no longer kept) and ``optimize_every=0`` (never),
then ``ragsift optimize`` on both. Disk use, table versions and the process's RSS are
recorded as the rounds go.

    .venv/bin/python benchmarks/soak.py --zh ../shared/datasets/cmrc2018-dev \\
        --en ../shared/datasets/scifact --work-dir /tmp/ragsift-soak

- Corpus: --docs documents (half Chinese paragraphs from --zh, half English abstracts from
  --en), written as Markdown files into one folder.
- Each round: --change documents rewritten with the text of the next unused ones, 2 removed
  (``KnowledgeBase.delete(source=...)``: a commit), 2 new ones added; the folder is ingested
  again (unchanged files are skipped by content hash); then --queries questions from the two
  sets run on each knowledge base, and any error or empty answer is counted.
- Disk: every file under the knowledge base's directory. RSS: VmRSS of this process (both
  knowledge bases and the model live in it).
- Memory as a long-running face sets it: at most --arena-limit (2) malloc arenas
  (``ragsift.process.limit_arenas``, as ``ragsift serve`` and ``ragsift mcp`` do at start; 0: glibc's
  default), and the knowledge base's own trim after each write.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.kb import KnowledgeBase  # noqa: E402
from ragsift.process import limit_arenas  # noqa: E402


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def versions(kb_path: Path) -> int:
    return len(list((kb_path / "lance" / "children.lance" / "_versions").glob("*.manifest")))


def corpus_rows(path: Path, limit: int) -> list[dict]:
    rows = []
    with open(path / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("text", "").strip():
                rows.append(row)
            if len(rows) >= limit:
                break
    return rows


def write_doc(folder: Path, name: str, row: dict) -> None:
    (folder / name).write_text(f"# {row.get('title') or row['_id']}\n\n{row['text']}\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zh", required=True)
    ap.add_argument("--en", required=True)
    ap.add_argument("--work-dir", default="/tmp/ragsift-soak")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--change", type=int, default=12)
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "soak.json"))
    ap.add_argument("--arena-limit", type=int, default=2, help="malloc arenas at most (0: glibc's default)")
    args = ap.parse_args()
    limited = limit_arenas(args.arena_limit) if args.arena_limit else False

    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    folder = work / "docs"
    folder.mkdir(parents=True)
    need = args.docs + args.rounds * (args.change + 2)
    pool = [("zh", r) for r in corpus_rows(Path(args.zh), need // 2 + 1)] + \
           [("en", r) for r in corpus_rows(Path(args.en), need // 2 + 1)]
    random.Random(0).shuffle(pool)
    live: dict[str, int] = {}  # file name -> pool index
    for i in range(args.docs):
        name = f"{pool[i][0]}_{i:05d}.md"
        write_doc(folder, name, pool[i][1])
        live[name] = i
    next_row = args.docs
    qs = [q for ds in (load_dataset(args.zh), load_dataset(args.en)) for q in list(ds.queries.values())[:200]]
    rng = random.Random(1)

    kbs = {"default (optimize_every=20)": KnowledgeBase.open(work / "kb-default", embedder="minilm"),
           "never (optimize_every=0)": KnowledgeBase.open(work / "kb-never", embedder="minilm", optimize_every=0)}
    samples: list[dict] = []
    totals = {name: {"ingest_s": 0.0, "query_s": 0.0, "queries": 0, "errors": 0, "empty": 0, "commits": 0}
              for name in kbs}
    t_start = time.perf_counter()
    for rnd in range(args.rounds + 1):
        removed: list[str] = []
        if rnd > 0:  # change the corpus
            names = sorted(live)
            for name in rng.sample(names, args.change):
                write_doc(folder, name, pool[next_row % len(pool)][1])
                live[name] = next_row
                next_row += 1
            for name in rng.sample(sorted(set(names)), 2):
                (folder / name).unlink()
                del live[name]
                removed.append(name)
            for _ in range(2):
                lang, row = pool[next_row % len(pool)]
                name = f"{lang}_{next_row:05d}.md"
                write_doc(folder, name, row)
                live[name] = next_row
                next_row += 1
        for name, kb in kbs.items():
            t0 = time.perf_counter()
            for r in removed:
                kb.delete(source=r)
                totals[name]["commits"] += 1
            report = kb.ingest(folder)
            totals[name]["commits"] += 1 if (report.added or report.updated) else 0
            totals[name]["ingest_s"] += time.perf_counter() - t0
            assert kb.stats()["documents"] == len(live), (name, kb.stats()["documents"], len(live))
            for q in rng.sample(qs, args.queries):
                t0 = time.perf_counter()
                try:
                    res = kb.query(q)
                    totals[name]["empty"] += 0 if res.passages else 1
                except Exception as e:  # counted, never expected
                    print(f"query error on {name}: {e}", file=sys.stderr)
                    totals[name]["errors"] += 1
                totals[name]["query_s"] += time.perf_counter() - t0
                totals[name]["queries"] += 1
        if rnd % 10 == 0:
            row = {"round": rnd, "rss_mb": round(rss_mb(), 1), "seconds": round(time.perf_counter() - t_start, 1)}
            for name, kb in kbs.items():
                row[name] = {"generation": kb.stats()["generation"], "disk_mb": round(disk_bytes(kb.path) / 1e6, 2),
                             "versions": versions(kb.path)}
            samples.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    final = {}
    for name, kb in kbs.items():
        t0 = time.perf_counter()
        done = kb.optimize()
        final[name] = {"optimize_s": round(time.perf_counter() - t0, 2), "generation": done["generation"],
                       "disk_mb_before": round(done["disk_bytes_before"] / 1e6, 2),
                       "disk_mb_after": round(disk_bytes(kb.path) / 1e6, 2), "versions_after": versions(kb.path),
                       "kept_generations": done["kept_generations"], "check_ok": kb.check().ok}
    fresh = KnowledgeBase.open(work / "kb-fresh", embedder="minilm")  # the same documents ingested once
    fresh.ingest(folder)
    result = {"date": time.strftime("%Y-%m-%d"),
              "command": "python benchmarks/soak.py " + " ".join(sys.argv[1:]),
              "args": vars(args), "documents": len(live), "samples": samples, "totals": totals, "final": final,
              "fresh_disk_mb": round(disk_bytes(fresh.path) / 1e6, 2), "rss_mb_end": round(rss_mb(), 1),
              "arena_limit": args.arena_limit if limited else None}
    write_result(args.out, result)
    print(json.dumps({"final": final, "totals": totals, "fresh_disk_mb": result["fresh_disk_mb"]}, indent=1,
                     ensure_ascii=False))


if __name__ == "__main__":
    main()
