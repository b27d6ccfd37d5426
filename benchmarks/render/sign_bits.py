"""``benchmarks/sign_bits.py``'s results (``sign_bits.json``) on docs/benchmarks.md: its lines in the
filtered search section."""
from __future__ import annotations

from .common import load


def filtered_lines() -> list[str]:
    sb = load("sign_bits.json")
    if not sb:
        return []
    names = {"int8": "the int8 copy", "four_bit": "the 4-bit copy (as the search scores it)",
             "signs_against_the_query": "sign bits against the float query",
             "hamming": "Hamming distance between sign bits"}
    names = {k: v for k, v in names.items() if k in sb["results"][0]}

    def depth(x: dict, name: str) -> str:
        d = x[name]
        return f"{names[name]} {d['median']:,.0f} / {d['p90']:,.0f} / {d['worst']:,} ({d['worst_share_of_rows']:.2%})"

    lead = ("a first pass over fewer bytes a row keeps the best few of the rows for the int8 pass: 4 bits a "
            "dimension (192 bytes a row, `Int4Copy`) keeps the true ten best near the top, a sign bit per "
            "dimension (48 bytes) does not" if "four_bit" in names else
            "what would reach it: a smaller first pass keeping the best few percent of the rows for the int8 "
            "pass, such as a sign bit per dimension (48 bytes a row); but on these vectors the true ten best fall "
            "deep under such scores")
    return [f"  - {lead} (`{sb['command']}`, {sb['date']}; over {sb['queries']} queries, the deepest of "
            "the ten at median / 90th percentile / worst, and the worst as a share of the rows): "
            + "; ".join(f"{x['rows']:,} rows: " + ", ".join(depth(x, n) for n in names) for x in sb["results"])
            + (". On real text (every one of the "
               f"{sb['text']['rows']:,} children of `{sb['text']['kb']}`, {sb['text']['queries']} SciFact questions) "
               f"the 4-bit copy's deepest of the ten is {sb['text']['median']:.0f} / {sb['text']['p90']:.0f} / "
               f"{sb['text']['worst']} (median / 90th percentile / worst)" if sb.get("text") else "")
            + (". The search keeps the 4-bit copy's best 4,096 rows (or one in 128) of a filter of more than "
               "32,768: many times the deepest measured." if "four_bit" in names else
               ". So such a pass would have to keep a sixth of a 10% filter's rows; a filter predicate inside the "
               "graph search, with a graph whose own recall holds on vectors like these, is the other way.")]
