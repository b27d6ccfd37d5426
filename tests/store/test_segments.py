"""Segments of the embedded store: a commit adds one small segment that readers build alone,
the segments merge in tiers, large ones are saved by the writer, and scores over segments with
deleted and rewritten documents equal those of one merged index (the same store optimized into
one segment), BM25 also checked against an independent implementation. Chinese and English."""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_store import ANALYZER, make_doc, vector

from ragsift.store import lance as lance_mod
from ragsift.store import lance_write
from ragsift.store import segments as seg_mod
from ragsift.store.filters import parse_filter
from ragsift.store.lance import LanceStore
from ragsift.store.segments import plan

TEXTS = ["绿茶应在零至五摄氏度冷藏保存，红茶常温密封即可。", "Clean the solar panels twice a year with soft water.",
         "音箱支持蓝牙 5.2，连接距离十米，红茶色的外壳。", "Hold the power button for ten seconds to reset the speaker.",
         "Prune roses in late winter before new growth starts; water the roses weekly.", "茶叶要避光、防潮、远离异味保存。"]
QUESTIONS = ["红茶怎么保存", "how to reset the speaker", "water the roses", "蓝牙连接距离"]


def _put(store: LanceStore, ids: range, version: str = "") -> None:
    txn = store.begin()
    for i in ids:
        text = f"{TEXTS[i % len(TEXTS)]} {version} ({i}) {TEXTS[(i * 7 + 1) % len(TEXTS)] if i % 3 == 0 else ''}"
        d, parents, children = make_doc(f"d{i:03d}", f"# 第{i}节 Part {i}\n\n{text}", bucket=i % 4)
        txn.put_document(d, parents, children)
    txn.commit()


def _delete(store: LanceStore, ids: list[int]) -> None:
    txn = store.begin()
    for i in ids:
        txn.delete_document(f"d{i:03d}")
    txn.commit()


def _results(store: LanceStore, where=None) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for q in QUESTIONS:
        out[f"bm25 {q}"] = [(h.child_id, h.score) for h in store.search_bm25(ANALYZER.analyze(q), 8, where)]
        out[f"dense {q}"] = [(h.child_id, h.score) for h in store.search_dense(vector(q), 8, where)]
    return out


def _independent_bm25(store: LanceStore, terms: str, k: int, min_rows: int) -> list[float]:
    """BM25 over the live table's terms, written here from the formula: when two languages or more
    (Chinese, English, other) have ``min_rows`` live rows each, those languages' rows are scored
    with their own language's statistics, every other row with the whole table's."""
    tbl = store._scan(["terms", "kind", "lang"]).to_pylist()
    lang = [r["lang"] if r["lang"] in ("zh", "en", "other") else "" for r in tbl]  # "": none recorded
    docs = [(r["terms"] or "").split() for r in tbl]
    own = {x for x in set(lang) if lang.count(x) >= min_rows and x}
    own = own if len(own) >= 2 else set()

    def stats(mine: list[list[str]]) -> tuple[int, float, list[list[str]]]:
        return len(mine), sum(len(d) for d in mine) / len(mine), mine

    per = {x: stats([d for d, y in zip(docs, lang) if y == x]) for x in own}
    everyone = stats(docs)
    scores = []
    for d, r, x in zip(docs, tbl, lang):
        n, avg, pool = per.get(x, everyone)
        s = 0.0
        for t in terms.split():
            df = sum(1 for y in pool if t in y)
            if not df or t not in d:
                continue
            tf = d.count(t)
            s += math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(d) / avg))
        if s and r["kind"] == "chunk":
            scores.append(s)
    return sorted(scores, reverse=True)[:k]


@pytest.mark.parametrize("min_rows", [seg_mod.LANGUAGE_MIN_ROWS, 10], ids=["package", "per-language"])
def test_segments_with_deletions_score_as_one_merged_index(tmp_path, monkeypatch, min_rows):
    """(``min_rows`` 10: Chinese and English rows each have statistics of their own, counted over
    the live rows of every segment.)"""
    monkeypatch.setattr(seg_mod, "LANGUAGE_MIN_ROWS", min_rows)
    store = LanceStore(tmp_path / "kb", dim=64)
    _put(store, range(0, 40))
    _put(store, range(40, 52))
    store.search_dense(vector("tea"), 3, None)  # this reader keeps the segments it has read
    _put(store, range(52, 55))
    _delete(store, [2, 41, 53])
    _put(store, range(5, 8), version="第二版 second edition")  # rewritten: dead rows in the first segment
    store.refresh()
    names = [s.name for s in store.segments()]
    assert len(names) >= 3, names
    assert any(store._live(s) is not None for s in store.segments())  # dead rows are there
    assert store.bm25_stats().per_language == (min_rows == 10)
    where = parse_filter({"bucket": {"in": [1, 2]}}, store.fields())
    segmented, filtered = _results(store), _results(store, where)
    for q in QUESTIONS:  # BM25 over segments against the formula over the live rows
        want = _independent_bm25(store, ANALYZER.analyze(q), 8, min_rows)
        assert np.allclose([s for _, s in segmented[f"bm25 {q}"]], want, rtol=1e-5), q
    assert not any(c.startswith(("d002", "d041", "d053")) for r in segmented.values() for c, _ in r)

    store.optimize()  # one merged segment
    assert len(store.segments()) == 1 and store._live(store.segments()[0]) is None
    merged, merged_filtered = _results(store), _results(store, where)
    for key in merged:
        got, want = segmented[key], merged[key]
        if key.startswith("bm25"):
            assert [s for _, s in got] == [s for _, s in want], key  # the same float32 sums
        else:
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6), key
        # the same children, but for ties in score
        assert {c for c, s in got if s > got[-1][1]} == {c for c, s in want if s > want[-1][1]}, key
        assert [s for _, s in filtered[key]] == pytest.approx([s for _, s in merged_filtered[key]], abs=1e-6)
    parents = store.get_parents(["d006#p0", "d002#p0"])
    assert set(parents) == {"d006#p0"} and "第二版" in parents["d006#p0"].parent.text


def test_a_rewritten_document_has_its_new_parents_and_a_deleted_one_none(tmp_path, monkeypatch):
    def no_table_read(*a, **kw):  # a fault injected: the commits in between list what they dropped
        raise AssertionError("the documents table was read")

    monkeypatch.setattr(lance_mod, "dead_documents", no_table_read)
    store = LanceStore(tmp_path / "kb", dim=64)
    _put(store, range(0, 10))
    reader = LanceStore(tmp_path / "kb")
    first = reader.search_dense(vector("tea"), 20, None)
    pid = next(h.parent_id for h in first if h.doc_id == "d004")
    assert "第二版" not in reader.get_parents([pid])[pid].parent.text
    _put(store, range(4, 5), version="第二版 second edition")
    _delete(store, [6])
    reader.refresh()
    old = reader.segments()[0]
    assert reader._live(old) is not None  # d004's and d006's first rows are dead now
    assert "第二版" in reader.get_parents([pid])[pid].parent.text
    gone = next(h.parent_id for h in first if h.doc_id == "d006")
    assert reader.get_parents([gone]) == {}
    assert all(h.doc_id != "d006" for h in reader.search_bm25(ANALYZER.analyze(TEXTS[0]), 20, None))


def test_a_commit_adds_one_small_segment_and_readers_keep_theirs(tmp_path):
    store = LanceStore(tmp_path / "kb", dim=64)
    _put(store, range(0, 30))
    reader = LanceStore(tmp_path / "kb")
    reader.search_bm25(ANALYZER.analyze("红茶"), 3, None)
    reader.search_dense(vector("tea"), 3, None)
    before = reader.segments()
    _put(store, range(30, 32))
    reader.refresh()
    after = reader.segments()
    assert after[0] is before[0]  # kept, indexes and all
    assert "bm25" in after[0].indexes and "dense:vector" in after[0].indexes
    assert len(after) == 2 and after[1].rows.n == sum(1 for r in reader._scan(["gen"]).to_pylist()
                                                      if r["gen"] == reader.generation)
    hits = reader.search_bm25(ANALYZER.analyze("红茶 保存"), 50, None)
    assert {"d030", "d031"} & {h.doc_id for h in hits}


def test_the_tiers_keep_few_segments_and_rebuild_each_child_few_times():
    segs: list[list[int]] = []
    rebuilt = 0
    for g in range(1, 1001):
        before = {tuple(s) for s in segs}
        segs = plan(segs, g - 1, g, 100, lambda lo, hi: 100 * (hi - lo))
        rebuilt += sum(s[2] for s in segs if tuple(s) not in before)
        assert all(a[1] == b[0] for a, b in zip(segs, segs[1:]))  # contiguous, oldest first
        assert segs[0][0] == 0 and segs[-1][1] == g
        assert len(segs) <= 2 * math.log2(g) + 2
    assert rebuilt / (100 * 1000) <= math.log2(1000) + 1  # each child rebuilt O(log n) times
    assert plan([[0, 5, 1000]], 5, 6, 0, lambda lo, hi: 0) == [[0, 5, 1000]]  # a commit that adds none


def test_large_segments_are_saved_by_the_writer_and_mapped_by_readers(tmp_path, monkeypatch):
    monkeypatch.setattr(lance_mod, "SAVE_MIN", 10)
    monkeypatch.setattr(seg_mod, "SAVE_MIN", 10)
    store = LanceStore(tmp_path / "kb", dim=64)
    _put(store, range(0, 20))
    _put(store, range(20, 22))  # too small to save
    cache = tmp_path / "kb" / lance_mod.CACHE
    big, small = (s.name for s in lance_mod.segment_specs(store.manifest))
    saved = sorted(d.name for d in cache.iterdir())
    assert saved == [f"{big}-parents", f"{big}-postings", f"{big}-rows", f"{big}-vector"], saved
    reader = LanceStore(tmp_path / "kb")
    fresh = _results(reader)
    assert fresh == _results(store)
    assert reader.segments()[0].saving and not reader.segments()[1].saving
    _put(store, range(22, 40))  # merged into one large segment: the old one's files go
    store.refresh()
    names = {d.name.rsplit("-", 1)[0] for d in cache.iterdir()}
    kept = {s.name for s in lance_mod.segment_specs(store.manifest)}
    assert kept <= names | {small} and len(kept) == 1


def test_a_restore_reads_its_rows_afresh(tmp_path):
    from ragsift.store.lance_upkeep import restore

    store = LanceStore(tmp_path / "kb", dim=64, keep_generations=3)
    _put(store, range(0, 10))
    _put(store, range(10, 12))
    store.search_dense(vector("tea"), 3, None)
    _delete(store, [1, 2, 3])
    restore(tmp_path / "kb", store.generation - 1)
    store.refresh()
    assert {"d001", "d002", "d003"} <= {h.doc_id for h in store.search_dense(vector("tea"), 40, None)}
    assert all(s.name.startswith(f"s{store.generation}-") for s in store.segments())


def test_a_store_written_before_segments_reads_one_segment_per_generation(tmp_path):
    import json

    LanceStore(tmp_path / "kb", dim=64)
    path = tmp_path / "kb" / "manifest.json"
    m = json.loads(path.read_text())
    for key in ("stable_row_ids", "segments", "epoch"):  # what a manifest from before segments lacks
        del m[key]
    path.write_text(json.dumps(m))
    store = LanceStore(tmp_path / "kb")
    _put(store, range(0, 12))
    _put(store, range(12, 15))
    _delete(store, [3])
    store.refresh()
    assert "segments" not in store.manifest
    (seg,) = store.segments()
    assert seg.where is None and seg.name == f"{store.generation:010d}"
    for q in QUESTIONS:
        got = [h.score for h in store.search_bm25(ANALYZER.analyze(q), 8, None)]
        assert np.allclose(got, _independent_bm25(store, ANALYZER.analyze(q), 8, seg_mod.LANGUAGE_MIN_ROWS), rtol=1e-5), q
    assert all(h.doc_id != "d003" for h in store.search_dense(vector(TEXTS[3]), 20, None))


@pytest.mark.parametrize("listed", [True, False])
def test_readers_far_behind_or_after_large_deletes_work_liveness_out_from_the_table(tmp_path, monkeypatch, listed):
    """A reader that kept its segments through commits it cannot see listed (more commits than
    are kept, or one that deleted more documents than a manifest lists) reads the documents
    table instead; either way it finds what a fresh reader finds."""
    if not listed:
        monkeypatch.setattr(lance_write, "DROPPED_MAX", 1)
    store = LanceStore(tmp_path / "kb", dim=64, keep_generations=2)
    _put(store, range(0, 20))
    reader = LanceStore(tmp_path / "kb")
    reader.search_dense(vector("tea"), 3, None)
    first = reader.segments()[0]
    _delete(store, [1, 2])
    _put(store, range(20, 22))
    _put(store, range(4, 6), version="第二版 second edition")
    _put(store, range(22, 23))
    reader.refresh()
    assert reader.segments()[0] is first
    fresh = LanceStore(tmp_path / "kb")
    assert _results(reader) == _results(fresh)
    assert reader._dead(first) == {"d001", "d002", "d004", "d005"}
    assert "第二版" in reader.get_parents(["d004#p0"])["d004#p0"].parent.text
    assert reader.get_parents(["d001#p0"]) == {}


def test_segments_saved_by_a_writer_that_died_before_its_commit_are_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(lance_mod, "SAVE_MIN", 10)
    store = LanceStore(tmp_path / "kb", dim=64)
    _put(store, range(0, 12))

    def die(*a, **kw):  # a fault injected: the writer dies after saving its segments, before the commit
        raise RuntimeError("killed")

    monkeypatch.setattr(lance_write, "publish", die)
    with pytest.raises(RuntimeError):
        _put(store, range(12, 24))  # merged with the first: one large segment saved, never committed
    monkeypatch.undo()
    monkeypatch.setattr(lance_mod, "SAVE_MIN", 10)
    _put(store, range(40, 52), version="另一批 another batch")  # the same generation, other rows
    fresh = LanceStore(tmp_path / "kb")
    docs = {h.doc_id for h in fresh.search_dense(vector("tea"), 100, None)}
    assert docs == {f"d{i:03d}" for i in [*range(0, 12), *range(40, 52)]}
    assert _results(fresh) == _results(store)
