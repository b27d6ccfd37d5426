"""Multi-hop retrieval: every follow-up kind (documents named in the question, links from what
was found, key terms), every stopping reason, provenance, merging, English and Chinese.
Real store and embedder; the LLM-mode tests use the fault-injecting stub endpoint to script
the model's follow-up queries (and its failures)."""
from __future__ import annotations

import pytest
from conftest import write_files
from fault_llm_server import FaultInjectingLLMServer

from ragsift.kb import KnowledgeBase
from ragsift.retrieve.multihop import merge_hops, with_links
from ragsift.text.entities import entities, new_terms, residual_words

QUESTION = "Which government position was held by the woman who played Corliss Archer in the film Kiss and Tell?"
ZH_QUESTION = "在电影《吻别》中扮演科利斯·阿彻的女演员后来担任过什么政府职务？"
DOCS = {
    "film.md": "# Kiss and Tell\n\nKiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer, "
               "a teenage girl whose parents worry about her.\n",
    "temple.md": "# Shirley Temple\n\nShirley Temple Black was an actress who later served as United States "
                 "Ambassador to Ghana and as Chief of Protocol of the United States, a government position.\n",
    "protocol.md": "# Chief of Protocol\n\nThe Chief of Protocol advises the President on diplomatic protocol.\n",
    "tea.md": "# Tea\n\nGreen tea keeps best in a refrigerator at zero to five degrees.\n",
    "film_zh.md": "# 吻别\n\n《吻别》是一部1945年的喜剧电影，秀兰·邓波儿在片中饰演科利斯·阿彻。\n",
    "temple_zh.md": "# 秀兰·邓波儿\n\n秀兰·邓波儿后来从政，担任美国驻加纳大使和美国礼宾司司长。\n",
}


# the same documents under headings that name nothing: follow-ups come from key terms
UNTITLED = {name: "# Notes " + str(i) + text[text.index("\n"):] for i, (name, text) in enumerate(DOCS.items())}
COMPARISON = {
    "lovelace.md": "# Ada Lovelace\n\nAda Lovelace was born in 1815 in London and wrote the first published "
                   "algorithm for a machine.\n",
    "hopper.md": "# Grace Hopper\n\nGrace Hopper was born in 1906 in New York; her team built the first "
                 "compiler for a programming language.\n",
    "babbage.md": "# Analytical Engine\n\nThe Analytical Engine was a mechanical computer; its first program "
                  "was born from notes on the machine written in London.\n",
    "libai.md": "# 李白\n\n李白生于公元701年，唐代诗人，被后人称为诗仙。\n",
    "dufu.md": "# 杜甫\n\n杜甫生于公元712年，唐代诗人，被后人称为诗圣。\n",
    "tangshi.md": "# 唐诗\n\n唐诗是唐代诗人写的诗，谁更早出生常被人问起，诗人生于何年各有记载。\n",
}


def _kb(tmp_path_factory, name, docs):
    root = tmp_path_factory.mktemp(name)
    kb = KnowledgeBase.open(root / "kb")
    kb.ingest(write_files(root / "docs", docs))
    return kb


@pytest.fixture(scope="module")
def mh_kb(tmp_path_factory):
    return _kb(tmp_path_factory, "multihop", DOCS)


@pytest.fixture(scope="module")
def terms_kb(tmp_path_factory):
    return _kb(tmp_path_factory, "multihop-terms", UNTITLED)


@pytest.fixture(scope="module")
def cmp_kb(tmp_path_factory):
    return _kb(tmp_path_factory, "multihop-comparison", COMPARISON)


def _sources(res):
    return [p.source for p in res.passages]


def test_key_terms_in_english_and_chinese():
    assert entities("Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.") == \
        [("Kiss and Tell", "other"), ("Shirley Temple", "other"), ("Corliss Archer", "other")]
    assert new_terms(QUESTION, [DOCS["film.md"]]) == ["Shirley Temple"]
    assert "秀兰·邓波儿" in new_terms(ZH_QUESTION, [DOCS["film_zh.md"]])
    assert residual_words(QUESTION, [DOCS["film.md"]]) == ["government", "position", "held", "woman", "played"]


def test_keywords_mode_finds_the_second_hop_and_keeps_the_first(mh_kb):
    single = mh_kb.query(QUESTION, max_passages=2)
    # hop_top=1: only the best unit of a search counts as found
    res = mh_kb.query(QUESTION, multihop_mode="keywords", hops_max=2, hop_min_gain=0.0, hop_top=1, max_passages=2)
    mh = res.trace.multihop
    assert mh["stop"] == "depth" and [h["hop"] for h in mh["hops"]] == [0, 1]
    assert mh["hops"][1]["queries"] == ["Shirley Temple government position held woman played"]
    assert mh["hops"][1]["source"] == "keywords" and mh["hops"][1]["gain"] == 1.0
    # the passage found first names the document "Shirley Temple": a link
    assert mh["hops"][1]["kinds"] == ["link"] and mh["hops"][1]["names"] == ["Shirley Temple"]
    temple = next(p for p in res.passages if p.source == "temple.md")
    assert mh["hops"][1]["new_units"] == [temple.parent_id]
    assert res.passages[0].parent_id == single.passages[0].parent_id  # the question's best stays first
    assert _sources(res) == ["film.md", "temple.md"]
    prov = {p.source: p.provenance for p in res.passages}
    assert prov["film.md"][0] == {"hop": 0, "query": QUESTION, "rank": 1}
    assert any(e["hop"] == 1 and e["query"].startswith("Shirley Temple") for e in prov["temple.md"])


def test_chinese_multi_hop(mh_kb):
    res = mh_kb.query(ZH_QUESTION, multihop_mode="keywords", hops_max=2, hop_min_gain=0.0, hop_top=1, max_passages=2)
    mh = res.trace.multihop
    assert mh["hops"][1]["queries"] == ["秀兰·邓波儿 扮演 女演员 后来 担任 政府 职务"]
    assert mh["hops"][1]["kinds"] == ["link"] and mh["hops"][1]["names"] == ["秀兰·邓波儿"]
    assert mh["stop"] == "depth" and mh["hops"][1]["new_units"] == [res.passages[1].parent_id]
    assert set(_sources(res)) == {"film_zh.md", "temple_zh.md"}


def test_without_titles_the_follow_ups_are_key_terms(terms_kb):
    res = terms_kb.query(QUESTION, multihop_mode="keywords", hops_max=2, hop_min_gain=0.0, hop_top=1, max_passages=2)
    hop = res.trace.multihop["hops"][1]
    assert hop["kinds"] == ["term"] and hop["queries"] == ["Shirley Temple government position held woman played"]
    assert _sources(res) == ["film.md", "temple.md"]


def test_stops_when_a_hop_brings_too_little(terms_kb):
    single = terms_kb.query(QUESTION)
    res = terms_kb.query(QUESTION, multihop_mode="keywords", hops_max=3, hop_min_gain=0.9, hop_top=3)
    mh = res.trace.multihop
    assert mh["stop"] == "low_gain" and mh["hops"][1]["merged"] is False and mh["hops"][1]["gain"] < 0.9
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in single.passages]  # the hop was dropped


@pytest.mark.parametrize("question, sides, found", [
    ("Who was born first, Ada Lovelace or Grace Hopper?", {"Ada Lovelace", "Grace Hopper"},
     {"lovelace.md", "hopper.md"}),
    ("谁出生得更早，李白还是杜甫？", {"李白", "杜甫"}, {"libai.md", "dufu.md"}),
])
def test_a_comparison_searches_each_document_the_question_names(cmp_kb, question, sides, found):
    res = cmp_kb.query(question, multihop_mode="keywords", hops_max=2, hop_min_gain=0.0, hop_top=1, max_passages=2)
    hop = res.trace.multihop["hops"][1]
    # hop_top=1: the first search counts at most one side as found; a side it did not find is
    # searched by its name
    by_source = {p.source: p for p in res.passages}
    assert set(hop["kinds"]) == {"named"} and set(hop["names"]) <= sides
    for name, query in zip(hop["names"], hop["queries"]):
        assert query.startswith(name)
        source = next(f for f in found if COMPARISON[f].startswith("# " + name))
        assert by_source[source].parent_id in hop["new_units"]
    assert {p.source for p in res.passages} == found  # both sides, first


def test_stops_when_nothing_new_comes_back(mh_kb):
    # every document is already in the question's own top units: nothing can be new
    res = mh_kb.query(QUESTION, multihop_mode="keywords", hops_max=3, hop_min_gain=0.0, hop_top=20)
    mh = res.trace.multihop
    assert mh["stop"] == "nothing_new" and mh["hops"][-1]["new_units"] == []


def test_stops_when_there_is_nothing_to_ask_about(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest(write_files(tmp_path / "docs", {"a.md": "# notes\n\nthe kettle boils water in two minutes.\n",
                                             "b.md": "# more\n\nwater boils at one hundred degrees.\n"}))
    res = kb.query("how long does the kettle take to boil water?", multihop_mode="keywords")
    assert res.trace.multihop["stop"] == "no_follow_up" and len(res.trace.multihop["hops"]) == 1


def test_stops_on_the_time_budget(mh_kb):
    res = mh_kb.query(QUESTION, multihop_mode="keywords", hop_time_s=1e-6)
    assert res.trace.multihop["stop"] == "time_budget" and len(res.trace.multihop["hops"]) == 1


def _llm(srv, **kw):
    return dict(multihop_mode="llm", llm_model="openai:stub", llm_base_url=srv.url, llm_cache=False, hop_min_gain=0.0,
                hop_top=1, **kw)


def test_llm_mode_follows_the_models_query_and_stops_on_a_repeat(mh_kb):
    with FaultInjectingLLMServer("ok", answer="Shirley Temple government position") as srv:
        res = mh_kb.query(QUESTION, hops_max=4, **_llm(srv))
        mh = res.trace.multihop
        # the document the passage found names first, then the model's query
        assert mh["hops"][1]["kinds"] == ["link", "llm"] and mh["hops"][1]["source"] == "llm"
        assert mh["hops"][1]["names"] == ["Shirley Temple", "Shirley Temple government position"]
        assert mh["stop"] == "repeated_query" and mh["llm_calls"] == len(mh["hops"])  # one call per hop
        assert "temple.md" in _sources(res)
        # the model was shown what was found
        assert "Kiss and Tell" in srv.bodies[0]["messages"][1]["content"]


def test_llm_mode_stops_when_the_model_says_done_or_the_budget_is_spent(mh_kb):
    with FaultInjectingLLMServer("ok", answer="DONE") as srv:
        res = mh_kb.query(QUESTION, hops_max=6, **_llm(srv))
        mh = res.trace.multihop
        # DONE, but the passages found name documents not found yet: those links are still followed,
        # and the loop stops when there are none left
        assert mh["stop"] == "llm_done" and len(mh["hops"]) >= 2
        assert all(h["kinds"] == ["link"] for h in mh["hops"][1:]) and mh["llm_calls"] == len(mh["hops"])
        assert "temple.md" in _sources(res)
    with FaultInjectingLLMServer("ok", answer="Shirley Temple government position") as srv:
        res = mh_kb.query(QUESTION, hops_max=4, hop_llm_calls=1, **_llm(srv))
        assert res.trace.multihop["stop"] == "llm_budget" and res.trace.multihop["llm_calls"] == 1


def test_a_weak_query_by_words_does_not_take_the_hops_link_down(mh_kb):
    # the model asks for what was already found: that query is dropped for its gain, the link stays
    with FaultInjectingLLMServer("ok", answer="Kiss and Tell comedy film") as srv:
        res = mh_kb.query(QUESTION, **{**_llm(srv), "hops_max": 2, "hop_min_gain": 0.9, "max_passages": 3})
    hop = res.trace.multihop["hops"][1]
    assert hop["kinds"] == ["link", "llm"] and hop["dropped"] == ["Kiss and Tell comedy film"]
    temple = next(p for p in res.passages if p.source == "temple.md")
    assert hop["merged"] and hop["new_units"] == [temple.parent_id]
    assert res.trace.multihop["stop"] == "depth"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["500", "hang", "garbage"])
def test_an_llm_failure_ends_the_loop_with_what_was_found(mh_kb, mode):
    single = mh_kb.query(QUESTION)
    with FaultInjectingLLMServer(mode) as srv:
        res = mh_kb.query(QUESTION, channel_timeouts={"follow_up": 1.0}, llm_max_retries=0, **_llm(srv))
    mh = res.trace.multihop
    assert mh["stop"] == "llm_error" and mh["error"] and len(mh["hops"]) == 1
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in single.passages]


def test_merging_keeps_the_questions_top_units_and_alternates():
    ours = [("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7)]
    follow = {"hop1.0": [("x", 5.0), ("c", 4.0), ("y", 3.0)]}
    merged = [u for u, _ in merge_hops(ours, follow, {"hop1.0": 1.0}, protect=2, k=60)]
    assert merged == ["a", "b", "x", "c", "y", "d"]
    assert [u for u, _ in merge_hops(ours, {}, {}, protect=2, k=60)] == ["a", "b", "c", "d"]


def test_linked_units_follow_the_unit_that_names_them_and_named_ones_come_first():
    ranking = [("a", 1.0), ("b", 0.9), ("c", 0.8)]
    merged = [u for u, _ in with_links(ranking, ["n"], {"a": ["x"], "x": ["y"], "c": ["b"]}, k=60)]
    assert merged == ["n", "a", "x", "y", "b", "c"]  # a link already ranked stays where it was first placed
    assert with_links(ranking, [], {}, k=60) == ranking
