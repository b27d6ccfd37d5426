"""``benchmarks/writer_load.py``'s results (``writer_load.json``) on docs/benchmarks.md: *Readers beside
writers: queries while an ingest and 50 deletes run* (``render``)."""
from __future__ import annotations

from .common import load, source


def render() -> list[str]:
    r = load("writer_load.json")
    lines = ["## Readers beside writers: queries while an ingest and 50 deletes run (`benchmarks/writer_load.py`)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/writer_load.py`._", ""]
    a, b = r["after"], r["before"]
    lines += [f"- Date: {r['date']}; command: `python benchmarks/writer_load.py --dataset ../shared/datasets/scifact "
              "--before-src /tmp/old/src` (`/tmp/old`: a worktree of c2e3fdd, the code before issue 26): the same load "
              f"on each code, one run after the other on this machine; {source('writer_load.json')}.",
              f"- A server (`--kb-root`, embedder `minilm`) over {a['base_docs']} SciFact abstracts. One client asks "
              "the SciFact questions one at a time (with the trace; a channel error counts), another asks `/healthz` "
              f"every 0.25 s. Idle: 30 s. Busy: a job ingesting {a['ingest_docs']} more abstracts is posted, then "
              f"{a['deletes']} threads each `DELETE` one of the first documents at once (a 429 retried after its "
              "Retry-After); the phase lasts until the ingest job has ended. Client timeouts 300 s. The floor beside "
              "each busy figure is the same figure idle.", "",
              "| code | phase | queries answered | query p50 ms | query p95 ms | query max ms | /healthz p95 ms | "
              "/healthz max ms | errors | deletes answered (p50 / max ms) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for label, x in (("before (c2e3fdd)", b), ("this code", a)):
        for phase in ("idle", "busy"):
            p = x[phase]
            d = p.get("delete_answer")
            dl = f"{d['p50_ms']:,.0f} / {d['max_ms']:,.0f}" if d else "—"
            lines.append(f"| {label} | {phase} | {p['query']['n']:,} | {p['query']['p50_ms']:,} | "
                         f"{p['query']['p95_ms']:,} | {p['query']['max_ms']:,} | {p['healthz']['p95_ms']:,} | "
                         f"{p['healthz']['max_ms']:,} | {p['query_errors']} | {dl} |")
    bb, ab = b["busy"], a["busy"]
    lines += ["", f"- Before, the deletes held request threads on the write lock until the ingest ended "
              f"({bb['ingest_seconds']:g} s): {bb['query']['n']} queries were answered in the whole busy phase, the "
              f"longest after {bb['query']['max_ms'] / 1000:.0f} s, and `/healthz` took up to "
              f"{bb['healthz']['max_ms'] / 1000:.0f} s. Now a delete is a job (202 at once; "
              f"{ab['delete_status'].get('429', 0)} of the simultaneous requests from the one write key were first "
              f"told 429 by the per-key limit of 8 in flight and retried): {ab['query']['n']:,} queries were answered "
              f"beside the ingest ({ab['ingest_seconds']:g} s, which now shares the CPU with them), query p95 "
              f"{ab['query']['p95_ms']} ms against {a['idle']['query']['p95_ms']} ms idle "
              f"({ab['query']['p95_ms'] / a['idle']['query']['p95_ms']:.2f}x), `/healthz` p95 "
              f"{ab['healthz']['p95_ms']} ms, no error.", ""]
    return lines
