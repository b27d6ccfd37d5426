"""Did the BM25 engine move SciFact's BM25 from 0.6878 to 0.6820 when ragsift's own in-memory index
replaced LanceDB's full-text index (2026-12-01)? The same chunks and terms, three engines.

    .venv/bin/python benchmarks/bm25_engines.py            # every set found, results/bm25_engines.json

Each set's documents are split as ingest splits them (the package's default splitter settings, the
title line as ingest indexes it) and analyzed by the default analyzer; a document is scored by its
best chunk; each distinct query term counts once. Three engines score the chunks:

- ``exact``: the Okapi BM25 of ``bm25_query.py`` (k1 1.2, b 0.75, Lucene's idf), each chunk's
  length exact, as ragsift's in-memory index computes it;
- ``length byte``: the same, with each chunk's length read back through the one byte Lucene and
  tantivy keep per document (``SmallFloat.intToByte4``: exact up to 23 tokens, then 3 bits of
  mantissa, a length read back as the floor of its bucket, up to 12.5% short; the average length
  from the exact total): the cause the benchmarks page once guessed;
- ``lancedb``: LanceDB's own full-text index (``create_index`` with ``FTS``: whitespace tokenizer,
  no lower-casing, stemming or stop words, as ragsift's store configured it before the change)
  over the same terms, queried with the same distinct terms, top 100.

nDCG@10 on the held-out questions (HotpotQA's first 300, other sets' odd-numbered) and on all;
p: paired randomization test against ``exact``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from bm25_query import OkapiBM25  # noqa: E402  (beside this script)

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.ingest.loaders.records import load_jsonl  # noqa: E402
from ragsift.ingest.splitter import SplitSettings, index_text, split_document  # noqa: E402
from ragsift.text.analyzer import DEFAULT_ANALYZER, analyzer_for  # noqa: E402

SHARED = SHARED_DATASETS
DATA = ROOT / "benchmarks" / "data"
SETS = {"scifact": SHARED / "scifact", "hotpotqa": SHARED / "hotpotqa-ircot-dev500",
        "cmrc2018": SHARED / "cmrc2018-dev", "xquad-zh": SHARED / "xquad-zh",
        "insuranceqa-en": DATA / "insuranceqa-en", "insuranceqa-zh": DATA / "insuranceqa-zh",
        "lawbench-zh": DATA / "lawbench-zh", "phantomwiki": DATA / "phantomwiki"}


def int_to_byte4(i: int) -> int:
    """Lucene's ``SmallFloat.intToByte4`` (tantivy's ``fieldnorm_to_id``): 24 exact values, then
    a 4-bit float (3 bits of mantissa) of ``i - 24``."""
    free = 24
    if i < free:
        return i
    v = i - free
    bits = v.bit_length()
    if bits < 4:
        return free + v
    shift = bits - 4
    return free + (((v >> shift) & 0x07) | ((shift + 1) << 3))


def byte4_to_int(b: int) -> int:
    """Lucene's ``SmallFloat.byte4ToInt`` (tantivy's ``id_to_fieldnorm``): the length read back."""
    free = 24
    if b < free:
        return b
    i = b - free
    bits, shift = i & 0x07, (i >> 3) - 1
    return free + (bits if shift == -1 else (bits | 0x08) << shift)


def stored_length(n: int) -> int:
    return byte4_to_int(int_to_byte4(n))


def run_set(name: str, folder: Path) -> dict:
    ds = load_dataset(folder)
    settings = Settings()
    ix = settings.index
    split = SplitSettings(ix.parent_max_tokens, ix.child_tokens, ix.child_overlap_tokens)
    analyzer = analyzer_for(DEFAULT_ANALYZER)
    docs = load_jsonl(Path(ds.corpus).read_text(encoding="utf-8"), "corpus.jsonl").documents
    chunk_doc, chunk_terms = [], []
    for d in docs:
        parents, children = split_document(d, split)
        pmap = {p.parent_id: p for p in parents}
        for c in children:
            chunk_doc.append(d.doc_id)
            chunk_terms.append(analyzer.terms(index_text(d, pmap[c.parent_id], c, ix.index_headings)))
    lengths = np.array([len(c) for c in chunk_terms])
    stored = np.array([stored_length(int(n)) for n in lengths])
    qids = [q for q in ds.queries if q in ds.qrels]
    held = set(qids[:300]) if name == "hotpotqa" else set(qids[1::2])
    per: dict[str, list[float]] = {"exact": [], "length byte": [], "lancedb": []}
    engines = {"exact": OkapiBM25(chunk_terms), "length byte": OkapiBM25(chunk_terms, lengths=list(stored))}
    with tempfile.TemporaryDirectory(prefix="bm25-engines-") as tmp:
        table = lance_table(Path(tmp), chunk_terms)
        for q in qids:
            terms = list(dict.fromkeys(analyzer.terms(ds.queries[q])))
            for mode, bm in engines.items():
                sc = bm.scores(terms)  # terms distinct: each counts once
                ranked = [i for i, _ in sorted(sc.items(), key=lambda kv: (-kv[1], kv[0]))[:100]]
                per[mode].append(ndcg_at_k(list(dict.fromkeys(chunk_doc[i] for i in ranked)), ds.qrels[q], 10))
            found = (table.search(" ".join(terms), query_type="fts", fts_columns="terms").limit(100)
                     .select(["row"]).to_arrow()["row"].to_pylist()) if terms else []
            per["lancedb"].append(ndcg_at_k(list(dict.fromkeys(chunk_doc[i] for i in found)), ds.qrels[q], 10))
    held_idx = [i for i, q in enumerate(qids) if q in held]
    ex = np.array(per["exact"])
    out = {"chunks": len(chunk_terms), "mean_terms": float(lengths.mean()),
           "mean_length_lost": float(((lengths - stored) / np.maximum(lengths, 1)).mean()),
           "held_out": len(held_idx), "all_questions": len(qids), "engines": {}}
    for mode, vals in per.items():
        v = np.array(vals)
        out["engines"][mode] = {"held_out": float(v[held_idx].mean()), "all": float(v.mean()),
                                "p": paired_randomization_test(ex[held_idx], v[held_idx]),
                                "p_all": paired_randomization_test(ex, v)}
    return out


def lance_table(folder: Path, chunk_terms: list[list[str]]):
    """The chunks' terms in a LanceDB table with the full-text index ragsift's store built before
    2026-12-01 (its terms indexed as they are)."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    db = lancedb.connect(str(folder))
    table = db.create_table("chunks", pa.table({"row": list(range(len(chunk_terms))),
                                                "terms": [" ".join(t) for t in chunk_terms]}))
    table.create_index("terms", replace=True, config=FTS(
        base_tokenizer="whitespace", lower_case=False, stem=False, remove_stop_words=False,
        ascii_folding=False, with_position=False))
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", help="NAME (default: every set found)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bm25_engines.json"))
    args = ap.parse_args()
    names = args.set or [n for n, f in SETS.items() if (f / "corpus.jsonl").exists()]
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
              "analyzer": DEFAULT_ANALYZER, "sets": {}}
    for n in names:
        t0 = time.time()
        r = result["sets"][n] = run_set(n, SETS[n])
        print(f"{n}: {r['chunks']} chunks, {r['mean_terms']:.0f} terms, length read back {100 * r['mean_length_lost']:.1f}% "
              f"short; " + "; ".join(f"{m} {e['held_out']:.4f} (p {e['p']:.3f}), all {e['all']:.4f}"
                                     for m, e in r["engines"].items()) + f"; {time.time() - t0:.0f} s", flush=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
