"""Every unit, single-shot and multi-hop (keywords mode), on one bilingual knowledge base: each
returns passages of its unit, and multi-hop keeps the unit and says which hop found each."""
from __future__ import annotations

import pytest
from conftest import write_files

from ragsift.config import Unit
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.units import UNITS, unit_strategy

DOCS = {
    "film.md": "# Kiss and Tell\n\nKiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer. "
               "The film was directed by Richard Wallace. It was shot in Los Angeles in the spring.\n\n"
               "## Reception\n\nCritics praised the cast. The film earned two million dollars.\n",
    "temple.md": "# Shirley Temple\n\nShirley Temple Black was an actress. She later served as United States "
                 "Ambassador to Ghana. She was also Chief of Protocol of the United States, a government position.\n\n"
                 "## Early life\n\nShe was born in Santa Monica in 1928. She began dancing lessons at three.\n",
    "film_zh.md": "# 吻别\n\n《吻别》是一部1945年的喜剧电影。秀兰·邓波儿在片中饰演科利斯·阿彻。影片在洛杉矶拍摄。\n\n"
                  "## 评价\n\n影评人称赞了演员阵容。影片票房两百万美元。\n",
    "temple_zh.md": "# 秀兰·邓波儿\n\n秀兰·邓波儿是一位演员。她后来从政，担任美国驻加纳大使。她还担任过美国礼宾司司长，"
                    "这是一个政府职务。\n\n## 早年\n\n她1928年出生于圣莫尼卡。她三岁开始学习舞蹈。\n",
    "tea.md": "# Tea\n\nGreen tea keeps best in a refrigerator at zero to five degrees. Seal the bag after opening.\n",
}
QUESTIONS = {
    "en": "Which government position was held by the woman who starred as Corliss Archer in Kiss and Tell?",
    "zh": "在电影《吻别》中饰演科利斯·阿彻的女演员担任过什么政府职务？",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("units")
    kb = KnowledgeBase.open(root / "kb", small_index=["chunks", "sentences"], child_tokens=24, child_overlap_tokens=4)
    kb.ingest(write_files(root / "docs", DOCS))
    return kb


def test_every_unit_has_a_strategy():
    assert set(UNITS) == set(Unit)
    assert unit_strategy("window").name is Unit.WINDOW


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("multihop", ["off", "keywords"])
@pytest.mark.parametrize("unit", [u.value for u in Unit])
def test_every_unit_single_shot_and_multi_hop(kb, unit, multihop, lang):
    res = kb.query(QUESTIONS[lang], unit=unit, strategy="settings", multihop_mode=multihop, hop_min_gain=0.0,
                   max_passages=3)
    assert res.passages, (unit, multihop, lang)
    assert res.trace.packing["unit"] == unit
    texts = {pid: sp.parent.text for pid, sp in kb.store.get_parents(p.parent_id for p in res.passages).items()}
    for p in res.passages:
        if unit == "auto":
            assert p.unit in ("child", "parent", "document")
        else:
            assert p.unit == unit
        if p.unit == "parent":
            assert p.text == texts[p.parent_id]
        elif p.unit in ("child", "window"):
            assert p.text in texts[p.parent_id] and len(p.text) < len(texts[p.parent_id]) + 1
            assert p.matched and all(0 <= s.start < s.end <= len(p.text) for s in p.matched)
        else:  # a whole document: every section of it
            assert texts[p.parent_id] in p.text
    if multihop == "off":
        assert res.trace.multihop is None and all(p.provenance == () for p in res.passages)
    else:
        mh = res.trace.multihop
        assert mh["mode"] == "keywords" and mh["hops"][0]["queries"] == [QUESTIONS[lang]]
        # every passage says which hop found it (each unit it stands for was ranked by some hop)
        assert all(p.provenance for p in res.passages)
        assert {e["hop"] for p in res.passages for e in p.provenance} <= {h["hop"] for h in mh["hops"]}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_multi_hop_reaches_the_second_document_for_every_unit(kb, lang):
    """The bridge document (the actress's page) comes back whatever the unit."""
    target = "temple.md" if lang == "en" else "temple_zh.md"
    for unit in Unit:
        res = kb.query(QUESTIONS[lang], unit=unit.value, multihop_mode="keywords", hop_min_gain=0.0, max_passages=4)
        assert target in {p.source for p in res.passages}, unit


def test_window_units_read_their_window(kb):
    """Reranking and multi-hop read a window as the window, not its whole section."""
    res = kb.query(QUESTIONS["en"], unit="window", window_sentences=0, index_kinds=["sentence"])
    best = res.passages[0]
    section = kb.store.get_parents([best.parent_id])[best.parent_id]
    hit = next(h for c in res.trace.channels for h in c.hits if h.parent_id == best.parent_id)
    from ragsift.store.base import StoredHit

    read = UNITS.make(Unit.WINDOW).read(StoredHit(hit.child_id, hit.parent_id, hit.doc_id, hit.score, hit.start, hit.end),
                                   section, kb.settings.replace(window_sentences=0).query)
    assert read in section.parent.text and len(read) < len(section.parent.text)
