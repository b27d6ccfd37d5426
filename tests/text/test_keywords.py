"""Keywords, entities and key sentences (ragsift.text.keywords, .entities, .textrank) on small
real documents."""
from __future__ import annotations

import pytest

from ragsift.text import sentence_spans
from ragsift.text.analyzer import UnicodeAnalyzer
from ragsift.text.entities import ENTITY_TYPES, entities, entity_terms
from ragsift.text.keywords import keyword_terms, keywords
from ragsift.text.textrank import key_sentences

ZH_MANUAL = """星云智能音箱 S2 使用说明

星云智能音箱 S2 是星云科技有限公司与清华大学联合研发的一款智能音箱。产品经理张伟在上海举行的发布会上介绍了它的主要功能，华为也为这款音箱提供了鸿蒙互联支持。

智能音箱支持语音助手、蓝牙连接和 Wi-Fi 6 网络。用户可以通过星云手机应用控制家中的智能灯泡、空调和扫地机器人。音箱内置四个麦克风阵列，能够在五米范围内识别语音指令。

首次使用时，请长按音箱顶部的电源键三秒钟。指示灯变为蓝色后，打开星云应用完成配网。如果配网失败，请将音箱靠近路由器后重试。

更多语音指令示例见《星云智能音箱用户手册》。售后服务由星云科技在北京和深圳的服务中心提供。
"""

EN_MANUAL = """Aurora SmartHub X1 User Guide

The Aurora SmartHub X1 is a home automation hub made by Aurora Labs in Paris. It connects smart lights, door sensors and the AX-H1 solar panel controller over Zigbee and Wi-Fi 6.

Marie Curie, the lead engineer at Aurora Labs, explained that solar panel cleaning is the most common maintenance task. Dust on the solar panel reduces output by up to 20 percent, so the hub reminds you when solar panel cleaning is due.

To set up the hub, plug it into a power outlet and open the Aurora Home app. Press the pairing button for five seconds until the status light blinks blue. If pairing fails, move the hub closer to your router and try again.

Firmware updates are downloaded automatically every night. Dr. Lin Zhang leads the support team at the University of Oxford, and support offices in Berlin and Tokyo answer questions about the XY-PA20 adapter.
"""

EN_BIO = (
    "Marie Curie was born in Warsaw and later moved to Paris. She won the Nobel Prize twice. "
    "Her husband Pierre Curie worked with her at the University of Paris. Press the red button to "
    "open the archive. Albert Einstein admired her work."
)

ZH_NEWS = "李娜参观了复旦大学。玛丽·居里出生于华沙，后来在巴黎工作。小米和腾讯在深圳都有办公室。王芳说华为的新手机很好用。"


def _words(phrases):
    return [p for p, _ in phrases]


# ------------------------------------------------------------------------------------ keywords
def test_chinese_keywords_find_the_product_and_its_topics():
    got = keywords(ZH_MANUAL, k=10)
    words = _words(got)
    assert len(got) == 10
    assert "音箱" in words[:5]
    assert "星云智能音箱" in words[:3] and "智能音箱" in words[:5]  # side-by-side words joined
    assert "语音指令" in words
    assert "s2" in words  # Latin model code kept, lower-cased
    assert "Wi" not in words and "Fi" not in words  # jieba's fragments of "Wi-Fi" are not keywords
    assert "的" not in words and "请长" not in words


def test_english_keywords_are_lowercase_multiword_phrases():
    got = keywords(EN_MANUAL, k=10)
    words = _words(got)
    assert words[0] == "solar panel cleaning"
    assert "aurora smarthub x1" in words[:5]
    assert "home automation hub" in words
    assert "common maintenance task" in words
    assert all(w == w.lower() for w in words)
    # phrases stop at stopwords and verbs: no "light blinks", no "the ..."
    assert not any(w.split()[0] in {"the", "a", "and", "of"} for w in words)
    assert not any("blinks" in w or "reduces" in w for w in words)


def test_keyword_scores_are_sorted_relative_and_limited_by_k():
    for text in (ZH_MANUAL, EN_MANUAL):
        got = keywords(text, k=6)
        assert len(got) == 6
        scores = [s for _, s in got]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] == 1.0 and all(0 < s <= 1.0 for s in scores)
        assert len({p for p, _ in got}) == len(got)
    assert keywords(EN_MANUAL, k=0) == []


def test_mixed_text_gets_chinese_words_and_english_phrases():
    text = "星云智能音箱的语音助手可以控制智能灯泡，智能音箱也能播放音乐。The solar panel controller reports solar panel temperature."
    words = _words(keywords(text, k=10))
    assert "智能音箱" in words or "音箱" in words
    assert any("solar panel" in w for w in words)


# ------------------------------------------------------------------------------------ entities
def test_chinese_entities_with_types():
    got = entities(ZH_MANUAL)
    assert {t for _, t in got} <= set(ENTITY_TYPES)
    d = dict(got)
    assert d["张伟"] == "person"
    assert d["上海"] == "place" and d["北京"] == "place" and d["深圳"] == "place"
    assert d["清华大学"] == "org"
    assert d["华为"] == "org"  # jieba tags 华为 as a person name; corrected
    assert d["星云科技有限公司"] == "org"  # nouns + organisation suffix joined
    assert d["星云智能音箱 S2"] == "product"  # model code with the nouns before it
    assert d["Wi-Fi 6"] == "product"
    assert d["星云智能音箱用户手册"] == "other"  # a 《title》
    assert "蓝牙" not in d and "麦克风" not in d  # common nouns jieba tags as names
    assert "S2" not in d  # only inside the longer product name here
    names = [n for n, _ in got]
    assert names.index("星云智能音箱 S2") < names.index("张伟") < names.index("北京")  # order of appearance


def test_chinese_person_names_across_the_dot_and_known_companies():
    d = dict(entities(ZH_NEWS))
    assert d["李娜"] == "person" and d["王芳"] == "person"
    assert d["玛丽·居里"] == "person"
    assert d["复旦大学"] == "org"
    assert d["华沙"] == "place" and d["巴黎"] == "place" and d["深圳"] == "place"
    assert d["小米"] == "org" and d["腾讯"] == "org" and d["华为"] == "org"


def test_english_entities_with_types():
    got = entities(EN_MANUAL)
    d = dict(got)
    assert d["Aurora SmartHub X1"] == "product"
    assert d["AX-H1"] == "product" and d["XY-PA20"] == "product"
    assert d["Wi-Fi 6"] == "product"
    assert d["Aurora Home"] == "product"  # "... the Aurora Home app"
    assert d["Aurora Labs"] == "org"
    assert d["University of Oxford"] == "org"
    assert d["Paris"] == "place" and d["Berlin"] == "place" and d["Tokyo"] == "place"
    assert d["Marie Curie"] == "person"
    assert d["Lin Zhang"] == "person"  # "Dr." marks a person and is not part of the name
    # sentence-initial common words and heading words are not entities
    for word in ("The", "Dust", "Firmware", "Press", "To", "If", "User Guide", "Aurora Labs in Paris"):
        assert word not in d
    names = [n for n, _ in got]
    assert len(names) == len({n.casefold() for n in names})
    assert names.index("Aurora SmartHub X1") < names.index("Marie Curie") < names.index("XY-PA20")


def test_english_entities_in_a_biography():
    d = dict(entities(EN_BIO))
    assert d["Marie Curie"] == "person" and d["Pierre Curie"] == "person" and d["Albert Einstein"] == "person"
    assert d["Warsaw"] == "place" and d["Paris"] == "place"
    assert d["University of Paris"] == "org"
    assert d["Nobel Prize"] == "other"
    assert "Press" not in d and "She" not in d and "Her" not in d


def test_model_codes_and_versions_in_plain_text():
    d = dict(entities("Pair the S2 with the XY-PA20 dock over Bluetooth 5.3. Hold 5 seconds. See Chapter 2."))
    assert d == {"S2": "product", "XY-PA20": "product", "Bluetooth 5.3": "product"}
    d = dict(entities("请把音箱S2放在客厅"))
    assert d == {"音箱S2": "product"}


# ------------------------------------------------------------------------------- key sentences
def _check_spans(text, spans):
    all_spans = sentence_spans(text)
    assert spans == sorted(spans)
    for s, e in spans:
        assert (s, e) in all_spans  # an exact sentence of the text
        assert text[s:e] == text[s:e].strip() and text[s:e]


def test_key_sentences_are_exact_sentences_in_document_order():
    for text in (ZH_MANUAL, EN_MANUAL):
        got = key_sentences(text, k=3)
        assert len(got) == 3
        _check_spans(text, got)


def test_key_sentences_pick_the_central_sentence_english():
    text = (
        "Solar panels need cleaning. "
        "The battery stores energy overnight. "
        "Solar panel cleaning keeps the battery charged and the inverter efficient. "
        "An inverter converts current. "
        "Dogs like long walks."
    )
    got = key_sentences(text, k=1)
    assert [text[s:e] for s, e in got] == [
        "Solar panel cleaning keeps the battery charged and the inverter efficient."
    ]
    _check_spans(text, key_sentences(text, k=2))


def test_key_sentences_pick_the_central_sentence_chinese():
    text = "电池需要定期充电。太阳能板容易积灰。定期清洁太阳能板可以让电池充满并保护逆变器。逆变器负责转换电流。今天天气很好。"
    got = key_sentences(text, k=1)
    assert [text[s:e] for s, e in got] == ["定期清洁太阳能板可以让电池充满并保护逆变器。"]


def test_key_sentences_return_all_when_few():
    text = "First sentence here. Second one there."
    assert key_sentences(text, k=3) == sentence_spans(text)
    assert key_sentences("只有一句话。", k=3) == [(0, 6)]


# ---------------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("text", ["", "   ", "\n\t \n", "。。。", "!!! ... ???"])
def test_empty_and_blank_text(text):
    assert keywords(text) == []
    assert entities(text) == []
    assert key_sentences(text) == []
    assert keyword_terms(text, 5) == ""
    assert entity_terms(text) == ""


def test_results_are_deterministic():
    for text in (ZH_MANUAL, EN_MANUAL, EN_BIO, ZH_NEWS):
        assert keywords(text, 8) == keywords(text, 8)
        assert entities(text) == entities(text)
        assert key_sentences(text, 2) == key_sentences(text, 2)
        assert keyword_terms(text, 8) == keyword_terms(text, 8)


# --------------------------------------------------------------------------------- index terms
def test_keyword_terms_use_the_bm25_analyzer():
    analyzer = UnicodeAnalyzer()
    terms = keyword_terms(EN_MANUAL, 5).split()
    assert terms[:3] == ["solar", "panel", "clean"]  # "solar panel cleaning", stemmed
    assert len(terms) == len(set(terms))
    assert set(terms) <= set(analyzer.terms(EN_MANUAL))
    zh_terms = keyword_terms(ZH_MANUAL, 5).split()
    assert {"星云", "智能", "音箱"} <= set(zh_terms)
    # a query analysed the same way matches the keyword field
    assert set(analyzer.terms("怎么清洁智能音箱")) & set(zh_terms)


def test_entity_terms_use_the_bm25_analyzer():
    terms = entity_terms(EN_MANUAL).split()
    assert {"mari", "curi", "pari", "oxford", "xy", "pa20"} <= set(terms)
    assert len(terms) == len(set(terms))
    zh_terms = entity_terms(ZH_MANUAL).split()
    assert {"张伟", "上海", "清华大学", "华为", "s2"} <= set(zh_terms)
