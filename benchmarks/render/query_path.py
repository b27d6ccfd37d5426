"""``benchmarks/query_path.py``'s results (``query_path.json``) on docs/benchmarks.md: *The user's path
against the core* (``render``)."""
from __future__ import annotations

from .common import opened, ran


def render() -> list[str]:
    r, lines = opened("query_path.json", "The user's path against the core (`benchmarks/query_path.py`)",
                      "benchmarks/query_path.py")
    if r is None:
        return lines
    p50, p95 = r["p50_ms"], r["p95_ms"]
    lines += [f"- {ran(r)}",
              f"- {r['queries']} SciFact questions, embedder `{r['embedder']}`, default settings, one process, the "
              "four paths interleaved question by question.", "",
              "| path | p50 ms | p95 ms | p50 vs rank_documents |", "|---|---|---|---|"]
    for name, label in (("rank_documents", "`rank_documents` (document ids)"),
                        ("query", "`query` (passages, marks, trace with unit names)"),
                        ("query_no_trace", "`query(trace=False)` (what MCP and the adapters call)"),
                        ("embedding", "floor: the query embedding")):
        lines.append(f"| {label} | {p50[name]:.1f} | {p95[name]:.1f} | {p50[name] / p50['rank_documents']:.2f}x |")
    lines += ["", "- The trace's unit names read the labels (source, heading path, location: four columns, no text) of "
              "every section the trace shows (about 140 a question); a caller that shows no trace skips it: the HTTP "
              "route when `trace` is false, MCP, the LangChain, LlamaIndex and Haystack retrievers, the CLI without "
              "`--trace`."]
    for label, x in ([("before (" + r["before"]["code"] + ")", r["before"])] if "before" in r else []) + \
            [(o["note"], o) for o in r.get("other_runs", [])]:
        lines.append(f"- {label}: p50 " + " / ".join(f"{x['p50_ms'][k]:.1f}" for k in p50)
                     + f" ms ({', '.join(p50)}); query {x['ratio_to_rank_documents']['query']:.2f}x rank_documents, "
                     f"without the trace {x['ratio_to_rank_documents']['query_no_trace']:.2f}x.")
    lines.append("")
    return lines
