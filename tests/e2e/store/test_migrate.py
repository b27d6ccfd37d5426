"""Copying a knowledge base between the embedded store and Milvus, without re-embedding."""
import json

import pytest
from conftest import write_files

from ragsift.cli import main
from ragsift.errors import ConfigError, StoreError
from ragsift.kb import KnowledgeBase

DOCS = {
    "manual.md": "---\nitem_name: Widget\n---\n# Widget manual\n\n## Charging\n\nPlug the widget into a USB-C "
                 "charger. A full charge takes ninety minutes.\n\n## Cleaning\n\nWipe the case with a dry cloth.",
    "tea.md": "---\nitem_name: 茶叶\n---\n# 茶叶指南\n\n## 绿茶\n\n绿茶应在零至五摄氏度冷藏保存。\n\n## 红茶\n\n红茶常温密封即可，可保存两年。",
}
QUESTIONS = ["How long does a full charge take?", "绿茶应该怎样保存？", "怎么清洁外壳"]


def _answers(kb, **kw):
    out = []
    for q in QUESTIONS:
        res = kb.query(q, **kw)
        out.append([(p.parent_id, round(p.score, 5), p.text) for p in res.passages])
    return out


def test_copy_to_milvus_and_back_keeps_every_answer(tmp_path, milvus_uri, capsys):
    src = KnowledgeBase.open(tmp_path / "src")
    src.ingest(write_files(tmp_path / "docs", DOCS))
    assert main(["--kb", str(tmp_path / "src"), "migrate", str(tmp_path / "on_milvus"), "--store-uri", milvus_uri,
                 "--no-progress"]) == 0
    assert "copied 2 documents" in capsys.readouterr().out
    assert main(["--kb", str(tmp_path / "on_milvus"), "stats"]) == 0
    out = capsys.readouterr().out
    assert "milvus" in out and milvus_uri in out and "documents    2" in out
    on_milvus = KnowledgeBase.open(tmp_path / "on_milvus", create=False)
    assert on_milvus.stats()["backend"] == "milvus" and on_milvus.settings.index.embedder == src.settings.index.embedder
    assert on_milvus.store.check_integrity() == []
    assert _answers(on_milvus) == _answers(src)
    assert _answers(on_milvus, filter={"item_name": "茶叶"}) == _answers(src, filter={"item_name": "茶叶"})
    back = on_milvus.copy_to(tmp_path / "back", store_kind="lancedb")
    assert back.stats()["backend"] == "lancedb" and back.settings.store.uri == ""
    assert _answers(back) == _answers(src)
    with pytest.raises(StoreError, match="already holds"):
        src.copy_to(tmp_path / "back", store_kind="lancedb")
    # the copy is a knowledge base of its own: it takes new documents
    report = on_milvus.ingest(write_files(tmp_path / "more", {"coffee.md": "# Coffee\n\nGrind beans just before brewing."}))
    assert report.generation == 2 and on_milvus.query("when to grind coffee beans").passages[0].source == "coffee.md"
    assert json.loads(json.dumps(on_milvus.stats(), default=str))["documents"] == 3


def test_milvus_fuses_in_its_engine_when_asked(tmp_path, milvus_uri):
    """store_fusion = "engine": dense and BM25 as one engine_hybrid channel (Milvus' own hybrid
    search), a query's choice; on the embedded store a clear error. Both languages answer."""
    src = KnowledgeBase.open(tmp_path / "src")
    src.ingest(write_files(tmp_path / "docs", DOCS))
    on_milvus = src.copy_to(tmp_path / "on_milvus", store_kind="milvus", store_uri=milvus_uri)
    for q, source in zip(QUESTIONS, ["manual.md", "tea.md", "manual.md"]):
        engine = on_milvus.query(q, store_fusion="engine", max_passages=2)
        assert [c.name for c in engine.trace.channels] == ["engine_hybrid"]
        # the default fusion (adaptive) needs each channel's list: the engine fuses with the fixed weights
        assert "fixed weights" in engine.trace.fusion["engine"] and "adapted_weights" not in engine.trace.fusion
        assert engine.trace.channels[0].error is None and engine.passages[0].source == source, q
        assert on_milvus.query(q, max_passages=2).passages[0].source == source
        rrf = on_milvus.query(q, store_fusion="engine", fusion="rrf", channels=["dense", "bm25", "keywords"])
        assert [c.name for c in rrf.trace.channels][0] == "engine_hybrid"
    with pytest.raises(ConfigError, match="engine_hybrid .* needs a store that fuses in its engine"):
        src.query(QUESTIONS[0], store_fusion="engine")
