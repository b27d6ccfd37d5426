"""Honest confidence (issue 53), in Chinese and English, on a real knowledge base (the packaged
e5-small embedder, the LanceDB store): a question with nothing to search and a question the
knowledge base has no answer to are said to be no good match, with the reason; a real question is
not; each passage's dense similarity is the cosine of the model's own vectors, computed here
apart; MCP ``search`` holds its text to ``max_tokens`` (counted here with the documented unit); the
command line and the HTTP API show the flag."""
from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ragsift.cli import main
from ragsift.kb import KnowledgeBase
from ragsift.mcp.tools import SinglePool, build_mcp
from ragsift.retrieve.confidence import standout
from ragsift.server.app import create_app
from ragsift.server.config import ServerConfig
from ragsift.text.tokens import count_tokens

# one paragraph each, without title or heading: what is embedded is the text itself
DOCS = [
    {"id": "zh-reset", "text": "星云音箱恢复出厂设置：同时长按音量加键和静音键十秒，直到顶部光环变成红色后松开，"
                               "音箱会清除全部数据并自动重启。"},
    {"id": "zh-tea", "text": "绿茶的冲泡水温以八十度左右为宜，水温过高会烫熟茶叶，使茶汤苦涩，香气也会散失。"},
    {"id": "en-reset", "text": "To factory reset the SmartHub, hold the reset button with a paper clip for twelve "
                               "seconds until the ring light blinks orange; all settings are erased."},
    {"id": "en-bread", "text": "Sourdough bread rises slowly because wild yeast and lactic acid bacteria ferment "
                               "the dough; a warm kitchen shortens the proof to about four hours."},
]
REAL = {"zh": ("星云音箱怎么恢复出厂设置？", "zh-reset"), "en": ("How do I factory reset the SmartHub?", "en-reset")}
UNRELATED = {"zh": "第二次世界大战中诺曼底登陆的指挥官是谁？", "en": "Who was the first emperor of the Roman Empire?"}
NOTHING = {"zh": "？！。……", "en": "😀😀", "symbols": "?? -- !!"}


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("confidence") / "kb")
    kb.add_documents(DOCS)
    yield kb
    kb.close()


@pytest.mark.parametrize("lang", list(NOTHING))
def test_a_question_with_nothing_to_search_is_no_good_match_and_returns_nothing(kb, lang):
    r = kb.query(NOTHING[lang])
    assert r.no_good_match and r.passages == ()
    assert r.match.reason.startswith("the question has nothing to search")
    d = r.to_dict()
    assert d["no_good_match"] is True and d["passages"] == [] and d["match"]["reason"] == r.match.reason


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_question_without_an_answer_is_no_good_match(kb, lang):
    r = kb.query(UNRELATED[lang])
    assert r.passages, "the passages are still returned, flagged weak"
    assert r.no_good_match
    assert r.match.similarity is not None and r.match.similarity < r.match.min_similarity
    assert f"below {r.match.min_similarity:g} (min_similarity)" in r.match.reason


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_real_question_is_a_good_match(kb, lang):
    question, doc = REAL[lang]
    r = kb.query(question)
    assert not r.no_good_match and r.match.reason == ""
    assert r.passages[0].doc_id == doc
    assert r.passages[0].similarity >= r.match.min_similarity or r.passages[0].term_match >= r.match.min_term_match


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_channel_scores_are_the_models_cosine_and_bm25(kb, lang):
    question, doc = REAL[lang]
    r = kb.query(question, max_passages=4)
    embedder = kb.embedder()
    q = embedder.embed_queries([question])[0].astype(np.float64)
    texts = {d["id"]: d["text"] for d in DOCS}
    for p in r.passages:
        assert -1.0 <= p.similarity <= 1.0
        v = embedder.embed_passages([texts[p.doc_id]])[0].astype(np.float64)
        cosine = float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
        assert p.similarity == pytest.approx(cosine, abs=2e-3), p.doc_id
        assert p.scores["dense"] == p.similarity
        assert 0.0 <= p.term_match <= 1.0
    top = r.passages[0]
    assert top.scores["bm25"] > 0 and top.term_match == 1.0  # every search term of the question is in it
    others = [p for p in r.passages if p.doc_id != doc]
    assert all(p.similarity < top.similarity for p in others)
    # the fused score ranks; the similarity is what compares across questions
    assert top.to_dict()["similarity"] == top.similarity and top.to_dict()["scores"] == top.scores


def _search(server, **arguments):
    result = asyncio.run(server.call_tool("search", arguments))
    return result.content[0].text, result.structured_content


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mcp_search_holds_its_text_to_max_tokens(kb, lang):
    server = build_mcp(SinglePool(kb))
    question = REAL[lang][0]
    text, full = _search(server, question=question, passages=4)
    assert full["dropped"] == 0 and len(full["passages"]) == 4 and full["tokens"] == count_tokens(text)
    budget = count_tokens(text) - 10  # the whole answer does not fit: the last passage is cut or left out
    text, data = _search(server, question=question, passages=4, max_tokens=budget)
    assert count_tokens(text) <= budget and data["tokens"] == count_tokens(text) and data["max_tokens"] == budget
    assert f"To fit max_tokens={budget} (ragsift tokens): " in text
    assert data["dropped"] >= 1 or data["passages"][-1]["truncated"]
    assert [p["citation"] for p in data["passages"]] == list(range(1, len(data["passages"]) + 1))
    for p in data["passages"]:
        assert f"[{p['citation']}] {p['source']}" in text and p["text"] in text
    for budget in (100, 150, 400):  # down to the smallest budget allowed
        text, data = _search(server, question=question, passages=4, max_tokens=budget)
        assert count_tokens(text) <= budget and data["passages"], budget


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mcp_search_says_a_weak_match_is_weak(kb, lang):
    server = build_mcp(SinglePool(kb))
    text, data = _search(server, question=UNRELATED[lang])
    assert data["no_good_match"] is True and data["reason"]
    assert text.startswith(f"No good match: {data['reason']}. These passages are weak")
    text, data = _search(server, question=NOTHING["en"])
    assert data["no_good_match"] is True and data["passages"] == []
    assert text.startswith("No good match: the question has nothing to search")
    text, data = _search(server, question=REAL[lang][0])
    assert data["no_good_match"] is False and not text.startswith("No good match")


def test_the_command_line_shows_the_flag(kb, capsys):
    args = ["--kb", str(kb.path), "query"]
    assert main([*args, UNRELATED["zh"]]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no good match: the best similarity to the question") and "passages below are weak" in out
    assert main([*args, NOTHING["en"], "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["no_good_match"] is True and d["passages"] == [] and "nothing to search" in d["match"]["reason"]
    assert main([*args, REAL["en"][0]]) == 0
    out = capsys.readouterr().out
    assert "no good match" not in out and "similarity 0." in out


def test_the_http_api_shows_the_flag(kb):
    with TestClient(create_app(ServerConfig(kb=kb.path, mcp=False))) as c:
        for question, weak in ((UNRELATED["en"], True), (NOTHING["zh"], True), (REAL["zh"][0], False)):
            body = c.post("/v1/query", json={"question": question}).json()
            assert body["no_good_match"] is weak and bool(body["match"]["reason"]) is weak
            for p in body["passages"]:
                assert -1 <= p["similarity"] <= 1 and 0 <= p["term_match"] <= 1 and "dense" in p["scores"]
        schema = c.get("/openapi.json").json()["components"]["schemas"]
        assert {"no_good_match", "match"} <= set(schema["QueryResponse"]["properties"])
        assert {"similarity", "term_match", "scores"} <= set(schema["Passage"]["properties"])


def test_standout_is_the_best_minus_the_mean_of_the_next_49():
    rng = np.random.default_rng(7)
    sims = rng.uniform(0.6, 0.9, 120).tolist()
    top = np.sort(np.array(sims))[::-1][:50]
    assert standout(sims) == pytest.approx(top[0] - top[1:].mean(), abs=1e-6)
    assert standout(sims[:11]) is not None and standout(sims[:10]) is None  # at least 10 others


# Chinese paragraphs on unlike subjects: a list long enough for the standout (over 10 sections)
ZH_DOCS = DOCS[:2] + [{"id": f"zh-{i}", "text": t} for i, t in enumerate([
    "长城是中国古代的军事防御工程，东起山海关，西至嘉峪关，全长两万多公里。",
    "光合作用是植物利用阳光把二氧化碳和水合成有机物并释放氧气的过程。",
    "围棋起源于中国，棋盘由十九条横线和十九条竖线组成，黑白双方轮流落子。",
    "高铁列车的最高运营速度可达每小时三百五十公里，大大缩短了城市之间的距离。",
    "熊猫主要生活在四川的山区，以竹子为食，每天要花十几个小时进食。",
    "二十四节气是古人根据太阳运行制定的历法，用来指导农业生产。",
    "唐诗是中国古典诗歌的高峰，李白和杜甫是其中最著名的两位诗人。",
    "豆腐是用黄豆磨浆后加入石膏或卤水凝固而成的食品。",
    "长江是亚洲最长的河流，发源于青藏高原，最后流入东海。",
    "太极拳讲究以柔克刚，动作缓慢连贯，适合各个年龄段的人练习。",
    "造纸术是中国古代四大发明之一，东汉的蔡伦改进了造纸的方法。",
    "火锅起源于重庆和四川，麻辣锅底用牛油、辣椒和花椒熬制。",
])]


@pytest.fixture(scope="module")
def zh_kb(tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("confidence-zh") / "kb")
    kb.add_documents(ZH_DOCS)
    yield kb
    kb.close()


def test_an_english_question_over_chinese_passages_is_judged_by_its_standout(zh_kb):
    question = "How do I restore the Nebula speaker to factory settings?"
    r = zh_kb.query(question)
    assert r.passages[0].doc_id == "zh-reset"
    m = r.match
    assert m.cross_language is True  # an English question, its best match Chinese
    dense = [s for _, s in zh_kb.search(question).rankings["dense"]]  # one raw cosine per section
    top = np.sort(np.array(dense))[::-1][:50]
    assert m.standout == pytest.approx(top[0] - top[1:].mean(), abs=1e-5)
    assert m.similarity < m.min_similarity  # across languages every similarity is low ...
    assert m.standout >= m.min_standout and not r.no_good_match  # ... but the right one stands out
    same = zh_kb.query(REAL["zh"][0]).match  # a Chinese question: its standout does not count
    assert same.cross_language is False and not zh_kb.query(REAL["zh"][0]).no_good_match


def test_an_empty_knowledge_base_says_so(tmp_path):
    empty = KnowledgeBase.open(tmp_path / "kb")
    for question in (REAL["zh"][0], REAL["en"][0]):
        r = empty.query(question)
        assert r.no_good_match and r.passages == ()
        assert r.match.reason == "the knowledge base is empty: ingest documents first"


def test_only_bm25_judges_by_terms(kb):
    r = kb.query(UNRELATED["en"], channels=["bm25"])  # no dense channel: no similarity to judge by
    assert r.match.similarity is None and r.no_good_match
    assert r.match.reason == "no passage was found: none of the question's search terms is in the knowledge base"
    r = kb.query(REAL["zh"][0], channels=["bm25"])
    assert not r.no_good_match and r.passages[0].term_match == 1.0 and r.passages[0].similarity is None
