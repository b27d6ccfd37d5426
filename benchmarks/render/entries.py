"""``benchmarks/entries.py``'s results (``entries.json``, ``entries_round2.json``) on docs/benchmarks.md:
*Whole entries beside chunks, chosen leave-one-set-out* (``render``); *Whole entries beside chunks, round
2* (``second_round``)."""
from __future__ import annotations

import statistics

from .common import fmt_p, opened, source


def v_p(v: dict, family: str) -> float:
    """A set's p value of a family's leave-one-set-out choice against today's defaults."""
    return v["loso"][family]["p_vs_today"]


ENTRIES_FIRST = ("_The first round (2026-12-02), which chose the default fusion; the second round (next section) collected "
                 "every set again with today's package and measured more settings._")


ENTRIES_ROUND2 = "Whole entries beside chunks, round 2: the default embedder on SciFact, damped adaptive fusion (`benchmarks/entries.py`)"


ENTRIES_ROUND2_NOTE = (
    "_Every set collected again on 2026-12-04 with the package as it is (e5-small on ONNX Runtime; SciFact now with "
    "e5-small, the default embedder, where the first round used MiniLM; HotpotQA and L-Eval's part keep MiniLM), the "
    "same leave-one-set-out choice, and a wider grid: `adaptive^0.5` is adaptive fusion with the square root of each "
    "channel's confidence (a damped variant), and dense 0.6 beside 0.4 and 0.5. 'Today' is the package's default since "
    "the first round (chunks / chunks / adaptive dense=0.5)._")


def section(name: str = "entries.json",
            title: str = "Whole entries beside chunks, chosen leave-one-set-out (`benchmarks/entries.py`)",
            note: str = "") -> list[str]:
    r, lines = opened(name, title,
                      "python benchmarks/entries.py collect --set NAME=FOLDER:EMBEDDER ...; python benchmarks/entries.py report")
    if r is None:
        return lines
    if note:
        lines += [note, ""]
    sets = r["sets"]
    first_round = name == "entries.json"
    lines += [f"- Date: {r['date']}; commands: `python benchmarks/entries.py collect --work-dir /tmp/ent --set NAME=FOLDER:EMBEDDER` "
              "per set (a knowledge base with chunks and whole sections, `small_index = [\"chunk\", \"parent\"]`, and each "
              "query's channel lists); "
              + ("`python benchmarks/entries.py enrich --set NAME=FOLDER` (the questions' and documents' "
                 "languages, for sets collected before the script stored them); `phantomwiki-today` collected by this script "
                 "run from a checkout of 9fa2ddd (today's splitter); " if first_round else "")
              + ("`python benchmarks/entries.py refresh-bm25 --work-dir /tmp/ent --set NAME=FOLDER:EMBEDDER` per set "
                 "(the BM25 lists searched again once a query term counts once, the earlier ones kept); "
                 if any(v.get("bm25_query") for v in sets.values()) else "") + f"then `{r['command']}`; {source(name)}.",
              "- Sets (odd-numbered judged queries; embedder): " + ", ".join(f"{n} ({v['queries_odd']}; {v.get('embedder', '?')})"
                                                                         for n, v in sets.items())
              + "; the new sets are built by `benchmarks/datasets/fetch_*.py` (each writes a SOURCE.md).",
              "- A section's score per channel: `chunks` its best chunk (what ragsift did), `whole` its whole-section entry, "
              "`max` the better of the two (what the store gives when a query searches both kinds), `mix a` "
              "a * whole + (1 - a) * best chunk on min-max scaled scores (`mix 0.5` ranks as their sum); crossed with the fusion (RRF k=60, weighted "
              "min-max with the dense weight shown, or `adaptive`: those weights scaled per query by how far each "
              "channel's best hit stands out, ragsift's `fusion=\"adaptive\"`); a BM25 hit in another language than "
              "the question's counts `cross_language_weight` (0.1) as in a query. Today = the defaults before this round ("
              + " / ".join(r["today"]) + "); default now = the package's defaults since (" + " / ".join(r.get("default", r["today"]))
              + ").",
              "- Leave-one-set-out: each set's row uses the setting chosen on the even-numbered queries of the *other* "
              "sets (best mean nDCG@10, no other set more than 0.5 points below today there). The plain reference is "
              "built in the benchmark: each document embedded whole by the same embedder (exact cosine), an Okapi BM25 "
              "written there (k1 1.2, b 0.75; jieba words for Chinese), min-max fusion 0.5 / 0.5.", "",
              "Three families of settings are chosen: `fusion` (the fusion alone, sections scored by their best chunk: what "
              "a query setting changes), `both kinds` (also `max` / `max`: whole sections searched beside chunks, "
              "`index_kinds = [\"chunk\", \"parent\"]`) and `every rule` (also the mixes, since 2026-12-04 the query setting `whole_weights`, measured through the package "
              "in \"Whole weights through the package\" below). "
              "Chosen on every set's even queries: " + "; ".join(f"{f}: {' / '.join(c)}" for f, c in r["chosen_on_all"].items())
              + ".", "",
              "| set | today | default now (p vs today) | best single channel | plain reference: dense / BM25 / hybrid | "
              + " | ".join(f"{f}: chosen without the set, nDCG@10 (p vs today / vs single / vs reference hybrid)" for f in r["families"])
              + " |", "|---|---|---|---|---|" + "---|" * len(r["families"])]
    for n, v in sets.items():
        ref = v["reference"]
        cells = [f"{' / '.join(x['chosen'])}: **{x['ndcg']:.4f}** ({fmt_p(x['p_vs_today'])} / {fmt_p(x['p_vs_single'])} / "
                 f"{fmt_p(x['p_vs_reference'])})" for x in v["loso"].values()]
        now = f"{v['default']:.4f} ({fmt_p(v['p_default_vs_today'])})" if "default" in v else "—"
        lines.append(f"| {n} | {v['today']:.4f} | {now} | {v['best_single_channel']} {v['best_single']:.4f} | "
                     f"{ref['dense']:.4f} / {ref['bm25']:.4f} / {ref['hybrid']:.4f} | " + " | ".join(cells) + " |")
    fam = "fusion"  # what a setting can change today
    bars = {"today's defaults": lambda v: v["today"], "its best single channel": lambda v: v["best_single"],
            "the plain reference": lambda v: v["reference"]["hybrid"]}
    below = {what: [n for n, v in sets.items() if v["loso"][fam]["ndcg"] < bar(v)] for what, bar in bars.items()}
    lines += ["", "Issue 31's target (for every set, the fusion chosen without it at least its best single channel, "
              "today's defaults and the plain reference): " + ("met." if not any(below.values()) else "missed: " + "; ".join(
                  f"below {what} on {', '.join(ns)}" for what, ns in below.items() if ns)
              + " (means on the odd queries; p values in the table).")]
    for f in r["families"]:
        deltas = {n: v["loso"][f]["ndcg"] - v["today"] for n, v in sets.items()}
        up = [n for n, d in deltas.items() if d > 0 and v_p(sets[n], f) < 0.05]
        down = [n for n, d in deltas.items() if d < 0 and v_p(sets[n], f) < 0.05]
        lines += ["", f"`{f}`, chosen without each set, against today's defaults: mean {100 * statistics.fmean(deltas.values()):+.2f} "
                  f"points over the {len(sets)} sets; higher on {sum(d > 0 for d in deltas.values())}, lower on "
                  f"{sum(d < 0 for d in deltas.values())}; significantly (p < 0.05) higher on {', '.join(up) or 'none'}, "
                  f"lower on {', '.join(down) or 'none'}."]
    if any("best_odd" in v for v in sets.values()):
        lines += ["", "The ceiling of the grid (every setting of every family, the best on each set's own held-out queries: an "
                  "oracle, not a choice): " + "; ".join(f"{n} {v['best_odd'][-1]:.4f} ({' / '.join(v['best_odd'][:-1])})"
                                                          for n, v in sets.items() if "best_odd" in v) + "."]
    if "default" in r and r.get("default") == r.get("today"):
        lines += ["", "The `fusion` family chooses " + " / ".join(r["chosen_on_all"]["fusion"]) + " on every set's even "
                  "queries; the package's default (" + " / ".join(r["default"]) + ") is unchanged by this round."]
    elif "default" in r:
        missing = [x for x in ("scifact", "cmrc2018", "leval-nq") if x not in sets]
        lower = [n for n, v in sets.items() if v["default"] < v["today"]]
        lines += ["", "The package's default became " + " / ".join(r["default"]) + " (the `fusion` family's choice on "
                  "every set): at or above today's on " + f"{len(sets) - len(lower)} of {len(sets)} sets"
                  + (", below on " + ", ".join(f"{n} ({sets[n]['default'] - sets[n]['today']:+.4f}, p "
                                              f"{fmt_p(sets[n]['p_default_vs_today'])})" for n in lower) if lower else "")
                  + "." + (" Not in the table: " + ", ".join(missing) + "." if missing else "")]
    if any(v.get("bm25_query") for v in sets.values()):
        lines += ["", "**A query term asked twice counts once** (Robertson's k3 = 0; before, BM25 weighed a term by how "
                  "often the query said it, as Lucene does). Odd queries, nDCG@10, BM25 over chunks alone and the "
                  "package's defaults, before and after, with p (paired randomization); today's defaults above are "
                  "measured on the BM25 of their day:", "",
                  "| set | BM25 before | BM25 now (p) | defaults before | defaults now (p) | even queries: BM25 before / "
                  "now, defaults before / now |", "|---|---|---|---|---|---|"]
        for n, v in sets.items():
            b = v.get("bm25_query")
            if b:
                e = b["even"]
                lines.append(f"| {n} | {b['bm25_counted']:.4f} | {b['bm25_distinct']:.4f} ({fmt_p(b['p_bm25'])}) | "
                             f"{b['default_counted']:.4f} | {b['default_distinct']:.4f} ({fmt_p(b['p_default'])}) | "
                             f"{e['bm25_counted']:.4f} / {e['bm25_distinct']:.4f}, {e['default_counted']:.4f} / "
                             f"{e['default_distinct']:.4f} |")
        both = [statistics.fmean(v["bm25_query"]["even"][k] - v["bm25_query"]["even"][k.replace("distinct", "counted")]
                                 for v in sets.values() if v.get("bm25_query")) for k in ("bm25_distinct", "default_distinct")]
        late = [n for n, v in sets.items() if not v.get("today_on_counted_bm25", True)]
        lines += ["", f"Chosen on the even queries: mean change BM25 {both[0] * 100:+.2f} points, defaults "
                  f"{both[1] * 100:+.2f} points; the odd queries above report it."
                  + (f" {', '.join(late)} were collected after the change: their 'today' is today's settings on the "
                     "BM25 of now." if late else "")]
    fus = list(next(iter(sets.values())).get("fusions_odd") or [])
    if fus:
        lines += ["", "Each fusion of the `fusion` family's grid, sections scored by their best chunk (odd queries, "
                  "nDCG@10):", "",
                  "| set | " + " | ".join(fus) + " |", "|---|" + "---|" * len(fus)]
        for n, v in sets.items():
            lines.append(f"| {n} | " + " | ".join(f"{v['fusions_odd'][f]:.4f}" for f in fus) + " |")
    own = list(next(iter(sets.values()))["own"])
    lines += ["", "Each channel alone (odd queries, nDCG@10), by how a section's entries are scored:", "",
              "| set | " + " | ".join(own) + " |", "|---|" + "---|" * len(own)]
    for n, v in sets.items():
        lines.append(f"| {n} | " + " | ".join(f"{v['own'][x]:.4f}" for x in own) + " |")
    for n, v in (r.get("splitter") or {}).items():
        lines += ["", f"**The splitter on {n}** (a document without headings that fits one child is one entry; before, "
                  f"it was cut into paragraph parents): today's defaults {v['today_splitter']:.4f} with today's splitter, "
                  f"{v['new_splitter']:.4f} with the new one (p={fmt_p(v['p_splitter'])}), {v['new_splitter_chosen']:.4f} "
                  f"with the new one and the fusion chosen without the set (p={fmt_p(v['p_all'])} against today). "
                  f"Sections: {v['stats_today'].get('parents')} before, {v['stats_new'].get('parents')} after; ingest with whole "
                  f"sections beside chunks {v.get('ingest_s_today', 0):.0f} s before, {v.get('ingest_s_new', 0):.0f} s after (a "
                  "section of one chunk now shares its vector)."]
    return lines + [""]


def render() -> list[str]:
    """The first round (entries.json)."""
    return section(note=ENTRIES_FIRST)


def second_round() -> list[str]:
    """The second round (entries_round2.json)."""
    return section("entries_round2.json", ENTRIES_ROUND2, ENTRIES_ROUND2_NOTE)
