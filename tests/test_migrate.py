"""Copying a knowledge base between the embedded store and Milvus, without re-embedding."""
import json

import pytest

from conftest import write_files
from ragsift.cli import main
from ragsift.errors import StoreError
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
    back = on_milvus.copy_to(tmp_path / "back", store="lancedb")
    assert back.stats()["backend"] == "lancedb" and back.settings.store.uri == ""
    assert _answers(back) == _answers(src)
    with pytest.raises(StoreError, match="already holds"):
        src.copy_to(tmp_path / "back", store="lancedb")
    # the copy is a knowledge base of its own: it takes new documents
    report = on_milvus.ingest(write_files(tmp_path / "more", {"coffee.md": "# Coffee\n\nGrind beans just before brewing."}))
    assert report.generation == 2 and on_milvus.query("when to grind coffee beans").passages[0].source == "coffee.md"
    assert json.loads(json.dumps(on_milvus.stats(), default=str))["documents"] == 3
