"""``benchmarks/expansion.py``'s results (``expansion.json``) on docs/benchmarks.md: *Index expansion on
SciFact: keywords, entities, learned sparse, a second embedder* (``render``)."""
from __future__ import annotations

from .common import load, source


def render() -> list[str]:
    r = load("expansion.json")
    lines = ["## Index expansion on SciFact: keywords, entities, learned sparse, a second embedder", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/expansion.py`._", ""]
    kbs = r["knowledge_bases"]
    lines += [f"- Date: {r['date']}; main embedder `{r['embedder']}`, extra embedder `{r['extra_embedder']}`, "
              f"learned sparse `{r['sparse_encoder']}`; command: `{r['command']}`; {source('expansion.json')}",
              f"- {r['queries']} judged queries; Δ and p (paired randomization test) against hybrid (dense + BM25, RRF).",
              "", r["table"], "", *expansion_findings(r),
              "**Cost.** Encoding speed of each representation on the same 200 chunk texts, one after the other "
              "in one process (chunks per second): " +
              ", ".join(f"{k} {v}" for k, v in r["chunks_per_second"].items()) + ". "
              f"The knowledge base with every representation took {kbs['expanded']['seconds']} s to build and "
              f"holds {kbs['expanded']['disk_bytes'] / 1e6:.0f} MB in {kbs['expanded']['entries']} entries "
              f"(chunks, their keyword and entity entries); with chunks only it holds "
              f"{kbs['chunks only']['disk_bytes'] / 1e6:.0f} MB in {kbs['chunks only']['entries']} entries.", ""]
    return lines


def expansion_findings(r: dict) -> list[str]:
    m = r["metrics"]
    base = m["hybrid"]["ndcg@10"]
    d = {k: (v["ndcg@10"] - base) * 100 for k, v in m.items() if k != "hybrid"}
    return ["Findings:", "",
            f"- Keyword and entity channels cost nDCG@10 on SciFact ({d['+keywords']:+.1f} and {d['+entities']:+.1f} "
            "points, both significant): with RRF every channel votes equally, and key phrases and entities of "
            "scientific abstracts (mostly acronyms) rank worse than the chunks themselves. Whether they help "
            "where names matter (product manuals, news) is not measured here: they are off by default.",
            f"- Learned sparse (splade-tiny) adds {d['+sparse (splade-tiny)']:+.1f} and a second embedder "
            f"(multilingual e5-small) {d['+dense:e5-small']:+.1f} points, neither significant on 300 queries; "
            f"everything together {d['all']:+.1f}. Alone, each is below hybrid.",
            "- Hybrid here scores a little differently from the chunks-only knowledge base (table above), most "
            "likely because the BM25 statistics (document frequencies, average length) cover every entry of "
            "the full-text index, keyword and entity entries included.", ""]
