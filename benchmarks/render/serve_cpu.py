"""serve_cpu: moved from report.py."""
from __future__ import annotations

from .common import load


def _throughput_reason(base: float) -> str:
    c = load("serve_cpu.json")
    if not c:
        return "see the server section"
    budget = 1000 * c["cores"] / (3 * base) - c["served_trace_true"]["client_cpu_ms_per_query"]
    return (f"see the server section: three times {base:.1f} queries a second leaves about {budget:.0f} ms of CPU a "
            f"query beside the load's own client on the same {c['cores']} cores; the server spends "
            f"{c['served_trace_true']['server_cpu_ms_per_query']} ms, the query embedding alone "
            f"{c['embedding_only']['cpu_ms_per_query']}")
