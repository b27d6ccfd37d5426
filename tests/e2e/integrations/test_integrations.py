"""The framework retrievers with the real framework packages: LangChain, LlamaIndex and Haystack
return ragsift's passages with their metadata, in Chinese and English, take filters and per-call
settings, and work async; each says how well its passages match (similarity, term match, no good
match and why) and why it found nothing (a filter value no document holds), its own way; their
document objects go into add_documents."""
from __future__ import annotations

import asyncio
import json
import os

import pytest
from haystack import Document as HaystackDocument
from haystack import Pipeline
from langchain_core.documents import Document as LCDocument
from llama_index.core.schema import QueryBundle, TextNode

from ragsift.errors import ConfigError, FilterError
from ragsift.integrations import passage_id
from ragsift.integrations.haystack import RagsiftRetriever as HaystackRetriever
from ragsift.integrations.langchain import RagsiftRetriever as LCRetriever
from ragsift.integrations.llamaindex import RagsiftRetriever as LIRetriever
from ragsift.kb import KnowledgeBase

QUESTIONS = [("恢复出厂设置要按哪些键？", "speaker_manual_zh.md", "恢复出厂设置"),
             ("How many seconds do I hold the reset button to wipe the hub?", "smarthub_manual_en.md", "Factory reset")]
SPEAKER = {"item_name": "星云智能音箱 S2"}
KEYS = {"source", "title", "heading_path", "heading", "score", "rank", "unit", "parent_id", "doc_id", "matched",
        "truncated", "trace_id", "similarity", "term_match", "scores", "no_good_match", "match_reason"}


def _check(texts_and_meta, sample_kb, question, source, heading, k):
    assert len(texts_and_meta) == k
    text, meta = texts_and_meta[0]
    assert meta["source"] == source and meta["heading_path"][-1] == heading and KEYS <= set(meta)
    assert meta["unit"] == "parent" and meta["matched"] and meta["rank"] == 1
    assert meta["no_good_match"] is False and meta["match_reason"] == ""  # the expected section: a good match
    assert meta["similarity"] == meta["scores"]["dense"] and 0 < meta["term_match"] <= 1
    assert text == sample_kb.sections([meta["parent_id"]])[meta["parent_id"]].parent.text
    assert len({m["trace_id"] for _, m in texts_and_meta}) == 1  # one query


@pytest.mark.parametrize("question,source,heading", QUESTIONS)
def test_langchain(sample_kb, question, source, heading):
    r = LCRetriever(kb=sample_kb, k=3)
    docs = r.invoke(question)
    _check([(d.page_content, d.metadata) for d in docs], sample_kb, question, source, heading, 3)
    assert docs[0].id == docs[0].metadata["parent_id"]
    filtered = r.invoke("How do I reset the device?", filter=SPEAKER, unit="child")
    assert filtered and all(d.metadata["source"] == "speaker_manual_zh.md" and d.metadata["unit"] == "child"
                            for d in filtered)
    assert [d.id for d in asyncio.run(r.ainvoke(question))] == [d.id for d in docs]
    chain_out = (r | (lambda ds: ds[0].metadata["source"])).invoke(question)  # a runnable in a chain
    assert chain_out == source


@pytest.mark.parametrize("question,source,heading", QUESTIONS)
def test_llamaindex(sample_kb, question, source, heading):
    r = LIRetriever(sample_kb, k=3)
    nodes = r.retrieve(question)
    _check([(n.node.get_content(), n.node.metadata) for n in nodes], sample_kb, question, source, heading, 3)
    assert [n.score for n in nodes] == [n.node.metadata["similarity"] for n in nodes]  # as vector retrievers score
    fused = [n.node.metadata["score"] for n in nodes]
    assert fused == sorted(fused, reverse=True)  # the order
    prompt = nodes[0].node.get_content(metadata_mode="llm")
    assert "trace_id" not in prompt and "similarity" not in prompt  # bookkeeping stays out of prompts
    child = r.with_options(filter=SPEAKER, unit="child").retrieve("How do I reset the device?")
    assert child and all(n.node.metadata["unit"] == "child" and n.node.metadata["source"] == "speaker_manual_zh.md"
                         for n in child)
    again = asyncio.run(r.aretrieve(QueryBundle(question)))
    assert [n.node.id_ for n in again] == [n.node.id_ for n in nodes]


@pytest.mark.parametrize("question,source,heading", QUESTIONS)
def test_haystack(sample_kb, question, source, heading):
    pipe = Pipeline()
    pipe.add_component("retriever", HaystackRetriever(sample_kb, top_k=3))
    docs = pipe.run({"retriever": {"query": question}})["retriever"]["documents"]
    _check([(d.content, d.meta) for d in docs], sample_kb, question, source, heading, 3)
    assert docs[0].score == docs[0].meta["score"]
    r = HaystackRetriever(sample_kb)
    few = r.run("How do I reset the device?", filters=SPEAKER, top_k=2, settings={"unit": "child"})["documents"]
    assert len(few) == 2 and all(d.meta["unit"] == "child" and d.meta["source"] == "speaker_manual_zh.md" for d in few)
    assert [d.id for d in asyncio.run(r.run_async(question, top_k=3))["documents"]] == [d.id for d in docs]
    copy = HaystackRetriever.from_dict(r.to_dict())
    assert copy.kb.path == sample_kb.path and copy.top_k == 4


@pytest.mark.parametrize("weak,flt,told", [
    ("罗马帝国的第一位皇帝是谁？", {"item_name": "星云音箱"}, 'no document has item_name "星云音箱" (did you mean "星云智能音箱 S2"'),
    ("Who was the first emperor of the Roman Empire?", {"source": "smarthub_manual.md"},
     'no document has source "smarthub_manual.md" (did you mean "smarthub_manual_en.md"'),
])
def test_each_says_how_well_it_matched_and_why_nothing_was_found(sample_kb, weak, flt, told):
    """A question the knowledge base cannot answer: each passage's similarity and term match,
    no_good_match and its reason; a filter value no document holds: why nothing was found (a
    LangChain and LlamaIndex retriever's last_result, Haystack's outputs)."""
    from llama_index.core.postprocessor import SimilarityPostprocessor

    want = sample_kb.query(weak, max_passages=2, trace=False)
    assert want.no_good_match and len(want.passages) == 2

    def same(meta, p):
        assert (meta["similarity"], meta["term_match"], meta["scores"]) == (p.similarity, p.term_match, p.scores)
        assert meta["no_good_match"] is True and meta["match_reason"] == want.match.reason

    lc = LCRetriever(sample_kb, k=2)
    for d, p in zip(lc.invoke(weak), want.passages, strict=True):
        same(d.metadata, p)
    assert lc.last_result is not None and lc.last_result.no_good_match and lc.last_result.warnings == ()
    assert lc.invoke(weak, filter=flt) == []
    [warning] = lc.last_result.warnings
    assert warning.startswith(told)

    li = LIRetriever(sample_kb, k=2)
    nodes = li.retrieve(weak)
    for n, p in zip(nodes, want.passages, strict=True):
        same(n.node.metadata, p)
        assert n.score == p.similarity
    cutoff = sample_kb.settings.query.min_similarity
    assert SimilarityPostprocessor(similarity_cutoff=cutoff).postprocess_nodes(nodes) == []  # none matches well
    narrow = li.with_options(filter=flt)
    assert narrow.retrieve(weak) == [] and narrow.last_result is not None
    assert narrow.last_result.warnings == (warning,)

    pipe = Pipeline()
    pipe.add_component("retriever", HaystackRetriever(sample_kb, top_k=2))
    out = pipe.run({"retriever": {"query": weak}})["retriever"]
    for d, p in zip(out["documents"], want.passages, strict=True):
        same(d.meta, p)
    assert out["no_good_match"] is True and out["match"]["reason"] == want.match.reason and out["warnings"] == []
    out = pipe.run({"retriever": {"query": weak, "filters": flt}})["retriever"]
    assert out["documents"] == [] and out["no_good_match"] is True and out["warnings"] == [warning]


def test_framework_documents_go_into_add_documents(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb")
    report = kb.add_documents([
        LCDocument(page_content="绿茶应该密封后冷藏保存。", id="lc-zh", metadata={"title": "绿茶", "lang": "zh"}),
        TextNode(id_="li-en", text="Green tea keeps best in a refrigerator.", metadata={"lang": "en"}),
        HaystackDocument(id="hs-en", content="Hold the reset button for ten seconds.", meta={"lang": "en",
                                                                                             "source": "hub.md"}),
    ])
    assert sorted(report.added) == ["hs-en", "lc-zh", "li-en"] and not report.skipped
    docs = kb.documents()
    assert docs["lc-zh"].title == "绿茶" and docs["hs-en"].source == "hub.md" and docs["li-en"].metadata == {"lang": "en"}
    assert kb.query("绿茶怎么保存？", filter={"lang": "zh"}).passages[0].doc_id == "lc-zh"


def test_one_constructor_shape_in_all_three(sample_kb):
    """kb (object or path), k, filter in the framework's own shape, any query setting by name:
    the three retrievers made alike return the same passages."""
    from langchain_core.structured_query import Comparator, Comparison
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    question = "How do I reset it? 如何恢复出厂设置"
    lc = LCRetriever(str(sample_kb.path), k=2, filter=Comparison(comparator=Comparator.EQ, attribute="lang", value="zh"),
                     unit="child")
    li = LIRetriever(sample_kb.path, k=2, filter=MetadataFilters(filters=[MetadataFilter(key="lang", value="zh")]),
                     unit="child")
    hs = HaystackRetriever(sample_kb, k=2, filter={"field": "meta.lang", "operator": "==", "value": "zh"}, unit="child")
    want = [passage_id(p) for p in sample_kb.query(question, filter={"lang": "zh"}, unit="child",
                                                   max_passages=2).passages]
    assert len(set(want)) == 2  # two children of one section are two documents
    assert [d.id for d in lc.invoke(question)] == want
    assert [n.node.id_ for n in li.retrieve(question)] == want
    assert [d.id for d in hs.run(question)["documents"]] == want
    for d in lc.invoke(question) + hs.run(question)["documents"]:
        meta = d.metadata if hasattr(d, "metadata") else d.meta
        assert meta["unit"] == "child" and meta["source"] in {"speaker_manual_zh.md", "ml_textbook_zh.md", "faq_zh.txt"}
    # wrong names, values and filters fail when the retriever is made, the same way in all three
    for make in (LCRetriever, LIRetriever, HaystackRetriever):
        with pytest.raises(ConfigError, match="unknown setting 'colour'"):
            make(sample_kb, colour="red")
        with pytest.raises(FilterError, match="unknown filter field 'colour'"):
            make(sample_kb, filter={"field": "meta.colour", "operator": "==", "value": "red"})
        with pytest.raises(ConfigError, match="k .* positive integer"):
            make(sample_kb, k=0)


def test_a_haystack_pipeline_round_trips_as_its_docs_say(sample_kb, tmp_path):
    """``Pipeline.loads(pipe.dumps())`` in a fresh process, with Haystack's default
    deserialization allowlist: the component lives under ``haystack_integrations``."""
    import subprocess
    import sys

    pipe = Pipeline()
    pipe.add_component("retriever", HaystackRetriever(sample_kb.path, k=3, filter={"lang": "en"}, unit="child"))
    (tmp_path / "pipe.yaml").write_text(pipe.dumps(), encoding="utf-8")
    question = "How many seconds do I hold the reset button to wipe the hub?"
    code = ("import sys, json\nfrom haystack import Pipeline\n"
            "pipe = Pipeline.loads(open(sys.argv[1], encoding='utf-8').read())\n"
            "docs = pipe.run({'retriever': {'query': sys.argv[2]}})['retriever']['documents']\n"
            "print(json.dumps([[d.id, d.meta['unit'], d.meta['source']] for d in docs]))")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pipe.yaml"), question], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    want = pipe.run({"retriever": {"query": question}})["retriever"]["documents"]
    assert got == [[d.id, "child", d.meta["source"]] for d in want] and len(got) == 3
    assert got[0][2] == "smarthub_manual_en.md"
