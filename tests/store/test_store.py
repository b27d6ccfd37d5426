"""The store interface, run against every backend (LanceDB, and Milvus through a milvus-lite
server on 127.0.0.1): commits, visibility, replace and delete, filters, long parents, export,
in Chinese and English. Vectors here are hashed bags of analyzer terms, so dense search has
real structure without an embedding model; the knowledge-base tests cover real embedders."""
from __future__ import annotations

import hashlib
import uuid

import numpy as np
import pytest

from ragsift.ingest.splitter import SplitSettings, index_text, split_document
from ragsift.store.base import IndexedChild
from ragsift.store.filters import And, Not, Or, parse_filter
from ragsift.store.lance import LanceStore
from ragsift.store.milvus import MilvusStore
from ragsift.text.analyzer import UnicodeAnalyzer
from ragsift.text.lang import detect_language
from ragsift.types import Document

DIM = 64
ANALYZER = UnicodeAnalyzer()


def vector(text: str) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for t in ANALYZER.analyze(text).split():
        v[int(hashlib.md5(t.encode()).hexdigest(), 16) % DIM] += 1.0
    return v if v.any() else np.ones(DIM, np.float32)


def make_doc(doc_id: str, text: str, **metadata) -> tuple[Document, list, list[IndexedChild]]:
    d = Document(doc_id, f"{doc_id}.md", doc_id.title(), text, hashlib.sha256(text.encode()).hexdigest(), "md",
                 metadata)
    parents, children = split_document(d, SplitSettings(400, 60, 10))
    pmap = {p.parent_id: p for p in parents}
    indexed = []
    for c in children:
        t = index_text(d, pmap[c.parent_id], c, True)
        indexed.append(IndexedChild(c, ANALYZER.analyze(t), vector(t), lang=detect_language(c.text)))
    return d, parents, indexed


DOCS = {
    "solar": ("# Solar guide\n\n## Cleaning\n\nClean the solar panels twice a year with soft water.\n\n"
              "## Inverter\n\nThe inverter converts direct current to alternating current.",
              {"year": 2019, "locale": "en", "rating": 4.5}),
    "tea": ("# 茶叶指南\n\n## 绿茶\n\n绿茶应在零至五摄氏度冷藏保存。\n\n## 红茶\n\n红茶常温密封即可，可保存两年。",
            {"year": 2023, "locale": "zh", "brand": "星云"}),
    "speaker": ("# 星云智能音箱 S2\n\n## 蓝牙\n\n音箱支持蓝牙 5.2，连接距离十米。\n\n## Reset\n\n"
                "Hold the power button for ten seconds to reset the speaker.",
                {"year": 2024, "locale": "zh", "brand": 'say "hi" \\ or doc_id != "x"'}),
    "garden": ("# Garden notes\n\n## Roses\n\nPrune roses in late winter before new growth starts.", {}),
}


def new_store(backend: dict, tmp_path, dim: int = DIM):
    if backend.get("store_kind") == "milvus":
        return MilvusStore(backend["store_uri"], f"t_{uuid.uuid4().hex[:12]}", dim=dim)
    return LanceStore(tmp_path / f"s_{uuid.uuid4().hex[:6]}", dim=dim)


def reopen(store):
    if isinstance(store, MilvusStore):
        return MilvusStore(store.uri, store.name)
    return LanceStore(store.path)


def fill(store, names=tuple(DOCS)) -> None:
    with store.begin() as txn:
        for n in names:
            txn.put_document(*make_doc(n, DOCS[n][0], **DOCS[n][1]))


def bm25_docs(store, query: str, where=None) -> list[str]:
    """Documents in the order of their best child."""
    return list(dict.fromkeys(h.doc_id for h in store.search_bm25(ANALYZER.analyze(query), 10, where)))


def dense_docs(store, query: str, where=None) -> list[str]:
    return list(dict.fromkeys(h.doc_id for h in store.search_dense(vector(query), 10, where)))


@pytest.mark.parametrize("query,doc", [("solar panels cleaning", "solar"), ("绿茶冷藏保存", "tea"),
                                       ("蓝牙连接距离", "speaker"), ("prune roses winter", "garden")])
def test_writes_are_invisible_until_commit(backend, tmp_path, query, doc):
    store = new_store(backend, tmp_path)
    reader = reopen(store)
    txn = store.begin()
    for n in DOCS:
        txn.put_document(*make_doc(n, DOCS[n][0], **DOCS[n][1]))
    txn._flush()  # rows are in the store now, but not committed
    assert not reader.refresh() and reader.generation == 0
    assert bm25_docs(reader, query) == [] and dense_docs(reader, query) == [] and reader.get_documents() == {}
    assert txn.commit() == 1
    assert reader.refresh() and reader.generation == 1
    assert bm25_docs(reader, query)[0] == doc and dense_docs(reader, query)[0] == doc
    assert reader.check_integrity() == [] and set(reader.get_documents()) == set(DOCS)
    # every hit carries its entry's language, stored at ingest
    for h in reader.search_bm25(ANALYZER.analyze(query), 10, None) + reader.search_dense(vector(query), 10, None):
        text = DOCS[h.doc_id][0]
        assert h.lang == detect_language(next(c.child.text for c in make_doc(h.doc_id, text)[2]
                                              if c.child.child_id == h.child_id)) and h.lang in ("zh", "en")


def test_abort_leaves_the_last_generation(backend, tmp_path):
    store = new_store(backend, tmp_path)
    fill(store, ["solar"])
    txn = store.begin()
    txn.put_document(*make_doc("tea", *DOCS["tea"][:1]))
    txn.delete_document("solar")
    txn._flush()
    txn.abort()
    again = reopen(store)
    assert again.generation == 1 and set(again.get_documents()) == {"solar"}
    assert bm25_docs(again, "绿茶") == [] and bm25_docs(again, "solar panels") == ["solar"]
    assert again.stats()["children"] == store.stats()["children"] and again.check_integrity() == []


def test_replace_and_delete_commit_together(backend, tmp_path):
    store = new_store(backend, tmp_path)
    fill(store)
    reader = reopen(store)
    before = reader.get_document_parents(["tea"])["tea"]
    txn = store.begin()
    txn.put_document(*make_doc("tea", "# 茶叶指南\n\n## 乌龙茶\n\n乌龙茶宜用九十五度的水冲泡。"))
    txn.delete_document("garden")
    txn._flush()
    # a reader still sees the old generation whole
    reader.refresh()
    assert [p.parent.text for p in reader.get_document_parents(["tea"])["tea"]] == [p.parent.text for p in before]
    assert bm25_docs(reader, "prune roses") == ["garden"] and bm25_docs(reader, "乌龙茶") == []
    txn.commit()
    reader.refresh()
    assert set(reader.get_documents()) == {"solar", "tea", "speaker"}
    texts = [p.parent.text for p in reader.get_document_parents(["tea"])["tea"]]
    assert any("乌龙茶" in t for t in texts) and not any("绿茶" in t for t in texts)
    assert bm25_docs(reader, "绿茶冷藏") == [] and bm25_docs(reader, "乌龙茶")[0] == "tea"
    assert bm25_docs(reader, "prune roses") == []
    # parent ids are positions, so the new version reuses them: only its text comes back
    old_ids = [p.parent.parent_id for p in before]
    assert all("绿茶" not in sp.parent.text and "红茶" not in sp.parent.text
               for sp in reader.get_parents(old_ids).values())
    assert reader.check_integrity() == []


def test_document_titles_are_the_committed_documents_with_a_title(backend, tmp_path):
    """What the router's title index reads (two columns, not every document decoded): the titled
    documents of the committed generation, Chinese and English; none untitled, none uncommitted,
    none deleted."""
    from dataclasses import replace

    store = new_store(backend, tmp_path)
    reader = reopen(store)
    assert reader.document_titles() == []
    titles = {"solar": "Solar guide", "tea": "茶叶指南", "speaker": "", "garden": "Garden notes"}
    txn = store.begin()
    for n, title in titles.items():
        d, parents, children = make_doc(n, DOCS[n][0])
        txn.put_document(replace(d, title=title), parents, children)
    txn._flush()
    assert reader.document_titles() == []  # written, not committed
    txn.commit()
    reader.refresh()
    want = {(n, t) for n, t in titles.items() if t}
    assert sorted(reader.document_titles()) == sorted(want)
    assert want == {(d.doc_id, d.title) for d in reader.get_documents().values() if d.title}
    with store.begin() as txn:
        txn.delete_document("tea")
    reader.refresh()
    assert sorted(reader.document_titles()) == sorted(want - {("tea", "茶叶指南")})


def test_parent_labels_name_the_parents_that_get_parents_returns(backend, tmp_path):
    """What a trace names its sections by (source, heading path, location; no text read): the
    same as the full parents say, Chinese and English, the rewritten version's after a rewrite,
    none for a deleted document or an unknown id."""
    store = new_store(backend, tmp_path)
    with store.begin() as txn:
        for n, (text, meta) in DOCS.items():
            txn.put_document(*make_doc(n, text, **meta))
    reader = reopen(store)

    def expected(ids):
        return {pid: (sp.source, sp.parent.heading_path, sp.parent.location)
                for pid, sp in reader.get_parents(ids).items()}
    ids = [sp.parent.parent_id for parts in reader.get_document_parents(DOCS).values() for sp in parts]
    labels = reader.parent_labels([*ids, "no-such-parent"])
    assert labels == expected(ids) and len(labels) == len(ids)
    assert {(lb.source, lb.heading_path[-1]) for lb in labels.values()} >= {
        ("tea.md", "绿茶"), ("solar.md", "Inverter"), ("speaker.md", "蓝牙")}
    with store.begin() as txn:  # a new version of tea (its parents' ids are reused) and garden gone
        txn.put_document(*make_doc("tea", "# 茶叶指南\n\n## 白茶\n\n白茶宜干燥避光保存。"))
        txn.delete_document("garden")
    reader.refresh()
    labels = reader.parent_labels(ids)
    assert labels == expected(ids)
    assert {lb.heading_path[-1] for lb in labels.values() if lb.source == "tea.md"} == {"白茶"}
    assert not any(lb.source == "garden.md" for lb in labels.values())


def test_put_and_delete_within_one_transaction(backend, tmp_path, monkeypatch):
    import ragsift.store.lance_write as lance_write
    import ragsift.store.milvus_write as milvus_write

    monkeypatch.setattr(lance_write, "BATCH_CHILDREN", 1)  # every put is written at once
    monkeypatch.setattr(milvus_write, "BATCH_CHILDREN", 1)
    store = new_store(backend, tmp_path)
    with store.begin() as txn:
        txn.put_document(*make_doc("solar", DOCS["solar"][0]))
        txn.put_document(*make_doc("solar", "# Solar guide\n\n## Cleaning\n\nUse a squeegee on the panels."))
        txn.put_document(*make_doc("garden", DOCS["garden"][0]))
        assert txn.delete_document("garden") and not txn.delete_document("nothing")
    assert set(store.get_documents()) == {"solar"} and store.check_integrity() == []
    assert bm25_docs(store, "squeegee") == ["solar"] and bm25_docs(store, "soft water twice") == []


# a filter, and the documents it must select (evaluated independently below)
FILTERS = [
    {"locale": "zh"}, {"year": {"gte": 2020}}, {"year": {"gt": 2019, "lt": 2024}},
    {"locale": {"ne": "zh"}},  # documents without the field match ne
    {"brand": {"in": ["星云", "other"]}}, {"brand": {"nin": ["星云"]}},
    {"not": {"year": {"gte": 2020}}},  # missing year: the comparison is false, so 'not' matches
    {"or": [{"source": "garden.md"}, {"rating": {"gte": 4.0}}]},
    {"brand": 'say "hi" \\ or doc_id != "x"'},  # quotes and operators stay a value
    {"brand": "x\" or gen >= 0 or doc_id == \""}, {"title": "Tea"}, {"doc_id": {"in": ["tea", "solar"]}},
]


def _expected(node, doc_id: str, meta: dict) -> bool:
    if isinstance(node, And):
        return all(_expected(n, doc_id, meta) for n in node.items)
    if isinstance(node, Or):
        return any(_expected(n, doc_id, meta) for n in node.items)
    if isinstance(node, Not):
        return not _expected(node.item, doc_id, meta)
    builtin = {"doc_id": doc_id, "source": f"{doc_id}.md", "title": doc_id.title(), "format": "md"}
    v = builtin.get(node.field, meta.get(node.field))
    if v is None:
        return node.op in ("ne", "nin")
    return {"eq": lambda: v == node.value, "ne": lambda: v != node.value, "gt": lambda: v > node.value,
            "gte": lambda: v >= node.value, "lt": lambda: v < node.value, "lte": lambda: v <= node.value,
            "in": lambda: v in node.value, "nin": lambda: v not in node.value}[node.op]()


def test_filters_select_exactly_the_matching_documents(backend, tmp_path):
    store = new_store(backend, tmp_path)
    fill(store)
    for spec in FILTERS:
        where = parse_filter(spec, store.fields())
        want = {d for d, (_, meta) in DOCS.items() if _expected(where, d, meta)}
        got_dense = {h.doc_id for h in store.search_dense(vector("anything"), 100, where)}
        got_bm25 = set(bm25_docs(store, "solar 绿茶 蓝牙 roses reset", where))
        assert got_dense == want, spec
        assert got_bm25 == want, spec


def test_the_detected_language_of_each_entry_is_a_filter_field(backend, tmp_path):
    """``lang`` is built in: each entry's own detected language, whatever its document's
    metadata says (the speaker manual is Chinese with an English section)."""
    store = new_store(backend, tmp_path)
    with store.begin() as txn:  # a metadata "lang" that disagrees with the text: the entries' own language wins
        for n in DOCS:
            txn.put_document(*make_doc(n, DOCS[n][0], **{**DOCS[n][1], "lang": "fr"}))
    assert store.fields()["lang"] == "string"
    entries = {c.child.child_id: (n, c.lang) for n in DOCS for c in make_doc(n, DOCS[n][0])[2]}
    for spec, langs in [({"lang": "zh"}, {"zh"}), ({"lang": "EN"}, {"en"}), ({"lang": {"in": ["zh-CN", "en_US"]}},
                                                                              {"zh", "en"}),
                        ({"lang": {"ne": "zh"}}, {"en", "other"}), ({"and": [{"lang": "en"}, {"locale": "zh"}]}, {"en"})]:
        where = parse_filter(spec, store.fields())
        hits = store.search_dense(vector("anything"), 100, where) + store.search_bm25(
            ANALYZER.analyze("solar 绿茶 蓝牙 roses reset speaker"), 100, where)
        assert hits and {entries[h.child_id][1] for h in hits} <= langs, spec
        assert all(h.lang == entries[h.child_id][1] for h in hits)
    en_of_speaker = {h.child_id for h in store.search_dense(vector("x"), 100, parse_filter(
        {"doc_id": "speaker", "lang": "en"}, store.fields()))}
    assert en_of_speaker == {cid for cid, (n, lang) in entries.items() if n == "speaker" and lang == "en"} != set()


@pytest.mark.slow  # Milvus (a Milvus Lite server)
@pytest.mark.parametrize("backend", ["milvus"], indirect=True)
def test_milvus_reads_past_one_page_of_rows(backend, tmp_path, monkeypatch):
    import ragsift.store.milvus as milvus

    store = new_store(backend, tmp_path)
    fill(store)
    full = _exported(store)
    monkeypatch.setattr(milvus, "QUERY_PAGE", 2)  # every read now pages through an iterator
    assert set(store.get_documents()) == set(DOCS) and store.check_integrity() == []
    paged = _exported(store)
    assert {k: (d, p, [c.child for c in cs]) for k, (d, p, cs) in paged.items()} == \
        {k: (d, p, [c.child for c in cs]) for k, (d, p, cs) in full.items()}


def test_a_parent_longer_than_one_milvus_value_round_trips(backend, tmp_path):
    store = new_store(backend, tmp_path)
    long_zh = "长" * 30000 + "结尾标记"  # 90 KB in UTF-8
    d, parents, children = make_doc("long", "# 长文\n\n" + long_zh)
    big = [p for p in parents if "结尾标记" in p.text]
    with store.begin() as txn:
        txn.put_document(d, parents, children)
    got = store.get_parents([big[0].parent_id])[big[0].parent_id].parent
    assert got == big[0] and store.check_integrity() == []


@pytest.mark.slow  # Milvus (a Milvus Lite server)
def test_export_copies_everything_to_the_other_backend(backend, tmp_path, milvus_uri):
    store = new_store(backend, tmp_path)
    fill(store)
    other = new_store({} if backend else {"store_kind": "milvus", "store_uri": milvus_uri}, tmp_path)
    with other.begin() as txn:
        for doc, parents, children in store.export():
            txn.put_document(doc, parents, children)
    assert other.get_documents() == {k: v.__class__(**{**v.__dict__, "generation": 1})
                                     for k, v in store.get_documents().items()}
    a, b = _exported(other), _exported(store)
    assert a.keys() == b.keys() == set(DOCS)
    for k in a:
        (da, pa, ca), (db, pb, cb) = a[k], b[k]
        assert (da, pa) == (db, pb) and [(x.child, x.terms, x.lang) for x in ca] == [(y.child, y.terms, y.lang) for y in cb]
        assert {x.lang for x in ca} <= {"zh", "en"} and all(x.lang for x in ca)
        assert all(np.allclose(x.vector, y.vector) for x, y in zip(ca, cb))
    for q in ("solar panels cleaning", "绿茶冷藏保存", "reset the speaker"):
        assert bm25_docs(other, q) == bm25_docs(store, q)
        a = other.search_dense(vector(q), 100, None)
        b = store.search_dense(vector(q), 100, None)
        # the same children with the same cosine scores (equal scores may come in either order)
        assert sorted((round(h.score, 4), h.child_id) for h in a) == sorted((round(h.score, 4), h.child_id) for h in b)
        assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)


def _exported(store) -> dict:
    return {doc.doc_id: (doc, parents, children) for doc, parents, children in store.export()}


QUERIES = ["solar panels cleaning", "inverter current", "绿茶冷藏保存", "蓝牙连接距离", "reset the speaker",
           "红茶 保存 两年", "roses", "green tea, green tea, stored green tea", "红茶保存，红茶冷藏，红茶"]


@pytest.mark.slow  # Milvus (a Milvus Lite server)
@pytest.mark.parametrize("names", [("solar", "garden"), ("tea",)], ids=["en", "zh"])
def test_bm25_in_milvus_matches_the_embedded_store(tmp_path, milvus_uri, names):
    """Milvus computes BM25 in the engine, the embedded store in its own index; on the same
    analyzer terms (k1 1.2, b 0.75 on both) they find the same children in the same order with
    the same scores, in a base of one language (in a base of several, the embedded store keeps
    each language's statistics apart and Milvus one set for the collection: README)."""
    lance, milvus = new_store({}, tmp_path), new_store({"store_kind": "milvus", "store_uri": milvus_uri}, tmp_path)
    fill(lance, names)
    fill(milvus, names)
    asked = 0
    for q in QUERIES:
        a = lance.search_bm25(ANALYZER.analyze(q), 20, None)
        b = milvus.search_bm25(ANALYZER.analyze(q), 20, None)
        asked += bool(a)
        assert [h.child_id for h in a] == [h.child_id for h in b], q
        assert np.allclose([h.score for h in a], [h.score for h in b], rtol=1e-3), q
    assert asked >= 3


def test_bm25_scores_each_language_with_its_own_statistics(tmp_path, monkeypatch):
    """In a base of Chinese and English documents, a Chinese child scores what it scores in a
    base of the Chinese documents alone (and an English child what it scores among the English
    ones): how many rows the other language has, and how long they are, does not move it. (Each
    language needs LANGUAGE_MIN_ROWS rows for statistics of its own: 2 here, for these few
    documents; the next test keeps the package's.)"""
    from ragsift.store import segments

    monkeypatch.setattr(segments, "LANGUAGE_MIN_ROWS", 2)
    both, zh, en = (new_store({}, tmp_path) for _ in range(3))
    fill(both, ("tea", "solar", "garden"))
    fill(zh, ("tea",))
    fill(en, ("solar", "garden"))
    assert both.bm25_stats().per_language and not zh.bm25_stats().per_language
    for q, alone in (("绿茶冷藏保存", zh), ("红茶 保存 两年", zh), ("solar panels cleaning", en),
                     ("prune roses winter", en), ("红茶 solar 保存", zh), ("红茶 solar 保存", en)):
        terms = ANALYZER.analyze(q)
        want = alone.search_bm25(terms, 20, None)
        got = [h for h in both.search_bm25(terms, 20, None) if h.child_id in {w.child_id for w in want}]
        assert want, q
        assert [(h.child_id, h.score) for h in got] == [(h.child_id, h.score) for h in want], q


def test_bm25_scores_a_language_of_a_few_rows_with_the_whole_base(tmp_path, monkeypatch):
    """A language with fewer live rows than LANGUAGE_MIN_ROWS gets no statistics of its own (with
    two rows every idf would be below 0.7 and its rows ranked last): its rows score as in a base
    whose statistics are shared, while the large languages keep their own."""
    from ragsift.store import segments

    monkeypatch.setattr(segments, "LANGUAGE_MIN_ROWS", 2)  # for these few documents
    german = "# Hundepflege\n\nDer Hund ist zurück, und die Katze schläft im Garten mit dem Hund."
    both, shared = new_store({}, tmp_path), new_store({}, tmp_path)
    for store in (both, shared):
        fill(store, ("tea", "solar", "garden"))
        with store.begin() as txn:
            txn.put_document(*make_doc("hund", german))
    shared.bm25_per_language = False
    groups = np.concatenate([seg.rows.lang_groups() for seg in both.segments()])
    counts = np.bincount(groups, minlength=3)  # zh, en, other
    assert counts[0] >= 2 and counts[1] >= 2 and 0 < counts[2] < 2, counts
    assert both.bm25_stats().per_language
    moved = 0
    for q in ("Hund Garten zurück", "garden roses winter", "Katze Garten"):
        terms = ANALYZER.analyze(q)
        got = {h.child_id: (h.score, h.lang) for h in both.search_bm25(terms, 50, None)}
        want = {h.child_id: h.score for h in shared.search_bm25(terms, 50, None)}
        assert got.keys() == want.keys(), q
        other = [c for c, (_, lang) in got.items() if lang == "other"]
        assert other or "Hund" not in q, q
        assert all(got[c][0] == want[c] for c in other), q  # the small language: shared statistics
        moved += sum(got[c][0] != want[c] for c, (_, lang) in got.items() if lang == "en")
    assert moved  # the English rows have statistics of their own


@pytest.mark.slow  # Milvus (a Milvus Lite server)
def test_fusion_in_milvus_matches_ours_on_flat_chunks(tmp_path, milvus_uri):
    from ragsift.retrieve.fusion import fuse

    store = new_store({"store_kind": "milvus", "store_uri": milvus_uri}, tmp_path)
    fill(store)
    for q in QUERIES:
        dense = store.search_dense(vector(q), 20, None)
        bm25 = store.search_bm25(ANALYZER.analyze(q), 20, None)
        rankings = {"dense": [(h.child_id, h.score) for h in dense], "bm25": [(h.child_id, h.score) for h in bm25]}
        for mode, kw, server in (("rrf", {"k": 60}, {"fusion": "rrf", "rrf_k": 60}),
                                 ("weighted", {"weights": {"dense": 0.7, "bm25": 0.3}, "normalization": "none"},
                                  {"fusion": "weighted", "weights": (0.7, 0.3), "normalize": False})):
            ours = fuse(rankings, mode, **kw)[:10]
            theirs = store.search_hybrid(vector(q), ANALYZER.analyze(q), 10, None, depth=20, **server)
            assert np.allclose([s for _, s in ours], [h.score for h in theirs], atol=1e-5), (q, mode)
            assert {c for c, _ in ours} == {h.child_id for h in theirs} or _tied_at_cut(ours), (q, mode)


def _tied_at_cut(ranking) -> bool:
    return len(ranking) == 10 and abs(ranking[-1][1] - ranking[-2][1]) < 1e-9


def test_bm25_rows_of_no_recorded_language_share_the_whole_base_statistics(tmp_path, monkeypatch):
    """Rows written before rows had a language (``lang`` empty) are not a language of their own:
    beside Chinese rows they leave one set of statistics, the scores of a store that shares them."""
    from ragsift.store import segments

    monkeypatch.setattr(segments, "LANGUAGE_MIN_ROWS", 2)
    both, shared = new_store({}, tmp_path), new_store({}, tmp_path)
    for store in (both, shared):
        with store.begin() as txn:
            txn.put_document(*make_doc("tea", DOCS["tea"][0]))
            for n in ("solar", "garden"):
                d, parents, children = make_doc(n, DOCS[n][0])
                txn.put_document(d, parents, [IndexedChild(c.child, c.terms, c.vector, lang="") for c in children])
    shared.bm25_per_language = False
    assert not both.bm25_stats().per_language
    for q in QUERIES:
        terms = ANALYZER.analyze(q)
        assert [(h.child_id, h.score) for h in both.search_bm25(terms, 20, None)] == \
            [(h.child_id, h.score) for h in shared.search_bm25(terms, 20, None)], q


def test_lancedb_caches_are_bounded_in_a_long_running_process(tmp_path, monkeypatch):
    """Every table version a process opens adds to LanceDB's caches; the process's one session
    bounds them ($RAGSIFT_LANCE_CACHE_MB each): with 1 MB they stay near 2 MB over 30 commits
    read by another store, while with 1 GB they keep every version's metadata."""
    from ragsift.store import lance_files

    sizes = {}
    for mb in (1, 1024):
        monkeypatch.setenv("RAGSIFT_LANCE_CACHE_MB", str(mb))
        monkeypatch.setattr(lance_files, "_session", None)  # a new process's session
        writer = LanceStore(tmp_path / f"kb{mb}", dim=DIM)
        reader = LanceStore(tmp_path / f"kb{mb}")
        for r in range(30):
            with writer.begin() as txn:
                txn.put_document(*make_doc(f"d{r % 7}", f"# 第{r}版\n\nGreen tea, round {r}. 绿茶第{r}次。"))
            assert reader.refresh()
            assert reader.search_bm25(ANALYZER.analyze("green tea 绿茶"), 5, None)
        sizes[mb] = lance_files._session.size_bytes
    assert sizes[1] <= 3 * 2**20 < 2 * 3 * 2**20 < sizes[1024], sizes


def test_a_lance_cache_size_that_is_not_a_number_is_said_and_the_default_used(monkeypatch, caplog):
    from ragsift.store import lance_files

    monkeypatch.setenv("RAGSIFT_LANCE_CACHE_MB", "sixteen")
    with caplog.at_level("WARNING", logger="ragsift.store.lance_files"):
        assert lance_files.cache_mb() == lance_files.CACHE_MB
    assert "RAGSIFT_LANCE_CACHE_MB='sixteen' is not a whole number" in caplog.text
    monkeypatch.setenv("RAGSIFT_LANCE_CACHE_MB", "64")
    assert lance_files.cache_mb() == 64


READ_SCRIPT = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_store import ANALYZER, make_doc, vector
from ragsift.store.lance import LanceStore

store = LanceStore(sys.argv[1])
out = {"generation": store.generation,
       "documents": sorted((d.doc_id, d.source, d.title, d.children) for d in store.get_documents().values()),
       "titles": sorted(store.document_titles()),
       "bm25": [(h.child_id, round(h.score, 6)) for h in store.search_bm25(ANALYZER.analyze("绿茶 solar"), 5, None)],
       "dense": [(h.child_id, round(h.score, 6)) for h in store.search_dense(vector("绿茶 solar panels"), 5, None)],
       "lancedb_imported": "lancedb" in sys.modules}
if len(sys.argv) > 3:  # then a write in the same process: lancedb imported after the native core
    with store.begin() as txn:
        txn.put_document(*make_doc("garden", "# Garden notes\n\n## Roses\n\n修剪玫瑰 prune roses in winter."))
    store.refresh()
    out["after_write"] = [h.child_id for h in store.search_bm25(ANALYZER.analyze("修剪玫瑰 roses"), 3, None)]
print(json.dumps(out, ensure_ascii=False))
"""


def test_a_reader_reads_the_committed_generation_without_importing_lancedb(tmp_path):
    """A reader opens the tables at the manifest's versions through LanceDB's native core alone
    (``lance_read``): the same documents and the same hits as through the ``lancedb`` package
    ($RAGSIFT_LANCE_NATIVE=0), uncommitted rows unseen; a write in the same process then imports
    ``lancedb``, which shares the loaded native module."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    store = LanceStore(tmp_path / "kb", dim=DIM)
    with store.begin() as txn:
        for name in ("solar", "tea", "speaker"):
            txn.put_document(*make_doc(name, DOCS[name][0]))
    pending = store.begin()  # written, not committed: no reader may see it
    pending.put_document(*make_doc("garden", DOCS["garden"][0]))
    pending._flush()
    script = tmp_path / "read.py"
    script.write_text(READ_SCRIPT, encoding="utf-8")
    here = str(Path(__file__).parent)

    def read(*extra: str, native: bool = True) -> dict:
        env = {**os.environ, "RAGSIFT_LANCE_NATIVE": "1" if native else "0"}
        p = subprocess.run([sys.executable, str(script), str(tmp_path / "kb"), here, *extra], env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        return json.loads(p.stdout)

    native, package = read(), read(native=False)
    assert native.pop("lancedb_imported") is False and package.pop("lancedb_imported") is True
    assert native == package
    assert native["generation"] == 1 and [d[0] for d in native["documents"]] == ["solar", "speaker", "tea"]
    assert native["bm25"] and native["dense"]
    pending.abort()
    after = read("write")
    assert after["generation"] == 1 and after["after_write"] and after["after_write"][0].startswith("garden")
