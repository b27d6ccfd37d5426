"""The framework retrievers with the real framework packages: LangChain, LlamaIndex and Haystack
return ragsift's passages with their metadata, in Chinese and English, take filters and per-call
settings, and work async; their document objects go into add_documents."""
from __future__ import annotations

import asyncio

import pytest
from haystack import Document as HaystackDocument
from haystack import Pipeline
from langchain_core.documents import Document as LCDocument
from llama_index.core.schema import QueryBundle, TextNode

from ragsift.integrations.haystack import RagsiftRetriever as HaystackRetriever
from ragsift.integrations.langchain import RagsiftRetriever as LCRetriever
from ragsift.integrations.llamaindex import RagsiftRetriever as LIRetriever
from ragsift.kb import KnowledgeBase

pytestmark = pytest.mark.slow  # the framework packages and Milvus

QUESTIONS = [("恢复出厂设置要按哪些键？", "speaker_manual_zh.md", "恢复出厂设置"),
             ("How many seconds do I hold the reset button to wipe the hub?", "smarthub_manual_en.md", "Factory reset")]
SPEAKER = {"item_name": "星云智能音箱 S2"}
KEYS = {"source", "title", "heading_path", "heading", "score", "rank", "unit", "parent_id", "doc_id", "matched",
        "truncated", "trace_id"}


def _check(texts_and_meta, sample_kb, question, source, heading, k):
    assert len(texts_and_meta) == k
    text, meta = texts_and_meta[0]
    assert meta["source"] == source and meta["heading_path"][-1] == heading and KEYS <= set(meta)
    assert meta["unit"] == "parent" and meta["matched"] and meta["rank"] == 1
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
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    assert "trace_id" not in nodes[0].node.get_content(metadata_mode="llm")  # bookkeeping stays out of prompts
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
