"""``benchmarks/lance_cache.py``'s results (``lance_cache.json``) on docs/benchmarks.md: *LanceDB's caches
in a long-running process* (``render``)."""
from __future__ import annotations

from pathlib import Path

from .common import opened, ran


def render() -> list[str]:
    r, lines = opened("lance_cache.json", "LanceDB's caches in a long-running process (`benchmarks/lance_cache.py`)",
                      "python benchmarks/lance_cache.py")
    if r is None:
        return lines
    lines += [f"- {ran(r)}",
              f"- One process per row: a store of {r['docs']} documents (Chinese and English, hashed vectors, no "
              f"model), {r['commits']} commits each rewriting 12 documents and adding 2, and after each a second "
              "store in the same process (a reader) refreshes and searches BM25 and dense; at most 2 malloc arenas "
              "and a trim before each sample. `MB each`: `RAGSIFT_LANCE_CACHE_MB`, the size of each of LanceDB's "
              "two caches (table metadata, index pages) in the process's one session; `LanceDB's defaults`: the "
              "connections made without that session, as the store did before.", "",
              "| caches | RSS MB at commit 0 / 50 / end | MB a commit after commit 50 | cached MB at the end |",
              "|---|---|---|---|"]
    def cells(size: str, cached_mb: float | None) -> tuple[str, str]:
        """A row's cache size and cached megabytes as the tables show them."""
        return ("LanceDB's defaults" if size == "lancedb" else f"{size} MB each",
                "—" if cached_mb is None else f"{cached_mb:.1f}")

    for run in r["runs"]:
        s = {x["commit"]: x for x in run["samples"]}
        end = run["samples"][-1]
        name, cached = cells(run["size"], end["cached_mb"])
        lines.append(f"| {name} | {s[0]['rss_mb']:.0f} / {s[50]['rss_mb']:.0f} / {end['rss_mb']:.0f} "
                     f"| {run['mb_per_commit_after_50']:+.3f} | {cached} |")
    lines += ["", "- With LanceDB's default caches (sized in gigabytes) every table version a process opens stays "
              "cached: the process grows by about a megabyte a commit, without end. Bounded, the caches fill and "
              "stop (16 MB each, the default: full near commit 275 here)."]
    qs = r.get("queries") or []
    if qs:
        lines += ["", "What the bounds cost a query: `KnowledgeBase.query` (trace off) on existing knowledge bases, "
                  "each cache size in a process of its own, every size twice in turn (p50 / p90 ms, the two rounds):",
                  "", "| knowledge base | caches | p50 ms | p90 ms | cached MB |", "|---|---|---|---|---|"]
        for q in qs:
            name, cached = cells(q["size"], q["cached_mb"])
            lines.append(f"| {Path(q['kb']).name} (round {q['round'] + 1}) | {name} | {q['p50_ms']:.1f} "
                         f"| {q['p90_ms']:.1f} | {cached} |")
        lines += ["", "- The knowledge bases: `scifact-minilm-cp`, SciFact's 5,183 abstracts (chunks and whole sections, "
                  "`benchmarks/entries.py collect`); `filtered-1000000`, the million children of "
                  "`benchmarks/filtered.py --n 1000000`, 150 SciFact questions on each. The default (16 MB each) is "
                  "within the run-to-run spread of LanceDB's defaults on both; the first process on the million "
                  "(1 MB, round 1) read a cold page cache."]
    return lines + [""]
