"""``benchmarks/serve_load.py``'s results (``serve_load.json``, ``serve_workers.json``) on
docs/benchmarks.md: *The server on every core (`ragsift serve --workers N`)* (``workers``); *The server
under load (`ragsift serve`)* (``render``)."""
from __future__ import annotations

from . import serve_cpu
from .common import opened, ran, source


def workers() -> list[str]:
    r, lines = opened("serve_workers.json", "The server on every core (`ragsift serve --workers N`)",
                      "benchmarks/serve_load.py --throughput-only")
    if r is None:
        return lines
    t = r["throughput"]
    before = r.get("before_code", "the server of the commit before")
    lines += [f"- {ran(r)}",
              f"- {r['clients']} concurrent clients sent {t[next(k for k in t if k != 'cores')]['queries']:,} SciFact "
              f"queries (each `POST /v1/query` with its trace) to an idle server on 127.0.0.1 over the SciFact "
              f"knowledge base, {t['cores']} cores; before = {before}, one process.", "",
              "| server | queries/s | p50 ms | p95 ms | errors | vs before |", "|---|---|---|---|---|---|"]
    for key in [k for k in t if k != "cores"]:
        x = t[key]
        n = key.rsplit("_", 1)[1]
        label = (("before, one process" if n == "1" else f"before, --workers {n}") if key.startswith("before_")
                 else f"--workers {n}")
        lines.append(f"| {label} | {x['qps']} | {x['p50_ms']} | {x['p95_ms']} | {x['errors']} | "
                     + (f"{x['qps'] / t['before_workers_1']['qps']:.2f}x |" if "before_workers_1" in t else "— |"))
    if "issue_baseline" in r:
        b = r["issue_baseline"]
        lines += ["", f"- The issue's baseline: {b['qps']} queries/s ({b['source']})."]
    if r.get("earlier_runs"):
        lines += ["", "- The other runs (queries/s; each compares only within itself, this host's speed moves up to "
                  "2x between hours): " + "; ".join(
                      f"{e['date']}" + (f", before = {e['before_code']}" if e.get("before_code") else "") + ": "
                      + ", ".join(f"{k} {v}" for k, v in e["qps"].items()) for e in r["earlier_runs"]) + "."]
    lines += ["", "- Each worker is a process with its own models and indexes (memory grows with N); rate limits, "
              "in-flight counts and `/metrics` are per worker; writes stay one at a time through the knowledge base's "
              "lock, and any worker answers for any job."]
    lines += serve_cpu.workers_part()
    lines.append("")
    return lines


def render() -> list[str]:
    r, lines = opened("serve_load.json", "The server under load (`ragsift serve`)", "benchmarks/serve_load.py")
    if r is None:
        return lines
    job = r["ingest_job"]
    lines += [f"- {ran(r)}; {source('serve_load.json')}",
              f"- {r['clients']} concurrent clients (asyncio + httpx) sent {r['api']['queries']:,} SciFact queries in "
              f"all to a server on 127.0.0.1 over the SciFact knowledge base ({r['documents']:,} documents, embedder "
              f"`{r['embedder']}`), each `POST /v1/query` with its trace. An error is a non-2xx answer or a channel "
              f"error in a trace. Timeouts: channels {r['channel_timeout_s']:g} s (the default), clients "
              f"{r['client_timeout_s']} s.",
              f"- Under ingest: {job['jobs']} jobs of {job['documents']:,} HotpotQA paragraphs in all ({job['chunks']:,} "
              f"chunks) ran during the whole query phase (covered: {job['share_of_query_phase_covered']:.0%}); they "
              f"took {job['seconds']:g} s and ended {', '.join(job['states'])}.",
              f"- Python API: the same queries from {r['clients']} threads calling `KnowledgeBase.query` in one "
              "process, in the same run; the ratios are the server's against it.", "",
              "| run | queries | errors | queries/s | p50 ms | p95 ms | p99 ms | p50 vs API | queries/s vs API |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, label in (("api", "Python API"), ("idle", "server, idle"), ("ingesting", "server, ingest running")):
        x = r[name]
        lines.append(f"| {label} | {x['queries']:,} | {x['errors']} | {x['qps']} | {x['p50_ms']} | {x['p95_ms']} | "
                     f"{x['p99_ms']} | {x.get('p50_vs_api', 1.0):.2f}x | {x.get('qps_vs_api', 1.0):.2f}x |")
    lines += ["", f"- The latencies are those of {r['clients']} queries in flight on two cores: a query is about "
              f"{1000 / r['api']['qps'] * 1:.0f} ms of work here, so a client waits behind the others (Little's law: "
              f"{r['clients']} / {r['api']['qps']} queries/s = {r['clients'] / r['api']['qps']:.2f} s). The server "
              f"adds HTTP, JSON and the trace to each answer: {r['idle']['qps_vs_api']:.2f}x the throughput of the "
              f"Python API. An ingest embedding beside the queries takes CPU from them "
              f"({r['ingesting']['qps_vs_api']:.2f}x); no query waited for it to end and none failed.", ""]
    return lines
