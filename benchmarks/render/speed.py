"""speed: moved from report.py."""
from __future__ import annotations

from .common import load


def speed_section() -> tuple[list[str], dict | None, dict | None]:
    ing = load("ingest.json")
    sc = load("scale.json")
    lines = ["## Speed and memory", ""]
    if ing:
        lines += [f"**Ingest overhead** ({ing['date']}; `{ing['dataset']}`, first {ing['docs']} documents, "
                  f"{ing['children']} children, embedder `{ing['embedder']}`; command "
                  f"`.venv/bin/python benchmarks/ingest_speed.py --docs {ing['docs']} --embedder {ing['embedder']} "
                  "--out benchmarks/results/ingest.json`):", "",
                  "| raw embedding (same texts, same batches) | full ingest | overhead | max RSS |",
                  "|---|---|---|---|",
                  f"| {ing['raw_embed_s']:.1f} s ({ing['children_per_s_raw']:.1f} children/s) | "
                  f"{ing['ingest_s']:.1f} s ({ing['children_per_s_ingest']:.1f} children/s) | "
                  f"{100 * ing['overhead']:+.1f}% | {ing['max_rss_mb']:.0f} MB |", "",
                  "Raw embedding is the mean of a run before and a run after the ingest. Almost all "
                  "of the memory is ONNX Runtime's arena for batches of up to 256 tokens.", ""]
    if sc:
        lines += [f"**Query latency as the store grows** ({sc['date']}; synthetic children with clustered "
                  f"vectors, {sc.get('queries', 50)} real SciFact queries embedded by `minilm`; each size built in one "
                  "process and served from a fresh one; command "
                  f"`.venv/bin/python benchmarks/scale.py --sizes {','.join(sc['results'])} "
                  "--out benchmarks/results/scale.json`). BM25 runs on an in-memory inverted index; dense "
                  "search is exact in memory below 200,000 children and an int8 HNSW graph (usearch) re-ranked "
                  "with the full vectors above (`ragsift.store.memindex`). Every time includes the query "
                  "embedding where the channel needs one. From 200,000 children the build saves the generation's "
                  "indexes, as an ingest does (*saving*); *first query* is the serving process opening the "
                  "knowledge base, loading the model and reading (or, below 200,000, building) its indexes. "
                  "The figures need the saved indexes in the page cache: a run right after the cache was "
                  "emptied (an out-of-memory kill of another process) gave dense alone 33 ms at a million while "
                  "the graph was read from disk, and the same 1,611 MB.", "",
                  "| children | hybrid p50 | hybrid p95 | bm25 p50 | dense p50 | bm25 channel in hybrid p50 | "
                  "dense channel in hybrid p50 | query embedding | saving | first query | max RSS (serving) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for n, r in sc["results"].items():
            lat = r["latency"]
            lines.append(f"| {int(n):,} | {lat['hybrid']['p50_ms']:.1f} ms | {lat['hybrid']['p95_ms']:.1f} ms | "
                         f"{lat['bm25']['p50_ms']:.1f} ms | {lat['dense']['p50_ms']:.1f} ms | "
                         f"{lat['hybrid.bm25_channel']['p50_ms']:.1f} ms | {lat['hybrid.dense_channel']['p50_ms']:.1f} ms | "
                         f"{lat.get('query_embedding_ms', float('nan')):.1f} ms | "
                         f"{r.get('save_search_indexes_s', 0) / 60:.1f} min | {lat.get('open_s', float('nan')):.1f} s | "
                         f"{r['max_rss_mb']:.0f} MB |")
        lines.append("")
    ann = load("ann_recall.json")
    if ann:
        ch = ann.get("chosen") or {}
        lines += [f"**HNSW recall on real text** ({ann['date']}; {ann['n']:,} passages recombined from 2-5 random "
                  "sentences of the shared SciFact, HotpotQA, CMRC 2018, XQuAD-zh and L-Eval corpora, embedded by "
                  f"{ann['embedder']}; {ann['queries']} questions of five sets; the store's own index; settings "
                  "chosen on the even-numbered questions, reported on the odd ones; command "
                  "`.venv/bin/python benchmarks/ann_recall.py --datasets ../shared/datasets --n 1000000 --out "
                  "benchmarks/results/ann_recall.json`). Recall@10 is against exact search over the same vectors; "
                  "candidates = 10 x re-rank depth, re-ranked with the full vectors.", "",
                  "| search breadth (ef) | re-rank depth | recall@10 (choose) | recall@10 (report) | p50 ms | p95 ms |",
                  "|---|---|---|---|---|---|"]
        for r in ann["grid"]:
            mark = " **(chosen)**" if ch and (r["expansion"], r["refine"]) == (ch["expansion"], ch["refine"]) else ""
            lines.append(f"| {r['expansion']}{mark} | {r['refine']} | {r['recall_choose']:.4f} | {r['recall_report']:.4f} | "
                         f"{r['p50_ms_report']:.2f} | {r['p95_ms_report']:.2f} |")
        build = f"; the graph took {ann['build_s'] / 60:.1f} minutes to build on two cores" if ann.get("build_s") else ""
        lines += ["", f"The store's default is the fastest setting whose recall@10 on the choosing half clears "
                  f"{ann['target']} by two standard errors{build}. A first run chose the fastest setting merely reaching "
                  f"{ann['target']} there (ef 512, re-rank x4: 0.983), and it fell to 0.976 on the held-out half; the "
                  "margin was added after that, so the held-out figure of the new choice is not fully blind.", ""]
    tp = load("throughput.json")
    if tp:
        lines += [f"**Ingest throughput per packaged embedder** ({tp['date']}; SciFact abstracts, "
                  f"{tp['cores']} cores; each row a process of its own; command `.venv/bin/python benchmarks/throughput.py "
                  "--out benchmarks/results/throughput.json`). Raw is the model alone on exactly the texts ragsift "
                  "indexes (mean of a run before and one after the ingest); ingest is a full `KnowledgeBase.ingest`.", "",
                  "| embedder | settings | children | raw children/s | ingest children/s | overhead | max RSS |",
                  "|---|---|---|---|---|---|---|"]
        for r in tp["rows"]:
            env = ", ".join(f"{k}={v}" for k, v in r["env"].items())
            if "error" in r:
                lines.append(f"| {r['embedder']} | {env} | — | — | — | {r['error'][:80]} | — |")
                continue
            lines.append(f"| {r['embedder']} | {env} | {r['children']} | {r['children_per_s_raw']:.1f} | "
                         f"{r['children_per_s_ingest']:.1f} | {100 * r['overhead']:+.1f}% | {r['max_rss_mb']:.0f} MB |")
        ls = tp["length_sorting"]["children_per_s"]
        if any(r.get("env", {}).get("RAGSIFT_E5_ENGINE") == "onnx" for r in tp["rows"]) and tp["date"] == "2026-12-04":
            lines += ["", "e5-small's ONNX rows of this run embedded in batches of up to 8,192 padded tokens; the package "
                      "now batches 1,024 (`models/e5_onnx.TOKEN_BUDGET`), measured faster in the run of "
                      "`benchmarks/e5_engine.py` (its section). This run's host: AMD EPYC with AVX-512 VNNI, where minilm "
                      "embedded passages 3.5x slower than in the run before on the Intel host (39.3 children/s raw); "
                      "compare rows within a run."]
        lines += ["", f"minilm's raw embedding of the same {tp['length_sorting']['children']} children in batches of "
                  f"64: length-sorted {ls['sorted']:.1f} and {ls['sorted again']:.1f} children/s, in file order "
                  f"{ls['file order']:.1f}.", ""]
    if not ing and not sc:
        lines += ["_Not run yet (`benchmarks/run_all.sh`)._", ""]
    return lines, ing, sc
