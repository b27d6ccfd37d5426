"""commit_cost: moved from report.py."""
from __future__ import annotations

from .common import _opened, host_of, load, ran


def commit_section() -> list[str]:
    r, lines = _opened("commit_cost.json", "Small commits into a large store (segments; `benchmarks/commit_cost.py`)",
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
                  f"counted by a scan first), a shorter run (`{af['command']}`): first query after a commit at "
                  f"{big['children']:,} children {', '.join(f'{v:.2f}' for v in big['first_query_s'])} s, commit "
                  f"ratio {af['commit_ratio']:.2f}x (embedding alone {af['embed_100_docs_s']:.1f} s).", ""]
    fq = load("first_query.json")
    if fq:
        p50 = fq["p50"]
        lines += [f"**The first question after a commit with the default settings** ({fq['date']}; `{fq['command']}`): "
                  f"{fq['note']} Each round in a process of its own, the two sides alternating; p50 over "
                  f"{len(fq['runs']['after'])} rounds (each: commit of {fq['documents_per_commit']} documents / first "
                  "question / second question, s):", "",
                  "| code | commit | first question | second question | rounds' first questions |", "|---|---|---|---|---|"]
        for side, label in (("before", fq.get("before_code", "before")), ("after", "this code")):
            if side in p50:
                lines.append(f"| {label} | {p50[side]['commit_s']:.2f} | {p50[side]['first_s']:.2f} | "
                             f"{p50[side]['second_s']:.2f} | "
                             + ", ".join(f"{x['first_s']:.2f}" for x in fq["runs"][side]) + " |")
        lines += ["", *fq.get("findings", []), ""]
    sc = load("scale_segments.json")
    if sc:
        x = sc["results"]["1000000"]["latency"]
        lines += [f"**The scale measure rerun at a million with segments** ({sc['date']}; {host_of(sc)}; {sc['store']}; "
                  f"command `{sc['command']}`): hybrid p50 {x['hybrid']['p50_ms']:.1f} ms (p95 "
                  f"{x['hybrid']['p95_ms']:.1f}), its BM25 channel {x['hybrid.bm25_channel']['p50_ms']:.1f} ms, "
                  f"its dense channel {x['hybrid.dense_channel']['p50_ms']:.1f} ms, BM25 alone "
                  f"{x['bm25']['p50_ms']:.1f} ms, dense alone {x['dense']['p50_ms']:.1f} ms; the query embedding "
                  f"{x['query_embedding_ms']:.1f} ms; first query {x['open_s']:.1f} s; max RSS "
                  f"{sc['results']['1000000']['max_rss_mb']:.0f} MB. Not comparable to the scale table (another "
                  "host kind, more segments); the code before segments cannot serve this store without rebuilding "
                  "its indexes, so no before was run beside it here.", ""]
    ab = load("segments_ab.json")
    if ab:
        cells = "; ".join(f"{x['side']} {x['run']}: hybrid {x['hybrid_p50_ms']:.1f}, BM25 channel "
                          f"{x['bm25_channel_p50_ms']:.1f}, dense channel {x['dense_channel_p50_ms']:.1f}, embedding "
                          f"{x['query_embedding_ms']:.1f}" for x in ab["runs"])
        lines += [f"**Before and after, one host, one store** ({ab['date']}; {host_of(ab)}; {ab['store']}; "
                  f"{ab['command']}), p50 ms: {cells}. Within the noise of this host: the query path did not get "
                  "slower with segments where a store has one.", ""]
    return lines
