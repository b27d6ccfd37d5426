"""``benchmarks/exact_pass.py``'s results (``exact_pass.json``) on docs/benchmarks.md: its lines in the
filtered search section."""
from __future__ import annotations

from .common import load


def filtered_lines() -> list[str]:
    e = load("exact_pass.json")
    if not e:
        return ["  - the exact pass: _not run yet: `benchmarks/exact_pass.py`_;"]
    names = {"whole": "float32 gathered whole", "blocks": f"float32 by blocks of {e['block']:,}",
             "int8-one": f"int8 copy in one thread, its best {e.get('rescore', 200)} scored again in float32",
             "int8": f"int8 copy{' split among the cores' if 'int8-one_ms' in e['results'][0] else ''}, its best "
                     f"{e.get('rescore', 200)} scored again in float32",
             "int4-one": "4-bit copy first in one thread (the int8 copy on its best thousands, the float32 vectors on "
                         "those best 200)",
             "int4": "4-bit copy first, split among the cores (then as above)"}
    ways = [w for w in names if f"{w}_ms" in e["results"][0]]
    return [f"  - an exact pass costs what its rows weigh in memory (`{e['command']}`, {e['date']}; p50 over "
            f"{e['queries']} queries, the ways taken in turn): "
            + "; ".join(f"{x['rows']:,} rows: " + ", ".join(
                f"{names[w]} {x[w + '_ms']:.1f} ms" + (f" (recall@10 {x[w + '_recall_at_10']:.3f})"
                                                        if x.get(w + "_recall_at_10", 1.0) < 1.0 else "")
                for w in ways) for x in e["results"])
            + (" (every way the same ten best every query)" if all(x.get(w + "_recall_at_10", 1.0) == 1.0
                                                                   for x in e["results"] for w in ways) else "")
            + (f" ({e['note']})" if e.get("note") else "") + ";"]
