"""Where a served query's CPU goes: the CPU time of the `ragsift serve` process (from
/proc/PID/stat) and of this client process per query, under 32 concurrent clients, with and
without the trace in the answer; the same with 2 clients (as many as cores: the CPU a query costs
when queries do not queue for the cores); beside it the same questions through
``KnowledgeBase.query`` in one thread of one process (the in-process floor).

    .venv/bin/python benchmarks/serve_cpu.py --kb /tmp/ragsift-bench/eval/scifact-minilm \\
        --dataset ../shared/datasets/scifact --out benchmarks/results/serve_cpu.json
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from serve_load import serve  # noqa: E402


def cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


async def load(url: str, questions: list[str], trace: bool, clients: int) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    for q in questions:
        queue.put_nowait(q)

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            while not queue.empty():
                r = await c.post("/v1/query", json={"question": queue.get_nowait(), "trace": trace})
                r.raise_for_status()
                r.json()
    await asyncio.gather(*(client() for _ in range(clients)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve_cpu.json"))
    ap.add_argument("--before", help="also: the served loads on this checkout's server (its src/), measured first")
    args = ap.parse_args()
    qs = list(load_dataset(args.dataset).queries.values())[:args.queries]
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/serve_cpu.py " + " ".join(sys.argv[1:]),
                 "queries": len(qs), "clients": args.clients, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "kb"
        shutil.copytree(args.kb, served)
        sides = [("before_", Path(args.before) / "src"), ("", None)] if args.before else [("", None)]
        for side, src in sides:  # --before's server first, then this code's, the same loads
            srv = serve(served, args.clients, env={"PYTHONPATH": str(src)} if src is not None else None)
            url, pid = srv.url, srv.proc.pid
            try:
                asyncio.run(load(url, qs[:20], False, 4))
                for clients, trace in ((args.clients, True), (args.clients, False), (2, True), (2, False)):
                    s0, c0, t0 = cpu_s(pid), own_cpu_s(), time.perf_counter()
                    asyncio.run(load(url, qs, trace, clients))
                    dt = time.perf_counter() - t0
                    key = (f"{side}served_trace_{str(trace).lower()}"
                           + ("" if clients == args.clients else f"_clients_{clients}"))
                    out[key] = {
                        "qps": round(len(qs) / dt, 2),
                        "server_cpu_ms_per_query": round((cpu_s(pid) - s0) / len(qs) * 1000, 1),
                        "client_cpu_ms_per_query": round((own_cpu_s() - c0) / len(qs) * 1000, 1)}
                    print(key, out[key], flush=True)
            finally:
                srv.stop()
        from ragsift.kb import KnowledgeBase

        kb = KnowledgeBase.open(served)
        for q in qs[:10]:
            kb.query(q, trace=False)
        from ragsift.process import limit_blas_threads

        for blas, setup in (("default", None), ("one", limit_blas_threads)):
            if setup:
                setup()
            c0, t0 = own_cpu_s(), time.perf_counter()
            for q in qs:
                kb.query(q, trace=False)
            out[f"in_process_blas_{blas}"] = {"qps": round(len(qs) / (time.perf_counter() - t0), 2),
                                              "cpu_ms_per_query": round((own_cpu_s() - c0) / len(qs) * 1000, 1)}
            print(blas, out[f"in_process_blas_{blas}"], flush=True)
        c0, t0 = own_cpu_s(), time.perf_counter()
        for q in qs:
            kb.embedder().embed_queries([q])
        out["embedding_only"] = {"wall_ms": round((time.perf_counter() - t0) / len(qs) * 1000, 1),
                                 "cpu_ms_per_query": round((own_cpu_s() - c0) / len(qs) * 1000, 1)}
        kb.close()
    write_result(args.out, out)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
