"""Readers beside writers: query and /healthz latency of `ragsift serve`, idle and while a
600-document ingest job runs with 50 concurrent deletes sent at its start (issue 26).

    git worktree add /tmp/old c2e3fdd      # the code before issue 26, to compare against
    .venv/bin/python benchmarks/writer_load.py --dataset ../shared/datasets/scifact --before-src /tmp/old/src

runs the load against the ``--before-src`` code, then against this checkout's, and writes both
to benchmarks/results/writer_load.json (``{"before": ..., "after": ...}``); without
``--before-src``, only this checkout's run is printed.

- The knowledge base: --base-docs (200) documents of the dataset's corpus, embedder minilm,
  ingested through the API; then the ingest job adds the next --ingest-docs (600).
- One query client sends the dataset's queries in file order, one at a time, with the trace (a
  channel error counts as an error); a second client asks /healthz every 0.25 s. Every request
  has a client timeout of --timeout (300) seconds: one with no answer by then counts at that.
- Busy: the ingest job is posted, then --deletes (50) threads each delete one of the first
  documents at once (a 429 is retried after its Retry-After, as a polite client does); the
  phase lasts until the ingest job has ended (or --busy-cap seconds).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from harness import load_dataset, percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from server_process import free_port  # noqa: E402

KEY = "bench-write-key-0123456789abcdef"  # the writer: the ingest job and the deletes
READER = "bench-read-key-0123456789abcdef"  # the query client: another caller, with its own rate


def start_server(root: Path, src: Path, port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, RAGSIFT_API_KEYS=KEY, RAGSIFT_READ_KEYS=READER, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
    proc = subprocess.Popen([sys.executable, "-m", "ragsift.cli", "serve", "--kb-root", str(root), "--default-kb",
                             "bench", "--embedder", "minilm", "--no-mcp", "--port", str(port),
                             "--log-level", "warning"], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit("server not ready")


def wait_job(c: httpx.Client, job: dict, cap: float) -> dict:
    t = time.monotonic()
    paths = [f"/v1/kbs/{job['kb']}/jobs/{job['id']}", f"/v1/jobs/{job['id']}"]
    while job.get("state") in ("queued", "running") and time.monotonic() - t < cap:
        time.sleep(0.5)
        for p in paths:
            r = c.get(p)
            if r.status_code == 200:
                job = r.json()
                break
    return job


def phase(url: str, questions: list[str], stop: threading.Event, timeout: float) -> tuple[dict, dict]:
    """Queries one at a time and /healthz every 0.25 s until ``stop``; their latencies."""
    q_lat: list[float] = []
    h_lat: list[float] = []
    errors: list[str] = []

    def queries() -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {READER}"}, timeout=timeout) as c:
            i = 0
            while not stop.is_set():
                t = time.perf_counter()
                try:
                    r = c.post("/v1/query", json={"question": questions[i % len(questions)], "trace": True})
                    if r.status_code != 200:
                        errors.append(f"HTTP {r.status_code}: {r.text[:120]}")
                    elif any(ch["error"] for ch in r.json()["trace"]["channels"]):
                        errors.append("channel error")
                except httpx.HTTPError as e:
                    errors.append(type(e).__name__)
                q_lat.append(time.perf_counter() - t)
                i += 1

    def health() -> None:
        with httpx.Client(base_url=url, timeout=timeout) as c:
            while not stop.is_set():
                t = time.perf_counter()
                try:
                    c.get("/healthz")
                except httpx.HTTPError:
                    pass
                h_lat.append(time.perf_counter() - t)
                stop.wait(0.25)

    threads = [threading.Thread(target=queries), threading.Thread(target=health)]
    for th in threads:
        th.start()
    return {"latencies": q_lat, "errors": errors}, {"latencies": h_lat, "threads": threads}


def stats(lat: list[float]) -> dict:
    return {"n": len(lat), "p50_ms": round(percentile(lat, 50, method="nearest") * 1000, 1), "p95_ms": round(percentile(lat, 95, method="nearest") * 1000, 1),
            "max_ms": round(max(lat) * 1000, 1) if lat else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--before-src", help="another checkout's src/ to run the same load against first")
    ap.add_argument("--base-docs", type=int, default=200)
    ap.add_argument("--ingest-docs", type=int, default=600)
    ap.add_argument("--deletes", type=int, default=50)
    ap.add_argument("--idle-seconds", type=float, default=30)
    ap.add_argument("--busy-cap", type=float, default=900)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "writer_load.json"))
    args = ap.parse_args()
    after = run(args, ROOT / "src", "this checkout")
    if args.before_src:
        before = run(args, Path(args.before_src), "before")
        write_result(args.out, {"before": before, "after": after})
        print(f"wrote {args.out}")


def run(args: argparse.Namespace, src: Path, label: str) -> dict:

    ds = load_dataset(Path(args.dataset))
    corpus = []
    with open(ds.corpus, encoding="utf-8") as f:
        for line in f:
            if line.strip() and len(corpus) < args.base_docs + args.ingest_docs:
                row = json.loads(line)
                corpus.append({"id": str(row["_id"]), "text": row["text"], "title": row.get("title") or ""})
    base, extra = corpus[:args.base_docs], corpus[args.base_docs:args.base_docs + args.ingest_docs]
    questions = list(ds.queries.values())
    root = Path(tempfile.mkdtemp(prefix="ragsift-writer-load-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(root / "kbs", src, port, root / "server.log")
    out: dict = {"label": label, "src": str(src), "dataset": Path(args.dataset).name,
                 "base_docs": len(base), "ingest_docs": len(extra), "deletes": args.deletes}
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=args.timeout) as c:
            job = c.post("/v1/documents", json={"documents": base}).json()
            assert wait_job(c, job, 3600).get("state") == "done", job
            # idle
            stop = threading.Event()
            q, h = phase(url, questions, stop, args.timeout)
            time.sleep(args.idle_seconds)
            stop.set()
            for th in h["threads"]:
                th.join()
            out["idle"] = {"query": stats(q["latencies"]), "healthz": stats(h["latencies"]),
                           "query_errors": len(q["errors"]), "errors_seen": sorted(set(q["errors"]))[:5]}
            # busy: the ingest job, the deletes, and the same readers
            stop = threading.Event()
            t0 = time.perf_counter()
            big = c.post("/v1/documents", json={"documents": extra}).json()
            q, h = phase(url, questions, stop, args.timeout)
            delete_lat: list[float] = []
            codes: dict[str, int] = {}

            def delete(i: int) -> None:
                with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"},
                                  timeout=args.timeout) as own:
                    t = time.perf_counter()
                    while True:
                        try:
                            r = own.delete(f"/v1/documents/{base[i]['id']}")
                        except httpx.HTTPError as e:
                            codes[type(e).__name__] = codes.get(type(e).__name__, 0) + 1
                            break
                        codes[str(r.status_code)] = codes.get(str(r.status_code), 0) + 1
                        if r.status_code != 429:
                            break
                        time.sleep(float(r.headers.get("Retry-After", "1")))
                    delete_lat.append(time.perf_counter() - t)
            with ThreadPoolExecutor(args.deletes) as pool:
                deleters = [pool.submit(delete, i) for i in range(args.deletes)]
                ended = wait_job(c, big, args.busy_cap)
                stop.set()
                for th in h["threads"]:
                    th.join()
                for f in deleters:
                    f.result()
            out["busy"] = {"query": stats(q["latencies"]), "healthz": stats(h["latencies"]),
                           "query_errors": len(q["errors"]), "errors_seen": sorted(set(q["errors"]))[:5],
                           "ingest_state": ended.get("state"),
                           "ingest_seconds": round(time.perf_counter() - t0, 1),
                           "delete_answer": stats(delete_lat), "delete_status": codes}
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
