"""The embedded store's in-memory search indexes (ragsift.store.memindex), checked against
independent implementations written here: BM25 scored with plain Python loops over the stored
terms, and exact cosine search by brute force over the stored vectors. Chinese and English."""
from __future__ import annotations

import json
import math
import shutil
from collections import Counter

import numpy as np
import pytest

from ragsift.kb import KnowledgeBase
from ragsift.store.filters import parse_filter
from ragsift.store.memindex import AnnIndex, FlatIndex

QUESTIONS = ["How long does a full charge take?", "绿茶应该怎样保存？", "reset the speaker to factory settings",
             "蓝牙连接不上怎么办", "What does the yellow light ring mean?", "音箱 电池 充电 时间",
             "green tea, green tea: how is green tea stored?", "音箱充电，音箱电池，音箱的电池充电要多久"]


@pytest.fixture(params=["compiled", "numpy"])
def bm25_path(request, monkeypatch):
    """BM25 searched by the compiled module (``_bm25.c``) or by the NumPy path it replaces when
    the module is not built: each test using this runs on both."""
    from ragsift.store.memindex import bm25 as bm25_module

    if request.param == "numpy":
        monkeypatch.setattr(bm25_module, "compiled_bm25", None)
    else:
        assert bm25_module.compiled_bm25 is not None, \
            "ragsift.store._bm25 is not built (setup.py: an install needs a C compiler and Python's headers)"
    return request.param


def _search(index, terms: str, k: int, rows):
    """One BM25 index searched alone (its statistics its own: one segment)."""
    from ragsift.store.segments import BM25Stats, norm_of

    stats = BM25Stats([(index, None)])
    return index.search(stats.weights(terms), k, rows, norm_of(index, stats.avgdl), stats.avgdl).hits()


def _children(store) -> list[dict]:
    cols = ["child_id", "terms", "vector", "kind", "doc_id", "lang"]
    return store._tables["children"].to_arrow().select(cols).to_pylist()


def _language(row: dict) -> str:
    lang = row.get("lang") or ""
    return lang if lang in ("zh", "en", "other") else "unknown"  # unknown: never statistics of its own


def independent_bm25(rows: list[dict], query: str, kinds=("chunk",), k1=1.2, b=0.75,
                     min_rows: int = 100) -> list[tuple[str, float]]:
    """Okapi BM25 as textbooks write it, scores for the asked kinds, each distinct query term once
    (Robertson's k3 = 0). Statistics: when two languages (Chinese, English, other) or more have
    ``min_rows`` stored entries each, an entry of such a language is scored with the statistics
    of its language's entries alone (as if each had an index of its own); every other entry with
    those of every stored entry."""
    return independent_scorer(rows, kinds, k1, b, min_rows)(query)


def independent_scorer(rows: list[dict], kinds=("chunk",), k1=1.2, b=0.75, min_rows: int = 100):
    """``independent_bm25`` over ``rows`` for many queries: the statistics counted once."""
    def stats(docs: list[list[str]]) -> tuple[int, float, Counter]:
        return len(docs), sum(len(d) for d in docs) / len(docs), Counter(t for d in docs for t in set(d))

    docs = [r["terms"].split() for r in rows]
    counts = Counter(_language(r) for r in rows)
    own = {lang for lang, c in counts.items() if c >= min_rows and lang != "unknown"}
    own = own if len(own) >= 2 else set()
    everyone = stats(docs)
    per = {lang: stats([d for r, d in zip(rows, docs) if _language(r) == lang]) for lang in own}
    scored = [(r["child_id"], per.get(_language(r), everyone), Counter(d), len(d))
              for r, d in zip(rows, docs) if (r["kind"] or "chunk") in kinds]

    def score(query: str) -> list[tuple[str, float]]:
        out = []
        terms = set(query.split())
        for child_id, (n, avgdl, df), tf, length in scored:
            s = 0.0
            for t in terms:
                if t in tf:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * length / avgdl))
            if s > 0:
                out.append((child_id, s))
        return sorted(out, key=lambda x: -x[1])

    return score


@pytest.mark.parametrize("question", QUESTIONS)
def test_bm25_equals_an_independent_implementation(sample_kb, question, bm25_path):
    rows = _children(sample_kb.store)
    terms = sample_kb.analyzer.analyze(question)
    want = independent_bm25(rows, terms)
    got = sample_kb.store.search_bm25(terms, 20, None)
    assert want and got, question
    assert len(got) == min(20, len(want))
    # the same scores in the same order; ids equal except where scores tie
    assert np.allclose([h.score for h in got], [s for _, s in want[:20]], rtol=1e-5)
    score_of = dict(want)
    for h in got:
        assert score_of[h.child_id] == pytest.approx(h.score, rel=1e-5)


@pytest.mark.parametrize("question", ["green tea, green tea: how is green tea stored?",
                                      "音箱充电，音箱电池，音箱的电池充电要多久"])
def test_bm25_counts_a_term_asked_twice_once(sample_kb, question):
    """A statement that repeats its common words is scored as if it said each once: the repeats
    do not outweigh the rare words (the LawBench loss, docs/benchmarks.md)."""
    terms = sample_kb.analyzer.analyze(question)
    once = " ".join(dict.fromkeys(terms.split()))
    assert len(once.split()) < len(terms.split())  # the question does repeat a term
    got = sample_kb.store.search_bm25(terms, 20, None)
    want = sample_kb.store.search_bm25(once, 20, None)
    assert got and [(h.child_id, h.score) for h in got] == [(h.child_id, h.score) for h in want]


def test_bm25_with_a_filter_and_other_kinds(sample_kb, bm25_path):
    rows = _children(sample_kb.store)
    doc = next(r["doc_id"] for r in rows if "音箱" in r["terms"])
    terms = sample_kb.analyzer.analyze("音箱 蓝牙 充电 battery reset")
    where = parse_filter({"doc_id": doc}, sample_kb.store.fields())
    got = sample_kb.store.search_bm25(terms, 50, where)
    doc_of = {r["child_id"]: r["doc_id"] for r in rows}
    want = [(c, s) for c, s in independent_bm25(rows, terms) if doc_of[c] == doc]
    assert [round(h.score, 4) for h in got] == [round(s, 4) for _, s in want]
    assert {h.doc_id for h in got} <= {doc}
    assert sample_kb.store.search_bm25("zzzz-not-a-term", 10, None) == []
    assert sample_kb.store.search_bm25("", 10, None) == []


def _exact(rows: list[dict], vector: np.ndarray, k: int, allowed=None) -> list[tuple[str, float]]:
    v = vector / np.linalg.norm(vector)
    out = []
    for r in rows:
        if (r["kind"] or "chunk") != "chunk" or (allowed and r["doc_id"] not in allowed):
            continue
        x = np.asarray(r["vector"], np.float64)
        out.append((r["child_id"], float(x @ v / np.linalg.norm(x))))
    return sorted(out, key=lambda x: -x[1])[:k]


@pytest.mark.slow
def test_hnsw_path_finds_the_exact_neighbours_and_saves_its_graph(tmp_path, monkeypatch, sample_dir_files):
    import ragsift.store.lance as lance

    monkeypatch.setattr(lance, "ANN_MIN_CHILDREN", 1)
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest(sample_dir_files)
    rows = _children(kb.store)
    assert isinstance(kb.store.dense_index(), AnnIndex)
    # the ingest saved the generation's indexes for its readers
    saved = sorted(d.name for d in (tmp_path / "kb" / lance.CACHE).iterdir())
    (seg,) = (s.name for s in lance.segment_specs(kb.store.manifest))
    assert saved == [f"{seg}-parents", f"{seg}-postings", f"{seg}-rows", f"{seg}-vector"]
    graph = tmp_path / "kb" / lance.CACHE / f"{seg}-vector" / "graph.usearch"
    stamp = graph.stat().st_mtime_ns
    found = 0
    for q in QUESTIONS:
        v = kb.embedder().embed_queries([q])[0]
        got = kb.store.search_dense(v, 10, None)
        want = _exact(rows, v, 10)
        exact = dict(_exact(rows, v, len(rows)))
        # approximate candidates, exact scores and order: each hit scored by its full vector
        assert len(got) == 10 and [h.score for h in got] == sorted((h.score for h in got), reverse=True)
        assert all(h.score == pytest.approx(exact[h.child_id], abs=1e-5) for h in got), q
        overlap = len({h.child_id for h in got} & {c for c, _ in want})
        assert overlap >= 8, q
        found += overlap
    assert found / (10 * len(QUESTIONS)) >= 0.95
    # another process (a new store object) maps the saved graph instead of building it again
    again = KnowledgeBase.open(tmp_path / "kb")
    v = again.embedder().embed_queries([QUESTIONS[1]])[0]
    assert again.store.search_dense(v, 10, None) == kb.store.search_dense(v, 10, None)
    assert graph.stat().st_mtime_ns == stamp
    # BM25 from the saved (memory-mapped) postings scores as a fresh in-memory build does
    for q in QUESTIONS:
        terms = again.analyzer.analyze(q)
        want = independent_bm25(rows, terms)[:10]
        got = again.store.search_bm25(terms, 10, None)
        assert np.allclose([h.score for h in got], [s for _, s in want], rtol=1e-5), q
    # a removed cache is built again; a filter keeps only its rows, ranked exactly
    shutil.rmtree(tmp_path / "kb" / lance.CACHE)
    third = KnowledgeBase.open(tmp_path / "kb")
    doc = rows[0]["doc_id"]
    where = parse_filter({"doc_id": doc}, third.store.fields())
    got = third.store.search_dense(v, 5, where)
    assert [h.child_id for h in got] == [c for c, _ in _exact(rows, v, 5, {doc})]
    assert graph.exists()
    # a broad filter both ways: exactly over its rows (read from the map), and in the graph searched
    # as broadly as the filter narrows it; either way exactly the best of the filter's rows
    docs = sorted({r["doc_id"] for r in rows})[::2]
    broad = parse_filter({"doc_id": {"in": docs}}, third.store.fields())
    want = [c for c, _ in _exact(rows, v, 5, set(docs))]
    monkeypatch.setattr(AnnIndex, "MAPPED_ROWS", 0)
    assert [h.child_id for h in third.store.search_dense(v, 5, broad)] == want
    # the exact pass scores the filter's rows a block at a time: the same rows and scores as whole
    whole = third.store.search_dense(v, 5, broad)
    monkeypatch.setattr(AnnIndex, "SCORE_BLOCK", 3)
    blocks = third.store.search_dense(v, 5, broad)
    assert [h.child_id for h in blocks] == [h.child_id for h in whole] == want
    assert [h.score for h in blocks] == pytest.approx([h.score for h in whole], abs=1e-6)
    monkeypatch.setattr(AnnIndex, "EXACT_PER_CANDIDATE", 0)
    assert [h.child_id for h in third.store.search_dense(v, 5, broad)] == want


def _saved_graph(tmp_path, monkeypatch, files):
    """The sample documents in a knowledge base whose one segment is searched by its saved graph
    (``AnnIndex``) however small: the knowledge base, its children, the index, its saved folder
    and the vectors' dimension."""
    import ragsift.store.lance as lance
    from ragsift.store.memindex import quantised

    assert quantised.compiled_scan is not None, "ragsift.store._scan is not built"
    monkeypatch.setattr(lance, "ANN_MIN_CHILDREN", 1)
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest(files)
    rows = _children(kb.store)
    index = kb.store.dense_index()
    assert isinstance(index, AnnIndex)
    folder = next((tmp_path / "kb" / lance.CACHE).glob("*-vector"))
    return kb, rows, index, folder, len(rows[0]["vector"])


def _half_the_documents(kb, rows):
    """A filter keeping every other document: its ids, the parsed filter and the chunks it keeps."""
    docs = sorted({r["doc_id"] for r in rows})[::2]
    broad = parse_filter({"doc_id": {"in": docs}}, kb.store.fields())
    kept = sum(r["doc_id"] in set(docs) and (r["kind"] or "chunk") == "chunk" for r in rows)
    assert kept > 20
    return docs, broad, kept


def _spied_scan(monkeypatch, name: str) -> list[int]:
    """A spy on a compiled scan (``scores`` or ``scores4``): the rows of each call, in order; every
    call passed on to the compiled function."""
    from ragsift.store.memindex import quantised

    calls: list[int] = []
    real = getattr(quantised.compiled_scan, name)

    def counted(*args):
        calls.append(len(args[1]))
        return real(*args)

    monkeypatch.setattr(quantised.compiled_scan, name, counted)
    return calls


def test_exact_pass_reads_the_int8_copy_and_scores_its_best_rows_exactly(tmp_path, monkeypatch, sample_dir_files):
    """An exact pass over many rows ranks them by their int8 copy (saved with the graph) and scores
    the best of those from the full vectors: the rows and scores of the float32 pass, in Chinese and
    English. An index saved without the copy writes it at its first opening (the same bytes); where
    it cannot, the exact pass reads the float32 vectors."""
    from ragsift.store.memindex import quantised

    kb, rows, index, folder, dim = _saved_graph(tmp_path, monkeypatch, sample_dir_files)
    assert index.int8 is not None
    saved = (folder / "vectors.i8").read_bytes(), (folder / "vectors.i8.scales").read_bytes()
    assert len(saved[0]) == index.n * dim and len(saved[1]) == 4 * dim
    # the copy, checked against the full vectors: each value within half a step of its dimension's scale
    full = np.fromfile(folder / "vectors.f32", np.float32).reshape(-1, dim)
    scales = np.frombuffer(saved[1], np.float32)
    copy = np.frombuffer(saved[0], np.int8).reshape(-1, dim)
    assert np.abs(copy / scales - full).max() <= 0.5 / scales.min() + 1e-6
    assert np.abs(copy).max() == 127
    docs, broad, kept = _half_the_documents(kb, rows)
    calls = _spied_scan(monkeypatch, "scores")

    def ranked(store, question):
        v = kb.embedder().embed_queries([question])[0]
        return [(h.child_id, h.score) for h in store.search_dense(v, 5, broad)], v

    for q in QUESTIONS:
        monkeypatch.setattr(AnnIndex, "INT8_ROWS", 10**9)  # the float32 pass
        plain, v = ranked(kb.store, q)
        assert [c for c, _ in plain] == [c for c, _ in _exact(rows, v, 5, set(docs))], q
        monkeypatch.setattr(AnnIndex, "INT8_ROWS", 0)
        monkeypatch.setattr(AnnIndex, "RESCORE", 10)  # the int8 ranking must hold each best five in its ten
        before = len(calls)
        got = ranked(kb.store, q)[0]
        assert [c for c, _ in got] == [c for c, _ in plain], q
        assert [x for _, x in got] == pytest.approx([x for _, x in plain], abs=1e-6)  # BLAS sums apart
        assert calls[before:] == [kept], q
        # split among threads (three parts here, whatever the machine's cores): the same rows and scores
        monkeypatch.setattr(quantised, "SPLIT_ROWS", 1)
        monkeypatch.setattr(quantised, "SCAN_THREADS", 3)
        monkeypatch.setattr(quantised, "_cores", lambda: 3)
        before = len(calls)
        assert ranked(kb.store, q)[0] == got, q
        assert len(calls[before:]) == 3 and sum(calls[before:]) == kept, q
        monkeypatch.setattr(quantised, "SPLIT_ROWS", 10**9)
    # an index saved before the copy existed: the next process writes it, the same bytes
    (folder / "vectors.i8").unlink()
    (folder / "vectors.i8.scales").unlink()
    again = KnowledgeBase.open(tmp_path / "kb")
    assert ranked(again.store, QUESTIONS[1])[0] == ranked(kb.store, QUESTIONS[1])[0]
    assert ((folder / "vectors.i8").read_bytes(), (folder / "vectors.i8.scales").read_bytes()) == saved
    assert not [f for f in folder.iterdir() if f.name.startswith(".")]  # no temporary file left
    # a folder the process may not write (a fault injected by a fake writer): the float32 pass, same hits
    (folder / "vectors.i8").unlink()

    def fake_write_refused(*args):
        raise PermissionError("read-only folder")

    monkeypatch.setattr(quantised, "_write_int8", fake_write_refused)
    third = KnowledgeBase.open(tmp_path / "kb")
    assert third.store.dense_index().int8 is None
    for q in QUESTIONS[:2]:
        assert ranked(third.store, q)[0] == ranked(kb.store, q)[0], q
    assert not (folder / "vectors.i8").exists()


def test_a_large_pass_ranks_by_the_4bit_copy_first_and_keeps_the_exact_hits(tmp_path, monkeypatch, sample_dir_files):
    """Over many rows the exact pass first ranks them by their 4-bit copy (saved with the graph),
    keeps the best for the int8 pass, and scores those from the full vectors: the rows and scores of
    the float32 pass, in Chinese and English, whether it scans the filter's rows or every row in
    file order. An index saved without the copy writes it at its first opening (the same bytes);
    where it cannot, the int8 pass reads every row, to the same hits."""
    from ragsift.store.memindex import quantised

    kb, rows, index, folder, dim = _saved_graph(tmp_path, monkeypatch, sample_dir_files)
    assert index.int4 is not None
    saved = (folder / "vectors.u4").read_bytes(), (folder / "vectors.u4.params").read_bytes()
    row_bytes = -(-dim // 64) * 32
    assert len(saved[0]) == index.n * row_bytes and len(saved[1]) == 8 * dim
    # the codes, unpacked here, against the full vectors: within half a step where not clipped
    full = np.fromfile(folder / "vectors.f32", np.float32).reshape(-1, dim)
    params = np.frombuffer(saved[1], np.float32)
    low, step = params[:dim], params[dim:]
    codes = _unpacked(np.frombuffer(saved[0], np.uint8).reshape(index.n, -1))[:, :dim].astype(np.float64)
    inside = (full >= low) & (full <= low + 15 * step)
    assert np.abs(codes * step + low - full)[inside].max() <= 0.5 * step.max() + 1e-6
    assert inside.mean() > 0.97 and codes.min() == 0 and codes.max() == 15
    docs, broad, kept = _half_the_documents(kb, rows)
    calls = _spied_scan(monkeypatch, "scores4")

    def ranked(store, question):
        v = kb.embedder().embed_queries([question])[0]
        return [(h.child_id, h.score) for h in store.search_dense(v, 5, broad)]

    for q in QUESTIONS:
        monkeypatch.setattr(AnnIndex, "INT8_ROWS", 10**9)
        monkeypatch.setattr(AnnIndex, "INT4_ROWS", 10**9)  # the float32 pass
        plain = ranked(kb.store, q)
        monkeypatch.setattr(AnnIndex, "INT4_ROWS", 0)
        monkeypatch.setattr(AnnIndex, "INT4_KEEP", 12)  # the 4-bit ranking must hold each best five in its twelve
        monkeypatch.setattr(AnnIndex, "INT8_ROWS", 0)
        monkeypatch.setattr(AnnIndex, "RESCORE", 10)
        for share, scanned in ((2.0, kept), (0.0, index.n)):  # the filter's rows; every row in file order
            monkeypatch.setattr(quantised.Int4Copy, "WHOLE_SHARE", share)
            before = len(calls)
            got = ranked(kb.store, q)
            assert [c for c, _ in got] == [c for c, _ in plain], (q, share)
            assert [x for _, x in got] == pytest.approx([x for _, x in plain], abs=1e-6)
            assert calls[before:] == [scanned], (q, share)
    # an index saved before the 4-bit copy existed: the next process writes it, the same bytes
    (folder / "vectors.u4").unlink()
    (folder / "vectors.u4.params").unlink()
    again = KnowledgeBase.open(tmp_path / "kb")
    assert ranked(again.store, QUESTIONS[1]) == ranked(kb.store, QUESTIONS[1])
    assert ((folder / "vectors.u4").read_bytes(), (folder / "vectors.u4.params").read_bytes()) == saved
    assert not [f for f in folder.iterdir() if f.name.startswith(".")]  # no temporary file left
    # a folder the process may not write (a fault injected by a fake writer): no 4-bit pass, same hits
    (folder / "vectors.u4").unlink()

    def fake_write_refused(*args):
        raise PermissionError("read-only folder")

    monkeypatch.setattr(quantised, "_write_int4", fake_write_refused)
    third = KnowledgeBase.open(tmp_path / "kb")
    assert third.store.dense_index().int4 is None and third.store.dense_index().int8 is not None
    for q in QUESTIONS[:2]:
        assert ranked(third.store, q) == ranked(kb.store, q), q
    assert not (folder / "vectors.u4").exists()


@pytest.mark.parametrize("dim", [1, 100, 384])
def test_the_4bit_copy_keeps_the_true_best_rows_at_any_dimension(tmp_path, dim):
    """The 4-bit copy written from float32 vectors of a dimension that fills no, one or many blocks
    of 64 (padded), opened and searched: its best rows of a filter (and of every row, scanned in
    file order) hold the exact ten best; a copy that is not the vectors' own is not used."""
    from ragsift.store.memindex import quantised

    assert quantised.compiled_scan is not None, "ragsift.store._scan is not built"
    rng = np.random.default_rng(dim)
    centres = rng.standard_normal((20, dim))
    full = (centres[rng.integers(0, 20, 5000)] + 0.6 * rng.standard_normal((5000, dim))).astype(np.float32)
    full /= np.linalg.norm(full, axis=1, keepdims=True)
    full.tofile(tmp_path / "vectors.f32")
    copy = quantised.Int4Copy.open(tmp_path, tmp_path / "vectors.f32", dim)
    assert copy is not None and copy.n == 5000 and copy.row_bytes == -(-dim // 64) * 32
    for share in (0.3, 0.9):
        rows = np.sort(rng.choice(5000, int(5000 * share), replace=False)).astype(np.int64)
        for _ in range(10):
            u = rng.standard_normal(dim).astype(np.float32)
            u /= np.linalg.norm(u)
            ten = set(rows[np.argsort(-(full[rows] @ u))[:min(10, dim * 10)]].tolist())
            kept = copy.best(rows, u, 400)
            assert len(kept) == 400 and bool((np.diff(kept) > 0).all()) and set(kept.tolist()) <= set(rows.tolist())
            if dim > 1:  # one dimension: every vector is +1 or -1, a tie the copy cannot order
                assert ten <= set(kept.tolist()), (share, dim)
    # the copy of other vectors (another count of rows): not opened
    full[:100].tofile(tmp_path / "other.f32")
    assert quantised.Int4Copy.open(tmp_path, tmp_path / "other.f32", dim) is None


def _unpacked(packed: np.ndarray) -> np.ndarray:
    """4-bit codes as ``_scan.c`` reads them: in each block of 32 bytes, dimension j in byte j's
    low nibble and dimension 32 + j in its high one."""
    blocks = packed.reshape(len(packed), -1, 32)
    return np.concatenate([blocks & 15, blocks >> 4], axis=2).reshape(len(packed), -1).astype(np.int64)


@pytest.mark.parametrize("avx2", [True, False])
@pytest.mark.parametrize("dims", [64, 384, 1088])
def test_4bit_scan_equals_integer_arithmetic(dims, avx2):
    """The compiled 4-bit scan, its AVX2 path and its plain one, against NumPy's int64 products:
    every row (unsorted, repeated, the first and the last), the extreme codes and weights."""
    from ragsift.store.memindex import quantised

    scan = quantised.compiled_scan
    assert scan is not None, "ragsift.store._scan is not built"
    has_avx2 = scan.set_avx2(True)
    try:
        if avx2 and not has_avx2:
            pytest.fail("this processor has no AVX2: the AVX2 path cannot be checked here")
        assert scan.set_avx2(avx2) == avx2
        rng = np.random.default_rng(dims)
        n = 300
        matrix = rng.integers(0, 256, size=(n, dims // 2), dtype=np.uint8)
        matrix[0] = 255  # every code 15
        query = rng.integers(-128, 128, size=dims).astype(np.int8)
        query[:dims // 2] = -128
        rows = np.concatenate([[0, n - 1, 5, 5], rng.integers(0, n, 500)]).astype(np.int64)
        out = np.empty(len(rows), np.int32)
        scan.scores4(matrix, rows, query, out)
        assert out.tolist() == (_unpacked(matrix)[rows] @ query.astype(np.int64)).tolist()
        assert out[0] == 15 * int(query.astype(np.int64).sum())
    finally:
        scan.set_avx2(True)


def test_4bit_scan_refuses_arrays_that_do_not_fit():
    from ragsift.store.memindex import quantised

    scan = quantised.compiled_scan
    assert scan is not None, "ragsift.store._scan is not built"
    matrix, query = np.full((4, 32), 0x11, np.uint8), np.ones(64, np.int8)  # every code 1
    rows, out = np.array([0, 3], np.int64), np.zeros(2, np.int32)
    bad = [dict(rows=np.array([0, 4], np.int64)),  # a row past the end
           dict(rows=np.array([-1, 0], np.int64)),
           dict(out=np.zeros(3, np.int32)),
           dict(query=np.ones(32, np.int8)),  # not a whole block of 64 dimensions
           dict(query=np.zeros(0, np.int8)),
           dict(matrix=np.ones((4, 48), np.uint8), query=np.ones(128, np.int8))]  # 192 bytes: no whole rows of 64
    for change in bad:
        args = dict(matrix=matrix, rows=rows, query=query, out=out)
        args.update(change)
        with pytest.raises(ValueError):
            scan.scores4(*args.values())
    scan.scores4(matrix, rows, query, out)
    assert out.tolist() == [64, 64]


@pytest.mark.parametrize("n,count,spread", [(10, 3, 1000), (70_000, 100, 10**6), (500_000, 4096, 10**9),
                                            (500_000, 4096, 3), (200_000, 50, 10**9), (80_000, 80_000, 10)])
def test_the_best_positions_are_those_a_full_partition_finds(n, count, spread):
    """``_top_positions`` (a sampled threshold first, when there are many scores) keeps the same
    scores as a full partition: the same positions where scores are distinct enough, the same
    multiset of scores where many tie (spread 3: the threshold keeps too many, the whole partition)."""
    from ragsift.store.memindex.quantised import _top_positions

    rng = np.random.default_rng(n + count)
    scores = rng.integers(-spread, spread, size=n).astype(np.int32)
    got = _top_positions(scores, count)
    assert len(got) == count and len(set(got.tolist())) == count
    want = np.argsort(-scores.astype(np.int64), kind="stable")[:count]
    assert sorted(scores[got].tolist()) == sorted(scores[want].tolist())
    if spread >= 10**6:
        assert set(got.tolist()) == set(want.tolist()) or scores[want].min() in scores[got]


@pytest.mark.parametrize("dim", [1, 7, 384, 1030])
def test_int8_scan_equals_integer_arithmetic(dim):
    """The compiled int8 scan against NumPy's int64 products: every row (unsorted, repeated, the
    first and the last) at dimensions that fill no, one and many vector registers."""
    from ragsift.store.memindex import quantised

    scan = quantised.compiled_scan
    assert scan is not None, "ragsift.store._scan is not built"
    rng = np.random.default_rng(dim)
    n = 300
    matrix = rng.integers(-128, 128, size=(n, dim), dtype=np.int8)
    matrix[0] = -128  # the extremes: the widest sums
    top = min(32767, (2**31 - 1) // (128 * dim))
    query = rng.integers(-top, top + 1, size=dim).astype(np.int16)
    query[0] = -top
    rows = np.concatenate([[0, n - 1, 5, 5], rng.integers(0, n, 500)]).astype(np.int64)
    out = np.empty(len(rows), np.int32)
    scan.scores(matrix, rows, query, out)
    assert out.tolist() == (matrix[rows].astype(np.int64) @ query.astype(np.int64)).tolist()
    scan.scores(matrix, np.zeros(0, np.int64), query, np.empty(0, np.int32))  # no rows: nothing to do


def test_int8_scan_refuses_arrays_that_do_not_fit():
    from ragsift.store.memindex import quantised

    scan = quantised.compiled_scan
    assert scan is not None, "ragsift.store._scan is not built"
    matrix, query = np.ones((4, 8), np.int8), np.ones(8, np.int16)
    rows, out = np.array([0, 3], np.int64), np.zeros(2, np.int32)
    bad = [dict(rows=np.array([0, 4], np.int64)),  # a row past the end
           dict(rows=np.array([-1, 0], np.int64)),
           dict(out=np.zeros(3, np.int32)),
           dict(query=np.ones(3, np.int16)),  # 32 values do not make rows of 3
           dict(query=np.zeros(0, np.int16)),
           dict(query=np.full(8, 32767, np.int16), matrix=np.ones((4, 8), np.int8)),  # fine: 8 * 128 * 32767 fits
           dict(query=np.full(1024, 32767, np.int16), matrix=np.ones((2, 1024), np.int8), rows=np.array([0, 1]))]
    for i, change in enumerate(bad):
        args = dict(matrix=matrix, rows=rows, query=query, out=out)
        args.update(change)
        if i == 5:
            scan.scores(*args.values())
            continue
        with pytest.raises(ValueError):
            scan.scores(*args.values())
    assert out.tolist() == [0, 0] or out.tolist() == [8 * 32767, 8 * 32767]


def test_small_stores_search_exactly_in_memory(sample_kb):
    assert isinstance(sample_kb.store.dense_index(), FlatIndex)
    rows = _children(sample_kb.store)
    for q in QUESTIONS[:3]:
        v = sample_kb.embedder().embed_queries([q])[0]
        got = sample_kb.store.search_dense(v, 10, None)
        assert [h.child_id for h in got] == [c for c, _ in _exact(rows, v, 10)]


@pytest.mark.slow
def test_old_generation_caches_are_removed(tmp_path, monkeypatch, sample_dir_files):
    import ragsift.store.lance as lance

    monkeypatch.setattr(lance, "ANN_MIN_CHILDREN", 1)
    kb = KnowledgeBase.open(tmp_path / "kb", keep_generations=2)
    files = sorted(sample_dir_files.iterdir())
    for f in files[:4]:
        kb.ingest(f)
        kb.query("battery", channels=["dense"])
    names = sorted(d.name for d in (tmp_path / "kb" / lance.CACHE).iterdir())
    current = {s.name for s in lance.segment_specs(kb.store.manifest)}
    before = {s.name for s in lance.segment_specs(json.loads(
        (tmp_path / "kb" / "generations" / f"{kb.store.generation - 1:010d}.json").read_text()))}
    assert all(f"{s}-vector" in names and f"{s}-parents" in names for s in current)
    assert {n.rsplit("-", 1)[0] for n in names} <= current | before, names  # the kept generations' only
    assert len(current | before) < 4  # segments were merged and the merged-away ones removed


@pytest.fixture()
def sample_dir_files(tmp_path):
    from ragsift.demo import sample_dir

    dest = tmp_path / "docs"
    shutil.copytree(sample_dir() / "kb", dest)
    return dest


def test_rows_hold_no_python_object_per_row(sample_kb):
    sample_kb.query("battery", channels=["dense", "bm25"])
    seg = sample_kb.store.segments()[-1]
    rows = seg.rows
    assert seg.indexes["dense:vector"].rows is rows and seg.indexes["bm25"].rows is rows  # one copy, shared
    for col in (rows.child_ids, rows.parent_ids, rows.doc_ids):
        assert not isinstance(col, list)
    assert rows.starts.dtype == np.int32 and rows.kinds.dtype.kind == "i"
    ids = rows.child_ids.to_pylist()
    assert rows.positions([ids[3], "no-such-child", ids[0], ""]).tolist() == [3, 0]



def test_bm25_built_block_by_block_is_the_same(sample_kb, monkeypatch):
    """The build tokenises a block of rows at a time (bounded memory); blocks of 5 rows give the
    same postings as one block."""
    from ragsift.store.memindex import BM25Index
    from ragsift.store.segments import aligned

    store = sample_kb.store
    seg = store.segments()[0]
    rows = seg.rows
    whole = BM25Index(rows, lambda: aligned(store._tables["children"], seg, ["terms"]))
    monkeypatch.setattr(BM25Index, "BLOCK", 5)
    small = BM25Index(rows, lambda: aligned(store._tables["children"], seg, ["terms"]))
    assert small.vocab.keys() == whole.vocab.keys() and rows.n > 5 * 10
    for q in QUESTIONS:
        terms = sample_kb.analyzer.analyze(q)
        a, b = _search(whole, terms, 30, None), _search(small, terms, 30, None)
        assert [(h.child_id, round(h.score, 5)) for h in a] == [(h.child_id, round(h.score, 5)) for h in b]


@pytest.mark.parametrize("languages,shares", [(("en",), [1]), (("zh", "en", "other"), [5, 2, 1]),
                                              (("en", "zh", "other"), [60, 30, 1]), (("zh", ""), [1, 2])])
def test_bm25_pruning_is_exact_on_common_and_rare_terms(languages, shares, bm25_path):
    """MaxScore stops reading common terms once no unseen row can enter the top k: the result
    must still equal exhaustive scoring, with and without a row filter (Zipf-like random text,
    Chinese and English words), with one language's statistics, three, two and a language
    too small for its own (scored with every row's), or one and rows of no recorded language."""
    import random

    import pyarrow as pa

    from ragsift.store.memindex import BM25Index, Rows

    rng = random.Random(5)
    words = [f"w{i}" for i in range(300)] + ["电池", "充电", "蓝牙", "音箱", "绿茶"]
    weights = [1 / (r + 1) for r in range(len(words))]
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(3, 40))) for _ in range(3000)]
    ids = [f"c{i}" for i in range(len(texts))]
    # languages drawn unevenly, and a row's words skewed by its language: each language's
    # statistics differ from the others'
    langs = rng.choices(languages, shares, k=len(texts))
    texts = [t if lang != "zh" else t + " 电池 充电" for t, lang in zip(texts, langs)]
    tbl = pa.table({"child_id": ids, "parent_id": ids, "doc_id": ids, "start": [0] * len(ids), "end": [1] * len(ids),
                    "lang": langs})
    index = BM25Index(Rows(tbl), lambda: pa.table({"terms": texts}))
    rows = [{"child_id": c, "terms": t, "kind": "chunk", "lang": lang} for c, t, lang in zip(ids, texts, langs)]
    counts = Counter(langs)
    assert len(languages) == 1 or "" in counts or min(counts.values()) < 100 < sorted(counts.values())[-2] \
        or min(counts.values()) > 100
    allowed = np.array(sorted(rng.sample(range(len(texts)), 900)))
    independent = independent_scorer(rows)
    for _ in range(60):
        query = " ".join(rng.sample(words[:12], 2) + rng.sample(words[100:], rng.randint(0, 3))
                         + rng.sample(["电池", "充电", "w0"], rng.randint(0, 2)))
        want = independent(query)
        got = _search(index, query, 10, None)
        assert np.allclose([h.score for h in got], [s for _, s in want[:10]], rtol=1e-5), query
        score_of = dict(want)
        assert all(score_of[h.child_id] == pytest.approx(h.score, rel=1e-5) for h in got)
        keep = {ids[i] for i in allowed}
        want_f = [(c, s) for c, s in want if c in keep][:10]
        got_f = _search(index, query, 10, allowed)
        assert np.allclose([h.score for h in got_f], [s for _, s in want_f], rtol=1e-5), query


def _random_index(seed: int, n: int, languages=("en",), shares=(1,), duplicates: int = 0):
    """A BM25 index over Zipf-like random text (English-like and Chinese words), some rows
    repeated word for word (ties), languages drawn with these shares."""
    import random

    import pyarrow as pa

    from ragsift.store.memindex import BM25Index, Rows

    rng = random.Random(seed)
    words = [f"w{i}" for i in range(400)] + ["电池", "充电", "蓝牙", "音箱", "绿茶"]
    weights = [1 / (r + 1) for r in range(len(words))]
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(1, 60))) for _ in range(n)]
    for _ in range(duplicates):
        texts[rng.randrange(n)] = texts[rng.randrange(n)]
    ids = [f"c{i}" for i in range(n)]
    langs = rng.choices(languages, shares, k=n)
    tbl = pa.table({"child_id": ids, "parent_id": ids, "doc_id": ids, "start": [0] * n, "end": [1] * n,
                    "lang": langs})
    return BM25Index(Rows(tbl), lambda: pa.table({"terms": texts})), words, rng


@pytest.mark.parametrize("languages,shares", [(("en",), (1,)), (("zh", "en", "other"), (5, 2, 1))])
def test_compiled_bm25_gives_the_numpy_paths_rows_and_scores(languages, shares, monkeypatch):
    """The compiled search and the NumPy path are one algorithm: the same rows in the same order
    (ties in row order) and bit-identical float32 scores, for any k, with and without a filter,
    with a floor from other segments, with one set of statistics and per language."""
    from ragsift.store.memindex import bm25 as bm25_module
    from ragsift.store.segments import BM25Stats, norm_of

    compiled = bm25_module.compiled_bm25
    assert compiled is not None, "ragsift.store._bm25 is not built"
    index, words, rng = _random_index(11, 4000, languages, shares, duplicates=400)
    stats = BM25Stats([(index, None)])
    assert (len(languages) > 1) == (not isinstance(stats.avgdl, float))
    norm = norm_of(index, stats.avgdl)
    compared = ties = 0
    for trial in range(150):
        query = " ".join(rng.sample(words[:15], rng.randint(1, 4)) + rng.sample(words[15:], rng.randint(0, 6)))
        k = rng.choice([1, 3, 10, 50, 400])
        rows = None if trial % 3 == 0 else np.array(sorted(rng.sample(range(index.n), rng.choice([5, 300, 3000]))))
        floor = -1.0 if trial % 4 else rng.uniform(0.5, 6.0)
        items = stats.weights(query)
        monkeypatch.setattr(bm25_module, "compiled_bm25", compiled)
        got = index.search(items, k, rows, norm, stats.avgdl, floor)
        monkeypatch.setattr(bm25_module, "compiled_bm25", None)
        want = index.search(items, k, rows, norm, stats.avgdl, floor)
        assert got.idx.tolist() == want.idx.tolist(), query
        assert got.scores.dtype == want.scores.dtype == np.float32
        assert got.scores.tobytes() == want.scores.tobytes(), query
        compared += len(got.idx)
        ties += int(np.sum(got.scores[1:] == got.scores[:-1]))
        # and the scratch arrays are clean for the next query
        scratch = index._scratch()
        assert not scratch.acc.any() and not scratch.allowed.any() and not scratch.member.any()
    assert compared > 5000 and ties > 50  # many rows compared, ties among them


def test_compiled_bm25_searches_from_several_threads_at_once():
    """The compiled search runs without the GIL, each thread with its own working arrays: queries
    from four threads at once give what each gives alone."""
    from concurrent.futures import ThreadPoolExecutor

    from ragsift.store.memindex import bm25 as bm25_module
    from ragsift.store.segments import BM25Stats, norm_of

    assert bm25_module.compiled_bm25 is not None, "ragsift.store._bm25 is not built"
    index, words, rng = _random_index(12, 20_000)
    stats = BM25Stats([(index, None)])
    norm = norm_of(index, stats.avgdl)
    queries = [" ".join(rng.sample(words[:30], 3) + rng.sample(words[30:], 3)) for _ in range(40)]

    def run(q):
        found = index.search(stats.weights(q), 20, None, norm, stats.avgdl)
        return found.idx.tolist(), found.scores.tobytes()

    alone = [run(q) for q in queries]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(run, queries * 3))
    assert together == alone * 3


def test_compiled_bm25_refuses_arrays_that_do_not_fit():
    """An index whose arrays do not fit each other (a row, term or language out of range, lengths
    that disagree) is a ValueError from the compiled search, never a read out of bounds; the
    working arrays are left clean."""
    from ragsift.store.memindex import bm25 as bm25_module

    bm25 = bm25_module.compiled_bm25
    assert bm25 is not None, "ragsift.store._bm25 is not built"
    n = 8
    rows, tf = np.array([0, 3, 5], np.int32), np.array([1, 2, 1], np.uint16)
    indptr, terms = np.array([0, 2, 3], np.int64), np.array([0, 1], np.int64)
    wks, norm = np.ones(2, np.float32), np.ones(n, np.float32)
    acc, member = np.zeros(n, np.float32), np.zeros(n, bool)
    rest, read = np.array([2.0, 1.0, 0.0]), np.array([1.0, 2.0])
    out_rows, out_scores = np.empty(3, np.int64), np.empty(3, np.float32)
    no_groups, no_rows = np.zeros(0, np.int8), np.zeros(0, bool)

    def call(**change):
        args = dict(post_rows=rows, post_tf=tf, indptr=indptr, terms=terms, wks=wks, groups=no_groups, norm=norm,
                    acc=acc, allowed=no_rows, member=member, rest=rest, read=read, out_rows=out_rows,
                    out_scores=out_scores, k=3, floor=-1.0)
        args.update(change)
        return bm25.search(*args.values())

    assert call() == 3 and sorted(out_rows.tolist()) == [0, 3, 5]
    assert not acc.any()
    bad = [dict(post_rows=np.array([0, 3, n], np.int32)),  # a row past the end
           dict(post_rows=np.array([0, -1, 5], np.int32)),
           dict(terms=np.array([0, 2], np.int64)),  # a term past indptr
           dict(indptr=np.array([0, 2, 9], np.int64)),  # postings past the arrays
           dict(post_tf=np.ones(2, np.uint16)),
           dict(norm=np.ones(n - 1, np.float32)),
           dict(groups=np.array([0, 0, 0, 5, 0, 0, 0, 0], np.int8), wks=np.ones((2, 4), np.float32)),  # row 3: no weight
           dict(wks=np.ones(3, np.float32)),
           dict(rest=np.zeros(2)),
           dict(out_rows=np.empty(2, np.int64)),
           dict(k=-1)]
    for change in bad:
        with pytest.raises(ValueError):
            call(**change)
        assert not acc.any() and not member.any(), change
