"""``benchmarks/commit_cost.py``'s results (``commit_cost.json``, ``commit_cost_after.json``,
``steady_ingest.json``) on docs/benchmarks.md: *Small commits into a large store (segments;
`benchmarks/commit_cost.py`)* (``render``)."""
from __future__ import annotations

from . import first_query, scale
from .common import load, opened, ran, source


def render() -> list[str]:
    r, lines = opened("commit_cost.json", "Small commits into a large store (segments; `benchmarks/commit_cost.py`)",
                      "benchmarks/commit_cost.py")
    if r is None:
        return lines
    res = r["results"]
    sizes = sorted(res, key=int)
    lines += [f"- {ran(r)}",
              f"- Each store: synthetic children built as `benchmarks/scale.py` builds them (one commit; the writer "
              f"saves its segment). Then, alternating the sizes, commits of {r['docs_per_commit']} new SciFact "
              "abstracts through `KnowledgeBase.add_documents` (split, embedded by minilm, written, committed), and "
              "after each the next question of a reader that answered before it (refresh, the new segment read and "
              "indexed, a hybrid query with its embedding). Steady ingest: the reader's hybrid queries for a minute "
              "while another process commits 100 abstracts every 10 s, against the same reader idle "
              + ("in windows alternating with the busy ones." if "steady_ratio" in res[sizes[-1]] else "for 30 s."), "",
              "| children | commit p50 s (each) | first query after a commit p50 s (each) | segments after | idle p50 ms | "
              "steady-ingest p50 / p95 ms | the same, writer with RAGSIFT_THREADS=1 | query embedding ms |",
              "|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        x = res[n]
        lines.append(f"| {x['children']:,} | {x['commit_p50_s']:.2f} ({', '.join(f'{v:.1f}' for v in x['commit_s'])}) | "
                     f"{x['first_query_p50_s']:.3f} ({', '.join(f'{v:.2f}' for v in x['first_query_s'])}) | "
                     f"{x['segments'][-1]} | {x.get('steady_idle_p50_ms', x.get('idle_p50_ms')):.1f} | {x['steady_p50_ms']:.1f} / "
                     f"{x['steady_p95_ms']:.1f} | {x.get('steady_threads_1_p50_ms', float('nan')):.1f} / "
                     f"{x.get('steady_threads_1_p95_ms', float('nan')):.1f} | {x['query_embedding_ms']:.1f} |")
    lines += ["", f"- Floor in the same run: embedding the {r['docs_per_commit']} abstracts alone took "
              f"{r['embed_100_docs_s']:.1f} s. Commit p50 at {int(sizes[-1]):,} against {int(sizes[0]):,}: "
              f"{r['commit_ratio']:.2f}x.",
              "- Found on the way: LanceDB's compaction takes every fragment under its target size (about a "
              "million rows), so each commit into the million rewrote its big fragment whole (1.7 GB of children, "
              "about 15 s a commit, and 9.7 GB of data files after five commits). A commit now compacts a table "
              "only while it is small (under 65,536 rows) or once 16 small fragments pile up, and at `optimize` "
              "(every 20 commits by default): those commits still rewrite it. This run had the rule without the "
              "small-table part (the 10,000 store compacted at 16 fragments, not at every commit).",
              "- The idle and steady figures at the million are close to each other and far above the scale "
              "table's: this run was on an AMD host (query embedding "
              f"{res[sizes[-1]]['query_embedding_ms']:.1f} ms here, 3.5 ms on the Intel host of the scale table), "
              "and the idle window (20 s) came right after the commits.", ""]
    af = load("commit_cost_after.json")
    if af:
        big = af["results"][sorted(af["results"], key=int)[-1]]
        lines += [f"- After a segment's rows are read with one scan (the manifest's count bounds them; they were "
                  f"counted by a scan first), a shorter run (`{af['command']}`; {source('commit_cost_after.json')}): first query after a commit at "
                  f"{big['children']:,} children {', '.join(f'{v:.2f}' for v in big['first_query_s'])} s, commit "
                  f"ratio {af['commit_ratio']:.2f}x (embedding alone {af['embed_100_docs_s']:.1f} s).", ""]
    lines += first_query.commit_part()
    lines += scale.segments_part()
    lines += scale.segments_ab_part()
    return lines
