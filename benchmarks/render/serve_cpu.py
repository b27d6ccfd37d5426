"""``benchmarks/serve_cpu.py``'s results (``serve_cpu.json``) on docs/benchmarks.md: ``throughput_reason``
for the targets; its part of *The server on every core*."""
from __future__ import annotations

from .common import load


def throughput_reason(base: float) -> str:
    c = load("serve_cpu.json")
    if not c:
        return "see the server section"
    budget = 1000 * c["cores"] / (3 * base) - c["served_trace_true"]["client_cpu_ms_per_query"]
    return (f"see the server section: three times {base:.1f} queries a second leaves about {budget:.0f} ms of CPU a "
            f"query beside the load's own client on the same {c['cores']} cores; the server spends "
            f"{c['served_trace_true']['server_cpu_ms_per_query']} ms, the query embedding alone "
            f"{c['embedding_only']['cpu_ms_per_query']}")


def workers_part() -> list[str]:
    """Where the server's CPU goes, in the workers section (serve_cpu.json, serve_workers.json's baseline)."""
    lines: list[str] = []
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
    return lines
