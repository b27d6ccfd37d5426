"""End-to-end on the real embedding model and the real LanceDB store, Chinese and English."""
import dataclasses
import json
import subprocess
import sys
import threading
import time

import pytest
from conftest import DATA, write_files

from ragsift.demo import expected_rank, sample_dir
from ragsift.errors import ConfigError, FilterError, QueryError, StoreError
from ragsift.ingest.loaders import load_file
from ragsift.ingest.splitter import SplitSettings, split_document
from ragsift.kb import KnowledgeBase
from ragsift.types import Hit


# ------------------------------------------------------------------ the sample knowledge base
def test_every_sample_question_gets_its_section(sample_kb, questions):
    ranks = {q["id"]: expected_rank(sample_kb.query(q["question"]), q) for q in questions}
    assert all(r is not None for r in ranks.values()), ranks
    assert sum(r == 1 for r in ranks.values()) >= 13, ranks


@pytest.mark.parametrize("qid,source,word", [
    ("q01", "ml_textbook_zh.md", "学习率"),
    ("q02", "smarthub_manual_en.md", "paper clip"),
])
def test_words_only_in_a_child_return_the_whole_parent(sample_kb, questions, qid, source, word):
    q = next(q for q in questions if q["id"] == qid)
    top = sample_kb.query(q["question"]).passages[0]
    (doc,) = load_file(sample_dir() / "kb" / source, source).documents
    parents, children = split_document(doc, SplitSettings())
    parent = next(p for p in parents if p.parent_id == top.parent_id)
    assert top.text == parent.text and top.heading_path == parent.heading_path
    assert top.heading_path[-1] == q["expected_heading"]
    # the question's key word sits in one child, the passage is the whole section around it
    siblings = [c for c in children if c.parent_id == parent.parent_id]
    holding = [c for c in siblings if word in c.text]
    assert len(siblings) >= 2 and holding and len(top.text) > len(holding[0].text)
    assert any(word not in c.text for c in siblings)
    assert any(s.start <= top.text.index(word) < s.end for s in top.matched)


def test_heading_path_in_chinese(sample_kb):
    top = sample_kb.query("线性回归的损失函数是什么？").passages[0]
    assert top.heading == "第3章 机器学习 > 3.2 监督学习 > 3.2.1 线性回归"


def test_passages_are_unique_parents_within_budget(sample_kb):
    res = sample_kb.query("How do I pair a device?", max_passages=5, token_budget=900)
    ids = [p.parent_id for p in res.passages]
    assert len(ids) == len(set(ids)) and 1 <= len(ids) <= 5
    assert sum(p.tokens for p in res.passages) <= 900
    assert res.trace.packing["used_tokens"] == sum(p.tokens for p in res.passages)
    assert [p.rank for p in res.passages] == list(range(1, len(ids) + 1))
    scores = [p.score for p in res.passages]
    assert scores == sorted(scores, reverse=True)


def test_best_parent_larger_than_budget_is_cut_around_the_match(sample_kb):
    res = sample_kb.query("基尼指数是怎么计算的？", token_budget=40, channels=["bm25"])
    (p,) = res.passages
    assert p.truncated and p.tokens == 40
    best = res.trace.channels[0].hits[0]
    assert best.parent_id == p.parent_id
    full = sample_kb.store.get_parents([p.parent_id])[p.parent_id].parent.text
    offset = full.index(p.text)
    (span,) = [s for s in p.matched if s.child_id == best.child_id]
    # the window shows the beginning of the best child, with a little context before it
    assert offset <= best.start < offset + len(p.text) and offset < best.end
    assert span.start == best.start - offset and 0 <= span.start < span.end <= len(p.text)
    assert full[best.start:best.start + 10] in p.text


def test_trace_has_channels_raw_scores_fusion_and_timings(sample_kb):
    res = sample_kb.query("音箱顶部光环黄色慢闪是什么意思？")
    t = res.trace
    assert t.language == "zh"
    fusion = dict(t.fusion)
    cross = fusion.pop("cross_language", None)  # BM25 hits on English chunks of the sample, if any
    adapted = fusion.pop("adapted_weights")  # the default: adaptive, from dense 0.5 and BM25 0.5
    assert fusion == {"mode": "adaptive", "channels": ["dense", "bm25"], "weights": {"dense": 0.5, "bm25": 0.5},
                      "normalization": "minmax", "adaptive_power": 1.0}
    assert set(adapted) == {"dense", "bm25"} and sum(adapted.values()) == pytest.approx(1.0)
    assert cross is None or (cross["question"], cross["weight"]) == ("zh", 0.1)
    chans = {c.name: c for c in t.channels}
    assert set(chans) == {"dense", "bm25"}
    assert all(c.error is None and c.hits for c in chans.values())
    assert all(-1.0 <= h.score <= 1.0 for h in chans["dense"].hits)
    assert all(h.score > 0 for h in chans["bm25"].hits)  # Chinese BM25 is not silently zero
    assert [h.rank for h in chans["bm25"].hits] == list(range(1, len(chans["bm25"].hits) + 1))
    assert {"channels", "fusion", "expand_and_pack", "total"} <= set(t.timings_ms)
    d = res.to_dict()
    assert json.loads(json.dumps(d, ensure_ascii=False))["trace"]["channels"][0]["hits"]
    # the hits written out as dataclasses.asdict writes them (every field, in order)
    hits = [h for c in t.channels for h in c.hits]
    assert [h.to_dict() for h in hits] == [dataclasses.asdict(h) for h in hits]
    assert [list(h.to_dict()) for h in hits[:1]] == [[f.name for f in dataclasses.fields(Hit)]]


@pytest.mark.parametrize("question,unit", [("恢复出厂设置要按哪些键？", "parent"), ("How do I factory reset the hub?", "child"),
                                           ("How do I factory reset the hub?", "document")])
def test_the_trace_names_its_units_by_source_and_heading(sample_kb, question, unit):
    res = sample_kb.query(question, unit=unit)
    t, top = res.trace, res.passages[0]
    shown = {h.parent_id for c in t.channels for h in c.hits} | {key for key, _ in t.fused}
    assert shown == set(t.units)  # every id the trace shows has a name
    name = t.units[t.fused[0][0]]  # no reranker: the first fused unit is the first passage
    assert name["source"] == top.source
    assert name["heading_path"] == ([] if unit == "document" else list(top.heading_path))
    sections = sample_kb.sections(h.parent_id for c in t.channels for h in c.hits)
    assert all(t.units[pid]["heading_path"] == list(sp.parent.heading_path) for pid, sp in sections.items())
    assert res.to_dict()["trace"]["units"] == t.units


@pytest.mark.parametrize("question", ["恢复出厂设置要按哪些键？", "How do I factory reset the hub?"])
def test_a_query_without_trace_skips_naming_units_and_returns_the_same_passages(sample_kb, question, monkeypatch):
    full = sample_kb.query(question, strategy="settings")  # one round (the router reads sections of its own)
    reads: list[int] = []
    get_parents = type(sample_kb.store).get_parents

    def counted(self, ids):  # counts section reads (a spy, the real method answers)
        ids = list(ids)
        reads.append(len(ids))
        return get_parents(self, ids)
    monkeypatch.setattr(type(sample_kb.store), "get_parents", counted)
    bare = sample_kb.query(question, strategy="settings", trace=False)
    assert bare.trace.units == {} and full.trace.units
    assert [p.to_dict() for p in bare.passages] == [p.to_dict() for p in full.passages]
    assert [c.name for c in bare.trace.channels] == [c.name for c in full.trace.channels]
    assert len(reads) == 1  # the passages' sections only, not every section the trace shows
    assert reads[0] < len(full.trace.units)


def test_weighted_fusion_records_normalization(sample_kb):
    res = sample_kb.query("factory reset", fusion="weighted", weights={"dense": 0.3, "bm25": 0.7},
                          normalization="zscore")
    assert res.trace.fusion == {"mode": "weighted", "channels": ["dense", "bm25"],
                                "weights": {"dense": 0.3, "bm25": 0.7}, "normalization": "zscore"}
    assert res.passages[0].heading_path[-1] == "Factory reset"


@pytest.mark.parametrize("flt,sources", [
    ({"item_name": "星云智能音箱 S2"}, {"speaker_manual_zh.md"}),
    ({"item_name": {"in": ["Aurora SmartHub X1", "星云智能音箱 S2"]}},
     {"speaker_manual_zh.md", "smarthub_manual_en.md"}),
    ({"source": "faq_zh.txt"}, {"faq_zh.txt"}),
    ({"and": [{"category": "manual"}, {"not": {"source": "smarthub_manual_en.md"}}]}, {"speaker_manual_zh.md"}),
])
def test_metadata_filters(sample_kb, flt, sources):
    res = sample_kb.query("How do I reset it? 如何恢复出厂设置", filter=flt, max_passages=10, token_budget=20000)
    assert res.passages and {p.source for p in res.passages} <= sources
    assert res.trace.filter == flt


@pytest.mark.parametrize("lang,question,sources", [
    ("zh", "图书逾期怎么办？ How do I reset it?", {"speaker_manual_zh.md", "faq_zh.txt", "ml_textbook_zh.md"}),
    ("en", "图书逾期怎么办？ How do I reset it?", {"smarthub_manual_en.md", "faq_en.html", "ml_textbook_en.md"}),
])
def test_the_detected_language_filters_every_format(sample_kb, lang, question, sources):
    """The README's ``filter={"lang": "zh"}``: every entry has its detected language, so the
    Chinese text and HTML files are kept although no front matter names their language."""
    res = sample_kb.query(question, filter={"lang": lang}, max_passages=20, token_budget=50000)
    got = {p.source for p in res.passages}
    assert got <= sources and len(got) >= 2, got
    assert all(c.error is None for c in res.trace.channels)


def test_filter_injection_is_only_a_value(sample_kb):
    for evil in ["faq_zh.txt' OR '1'='1", "x') OR (1=1", "faq_zh.txt\" OR 1=1 --"]:
        res = sample_kb.query("图书逾期", filter={"source": evil})
        assert res.passages == ()
        assert all(c.error is None for c in res.trace.channels)


def test_unknown_filter_field_is_a_clear_error(sample_kb):
    with pytest.raises(FilterError, match="unknown filter field 'colour'.*known fields: .*item_name"):
        sample_kb.query("reset", filter={"colour": "red"})


@pytest.mark.parametrize("q", ["", "   \n", "x" * 5000])
def test_bad_queries_are_clear_errors(sample_kb, q):
    with pytest.raises(QueryError):
        sample_kb.query(q)


def test_index_settings_cannot_change(sample_kb):
    with pytest.raises(ConfigError, match="built with embedder='e5-small'"):
        KnowledgeBase.open(sample_kb.path, embedder="minilm")
    with pytest.raises(ConfigError, match="cannot change per query"):
        sample_kb.query("reset", child_tokens=50)


# ------------------------------------------------------------------ lifecycle on fresh knowledge bases
MANUAL_V1 = """---
item_name: Widget
---
# Widget manual

## Charging

Plug the widget into a USB-C charger. A full charge takes ninety minutes.

## Cleaning

Wipe the case with a dry cloth. Never use solvents such as acetone on the lens.
"""

MANUAL_V2 = """---
item_name: Widget
---
# Widget manual

## Charging

Plug the widget into a USB-C charger. A full charge now takes forty minutes.
"""

ZH_DOC = "# 茶叶指南\n\n## 绿茶\n\n绿茶应在零至五摄氏度冷藏保存。\n\n## 红茶\n\n红茶常温密封即可，可保存两年。\n"


@pytest.fixture()
def small_kb(tmp_path, backend):
    docs = write_files(tmp_path / "docs", {"manual.md": MANUAL_V1, "tea.md": ZH_DOC})
    kb = KnowledgeBase.open(tmp_path / "kb", **backend)
    report = kb.ingest(docs)
    assert sorted(report.added) and report.generation == 1
    return kb, docs


def _all_parent_texts(kb):
    return [p.text for _, parents, _ in kb.store.export() for p in parents]


def test_stats_from_the_manifest_equal_the_stats_of_the_open_store(small_kb, backend):
    """``KnowledgeBase.committed_stats`` answers ``ragsift stats`` from the counts an embedded
    store's manifest records at each commit: the same as ``stats()`` after every commit."""
    kb, docs = small_kb
    if backend:  # Milvus: its counts live on the server; stats opens the store
        assert KnowledgeBase.committed_stats(kb.path) is None
        return
    assert KnowledgeBase.committed_stats(kb.path) == kb.stats()
    kb.add_documents([{"id": "extra-zh", "text": "红茶常温密封即可，可以保存两年。"},
                      {"id": "extra-en", "text": "Black tea keeps two years at room temperature."}])
    kb.delete(["extra-en"])
    st = KnowledgeBase.committed_stats(kb.path)
    assert st == kb.stats() and st["documents"] == 3 and st["generation"] == 3
    # a manifest committed before counts were recorded: None (the store is opened instead)
    manifest = kb.path / "manifest.json"
    m = json.loads(manifest.read_text(encoding="utf-8"))
    del m["counts"]
    manifest.write_text(json.dumps(m), encoding="utf-8")
    assert KnowledgeBase.committed_stats(kb.path) is None
    assert KnowledgeBase.committed_stats(kb.path.parent / "nothing-here") is None


def test_reingesting_unchanged_files_does_nothing(small_kb):
    kb, docs = small_kb
    report = kb.ingest(docs)
    assert len(report.unchanged) == 2 and not report.added and not report.updated
    assert report.generation == 1 and kb.store.generation == 1


def test_changed_file_replaces_its_parents_and_children(small_kb):
    kb, docs = small_kb
    before = kb.stats()
    (docs / "manual.md").write_text(MANUAL_V2, encoding="utf-8")
    report = kb.ingest(docs)
    assert len(report.updated) == 1 and len(report.unchanged) == 1 and report.generation == 2
    texts = " ".join(_all_parent_texts(kb))
    assert "forty minutes" in texts and "ninety minutes" not in texts and "acetone" not in texts
    assert kb.store.check_integrity() == []
    after = kb.stats()
    assert after["parents"] == before["parents"] - 1 and after["documents"] == 2
    top = kb.query("How long does a full charge take?").passages[0]
    assert "forty minutes" in top.text
    assert all("acetone" not in p.text for p in kb.query("acetone solvents lens").passages)


def test_file_with_same_relative_path_is_the_same_document(small_kb):
    kb, docs = small_kb
    report = kb.ingest(docs / "tea.md")
    assert len(report.unchanged) == 1 and not report.added


def test_delete_removes_parents_and_children(small_kb):
    kb, docs = small_kb
    (doc,) = [d for d in kb.documents().values() if d.source == "tea.md"]
    assert kb.delete([doc.doc_id]) == [doc.doc_id]
    st = kb.stats()
    assert st["documents"] == 1 and kb.store.check_integrity() == []
    kids = [ic.child.doc_id for _, _, children in kb.store.export() for ic in children]
    assert kids and doc.doc_id not in kids
    assert all(p.source != "tea.md" for p in kb.query("绿茶怎么保存？").passages)
    with pytest.raises(Exception, match="unknown document id"):
        kb.delete([doc.doc_id])
    assert kb.delete(source="manual.md") and kb.stats()["documents"] == 0


@pytest.mark.slow
def test_knowledge_base_persists_across_processes(small_kb):
    kb, _ = small_kb
    code = ("import json,sys; from ragsift import KnowledgeBase;"
            "kb=KnowledgeBase.open(sys.argv[1], create=False);"
            "r=kb.query('绿茶应该怎样保存？');"
            "print(json.dumps([r.passages[0].heading, kb.stats()['generation']], ensure_ascii=False))")
    out = subprocess.run([sys.executable, "-c", code, str(kb.path)], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == ["茶叶指南 > 绿茶", 1]


def test_bad_files_are_reported_and_the_rest_ingested(tmp_path):
    docs = write_files(tmp_path / "docs", {"good.md": ZH_DOC,
                                          "image.md": (DATA / "image.md").read_bytes(),
                                          "empty.md": b"", "noise.txt": bytes((i * 37 + 11) % 256 or 1 for i in range(3000)),
                                          "data.jsonl": '{"_id": "a", "text": "Solar panels."}\n{broken\n',
                                          "notes.docx": b"PK\x03\x04"})
    kb = KnowledgeBase.open(tmp_path / "kb")
    report = kb.ingest(docs)
    reasons = {s.path: s.reason for s in report.skipped}
    assert set(reasons) == {"image.md", "empty.md", "noise.txt", "data.jsonl:2", "notes.docx"}
    assert "UTF-8" in reasons["noise.txt"] and "binary" in reasons["image.md"]
    assert len(report.added) == 2 and kb.stats()["documents"] == 2


@pytest.mark.parametrize("question,word", [("What does inverter error code E07 mean?", "E07"),
                                           ("绿茶应该在什么温度下冷藏？", "摄氏度")])
def test_pdfs_are_searchable(tmp_path, question, word):
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest([DATA / "sample_en.pdf", DATA / "sample_zh.pdf"])
    top = kb.query(question).passages[0]
    assert word in top.text


def test_jsonl_metadata_types_and_filters(tmp_path, backend):
    rows = [{"_id": f"r{i}", "text": t, "metadata": {"year": y, "lang": lang}}
            for i, (t, y, lang) in enumerate([("Solar panels need cleaning twice a year.", 2019, "en"),
                                              ("太阳能板每年需要清洗两次。", 2023, "zh"),
                                              ("Inverters convert DC to AC.", 2024, "en")])]
    write_files(tmp_path, {"c.jsonl": "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)})
    kb = KnowledgeBase.open(tmp_path / "kb", **backend)
    kb.ingest(tmp_path / "c.jsonl")
    assert kb.store.fields()["year"] == "int"
    res = kb.query("solar panel cleaning", filter={"year": {"gte": 2020}}, max_passages=10)
    assert {p.doc_id for p in res.passages} == {"r1", "r2"}
    res = kb.query("太阳能板", filter={"lang": "zh"})
    assert [p.doc_id for p in res.passages] == ["r1"]
    with pytest.raises(FilterError, match="holds int values"):
        kb.query("solar", filter={"year": "2020"})


def test_one_writer_at_a_time(small_kb, monkeypatch):
    kb, _ = small_kb
    monkeypatch.setattr(kb.store, "lock_timeout_s", 0.3)
    txn = kb.store.begin()
    try:
        t = time.monotonic()
        with pytest.raises(StoreError, match=r"another process is writing .*; waited 0.3 s \(setting lock_timeout_s\)"):
            kb.store.begin()
        assert time.monotonic() - t >= 0.3
    finally:
        txn.abort()
    assert kb.store.generation == 1 and kb.store.check_integrity() == []


def test_a_second_writer_waits_for_the_first(tmp_path, backend):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", lock_timeout_s=30, **backend)
    kb.add_documents([{"id": "a", "text": "第一个写入者提交的文档。"}])
    first = kb.store.begin()
    threading.Timer(1.5, first.abort).start()  # the first writer ends after 1.5 s
    other = KnowledgeBase.open(tmp_path / "kb", create=False, **backend)  # a second writer, own store object
    t = time.monotonic()
    report = other.add_documents([{"id": "b", "text": "The second writer waited for the lock."}])
    assert report.generation == 2 and time.monotonic() - t >= 1.0
    assert {p.doc_id for p in kb.query("writer waited lock 写入者", unit="document", max_passages=5).passages} == {"a", "b"}


def test_opening_a_missing_knowledge_base_without_create(tmp_path):
    with pytest.raises(StoreError, match="no knowledge base"):
        KnowledgeBase.open(tmp_path / "nothing", create=False)


# ------------------------------------------------------------------ a failing channel (fault injection)
def test_a_failing_or_slow_channel_leaves_an_error_not_a_failed_query(small_kb, monkeypatch):
    import time as _time

    from ragsift.retrieve import runner

    kb, _ = small_kb

    def broken_bm25(*a, **k):  # fault injector: the BM25 channel crashes
        raise RuntimeError("index file unreadable")

    monkeypatch.setattr(kb.store, "search_bm25", broken_bm25)
    res = kb.query("How long does a full charge take?")
    chans = {c.name: c for c in res.trace.channels}
    assert chans["bm25"].error == "RuntimeError: index file unreadable" and chans["bm25"].hits == ()
    assert chans["dense"].error is None and res.passages
    assert res.trace.fusion["channels"] == ["dense"]

    def slow_bm25(*a, **k):  # fault injector: the BM25 channel hangs and ignores its deadline
        _time.sleep(3)
        return []

    monkeypatch.setattr(kb.store, "search_bm25", slow_bm25)
    t = _time.perf_counter()
    res = kb.query("How long does a full charge take?", channel_timeout_s=0.5)
    # the timeout, then the grace period for cancelled work, then the answer
    assert _time.perf_counter() - t < 0.5 + runner.CANCEL_GRACE_S + 0.8
    chans = {c.name: c for c in res.trace.channels}
    assert chans["bm25"].error.startswith("timed out after 0.5s; still running") and res.passages
    _time.sleep(3)
    assert runner.active_channels() == 0


def test_large_stores_switch_to_an_hnsw_index_with_the_same_answers(tmp_path, monkeypatch):
    import ragsift.store.lance as lance

    docs = write_files(tmp_path / "docs", {"manual.md": MANUAL_V1, "tea.md": ZH_DOC})
    flat = KnowledgeBase.open(tmp_path / "flat")
    flat.ingest(docs)
    from ragsift.store.memindex import AnnIndex, FlatIndex

    assert isinstance(flat.store.dense_index(), FlatIndex)  # the index is built on first use
    monkeypatch.setattr(lance, "ANN_MIN_CHILDREN", 1)
    ann = KnowledgeBase.open(tmp_path / "ann")
    ann.ingest(docs)
    assert isinstance(ann.store.dense_index(), AnnIndex)
    for q in ("How long does a full charge take?", "绿茶应该怎样保存？"):
        a = ann.query(q, channels=["dense"])
        f = flat.query(q, channels=["dense"])
        assert [p.parent_id for p in a.passages] == [p.parent_id for p in f.passages]
        assert a.trace.channels[0].hits[0].score == pytest.approx(f.trace.channels[0].hits[0].score, abs=1e-5)


# ------------------------------------------------------------------ returned unit: parent, child, document
@pytest.mark.parametrize("question", ["How many seconds do I need to hold the reset button to wipe the hub?",
                                      "音箱顶部光环黄色慢闪是什么意思？"])
def test_unit_child_returns_flat_chunks(sample_kb, question):
    res = sample_kb.query(question, unit="child", max_passages=5, token_budget=5000)
    assert res.trace.packing["unit"] == "child" and len(res.passages) == 5
    best = {h.child_id: h for c in res.trace.channels for h in c.hits}
    parents = sample_kb.store.get_parents(p.parent_id for p in res.passages)
    for p in res.passages:
        (span,) = p.matched
        h = best[span.child_id]
        assert p.text == parents[p.parent_id].parent.text[h.start:h.end]  # exactly the child
        assert p.tokens <= sample_kb.settings.index.child_tokens
    assert len({p.matched[0].child_id for p in res.passages}) == 5
    parent_res = sample_kb.query(question)
    assert res.passages[0].parent_id == parent_res.passages[0].parent_id
    assert len(parent_res.passages[0].text) > len(res.passages[0].text)


@pytest.mark.parametrize("question,source", [("What does inverter error code E07 mean?", "sample_en.pdf"),
                                             ("绿茶应该在什么温度下冷藏？", "sample_zh.pdf")])
def test_unit_document_returns_whole_documents(tmp_path, question, source):
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest([DATA / "sample_en.pdf", DATA / "sample_zh.pdf"])
    res = kb.query(question, unit="document", max_passages=2, token_budget=10_000)
    top = res.passages[0]
    assert top.source == source and [p.doc_id for p in res.passages] == [top.doc_id, res.passages[1].doc_id]
    parents = kb.store.get_document_parents([top.doc_id])[top.doc_id]
    assert len(parents) > 1 and top.text == "\n\n".join(sp.parent.text for sp in parents)
    for s in top.matched:  # spans point into the whole document's text
        assert 0 <= s.start < s.end <= len(top.text)
    cut = kb.query(question, unit="document", max_passages=1, token_budget=30)
    assert cut.passages[0].truncated and cut.passages[0].tokens <= 30


def test_unknown_unit_is_a_clear_error(sample_kb):
    with pytest.raises(ConfigError, match="unknown unit 'page'; valid: 'parent', 'child', 'document'"):
        sample_kb.query("reset", unit="page")


@pytest.mark.parametrize("question,flt", [("How do I pair a Zigbee device?", None),
                                          ("如何恢复出厂设置？", {"item_name": "星云智能音箱 S2"}),
                                          ("reset", {"source": {"in": ["faq_en.html", "smarthub_manual_en.md"]}})])
def test_in_memory_exact_search_equals_the_store_scan(sample_kb, question, flt):
    from ragsift.store.filters import parse_filter

    store = sample_kb.store
    vec = sample_kb.embedder().embed_queries([question])[0]
    where = parse_filter(flt, store.fields())
    flat = store.search_dense(vec, 20, where)
    # LanceDB's own brute-force scan of the table is the independent reference
    q = (store._tables["children"].search(vec, vector_column_name="vector").distance_type("cosine").limit(20)
         .select(["child_id", "_distance"]))
    w = store._with_kinds(where, ("chunk",))
    scan = (q.where(w, prefilter=True) if w else q).to_arrow().to_pylist()
    assert [h.child_id for h in flat] == [r["child_id"] for r in scan]
    assert [h.score for h in flat] == pytest.approx([1 - r["_distance"] for r in scan], abs=1e-5)
    assert flat[0].start < flat[0].end


@pytest.mark.parametrize("question,source", [("恢复出厂设置要按哪些键？", "speaker_manual_zh.md"),
                                             ("How do I reset the hub?", "smarthub_manual_en.md")])
def test_results_as_prompt_context_with_citations(sample_kb, question, source):
    from ragsift.text.tokens import count_tokens

    res = sample_kb.query(question, max_passages=3)
    context = res.to_context()
    blocks = context.split("\n\n[")
    assert context.startswith(f"[1] {source} › ") and len(blocks) == 3
    for p in res.passages:
        assert f"[{p.rank}] {p.source} › {' > '.join(p.heading_path)}\n{p.text}" in context
    small = res.to_context(token_budget=count_tokens(context.split("\n\n[2]")[0]) + 5)
    assert small.startswith("[1] ") and "\n\n[2]" not in small
    tiny = res.to_context(token_budget=20)
    assert count_tokens(tiny) <= 22 and tiny.endswith("…")
    assert res.to_context(citations=False).startswith(res.passages[0].text)
    d = res.to_dict(trace=False)
    assert "trace" not in d and d["trace_id"] == res.trace.trace_id == res.to_dict()["trace"]["trace_id"]


def test_list_documents_searches_sorts_and_pages_chinese_and_english_titles(tmp_path):
    from ragsift.errors import InputError

    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest(write_files(tmp_path / "a", {
        "hub_guide.md": "# Hub User Guide\n\nPress the button.\n\n## Reset\n\nHold it ten seconds.\n",
        "星云手册.md": "# 星云音箱手册\n\n按下按键。\n",
        "notes.md": "# Zebra notes\n\nStriped animals.\n"}))
    kb.ingest(write_files(tmp_path / "b", {"tea.md": "# 绿茶指南\n\n密封冷藏保存。\n"}))
    titles = lambda page: [d.title for d in page]  # noqa: E731

    assert kb.list_documents(q="GUIDE")[0] == 1 and titles(kb.list_documents(q="guide")[1]) == ["Hub User Guide"]
    assert titles(kb.list_documents(q="ｇｕｉｄｅ")[1]) == ["Hub User Guide"]  # full width is the same word
    assert titles(kb.list_documents(q="手册")[1]) == ["星云音箱手册"]
    assert titles(kb.list_documents(q="音箱 手册")[1]) == ["星云音箱手册"]  # every word, in any order
    assert titles(kb.list_documents(q="手册.md")[1]) == ["星云音箱手册"]  # by source too
    assert kb.list_documents(q="guide 手册") == (0, [])
    assert titles(kb.list_documents(sort="title")[1]) == ["Hub User Guide", "Zebra notes", "星云音箱手册", "绿茶指南"]
    assert titles(kb.list_documents(sort="title", order="desc")[1])[0] == "绿茶指南"
    assert [d.source for d in kb.list_documents()[1]] == ["hub_guide.md", "notes.md", "tea.md", "星云手册.md"]
    assert titles(kb.list_documents(sort="parents", order="desc")[1])[0] == "Hub User Guide"  # two sections
    newest = kb.list_documents(sort="generation", order="desc")[1]
    assert newest[0].title == "绿茶指南" and newest[0].generation > newest[1].generation
    total, page = kb.list_documents(1, 2, sort="title")
    assert total == 4 and titles(page) == ["Zebra notes", "星云音箱手册"]
    total, page = kb.list_documents(1, 2, q="md")
    assert total == 4 and len(page) == 2
    with pytest.raises(InputError, match="sort must be one of"):
        kb.list_documents(sort="size")
    with pytest.raises(InputError, match="order must be asc or desc"):
        kb.list_documents(order="up")
    kb.close()
