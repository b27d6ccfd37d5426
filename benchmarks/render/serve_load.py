"""serve_load: moved from report.py."""
from __future__ import annotations

from .common import _opened, load, ran


def workers_section() -> list[str]:
    r, lines = _opened("serve_workers.json", "The server on every core (`ragsift serve --workers N`)",
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
    c = load("serve_cpu.json")
    if c:
        st, sf = c["served_trace_true"], c["served_trace_false"]
        d, o = c["in_process_blas_default"], c["in_process_blas_one"]
        ceiling = 1000 * c["cores"] / (st["server_cpu_ms_per_query"] + st["client_cpu_ms_per_query"])
        bt, bf = c.get("before_served_trace_true"), c.get("before_served_trace_false")
        two, btwo = c.get("served_trace_true_clients_2"), c.get("before_served_trace_true_clients_2")
        lines.append(
            f"- **Missed: 3x per core.** Where the CPU goes (`{c['command']}`, {c['date']}, {c['queries']} queries, "
            f"{c['clients']} clients, one server process): the server spends {st['server_cpu_ms_per_query']} ms of CPU "
            f"a query with the trace in the answer ({sf['server_cpu_ms_per_query']} ms without)"
            + (f", the code before {bt['server_cpu_ms_per_query']} ({bf['server_cpu_ms_per_query']})" if bt and bf else "")
            + f", and the load client on the same machine {st['client_cpu_ms_per_query']} ms; at that cost "
            f"{c['cores']} cores answer at most about {ceiling:.0f} queries a second (the CPU per query moves by a fifth "
            "from run to run here)."
            + (f" With 2 clients (no query waits for a core) a query costs the server {two['server_cpu_ms_per_query']} "
               f"ms ({btwo['server_cpu_ms_per_query']} before): queries queued behind each other cost more CPU each "
               "(their threads take turns on two cores)." if two and btwo else "")
            + f" In one process and one thread a query is {o['cpu_ms_per_query']} ms of CPU with one BLAS thread "
            f"({d['cpu_ms_per_query']} ms with OpenBLAS's default, which spins a thread per core after each matrix "
            "product: the server runs one), of which the query embedding alone (ONNX Runtime) is "
            f"{c['embedding_only']['cpu_ms_per_query']} ms. Before = {c.get('before_code', 'the code before')}."
            + (f" {c['changes']}" if c.get("changes") else ""))
        for e in c.get("earlier_runs", []):
            x = e["server_cpu_ms_per_query"]
            lines[-1] += (f" Earlier ({e['date']}; before = {e['before_code']}): with the trace "
                          f"{x['before_served_trace_true']} -> {x['served_trace_true']} ms at {c['clients']} clients, "
                          f"{x['before_served_trace_true_clients_2']} -> {x['served_trace_true_clients_2']} at 2; "
                          f"without it {x['before_served_trace_false']} -> {x['served_trace_false']} and "
                          f"{x['before_served_trace_false_clients_2']} -> {x['served_trace_false_clients_2']}.")
        if c.get("earlier_runs"):
            lines[-1] += (" The same code costs half the CPU a query in one hour that it costs in another on this "
                          "host: only the figures of one run compare.")
        sw = load("serve_workers.json") or {}
        base = sw.get("issue_baseline", {}).get("qps") or sw.get("throughput", {}).get("before_workers_1", {}).get("qps")
        if base:
            budget = 1000 * c["cores"] / (3 * base) - st["client_cpu_ms_per_query"]
            lines[-1] += (f" Three times the issue's throughput ({3 * base:.0f} queries a second here) leaves about "
                          f"{budget:.0f} ms of CPU a query for the embedding, the search, the answer and HTTP beside "
                          f"the load client's share: the embedding alone takes "
                          f"{c['embedding_only']['cpu_ms_per_query']} ms of it.")
    lines.append("")
    return lines


def serve_section() -> list[str]:
    r, lines = _opened("serve_load.json", "The server under load (`ragsift serve`)", "benchmarks/serve_load.py")
    if r is None:
        return lines
    job = r["ingest_job"]
    lines += [f"- {ran(r)}",
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
