"""The small-to-big family on small real documents, in Chinese and English: sentence windows,
auto-merging, key sentences and summaries as the small index, RAPTOR summary trees."""
from __future__ import annotations

import pytest
from conftest import write_files

from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.units import auto_merge
from ragsift.store.base import StoredHit
from ragsift.text.sentences import sentence_spans

EN = """# Aurora SmartHub X1 manual

## Power

The hub takes 12 V from the supplied adapter. The power LED glows white when the hub is on.
An amber LED means the adapter delivers too little current. Replace the adapter if it stays amber.
Never use a USB charger instead of the adapter.

## Reset

Hold the reset button for ten seconds to restore factory settings. All paired devices are removed.
The hub restarts and the LED blinks blue while it waits for setup. Pair your devices again afterwards.

## Zigbee

The hub speaks Zigbee 3.0 on channel 15 by default. Up to 128 devices can be paired.
Move the hub away from Wi-Fi routers if devices drop out. A mesh of mains-powered devices extends the range.
"""

ZH = """# 星云智能音箱 S2 手册

## 电源

音箱使用 20V 电源适配器供电。指示灯常亮白色表示已开机。指示灯变为橙色表示电源功率不足。
如果橙色持续出现，请更换原装适配器。不要使用手机充电器为音箱供电。

## 恢复出厂设置

长按静音键十秒即可恢复出厂设置。恢复后所有配对记录都会被清除。音箱重启后指示灯闪烁蓝色，等待重新配网。
请在手机应用中重新添加音箱。

## 蓝牙

音箱支持蓝牙 5.2，连接距离约十米。同时最多连接两台手机。墙体和微波炉会缩短连接距离。
"""


@pytest.fixture(scope="module")
def s2b_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("s2b")
    docs = write_files(root / "docs", {"hub_en.md": EN, "speaker_zh.md": ZH})
    # small children, so that sections have several chunks and the tree has leaves to cluster
    kb = KnowledgeBase.open(root / "kb", child_tokens=24, child_overlap_tokens=0,
                            small_index=("chunks", "sentences", "keysentences", "raptor", "parents"))
    report = kb.ingest(docs)
    assert report.summaries > 0 and kb.store.check_integrity() == []
    return kb


QUESTIONS = [("What does an amber LED mean?", "amber LED means", "hub_en.md"),
             ("指示灯变成橙色是什么意思？", "橙色表示电源功率不足", "speaker_zh.md")]


@pytest.mark.parametrize("question,needle,source", QUESTIONS)
@pytest.mark.parametrize("window", [0, 1, 2])
def test_sentence_window_holds_the_sentence_and_its_neighbours(s2b_kb, question, needle, source, window):
    res = s2b_kb.query(question, index_kinds=["sentence"], unit="window", window_sentences=window, max_passages=1)
    (p,) = res.passages
    assert p.unit == "window" and p.source == source and needle in p.text
    parent = s2b_kb.store.get_parents([p.parent_id])[p.parent_id].parent
    sents = sentence_spans(parent.text)
    offset = parent.text.index(p.text)
    # the sentences found (windows of one section that overlap are merged into one passage)
    found = {i for m in p.matched for i, (s, e) in enumerate(sents) if s < m.end + offset and e > m.start + offset}
    assert any(needle in parent.text[sents[i][0]:sents[i][1]] for i in found)
    lo, hi = max(0, min(found) - window), min(len(sents) - 1, max(found) + window)
    assert p.text == parent.text[sents[lo][0]:sents[hi][1]]  # exactly the windows, nothing more
    if window == 0:
        assert len(found) == 1 and p.text.strip() == parent.text[sents[min(found)][0]:sents[min(found)][1]].strip()


def _hits(parent_chunks: dict[str, int], doc: str = "d"):
    """Fused entries: the first n chunks of each parent, and the hit table auto_merge reads."""
    fused, table = [], {}
    for pid, n in parent_chunks.items():
        for i in range(n):
            cid = f"{pid}c{i}"
            fused.append((cid, 1.0 / (len(fused) + 1)))
            table[cid] = (StoredHit(cid, pid, doc, 1.0, 0, 1), ("dense",))
    return fused, table


@pytest.mark.parametrize("threshold,merged", [(0.5, True), (0.49, True), (0.51, False), (1.0, False)])
def test_a_section_merges_at_the_threshold_and_not_below(threshold, merged):
    fused, table = _hits({"d#p0": 2})  # 2 of its 4 chunks found: a share of 0.5
    units, trace = auto_merge(fused, table, {"d#p0": 4}, {"d": 3}, threshold)
    assert (units == [("parent", "d#p0", 1.0, ("d#p0c0", "d#p0c1"))]) is merged
    assert trace["share"] == {"d#p0": "2/4"}
    if not merged:
        assert [u[0] for u in units] == ["child", "child"]


def test_a_section_found_whole_merges_at_any_threshold():
    fused, table = _hits({"d#p0": 1, "d#p1": 1})  # one entry of each: d#p0's spans all of it (a whole-section entry)
    units, trace = auto_merge(fused, table, {"d#p0": 4, "d#p1": 4}, {"d": 3}, 1.0, whole={"d#p0"})
    assert [u[:2] for u in units] == [("parent", "d#p0"), ("child", "d#p1c0")]
    assert trace["share"] == {"d#p0": "whole", "d#p1": "1/4"} and trace["merged_sections"] == ["d#p0"]


@pytest.mark.parametrize("threshold,level", [(0.66, "document"), (0.67, "parent")])
def test_merging_repeats_up_to_the_document(threshold, level):
    fused, table = _hits({"d#p0": 3, "d#p1": 3, "d#p2": 1})  # two of three sections whole, one in part
    units, trace = auto_merge(fused, table, {"d#p0": 3, "d#p1": 3, "d#p2": 4}, {"d": 3}, threshold)
    assert units[0][0] == level
    if level == "document":
        assert units == [("document", "d", 1.0, tuple(cid for cid, _ in fused))] and trace["merged_documents"] == ["d"]
    else:  # 2/3 sections merged < 0.67: the sections stay, the lone chunk too
        assert [u[:2] for u in units] == [("parent", "d#p0"), ("parent", "d#p1"), ("child", "d#p2c0")]


@pytest.mark.parametrize("question,needle,source", QUESTIONS)
def test_auto_merging_on_a_real_knowledge_base(s2b_kb, question, needle, source):
    strict = s2b_kb.query(question, unit="auto", merge_threshold=1.0, max_passages=3)
    loose = s2b_kb.query(question, unit="auto", merge_threshold=0.01, max_passages=3)
    chunks = s2b_kb.store.count_children([strict.passages[0].parent_id])
    assert strict.passages[0].source == source and needle in strict.passages[0].text
    merged = set(strict.trace.packing["merging"]["merged_sections"])
    for p in strict.passages:  # with threshold 1 only sections found whole are merged
        assert (p.unit == "parent") == (p.parent_id in merged) or p.unit == "document"
    assert all(n > 0 for n in chunks.values())
    assert loose.passages[0].unit == "document" and needle in loose.passages[0].text
    assert loose.trace.packing["merging"]["merged_documents"]


@pytest.mark.parametrize("question,needle,source", QUESTIONS)
def test_a_key_sentence_hit_returns_its_big_chunk(s2b_kb, question, needle, source):
    res = s2b_kb.query(question, index_kinds=["keys"], channels=["bm25"])
    top = res.passages[0]
    hit = res.trace.channels[0].hits[0]
    assert hit.child_id.endswith("k")  # the entry found is the key-sentence entry
    parent = s2b_kb.store.get_parents([top.parent_id])[top.parent_id].parent
    assert top.unit == "parent" and top.text == parent.text and needle in top.text and top.source == source


@pytest.mark.parametrize("question,needle,source", QUESTIONS)
def test_whole_sections_are_entries_beside_their_chunks(s2b_kb, question, needle, source):
    # alone: the section's own vector finds it, and the entry spans the whole section
    res = s2b_kb.query(question, index_kinds=["parent"], channels=["dense"])
    hit = res.trace.channels[0].hits[0]
    parent = s2b_kb.store.get_parents([hit.parent_id])[hit.parent_id].parent
    assert hit.child_id == hit.parent_id + "P" and (hit.start, hit.end) == (0, len(parent.text))
    assert needle in parent.text and res.passages[0].source == source
    # together with the chunks: both kinds are searched (the best entry of a section stands for it),
    # one passage per section
    vec = s2b_kb.embedder().embed_queries([question])[0]
    ids = [h.child_id for h in s2b_kb.store.search_dense(vec, 100, None, ("chunk", "parent"))]
    assert any(i.endswith("P") for i in ids) and any(not i.endswith("P") for i in ids)
    both = s2b_kb.query(question, index_kinds=["chunk", "parent"])
    assert needle in both.passages[0].text
    assert len({p.parent_id for p in both.passages}) == len(both.passages)


@pytest.mark.parametrize("question,source", [("What is the hub manual about: power, reset and Zigbee?", "hub_en.md"),
                                             ("音箱手册讲了电源、恢复出厂设置和蓝牙", "speaker_zh.md")])
def test_raptor_summaries_are_found_with_their_provenance(s2b_kb, question, source):
    res = s2b_kb.query(question, index_kinds=["raptor"], max_passages=2)
    top = res.passages[0]
    assert top.source == source and "summary, level" in top.heading and "of sections" in top.heading
    # the summary is built from the document's own sentences (extractive without a model)
    doc_text = EN if source == "hub_en.md" else ZH
    first = sentence_spans(top.text)[0]
    assert top.text[first[0]:first[1]].strip() in doc_text
    # whole documents never include summaries
    whole = s2b_kb.query(question, unit="document", max_passages=2).passages
    assert all("summary, level" not in p.text for p in whole)


def test_summaries_stay_with_their_document(s2b_kb, tmp_path):
    before = s2b_kb.stats()
    docs = write_files(tmp_path / "more", {"note.md": "# Note\n\n" + "A short note about nothing in particular. " * 3})
    s2b_kb.ingest(docs)
    (doc,) = [d for d in s2b_kb.documents().values() if d.source == "note.md"]
    s2b_kb.delete([doc.doc_id])
    after = s2b_kb.stats()
    assert (after["parents"], after["children"]) == (before["parents"], before["children"])
    assert s2b_kb.store.check_integrity() == []


def test_strategy_settings_are_checked():
    with pytest.raises(ConfigError, match="needs a language model"):
        Settings(small_index=("chunks", "summaries"))
    with pytest.raises(ConfigError, match="small_index must include 'chunk'"):
        Settings(small_index=("sentences",))
    with pytest.raises(ConfigError, match="index_kinds"):
        Settings(index_kinds=("paragraph",))
    with pytest.raises(ConfigError, match="merge_threshold"):
        Settings(merge_threshold=0.0)


def test_summaries_fall_back_to_key_sentences_when_the_model_fails(tmp_path):
    from fault_llm_server import FaultInjectingLLMServer

    docs = write_files(tmp_path / "docs", {"hub_en.md": EN, "speaker_zh.md": ZH})
    with FaultInjectingLLMServer("500") as srv:
        kb = KnowledgeBase.open(tmp_path / "kb", small_index=("chunks", "summaries"), llm_model="openai:stub",
                                llm_base_url=srv.url, llm_max_retries=0)
        report = kb.ingest(docs)
    sections = kb.stats()["parents"]
    assert report.summaries == sections == report.summary_fallbacks  # nothing lost: every section indexed
    res = kb.query("指示灯变成橙色是什么意思？", index_kinds=["summary"], channels=["bm25"])
    assert res.trace.channels[0].hits[0].child_id.endswith("m") and "橙色" in res.passages[0].text


@pytest.mark.slow  # Milvus (a Milvus Lite server)
@pytest.mark.parametrize("backend", ["milvus"], indirect=True)
def test_entry_kinds_are_the_same_on_milvus(s2b_kb, backend, tmp_path):
    copy = s2b_kb.copy_to(tmp_path / "copy", **backend)
    for kw in ({"index_kinds": ["sentence"], "unit": "window", "window_sentences": 1},
               {"index_kinds": ["keys"]}, {"index_kinds": ["raptor"]}, {"unit": "auto", "merge_threshold": 0.5},
               {"index_kinds": ["chunk", "parent"]}):
        for q, _, _ in QUESTIONS:
            a, b = s2b_kb.query(q, **kw), copy.query(q, **kw)
            assert [(p.unit, p.text) for p in a.passages] == [(p.unit, p.text) for p in b.passages], kw


def test_whole_entries_share_the_vector_of_a_section_that_is_one_chunk():
    from ragsift.ingest.small_index import SmallIndex
    from ragsift.ingest.splitter import SplitSettings, split_document
    from ragsift.types import Document

    for text in ("# 短节\n\n只有一句话。\n\n# 长节\n\n" + "这一节很长，要切成几块。" * 12,
                 "# Short\n\nOne sentence only.\n\n# Long\n\n" + "This section is long and cut in pieces. " * 12):
        doc = Document("d", "d.md", "", text, "h", "md", {})
        parents, chunks = split_document(doc, SplitSettings(child_tokens=40, child_overlap_tokens=5))
        extra = SmallIndex(Settings(small_index=["chunk", "parent"], child_tokens=40, child_overlap_tokens=5),
                           lambda texts: "").extra(parents, chunks)
        whole = {e.parent_id: e for e in extra if e.kind == "parent"}
        short, long = parents
        assert [c.child_id for c in chunks if c.parent_id == short.parent_id] == [whole[short.parent_id].shares]
        assert sum(c.parent_id == long.parent_id for c in chunks) > 1 and whole[long.parent_id].shares == ""
        assert whole[long.parent_id].text == long.text


def _scaled(scores):
    lo, hi = min(scores), max(scores)
    return [1.0 if hi == lo else (s - lo) / (hi - lo) for s in scores]


def _expected_mix(chunks, whole, a):
    """Independent of ragsift.retrieve.whole: each list min-max scaled on its own, a chunk scored
    a x its section's whole + (1 - a) x itself, a section's whole a x itself + (1 - a) x its best chunk."""
    w = {}
    for h, s in zip(whole, _scaled([h.score for h in whole])):
        w.setdefault(h.parent_id, s)
    c = [(h, s) for h, s in zip(chunks, _scaled([h.score for h in chunks]))]
    best = {}
    for h, s in c:
        best[h.parent_id] = max(best.get(h.parent_id, 0.0), s)
    out = {h.child_id: a * w.get(h.parent_id, 0.0) + (1 - a) * s for h, s in c}
    out |= {h.parent_id + "P": a * s + (1 - a) * best.get(h.parent_id, 0.0) for h, s in zip(whole, _scaled(
        [h.score for h in whole]))}
    return out


@pytest.mark.parametrize("question,needle,source", QUESTIONS)
@pytest.mark.parametrize("channel", ["dense", "bm25"])
def test_whole_weights_mix_a_section_with_its_chunks(s2b_kb, question, needle, source, channel):
    store, a = s2b_kb.store, Settings().query.whole_weights[channel]
    if channel == "dense":
        vec = s2b_kb.embedder().embed_queries([question])[0]
        chunks, whole = (store.search_dense(vec, 100, None, (k,)) for k in ("chunk", "parent"))
    else:
        terms = s2b_kb.analyzer.analyze(question)
        chunks, whole = (store.search_bm25(terms, 100, None, (k,)) for k in ("chunk", "parent"))
    assert chunks and whole
    expected = _expected_mix(chunks, whole, a)
    # unit child: every entry keeps its own mixed score, best first
    res = s2b_kb.query(question, index_kinds=["chunk", "parent"], channels=[channel], unit="child", max_passages=50)
    hits = res.trace.channels[0].hits
    assert {h.child_id for h in hits} == set(expected)
    assert [h.score for h in hits] == pytest.approx([expected[h.child_id] for h in hits])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert res.trace.fusion["whole_weights"] == {channel: a}
    # unit parent (the default): a section is its best entry, a x whole + (1 - a) x best chunk
    res = s2b_kb.query(question, index_kinds=["chunk", "parent"], channels=[channel])
    sections = {h.parent_id: h.score for h in res.trace.channels[0].hits}
    by_section = {}
    for cid, s in expected.items():
        pid = cid[:-1] if cid.endswith("P") else next(h.parent_id for h in chunks if h.child_id == cid)
        by_section[pid] = max(by_section.get(pid, 0.0), s)
    assert sections == pytest.approx(by_section)
    assert needle in res.passages[0].text and res.passages[0].source == source
    # a section found whole and by a chunk is one unit, its span the chunk's
    assert len({h.parent_id for h in res.trace.channels[0].hits}) == len(res.trace.channels[0].hits)


@pytest.mark.parametrize("question", [q for q, _, _ in QUESTIONS])
def test_without_a_whole_weight_a_section_takes_its_better_raw_score(s2b_kb, question):
    vec = s2b_kb.embedder().embed_queries([question])[0]
    raw = {}
    for h in s2b_kb.store.search_dense(vec, 100, None, ("chunk", "parent")):
        raw.setdefault(h.parent_id, h.score)
    res = s2b_kb.query(question, index_kinds=["chunk", "parent"], channels=["dense", "bm25"],
                       whole_weights={"bm25": 0.5})
    dense = next(c for c in res.trace.channels if c.name == "dense")
    assert {h.parent_id: h.score for h in dense.hits} == pytest.approx(raw)
    assert res.trace.fusion["whole_weights"] == {"dense": "max", "bm25": 0.5}
    # chunks alone: no whole weight applies, and the trace says nothing of it
    assert "whole_weights" not in s2b_kb.query(question, index_kinds=["chunk"]).trace.fusion
    # a knowledge base made with whole sections searches them by default, mixed
    assert s2b_kb.settings.query.index_kinds == ("chunk", "parent")
    assert s2b_kb.query(question).trace.fusion["whole_weights"] == {"dense": 0.25, "bm25": 0.5}


def test_mix_whole_ranks_ties_part_first_and_counts_a_section_once():
    from ragsift.retrieve.whole import mix_whole

    def hit(cid, pid, score):
        return StoredHit(cid, pid, "d", score, 0, 1)

    parts = [hit("a1", "a", 3.0), hit("b1", "b", 2.0), hit("a2", "a", 1.0)]
    whole = [hit("bP", "b", 0.9), hit("cP", "c", 0.5), hit("bP", "b", 0.1)]  # b's second hit is ignored
    got = [(h.child_id, round(h.score, 6)) for h in mix_whole(parts, whole, 0.5)]
    # parts scaled 1, .5, 0; wholes b 1, c 0: a1 .5, b1 .75, a2 0, bP .75 (b1 first: a part wins a tie), cP 0
    assert got == [("b1", 0.75), ("bP", 0.75), ("a1", 0.5), ("a2", 0.0), ("cP", 0.0)]
    assert mix_whole([], [], 0.3) == []
    assert [h.score for h in mix_whole(parts[:1], [], 0.25)] == [0.75]  # one score scales to 1
    with pytest.raises(ValueError, match="between 0 and 1"):
        mix_whole(parts, whole, 1.2)


def test_whole_weights_on_each_store(backend, tmp_path):
    """The mix is two searches of the store and a sum: the same on LanceDB and Milvus; Milvus' own
    fusion (store_fusion = "engine") searches both kinds at once, and the trace says so."""
    docs = write_files(tmp_path / "docs", {"hub_en.md": EN, "speaker_zh.md": ZH})
    kb = KnowledgeBase.open(tmp_path / "kb", child_tokens=24, child_overlap_tokens=0,
                            small_index=("chunk", "parent", "keywords"), **backend)
    kb.ingest(docs)
    assert kb.settings.query.index_kinds == ("chunk", "parent")  # the default of a base with whole sections
    # the keyword channel searches its own entries, never whole sections: the trace names no whole weight for it
    res = kb.query(QUESTIONS[0][0], channels=["dense", "bm25", "keywords"])
    assert res.trace.fusion["whole_weights"] == {"dense": 0.25, "bm25": 0.5}
    assert {c.name for c in res.trace.channels} == {"dense", "bm25", "keywords"}
    for question, needle, _ in QUESTIONS:
        terms = kb.analyzer.analyze(question)
        chunks, whole = (kb.store.search_bm25(terms, 100, None, (k,)) for k in ("chunk", "parent"))
        expected = _expected_mix(chunks, whole, 0.5)
        res = kb.query(question, index_kinds=["chunk", "parent"], channels=["bm25"], unit="child", max_passages=50)
        assert {h.child_id: h.score for h in res.trace.channels[0].hits} == pytest.approx(expected)
        assert needle in kb.query(question, index_kinds=["chunk", "parent"]).passages[0].text
        if backend:
            engine = kb.query(question, index_kinds=["chunk", "parent"], store_fusion="engine")
            assert engine.trace.fusion["whole_weights"] == {"engine_hybrid": "max"}
    kb.close()


def test_a_base_made_with_whole_sections_keeps_the_kinds_it_was_given(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", small_index=("chunk", "parent"), index_kinds=["chunk"])
    assert kb.settings.query.index_kinds == ("chunk",)
    kb.close()
    assert KnowledgeBase.open(tmp_path / "kb").settings.query.index_kinds == ("chunk",)  # as saved


def test_whole_weights_are_checked(s2b_kb):
    with pytest.raises(ConfigError, match="whole_weights"):
        Settings(whole_weights={"dense": 1.5})
    with pytest.raises(ConfigError, match="auto-merging"):  # the unit's own check, where settings meet the kb
        s2b_kb.query("reset", unit="auto", index_kinds=["chunk", "keys"])
    assert Settings(unit="auto", index_kinds=["chunk", "parent"]).query.unit == "auto"
    with pytest.raises(ConfigError, match="whole weight for unknown channel 'titles'"):
        s2b_kb.query("reset", index_kinds=["chunk", "parent"], whole_weights={"titles": 0.5})
