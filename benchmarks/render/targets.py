"""*Targets*: each target of the issues checked from the result files that measure it (several
scripts'), each row naming its files, then the rows written by hand in benchmarks/sections/targets.md."""
from __future__ import annotations

from collections.abc import Callable

from . import ablation
from .common import load, paths, written
from .filtered import FILTER_SHARES
from .scale import ab_medians
from .serve_cpu import throughput_reason
from .soak import soak_slope


def render() -> list[str]:
    scifact = ablation.section(*ablation.SCIFACT)[1]  # None without its table (results/scifact.md)
    anchors, anchors_scale = load("anchors-scifact.json"), load("anchors-scale.json")
    ing, sc = load("ingest.json"), load("scale.json")
    rows = []

    def row(files: str | tuple[str, ...], target: str, measured: str, ok: bool | None, why: str = "") -> None:
        """A target's row, with the result files (in benchmarks/results/) its figures come from."""
        status = "not measured" if ok is None else ("met" if ok else "**missed**")
        rows.append(f"| {target} | {measured} | {status} | {why} | {paths(*([files] if isinstance(files, str) else files))} |")

    if scifact:
        m = {k: v["metrics"]["ndcg@10"] for k, v in scifact["results"].items()}
        single = max(m.get("bm25", 0), m.get("dense", 0))
        for name in ("hybrid", "hybrid-weighted"):
            if name in m:
                gain = 100 * (m[name] - single)
                row("scifact.json", f"SciFact: {name} beats BM25 and dense alone by >= 2 nDCG@10 points",
                    f"{m[name]:.4f} vs best single {single:.4f} ({gain:+.1f} points)", gain >= 2,
                    "" if gain >= 2 else "RRF gives the weaker dense ranking an equal vote; weighted "
                    "fusion keeps the score margins")
    else:
        row("scifact.json", "SciFact: hybrid beats BM25 and dense alone by >= 2 nDCG@10 points", "—", None)
    if ing:
        row("ingest.json", "ingest overhead under 15% of the raw embedding time", f"{100 * ing['overhead']:+.1f}%",
            ing["overhead"] < 0.15)
    else:
        row("ingest.json", "ingest overhead under 15% of the raw embedding time", "—", None)
    p100 = None
    if sc and "100000" in sc["results"]:
        p100 = sc["results"]["100000"]["latency"]["hybrid"]["p50_ms"]
        row("scale.json", "hybrid query p50 under 50 ms at 100k children", f"{p100:.1f} ms", p100 < 50,
            "" if p100 < 50 else "see the scale table: per-channel times")
    else:
        row("scale.json", "hybrid query p50 under 50 ms at 100k children", "—", None)
    if anchors_scale and anchors:
        ours = anchors_scale["systems"].get("ragsift-hybrid", {}).get("p50_ms")
        lc = anchors_scale["systems"].get("langchain-ensemble", {}).get("p50_ms")
        q_ours = anchors["systems"].get("ragsift-hybrid", {}).get("metrics", {}).get("ndcg@10")
        q_lc = anchors["systems"].get("langchain-ensemble", {}).get("metrics", {}).get("ndcg@10")
        if ours and lc and q_ours is not None and q_lc is not None:
            ok = lc / ours >= 5 and q_ours >= q_lc
            row(("anchors-scale.json", "anchors-scifact.json"), f"at least 5x faster per query than the LangChain ensemble at {anchors_scale['n_docs']:,} "
                "children, equal or better nDCG@10",
                f"{lc / ours:.1f}x faster; nDCG@10 {q_ours:.4f} vs {q_lc:.4f}", ok)
    else:
        row(("anchors-scale.json", "anchors-scifact.json"), "at least 5x faster than the LangChain ensemble at 100k, equal or better nDCG@10", "—", None)
    _scale_targets(row, anchors, sc)
    soak = load("soak.json")
    if soak:
        first, last = soak["samples"][0], soak["samples"][-1]
        default = next(iter(soak["totals"]))
        row("soak.json", "soak, 100 re-ingests: disk bounded with optimize", f"at most {max(x[default]['disk_mb'] for x in soak['samples']):.0f} MB "
            f"(fresh: {soak['fresh_disk_mb']:.1f} MB)", True)
        after = soak_slope(soak)
        row("soak.json", "soak, 100 re-ingests: RSS flat, <= 0.5 MB a round after round 10",
            f"{after:+.2f} MB a round over rounds 10-{last['round']} ({first['rss_mb']:,.0f} MB at round 0, "
            f"{last['rss_mb']:,.0f} MB at round {last['round']}"
            + (f"; at most {soak['arena_limit']} malloc arenas and a trim after each write)" if soak.get("arena_limit")
               else "; glibc's default arenas)"), after <= 0.5,
            "" if after <= 0.5 else ("two arenas and a trim after each write cut the growth to about a fifth of the run "
                                     "before (+4.33 MB a round), ONNX Runtime without its arena to +0.72 (and 2,087 MB "
                                     "to 508 MB at round 0); the rest is not isolated" if soak.get("arena_limit")
                                     else "native memory, mostly glibc malloc arenas; not the Python heap, not "
                                     "Lance's caches"))
    qp = load("query_path.json")
    if qp:
        r = qp["ratio_to_rank_documents"]
        row("query_path.json", "SciFact: KnowledgeBase.query p50 within 2x of rank_documents",
            f"{r['query']:.2f}x with the trace's unit names, {r['query_no_trace']:.2f}x without "
            f"({qp['p50_ms']['query']:.1f} / {qp['p50_ms']['query_no_trace']:.1f} / {qp['p50_ms']['rank_documents']:.1f} ms)",
            r["query"] <= 2)
    fl_name = "filtered_1m.json" if load("filtered_1m.json") else "filtered.json"
    fl = load(fl_name)
    if fl:
        a = fl["after"]
        worst = max(a[s]["hybrid_p50_ms"] for s in FILTER_SHARES)
        rec = min(a[s]["dense_recall_at_10"] for s in FILTER_SHARES)
        row(fl_name, "filtered search at 1M children, filters of 0.1/1/10/50%: p50 <= 30 ms each, recall@10 >= 0.98",
            f"at {fl['n']:,} children: hybrid p50 " + " / ".join(f"{a[s]['hybrid_p50_ms']:.1f}" for s in FILTER_SHARES)
            + f" ms (query embedding {a['query_embedding_ms']:.1f} ms), "
            f"recall@10 at least {rec:.3f}", False if fl["n"] < 1_000_000 else (worst <= 30 and rec >= 0.98),
            ("measured at 200,000 children only (a million takes over an hour to build and save here); "
             + ("the p50 target is missed at that size too: " if worst > 30 else "") if fl["n"] < 1_000_000 else "")
            + ("" if worst <= 30 and rec >= 0.98 else "see the filtered search section"))
    cc = load("commit_cost.json")
    if cc:
        res = cc["results"]
        small, big = sorted(res, key=int)[0], sorted(res, key=int)[-1]
        b = res[big]
        row("commit_cost.json", f"a commit of 100 documents at {b['children']:,} children costs at most 2x the same commit at "
            f"{res[small]['children']:,}", f"{cc['commit_ratio']:.2f}x (p50 {b['commit_p50_s']:.1f} s vs "
            f"{res[small]['commit_p50_s']:.1f} s; embedding alone {cc['embed_100_docs_s']:.1f} s)", cc["commit_ratio"] <= 2)
        af = load("commit_cost_after.json")
        fq = af["results"][sorted(af["results"], key=int)[-1]] if af else b  # the later run, after the one-scan change
        worst = max(fq["first_query_s"])
        row("commit_cost_after.json" if af else "commit_cost.json", f"the first query after a commit under 0.5 s at {fq['children']:,} children",
            f"p50 {fq['first_query_p50_s']:.3f} s, at most {worst:.3f} s"
            + (f" (3 commits; the 5 before the one-scan change: at most {max(b['first_query_s']):.3f} s)" if af else ""),
            worst < 0.5, "" if worst < 0.5 else "see the commit section")
        fqd = load("first_query.json")
        if fqd:
            after = max(x["first_s"] for x in fqd["runs"]["after"])
            row("first_query.json", f"the first query after a commit under 0.5 s, default settings (the router), at "
                f"{fqd['documents']:,} documents", f"p50 {fqd['p50']['after']['first_s']:.2f} s, at most {after:.2f} s"
                + (f" ({fqd['p50']['before']['first_s']:.1f} s before the title index read two columns)"
                   if "before" in fqd["p50"] else ""), after < 0.5, "" if after < 0.5 else "see the commit section")
        _steady_target(row, b)
    sw = load("serve_workers.json")
    if sw and "before_workers_1" in sw["throughput"]:
        t = sw["throughput"]
        # every server here runs on all the cores (one process has query, channel and model threads), so
        # throughput per core compares as throughput on the same cores
        base = sw.get("issue_baseline", {}).get("qps") or t["before_workers_1"]["qps"]
        qps = {n: t[f"workers_{n}"]["qps"] for n in ("1", "2") if f"workers_{n}" in t}
        best = max(qps.values())
        side = (f"; {best / t['before_workers_1']['qps']:.2f}x the code before beside it "
                f"({t['before_workers_1']['qps']:.1f})" if "issue_baseline" in sw else "")
        row("serve_workers.json", "server throughput per core at least 3x before (--workers 1 and 2, same clients)",
            ", ".join(f"--workers {n}: {v:.1f} queries/s" for n, v in qps.items())
            + f" on {t['cores']} cores: {best / base:.2f}x the server of the issue ({base:.1f})" + side,
            best >= 3 * base,
            "" if best >= 3 * base else throughput_reason(base))
    kill = load("kill_ingest.json")
    goal = "kill -9 at 10 moments of a checkpointed ingest: opens at its last checkpoint, resumes to the same documents"
    if kill:
        n, held = len(kill["kills"]), sum(k["checks_ok"] for k in kill["kills"])
        row("kill_ingest.json", goal, f"{n} kills ({kill['kills_inside_commit']} inside a commit), every check held after {held}; the resumed "
            f"ingest {'has the same documents' if kill['resumed_equal'] else 'differs'} ({kill['docs']} documents)",
            n >= 10 and held == n and kill["resumed_equal"], "" if n >= 10 else f"only {n} kills in this run")
    else:
        row("kill_ingest.json", goal, "—", None)
    links = load("links.json")
    if links:
        ar = {part: {n: x["metrics"]["all_relevant@5"] for n, x in links[part].items()}
              for part in links if part == "test" or part == "all" or part.startswith("test_first_")}
        kw = "keywords multi-hop, package defaults"
        for part, goal, label in (("test", 0.72, "first 300"), ("all", 0.80, "all 500")):
            v = ar[part].get(kw)
            if v is not None:
                row("links.json", f"HotpotQA multi-hop without a model, all-relevant@5 on {label} >= {goal}",
                    f"{v:.3f} (single shot {ar[part]['single shot']:.3f})", v >= goal)
        for part, vals in ar.items():
            llm = next((v for n, v in vals.items() if n.startswith("llm")), None)
            if part.startswith("test_first_") and llm is not None:
                row("links.json", f"HotpotQA multi-hop with the packaged model, all-relevant@5 on the {part.rsplit('_', 1)[1]} first "
                    ">= 0.78", f"{llm:.3f} (single shot {vals['single shot']:.3f})", llm >= 0.78)
    seed = load("seed.json")
    for label, x in ((seed or {}).get("router") or {}).items():
        fixed = {k: v["mix"] for k, v in x["rows"].items() if k != "auto"}
        best = max(fixed, key=fixed.get)
        auto = x["rows"]["auto"]["mix"]
        row("seed.json", f"the router beats every fixed strategy on held-out SciFact + HotpotQA ({label})",
            f"auto {auto:.4f}, best fixed ({best}) {fixed[best]:.4f}", auto > fixed[best],
            "" if auto > fixed[best] else f"{x['chosen'].get('hotpotqa: hybrid', 0)} of the {x['questions']['hotpotqa']} "
            "held-out HotpotQA questions name no document of the knowledge base (every calibration question did): the "
            "router keeps one round there, where multi-hop helps")
    # rows of the sections written by hand (benchmarks/sections/targets.md), after the rendered ones
    return ["## Targets", "", "| target | measured | status | reason found | result file |", "|---|---|---|---|---|", *rows,
            *written("targets"), ""]


def _steady_target(row: Callable[..., None], b: dict) -> None:
    """Query p50 during a steady ingest against idle: from the run of idle and busy windows
    alternating (steady_ingest.json, or a commit run ``b`` that measured so), else from an older
    commit run that measured idle once, before the busy window."""
    st = load("steady_ingest.json")
    x = st["results"][sorted(st["results"], key=int)[-1]] if st else b
    if "steady_ratio" in x:  # idle and busy windows alternating (commit_cost.py since 2026-12-02)
        ratio, one = x["steady_ratio"], x.get("steady_threads_1_ratio", float("nan"))
        row("steady_ingest.json" if st else "commit_cost.json", f"query p50 during a steady ingest within 1.5x of idle at {x['children']:,} children",
            f"{ratio:.2f}x ({x['steady_p50_ms']:.1f} vs {x['steady_idle_p50_ms']:.1f} ms in the idle windows "
            f"between); {one:.2f}x with the writer on one embedding thread (RAGSIFT_THREADS=1)", ratio <= 1.5,
            "" if ratio <= 1.5 else "the writer embeds its documents on the same two cores the reader queries on")
        return
    ratio = b["steady_p50_ms"] / b["idle_p50_ms"]
    one = b.get("steady_threads_1_p50_ms", float("nan")) / b["idle_p50_ms"]
    row("commit_cost.json", f"query p50 during a steady ingest within 1.5x of idle at {b['children']:,} children",
        f"{ratio:.2f}x ({b['steady_p50_ms']:.1f} vs {b['idle_p50_ms']:.1f} ms); {one:.2f}x with the writer "
        "on one embedding thread (RAGSIFT_THREADS=1)", None if ratio < 1 else ratio <= 1.5,
        "the idle window was the slower one (it came right after the commits, on an AMD host): no reliable "
        "idle figure, so not counted as met" if ratio < 1 else
        ("" if ratio <= 1.5 else "the writer embeds its documents on the same two cores the reader queries on"))


def _scale_targets(row, anchors: dict | None, sc: dict | None) -> None:
    """Issue 18's targets: hybrid latency at 5k / 100k / 1M, BM25 and ANN at 1M, peak RSS at 1M."""
    if anchors:
        p = anchors["systems"].get("ragsift-hybrid", {}).get("p50_ms")
        if p is not None:
            peers = ", ".join(f"{n} {x['p50_ms'] / p:.1f}x slower" for n, x in anchors["systems"].items()
                              if not n.startswith("ragsift"))
            row("anchors-scifact.json", f"hybrid p50 (query embedding included) <= 10 ms at {anchors['n_docs']:,} SciFact documents",
                f"{p:.1f} ms ({peers})", p <= 10)
    res = (sc or {}).get("results", {})
    for n, goal in (("100000", 15), ("1000000", 30)):
        if n in res:
            p = res[n]["latency"]["hybrid"]["p50_ms"]
            row("scale.json", f"hybrid p50 (query embedding included) <= {goal} ms at {int(n):,} children", f"{p:.1f} ms", p <= goal)
    if "1000000" in res:
        r = res["1000000"]
        b = r["latency"]["hybrid.bm25_channel"]["p50_ms"]
        row("scale.json", "BM25 at 1M children well under 10 ms", f"{b:.1f} ms (the channel in hybrid, p50)", b < 5,
            "" if b < 5 else "the scale table's run, before the compiled search (the next BM25 row: the channel "
            "in hybrid now measured beside the code before it, on another host); the synthetic words follow "
            "SciFact's word frequencies over a million rows, so most query terms are in 1-25% of the rows")
        d = r["latency"]["hybrid.dense_channel"]["p50_ms"] - r["latency"].get("query_embedding_ms", 0)
        row("scale.json", "dense search at 1M children under 10 ms", f"{d:.1f} ms (the channel in hybrid p50 less the query "
            "embedding)", d < 10)
        row("scale.json", "peak RSS serving 1M children <= 2 GB", f"{r['max_rss_mb']:,.0f} MB", r["max_rss_mb"] <= 2048)
    ab = load("bm25_1m.json")
    if ab:
        x = ab_medians(ab)["after"]
        b = x["bm25_store_search"]
        row("bm25_1m.json", "BM25 at 1M children <= 5 ms p50", f"{b:.1f} ms the store's search, {x['hybrid.bm25_channel']:.1f} ms the "
            f"channel in hybrid (query embedding {x['query_embedding_ms']:.1f} ms beside it, on this round's AMD host)",
            b <= 5, "" if b <= 5 else "see the BM25 at a million section: MaxScore reads the whole postings of several "
            "common terms a query here, each posting a random read of its row's score; block-max bounds do not prune "
            "these documents")
    ann = load("ann_recall.json")
    if ann:
        ch = ann.get("chosen")
        row("ann_recall.json", f"HNSW recall@10 >= {ann['target']} of exact search on {ann['n']:,} real-text vectors",
            f"{ch['recall_report']:.4f} held out (ef {ch['expansion']}, re-rank x{ch['refine']}, p50 "
            f"{ch['p50_ms_report']:.2f} ms)" if ch else "no setting of the grid reached it",
            bool(ch) and ch["recall_report"] >= ann["target"])
