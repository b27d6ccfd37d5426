"""Named strategies and the router (``strategy``): what each runs, the seed's combination with a
real local model, and the router's choices on clear cases, in English and Chinese."""
from __future__ import annotations

import pytest
from test_multihop import COMPARISON, DOCS, QUESTION, ZH_QUESTION, _kb, _sources

from ragsift.config import Strategy
from ragsift.errors import ConfigError
from ragsift.retrieve.strategy import NO_NAMES, NOT_ASKED, asks, route
from ragsift.text.links import TitleIndex

MODEL = "local:qwen2.5-coder-1.5b"
EN_CMP = "Who was born first, Ada Lovelace or Grace Hopper?"
ZH_CMP = "李白和杜甫谁先出生？"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    return _kb(tmp_path_factory, "strategy", {**DOCS, **COMPARISON})


@pytest.mark.parametrize("question,named,expected", [
    (EN_CMP, ["Ada Lovelace", "Grace Hopper"], {"lovelace.md", "hopper.md"}),
    (ZH_CMP, ["李白", "杜甫"], {"libai.md", "dufu.md"}),
    (QUESTION, ["Kiss and Tell"], {"film.md", "temple.md"}),
    (ZH_QUESTION, ["吻别"], {"film_zh.md", "temple_zh.md"}),
])
def test_auto_chooses_multi_hop_when_the_question_names_documents(kb, question, named, expected):
    res = kb.query(question, strategy="auto", max_passages=3)
    st = res.trace.strategy
    assert st["strategy"] == "auto" and st["chosen"] == "multihop"
    assert st["signals"]["named"] == named and "names" in st["reason"] and named[0] in st["reason"]
    assert res.trace.multihop is not None and res.trace.multihop["mode"] == "keywords"
    assert expected <= set(_sources(res))


@pytest.mark.parametrize("question,lang,source", [
    ("How cold should green tea be kept?", "en", "tea.md"),
    ("绿茶应该在几度保存？", "zh", None),
])
def test_auto_keeps_one_hybrid_round_when_nothing_is_named(kb, question, lang, source):
    res = kb.query(question, strategy="auto")
    st = res.trace.strategy
    assert st["chosen"] == "hybrid" and st["signals"]["language"] == lang and st["signals"]["named"] == []
    assert st["reason"] == NO_NAMES and st["signals"]["asks"] and st["signals"]["linked"] == []
    assert res.trace.multihop is None
    if source:
        assert _sources(res)[0] == source
    # the same passages, in the same order, as one hybrid round
    assert _sources(res) == _sources(kb.query(question, strategy="hybrid"))
    # a multi-hop mode in the settings is asked for: every question gets it
    res = kb.query(question, strategy="auto", multihop_mode="keywords")
    assert res.trace.strategy["chosen"] == "multihop" and res.trace.multihop["mode"] == "keywords"
    assert res.trace.strategy["reason"] == "multihop_mode = 'keywords' is set"


# no title in the question; the passage that answers its first part names the document of the second
BRIDGES = [("Which government position was held by the woman who played Corliss Archer in a 1945 comedy?", "en",
            "film.md", "Shirley Temple", "temple.md",
            "The woman who played Corliss Archer in a 1945 comedy held a government position."),
           ("在一部1945年的喜剧电影中扮演科利斯·阿彻的女演员后来担任过什么政府职务？", "zh",
            "film_zh.md", "秀兰·邓波儿", "temple_zh.md", "在一部1945年的喜剧电影中扮演科利斯·阿彻的女演员后来担任过政府职务。")]


@pytest.mark.parametrize("question,lang,bridge,linked,answer,statement", BRIDGES)
def test_auto_follows_a_title_that_the_passages_found_name(kb, question, lang, bridge, linked, answer, statement):
    # hop_top=1: the best passage is what counts as found, so the document it names is a link to follow
    res = kb.query(question, strategy="auto", max_passages=2, hop_top=1)
    st = res.trace.strategy
    assert st["chosen"] == "multihop" and st["signals"]["named"] == [] and st["signals"]["language"] == lang
    assert st["signals"]["linked"] == [linked] and st["reason"].endswith(f"by title: {linked}")
    assert res.trace.multihop["hops"][1]["kinds"] == ["link"]
    assert _sources(res) == [bridge, answer]
    # what auto found is what multi-hop finds from the same first round
    assert _sources(res) == _sources(kb.query(question, strategy="multihop", max_passages=2, hop_top=1))
    # the same words as a statement (a claim to check, not a question): searched once
    res = kb.query(statement, strategy="auto", max_passages=2, hop_top=1)
    st = res.trace.strategy
    assert st["chosen"] == "hybrid" and st["reason"] == NOT_ASKED and not st["signals"]["asks"]
    assert res.trace.multihop is None
    assert _sources(res) == _sources(kb.query(statement, strategy="hybrid", max_passages=2))


def test_the_router_reads_the_question_only():
    titles = TitleIndex([("a", "Ada Lovelace"), ("b", "杜甫")])
    assert route("When was Ada Lovelace born?", titles).strategy is Strategy.MULTIHOP
    assert route("杜甫生于哪一年", titles).strategy is Strategy.MULTIHOP
    assert route("ada lovelace", titles).strategy is Strategy.MULTIHOP  # a title of two words: any case
    for text in ("How cold should green tea be kept?", "绿茶应该在几度保存？"):
        assert route(text, titles).strategy is Strategy.HYBRID
    r = route("Ada Lovelace wrote the first algorithm.", titles)
    assert r.signals["entities"] == ["Ada Lovelace"] and r.signals["named"] == ["Ada Lovelace"]
    assert r.signals["language"] == "en" and r.signals["tokens"] > 0


@pytest.mark.parametrize("text,expected", [
    ("Who was born first?", True), ("when did it open", True), ("李白和杜甫谁先出生", True), ("这是什么", True),
    ("绿茶要冷藏吗", True), ("5% of perinatal mortality is due to low birth weight.", False),
    ("绿茶冷藏保存。", False),
])
def test_what_counts_as_a_question(text, expected):
    assert asks(text) is expected


def test_named_strategies_override_the_settings_they_name(kb):
    res = kb.query(QUESTION, strategy="hybrid", multihop_mode="keywords")
    assert res.trace.multihop is None and res.trace.strategy["strategy"] == "hybrid"
    assert res.trace.strategy["channels"] == ["dense", "bm25"] and res.trace.strategy["multihop"] == "off"
    res = kb.query(QUESTION, strategy="multihop", max_passages=2)
    assert res.trace.multihop["mode"] == "keywords" and res.trace.strategy["multihop"] == "keywords"
    assert _sources(res) == ["film.md", "temple.md"]
    # the default is the router; ``settings`` is the settings as they are
    assert kb.query(QUESTION).trace.strategy["strategy"] == "auto"
    assert kb.query(QUESTION, strategy="settings").trace.strategy is None
    for name in ("hyde", "combined"):
        with pytest.raises(ConfigError, match=f"strategy = '{name}' needs a language model"):
            kb.query(QUESTION, strategy=name)
    with pytest.raises(ConfigError, match="strategy"):
        kb.query(QUESTION, strategy="best")


@pytest.mark.slow
@pytest.mark.parametrize("question,lang,expected", [
    (QUESTION, "en", {"film.md", "temple.md"}),
    (ZH_QUESTION, "zh", {"film_zh.md", "temple_zh.md"}),
])
def test_the_seed_combination_with_a_real_local_model(kb, tmp_path, question, lang, expected):
    """HyDE on the question, multi-hop from what it found (follow-ups without HyDE), parents."""
    res = kb.query(question, strategy="combined", llm_model=MODEL, llm_cache=str(tmp_path / "cache.sqlite"),
                   hyde_max_tokens=96, channel_timeout_s=300, translate=False, max_passages=3, unit="child")
    tr = res.trace
    assert tr.strategy == {"strategy": "combined", "channels": ["dense", "bm25", "hyde", "hyde_bm25"],
                           "multihop": "keywords", "unit": "parent"}
    assert len(tr.transforms["hyde"]["hypotheses"]) == 1  # one hypothesis: for the question only
    assert {c.name for c in tr.channels} == {"dense", "bm25", "hyde", "hyde_bm25"}
    assert all(c.error is None for c in tr.channels), [c.error for c in tr.channels]
    hops = tr.multihop["hops"]
    assert hops[0]["channels"] == ["dense", "bm25", "hyde", "hyde_bm25"]
    assert len(hops) >= 2 and all(h["channels"] == ["dense", "bm25"] for h in hops[1:])
    assert set(hops[1]["kinds"]) <= {"named", "link", "term"} and hops[1]["source"] == "keywords"
    assert tr.packing["unit"] == "parent" and tr.language == lang
    assert expected <= set(_sources(res))


def test_without_a_trace_shown_the_router_skips_entities_and_chooses_alike():
    titles = TitleIndex([("a", "Ada Lovelace"), ("b", "杜甫")])
    for text in ("杜甫生于哪一年", "绿茶应该在几度保存？", "When was Ada Lovelace born?", "Ada Lovelace wrote it."):
        shown, quiet = route(text, titles), route(text, titles, shown=False)
        assert "entities" in shown.signals and "entities" not in quiet.signals
        assert (quiet.strategy, quiet.reason) == (shown.strategy, shown.reason)
        assert {k: v for k, v in shown.signals.items() if k != "entities"} == quiet.signals
