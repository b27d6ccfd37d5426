"""Filtered search on the embedded store: a filter is evaluated by the table once per generation
and its rows kept, so asking it again reads no table; a new generation evaluates it afresh.
Results are checked against exact filtered search computed here with NumPy, in Chinese and
English; the row look-up by the table's row ids against the look-up by child id."""
from __future__ import annotations

import numpy as np
import pytest
from test_store import ANALYZER, make_doc, vector

from ragsift.store import lance as lance_mod
from ragsift.store.filters import parse_filter
from ragsift.store.lance import LanceStore

TEXTS = ["绿茶应在零至五摄氏度冷藏保存，红茶常温密封即可。", "Clean the solar panels twice a year with soft water.",
         "音箱支持蓝牙 5.2，连接距离十米。", "Hold the power button for ten seconds to reset the speaker.",
         "Prune roses in late winter before new growth starts.", "茶叶要避光、防潮、远离异味保存。"]


def _fill(store: LanceStore, start: int, n: int) -> None:
    txn = store.begin()
    for i in range(start, start + n):
        text = f"{TEXTS[i % len(TEXTS)]} ({i})"
        d, parents, children = make_doc(f"d{i:03d}", f"# 第{i}节 Part {i}\n\n{text}", bucket=i % 10,
                                        locale="zh" if i % 2 == 0 else "en")
        txn.put_document(d, parents, children)
    txn.commit()


class CountingScans:
    """A spy on the children table's searches (the real table answers)."""

    def __init__(self, store: LanceStore) -> None:
        self.n, table = 0, store._tables["children"]
        search = table.search

        def counted(*a, **kw):
            self.n += 1
            return search(*a, **kw)
        table.search = counted


def _exact(store: LanceStore, q: np.ndarray, keep) -> list[float]:
    """The five best cosine scores among the children ``keep`` accepts (texts repeat: scores tie)."""
    tbl = store._scan(["child_id", "vector", "m_bucket", "m_locale"])
    vecs = np.asarray(tbl.column("vector").combine_chunks().flatten(), np.float32).reshape(tbl.num_rows, -1)
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    ids, buckets, locales = (tbl.column(c).to_pylist() for c in ("child_id", "m_bucket", "m_locale"))
    ok = [i for i in range(len(ids)) if keep(buckets[i], locales[i])]
    scores = vecs[ok] @ (q / np.linalg.norm(q))
    return [round(float(x), 5) for x in np.sort(scores)[::-1][:5]]


def _scores(hits) -> list[float]:
    return [round(float(h.score), 5) for h in hits]


@pytest.mark.parametrize("question", ["红茶怎么保存", "when to prune roses"])
def test_a_filter_is_evaluated_once_per_generation_and_matches_exact_search(tmp_path, question):
    store = LanceStore(tmp_path / "kb", dim=64)
    _fill(store, 0, 40)
    flt = {"bucket": {"lt": 3}, "locale": "zh"}
    where = parse_filter(flt, store.fields())
    q = vector(question)
    store.search_dense(q, 5, None)  # the in-memory indexes are read once, without a filter
    store.search_bm25(ANALYZER.analyze(question), 5, None)
    spy = CountingScans(store)
    first = store.search_dense(q, 5, where)
    scans = spy.n
    assert scans == 1  # the filter, once
    again = store.search_dense(q, 5, where)
    bm25 = store.search_bm25(ANALYZER.analyze(question), 5, where)
    assert spy.n == scans  # asked again, dense and BM25: no table read
    assert first == again
    assert _scores(first) == _exact(store, q, lambda b, loc: b < 3 and loc == "zh")
    assert bm25 and all(int(h.doc_id[1:]) % 10 < 3 and int(h.doc_id[1:]) % 2 == 0 for h in bm25)

    _fill(store, 40, 20)  # a new generation: the filter is evaluated afresh and sees the new rows
    store.refresh()
    assert _scores(store.search_dense(q, 5, where)) == _exact(store, q, lambda b, loc: b < 3 and loc == "zh")
    assert {h.doc_id for h in store.search_dense(q, 100, where)} == \
        {f"d{i:03d}" for i in range(60) if i % 10 < 3 and i % 2 == 0}


def test_row_ids_map_to_the_same_rows_as_child_ids(tmp_path):
    """Per segment, a filter's rows (found by the table's row ids) are exactly the live rows of
    the segment holding the table's matching child ids, after deletions and a rewrite that leave
    dead rows in a segment read before them."""
    store = LanceStore(tmp_path / "kb", dim=64)
    _fill(store, 0, 30)
    store.search_dense(vector("tea"), 3, None)  # the first segment read now: it keeps its rows
    txn = store.begin()  # deletions leave gaps in the row ids
    for i in (3, 7, 11):
        txn.delete_document(f"d{i:03d}")
    txn.commit()
    _fill(store, 30, 5)
    _fill(store, 1, 1)  # d001 written again: its old rows are dead in the first segment
    store.refresh()
    segs = store.segments()
    assert len(segs) >= 2 and all(seg.rows.row_ids is not None for seg in segs)
    for flt in ({"bucket": {"in": [1, 4]}}, {"locale": "en"}, {"doc_id": {"nin": ["d002", "d031"]}}):
        clause = store._with_kinds(parse_filter(flt, store.fields()), ("chunk",))
        selected = store._select(parse_filter(flt, store.fields()), ("chunk",))
        tbl = store._tables["children"].search().where(clause).select(["child_id", "gen"]).limit(1000).to_arrow()
        found = 0
        for seg, rows in zip(segs, selected):
            mine = [c for c, g in zip(tbl.column("child_id").to_pylist(), tbl.column("gen").to_pylist())
                    if seg.lo < g <= seg.hi]
            assert rows.tolist() == sorted(seg.rows.positions(mine).tolist()) or not mine and not len(rows)
            found += len(rows)
        assert found == tbl.num_rows


def test_the_kept_selections_are_bounded(tmp_path, monkeypatch):
    store = LanceStore(tmp_path / "kb", dim=64)
    _fill(store, 0, 20)
    monkeypatch.setattr(lance_mod, "SELECTIONS_MB", 1e-6)  # room for one
    q = vector("tea")
    for b in range(5):
        store.search_dense(q, 3, parse_filter({"bucket": b}, store.fields()))
    assert len(store._selections) == 1
