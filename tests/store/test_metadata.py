"""Typed metadata on both stores: dates (from front matter, or date objects) and lists of
strings are kept and filterable (ranges on dates and numbers; contains / in / nin on lists),
in Chinese and English; other shapes are kept in the metadata, not filtered on."""
from __future__ import annotations

import datetime

import pytest
from conftest import write_files

from ragsift.errors import FilterError
from ragsift.kb import KnowledgeBase

FILES = {
    "speaker.md": "---\nproduct: 星云智能音箱 S2\npublished: 2024-03-15\ntags: [说明书, 音箱, 恢复出厂]\nversion: 3\n"
                  "specs: {weight_g: 850}\n---\n# 星云智能音箱 S2\n\n## 恢复出厂设置\n\n同时长按音量加键和静音键十秒。\n",
    "hub.md": "---\nproduct: Aurora SmartHub X1\npublished: 2023-11-02\ntags: [manual, hub, reset]\nversion: 5\n---\n"
              "# Aurora SmartHub X1\n\n## Factory reset\n\nHold the reset button for twelve seconds.\n",
    "faq.md": "---\nproduct: Nimbus Backup\npublished: 2025-01-20T08:30:00+08:00\ntags: [faq]\nversion: 1.5\n---\n"
              "# FAQ\n\n## Reset\n\nTo reset your password, open Settings and choose Reset.\n",
}


@pytest.fixture
def kb(tmp_path, backend):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="e5-small", **backend)
    report = kb.ingest(write_files(tmp_path / "docs", FILES))
    assert len(report.added) == 3
    kb.add_documents([{"id": "notice", "text": "系统将于周六凌晨维护两小时，维护期间无法恢复出厂设置。",
                       "metadata": {"published": datetime.date(2024, 6, 1), "tags": ["公告", "维护"],
                                    "product": "platform"}}])
    return kb


def _sources(kb, flt, q="怎么恢复出厂设置？ how to reset"):
    return sorted({p.source for p in kb.query(q, filter=flt, max_passages=20, token_budget=100_000).passages})


def test_fields_are_typed_and_metadata_kept(kb):
    fields = kb.stats()["fields"]
    # faq.md comes first and its version is 1.5: a float field, which takes the other files' ints
    assert fields["published"] == "date" and fields["tags"] == "list" and fields["version"] == "float"
    assert "specs" not in fields  # a mapping: kept, not filterable
    meta = {d.source: d.metadata for d in kb.documents().values()}
    assert meta["speaker.md"]["published"] == "2024-03-15" and meta["speaker.md"]["tags"] == ["说明书", "音箱", "恢复出厂"]
    assert meta["speaker.md"]["specs"] == {"weight_g": 850}
    assert meta["faq.md"]["published"] == "2025-01-20T00:30:00"  # a datetime with a zone, in UTC
    assert meta["notice"]["published"] == "2024-06-01"


def test_list_fields(kb):
    assert _sources(kb, {"tags": {"contains": "音箱"}}) == ["speaker.md"]
    assert _sources(kb, {"tags": {"contains": "manual"}}) == ["hub.md"]
    assert _sources(kb, {"tags": {"in": ["faq", "公告"]}}) == ["faq.md", "notice"]
    assert _sources(kb, {"tags": {"nin": ["faq", "公告"]}}) == ["hub.md", "speaker.md"]
    assert _sources(kb, {"not": {"tags": {"contains": "hub"}}}) == ["faq.md", "notice", "speaker.md"]
    with pytest.raises(FilterError, match="'eq' is not defined for the list field 'tags'; use contains, in, nin"):
        kb.query("x", filter={"tags": "manual"})
    with pytest.raises(FilterError, match="'contains' is for list fields; 'product' holds string values"):
        kb.query("x", filter={"product": {"contains": "S2"}})


def test_date_and_number_ranges(kb):
    assert _sources(kb, {"published": {"gte": "2024-01-01", "lt": "2025-01-01"}}) == ["notice", "speaker.md"]
    assert _sources(kb, {"published": {"lt": "2024-01-01"}}) == ["hub.md"]
    assert _sources(kb, {"published": {"gt": "2025-01-20T00:00:00"}}) == ["faq.md"]
    assert _sources(kb, {"published": datetime.date(2023, 11, 2)}) == ["hub.md"]
    assert _sources(kb, {"version": {"gte": 3}}) == ["hub.md", "speaker.md"]
    assert _sources(kb, {"and": [{"version": {"lt": 5}}, {"tags": {"contains": "faq"}}]}) == ["faq.md"]
    with pytest.raises(FilterError, match="holds dates; give one as ISO 8601 text"):
        kb.query("x", filter={"published": {"gte": "last year"}})


def test_iso_text_in_a_date_field_is_that_date(kb):
    """JSON (a JSONL file, a document sent over HTTP) carries a date as ISO 8601 text: in a date
    field it is that date; text that is no date is kept, not filtered on."""
    kb.add_documents([{"id": "json-zh", "source": "json-zh", "text": "新版固件于七月发布，恢复出厂设置后自动更新。",
                       "metadata": {"published": "2024-07-01"}},
                      {"id": "json-en", "source": "json-en", "text": "Reset the hub, then it updates itself.",
                       "metadata": {"published": "soon"}}])
    assert kb.stats()["fields"]["published"] == "date"
    assert _sources(kb, {"published": {"gte": "2024-06-15", "lt": "2025-01-01"}}) == ["json-zh"]
    assert _sources(kb, {"published": datetime.date(2024, 7, 1)}) == ["json-zh"]
    assert "json-en" not in _sources(kb, {"published": {"gte": "1900-01-01"}})
    assert kb.documents()["json-en"].metadata["published"] == "soon"
