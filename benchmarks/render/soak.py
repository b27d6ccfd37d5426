"""``benchmarks/soak.py``'s results (``soak.json``) on docs/benchmarks.md: ``soak_slope`` for the targets;
*Long life: 100 re-ingests with queries between* (``render``)."""
from __future__ import annotations

from .common import opened, ran, source


def soak_slope(r: dict) -> float:
    """RSS growth in MB a round after round 10 (least squares over the samples from round 10)."""
    pts = [(x["round"], x["rss_mb"]) for x in r["samples"] if x["round"] >= 10]
    if len(pts) < 2:
        return float("nan")
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def render() -> list[str]:
    r, lines = opened("soak.json", "Long life: 100 re-ingests with queries between (`benchmarks/soak.py`)",
                      "benchmarks/soak.py")
    if r is None:
        return lines
    a = r["args"]
    names = list(r["totals"])
    lines += [f"- {ran(r)}; {source('soak.json')}",
              f"- {a['docs']} documents (half CMRC 2018 Chinese paragraphs, half SciFact English abstracts) as "
              f"Markdown files; each of {a['rounds']} rounds rewrites {a['change']} of them, deletes 2 "
              f"(`KnowledgeBase.delete`) and adds 2, ingests the folder again (unchanged files skipped by hash) and "
              f"asks {a['queries']} questions of each knowledge base: {r['totals'][names[0]]['commits']} commits "
              "per knowledge base. Two knowledge bases side by side in one process: the default "
              "(`optimize_every=20`, `keep_generations=2`) and one that never optimizes; then `ragsift optimize` "
              "on both. Disk: every file under the knowledge base. RSS: the whole process (both knowledge bases "
              "and the model).", "",
              "| round | RSS MB | " + " | ".join(f"{n}: disk MB | versions" for n in names) + " |",
              "|---|---|" + "---|---|" * len(names)]
    for row in r["samples"]:
        lines.append(f"| {row['round']} | {row['rss_mb']:,.0f} | "
                     + " | ".join(f"{row[n]['disk_mb']:.1f} | {row[n]['versions']}" for n in names) + " |")
    f = r["final"]
    lines += ["", "| after `ragsift optimize` | disk MB before | disk MB after | table versions | seconds | "
              "`check` |", "|---|---|---|---|---|---|"]
    for n in names:
        x = f[n]
        lines.append(f"| {n} | {x['disk_mb_before']:.1f} | {x['disk_mb_after']:.1f} | {x['versions_after']} | "
                     f"{x['optimize_s']:.1f} | {'ok' if x['check_ok'] else 'problems'} |")
    t = r["totals"]
    first, mid, last = r["samples"][1], r["samples"][len(r["samples"]) // 2], r["samples"][-1]

    def slope(a: dict, b: dict) -> float:
        return (b["rss_mb"] - a["rss_mb"]) / (b["round"] - a["round"])

    lines += ["", f"- The same {r['documents']} documents ingested once into a new knowledge base take "
              f"{r['fresh_disk_mb']:.1f} MB.",
              f"- Queries: {sum(x['queries'] for x in t.values()):,} in all, {sum(x['errors'] for x in t.values())} "
              f"errors, {sum(x['empty'] for x in t.values())} empty answers.",
              f"- Disk is bounded with the default: it saws between the compactions every 20 commits and never "
              f"passes {max(row[names[0]]['disk_mb'] for row in r['samples']):.0f} MB, while the knowledge base "
              f"that never optimizes grows by about {(last[names[1]]['disk_mb'] - first[names[1]]['disk_mb']) / (last['round'] - first['round']):.1f} "
              f"MB a round (every table version kept); one `ragsift optimize` brings it back to "
              f"{f[names[1]]['disk_mb_after']:.1f} MB.",
              _soak_rss_line(r, first, mid, last, slope), ""]
    return lines


def _soak_rss_line(r: dict, first: dict, mid: dict, last: dict, slope) -> str:
    after = soak_slope(r)
    memory = (f"at most {r['arena_limit']} malloc arenas (`ragsift.process.limit_arenas`, as `ragsift serve` and "
              "`ragsift mcp` set at start) and the knowledge base's trim after each write" if r.get("arena_limit")
              else "glibc's default malloc arenas")
    if after <= 0.5:
        return (f"- RSS stays put with {memory}: {after:+.2f} MB a round from round 10 to round {last['round']} "
                f"(least squares; {first['rss_mb']:,.0f} MB at round {first['round']}, {last['rss_mb']:,.0f} MB at "
                f"round {last['round']}; one process holds both knowledge bases and the model). "
                + r.get("rss_note", ""))
    return (f"- RSS is **not shown bounded** with {memory}: it grows by about {slope(first, mid):.1f} MB a round over "
            f"rounds {first['round']}-{mid['round']} and {slope(mid, last):.1f} MB a round over rounds "
            f"{mid['round']}-{last['round']} ({first['rss_mb']:,.0f} MB at round {first['round']}, "
            f"{last['rss_mb']:,.0f} MB at round {last['round']}; one process holds both knowledge bases). "
            + r.get("rss_note", ""))
