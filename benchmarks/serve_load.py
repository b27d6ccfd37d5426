"""Load on the server: concurrent clients against `ragsift serve` on 127.0.0.1, once idle and
once while an ingest job runs, and the same queries through the Python API in one process, for
the server's overhead as a ratio.

    .venv/bin/python benchmarks/serve_load.py --dataset ../shared/datasets/scifact \\
        --ingest-dataset ../shared/datasets/hotpotqa-ircot-dev500

- The knowledge base: the dataset's corpus, embedder minilm (built once in --work-dir).
- Queries: the dataset's queries in file order, cycled to --queries (2,000), sent by --clients
  (32) concurrent clients (asyncio + httpx), each `POST /v1/query` with the trace, so a channel
  error in any answer is counted as an error like a non-2xx status.
- Under ingest: a job of --ingest-docs documents from another corpus runs while the queries are
  sent; the report says how much of the query phase it covered.
- Python API: the same queries, --clients threads calling KnowledgeBase.query in one process.
- Timeouts: channel_timeout_s 30 (the default), client timeout 120 s.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from harness import load_dataset, percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from server_process import ServerProcess  # noqa: E402

from ragsift.eval.runner import build_kb  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402


def summary(latencies: list[float], seconds: float, errors: int, n: int) -> dict:
    return {"queries": n, "errors": errors, "seconds": round(seconds, 3), "qps": round(n / seconds, 2),
            "p50_ms": round(percentile(latencies, 50, method="nearest", empty=0.0) * 1000, 1), "p95_ms": round(percentile(latencies, 95, method="nearest", empty=0.0) * 1000, 1),
            "p99_ms": round(percentile(latencies, 99, method="nearest", empty=0.0) * 1000, 1), "mean_ms": round(statistics.fmean(latencies) * 1000, 1)}


async def http_load(url: str, questions: list[str], clients: int) -> dict:
    queue: asyncio.Queue = asyncio.Queue()
    for q in questions:
        queue.put_nowait(q)
    latencies: list[float] = []
    errors: list[str] = []

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            while not queue.empty():
                q = queue.get_nowait()
                t = time.perf_counter()
                try:
                    r = await c.post("/v1/query", json={"question": q, "trace": True})
                    latencies.append(time.perf_counter() - t)
                    if r.status_code != 200:
                        errors.append(f"HTTP {r.status_code}: {r.text[:200]}")
                    else:
                        bad = [ch["error"] for ch in r.json()["trace"]["channels"] if ch["error"]]
                        if bad:
                            errors.append("channel: " + "; ".join(bad))
                except httpx.HTTPError as e:
                    latencies.append(time.perf_counter() - t)
                    errors.append(f"{type(e).__name__}: {e}")

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    out = summary(latencies, time.perf_counter() - t0, len(errors), len(questions))
    out["error_examples"] = errors[:5]
    return out


def api_load(kb, questions: list[str], clients: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(q: str) -> None:
        t = time.perf_counter()
        try:
            res = kb.query(q)
            bad = [c.error for c in res.trace.channels if c.error]
        except Exception as e:  # counted, like the server's 5xx
            bad = [f"{type(e).__name__}: {e}"]
        with lock:
            latencies.append(time.perf_counter() - t)
            errors.extend(bad)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, questions))
    out = summary(latencies, time.perf_counter() - t0, len(errors), len(questions))
    out["error_examples"] = errors[:5]
    return out


def serve(kb_path: Path, clients: int, *extra: str, env: dict[str, str] | None = None) -> ServerProcess:
    """`ragsift serve` on 127.0.0.1 over ``kb_path``, ready. One caller (this address) sends every
    query: its per-caller limits are lifted so none is refused."""
    return ServerProcess(["--kb", str(kb_path), "serve", "--no-mcp", "--max-inflight", str(max(clients, 8)),
                          "--rate-limit", "1000000", "--rate-burst", "1000000", *extra],
                         keys=False, env=env).start(timeout=300)


def idle_load(kb_path: Path, work: Path, questions: list[str], clients: int, workers: int,
              src: Path | None = None, fusion: str | None = None) -> dict:
    """The idle load on a fresh server over a copy of the knowledge base (``src``: another checkout;
    ``fusion``: the copy's default query fusion)."""
    served = work / "served-kb"
    shutil.rmtree(served, ignore_errors=True)
    shutil.copytree(kb_path, served)
    if fusion:  # saved with the copy (KnowledgeBase.set_defaults), so either checkout's server reads it
        kb = KnowledgeBase.open(served)
        kb.set_defaults(fusion=fusion)
        kb.close()
    srv = serve(served, clients, *(["--workers", str(workers)] if workers > 1 else []),
                env={"PYTHONPATH": str(src)} if src is not None else None)
    try:
        asyncio.run(http_load(srv.url, questions[:20 * workers], 4 * workers))  # warm-up, every worker
        return asyncio.run(http_load(srv.url, questions, clients))
    finally:
        srv.stop()


def throughput(kb_path: Path, work: Path, questions: list[str], args) -> dict:
    """Queries a second on the idle server: this code with each --workers N, and --before's."""
    out: dict = {"cores": os.cpu_count()}
    if args.before:
        for n in [int(x) for x in args.before_workers.split(",") if x]:
            out[f"before_workers_{n}"] = idle_load(kb_path, work, questions, args.clients, n, Path(args.before) / "src",
                                                   fusion=args.fusion)
            print("before", n, out[f"before_workers_{n}"], flush=True)
    for n in [int(x) for x in args.workers.split(",") if x]:
        out[f"workers_{n}"] = idle_load(kb_path, work, questions, args.clients, n, fusion=args.fusion)
        print(n, out[f"workers_{n}"], flush=True)
        if "before_workers_1" in out:
            out[f"workers_{n}"]["qps_vs_before"] = round(out[f"workers_{n}"]["qps"] / out["before_workers_1"]["qps"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--ingest-dataset", required=True, help="corpus whose documents the ingest job sends")
    ap.add_argument("--ingest-docs", type=int, default=3000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/serve")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve_load.json"))
    ap.add_argument("--workers", default="", help="also: the idle load on `serve --workers N` for each N listed")
    ap.add_argument("--before", help="also: the idle load on this checkout's server (its src/), --workers 1")
    ap.add_argument("--before-workers", default="1", help="the --before server's --workers N, for each N listed")
    ap.add_argument("--fusion", help="the served copies' default query fusion (the code of the issue, 9da26f3, knows "
                                     "rrf and weighted only; this code's default is adaptive)")
    ap.add_argument("--throughput-only", action="store_true",
                    help="only the idle loads of --workers and --before (no API run, no ingest)")
    args = ap.parse_args()

    ds = load_dataset(args.dataset)
    work = Path(args.work_dir)
    kb, _ = build_kb(ds, work, "minilm", progress=False)
    texts = list(ds.queries.values())
    questions = [texts[i % len(texts)] for i in range(args.queries)]
    ingest_rows = []
    with open(Path(args.ingest_dataset) / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            ingest_rows.append({"id": "ingest-" + str(row["_id"]), "title": row.get("title", ""), "text": row["text"]})
            if len(ingest_rows) == args.ingest_docs:
                break
    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
                    "dataset": str(ds.path), "documents": kb.stats()["documents"], "clients": args.clients,
                    "embedder": "minilm", "channel_timeout_s": kb.settings.query.channel_timeout_s,
                    "client_timeout_s": 120}

    if args.throughput_only:
        kb.close()
        result["throughput"] = throughput(kb.path, work, questions, args)
        write_result(args.out, result)
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0

    # 1. the Python API in this process (warmed up), before any server runs
    for q in questions[:20]:
        kb.query(q)
    result["api"] = api_load(kb, questions, args.clients)
    print("api", result["api"], flush=True)
    kb.close()

    # 2. the server: a copy of the knowledge base, so the ingest does not change the next run's
    served = work / "served-kb"
    shutil.rmtree(served, ignore_errors=True)
    shutil.copytree(kb.path, served)
    srv = serve(served, args.clients, "--max-body-mb", "64")
    url = srv.url
    try:
        asyncio.run(http_load(url, questions[:20], 4))  # warm-up
        result["idle"] = asyncio.run(http_load(url, questions, args.clients))
        print("idle", result["idle"], flush=True)

        # jobs of at most 1,000 documents (the server's limit per request), queued behind each other
        jobs = [httpx.post(url + "/v1/documents", json={"documents": ingest_rows[i:i + 1000]}, timeout=300).json()
                for i in range(0, len(ingest_rows), 1000)]
        while httpx.get(f"{url}/v1/jobs/{jobs[0]['id']}").json()["phase"] in ("queued", "loading"):
            time.sleep(0.2)
        t_start = time.time()
        result["ingesting"] = asyncio.run(http_load(url, questions, args.clients))
        t_end = time.time()
        states = []
        for job in jobs:
            state = httpx.get(f"{url}/v1/jobs/{job['id']}").json()
            while state["state"] in ("queued", "running"):
                time.sleep(1)
                state = httpx.get(f"{url}/v1/jobs/{job['id']}").json()
            states.append(state)
        started, finished = states[0]["started_at"], states[-1]["finished_at"]
        covered = min(1.0, max(0.0, (min(finished, t_end) - t_start) / (t_end - t_start)))
        result["ingest_job"] = {"documents": len(ingest_rows), "jobs": len(jobs),
                                "states": sorted({st["state"] for st in states}),
                                "chunks": sum(st["progress"]["total"] for st in states),
                                "seconds": round(finished - started, 1),
                                "share_of_query_phase_covered": round(covered, 3),
                                "added": sum(len(st["report"]["added"]) for st in states if st["report"])}
        print("ingesting", result["ingesting"], result["ingest_job"], flush=True)
    finally:
        srv.stop()
    for phase in ("idle", "ingesting"):
        result[phase]["p50_vs_api"] = round(result[phase]["p50_ms"] / result["api"]["p50_ms"], 2)
        result[phase]["qps_vs_api"] = round(result[phase]["qps"] / result["api"]["qps"], 2)
    write_result(args.out, result)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
