"""Sentence highlights (``retrieve.highlight``): inside a matched child, the sentences that match
the question, in Chinese and English; and on the sample knowledge base, passages carry them."""
from __future__ import annotations

import pytest

from ragsift.retrieve.highlight import best_sentences
from ragsift.text.analyzer import analyzer_for
from ragsift.types import Span

A = analyzer_for("ragsift-unicode-v2")
EN = ("The hub has four ports on its back. To wipe the hub, hold the reset button for ten seconds. "
      "The light then blinks blue. Updates arrive over Wi-Fi every night.")
ZH = "音箱支持蓝牙连接。恢复出厂设置时，同时按住音量加键和电源键五秒。指示灯闪烁红色后松开。固件会在夜间自动更新。"


def picked(text: str, question: str, spans: list[Span] | None = None) -> list[str]:
    spans = spans if spans is not None else [Span("d#p0#c0", 0, len(text), ("bm25", "dense"))]
    return [text[s.start:s.end] for s in best_sentences(text, spans, question, A)]


@pytest.mark.parametrize("text,question,sentence", [
    (EN, "How many seconds do I hold the reset button to wipe the hub?",
     "To wipe the hub, hold the reset button for ten seconds."),
    (ZH, "恢复出厂设置要按哪些键？", "恢复出厂设置时，同时按住音量加键和电源键五秒。"),
    (ZH, "固件怎么更新", "固件会在夜间自动更新。"),
])
def test_only_the_sentence_that_answers_is_picked(text, question, sentence):
    assert picked(text, question) == [sentence]


def test_words_of_the_heading_count_less_than_the_question_s_other_words():
    text = ("恢复出厂设置会清除音箱中保存的所有数据。如果只是更换路由器，无需恢复出厂设置。"
            "操作方法：同时长按音量减键和静音键 8 秒，然后松开按键。")
    question = "恢复出厂设置要按哪些键？"
    span = [Span("d#p8#c0", 0, len(text), ("bm25",))]
    with_heading = [text[s.start:s.end] for s in best_sentences(text, span, question, A, "说明书 > 故障排除 > 恢复出厂设置")]
    assert with_heading == ["操作方法：同时长按音量减键和静音键 8 秒，然后松开按键。"]
    assert "恢复出厂设置会清除音箱中保存的所有数据。" in picked(text, question)  # without, the heading's words count whole


def test_a_picked_sentence_keeps_its_child_and_channels_and_lies_inside_it():
    prefix = "# Reset\n\n"
    text = prefix + EN
    (s,) = best_sentences(text, [Span("d#p3#c1", len(prefix), len(text), ("bm25",))], "reset button", A)
    assert s.child_id == "d#p3#c1" and s.channels == ("bm25",)
    assert len(prefix) <= s.start < s.end <= len(text) and "reset button" in text[s.start:s.end]


def test_a_word_in_every_sentence_does_not_pick_them_all():
    # "hub" is in every sentence: at most two of four, and the one with the rarer words first
    text = "The hub is small. The hub is white. The hub resets with its button. The hub is quiet."
    out = picked(text, "hub reset button")
    assert out == ["The hub resets with its button."]
    every = "The hub is small. The hub is white. The hub is round. The hub is quiet."
    assert 1 <= len(picked(every, "hub")) <= 2


def test_a_two_sentence_child_never_has_both_marked_nor_a_sentence_without_the_question_words():
    text = "Press the reset button. Then press the reset button again."
    assert len(picked(text, "reset button")) == 1
    assert picked("只有一句话讲蓝牙配对", "蓝牙配对") == ["只有一句话讲蓝牙配对"]  # one sentence: itself
    assert picked(EN, "绿茶怎么保存") == []  # no word in common (a dense-only match): no sentence
    assert picked(EN, "the of and") == []  # only stop words


def test_overlapping_children_give_each_sentence_once_in_text_order():
    spans = [Span("c0", 0, 120, ("dense",)), Span("c1", 30, len(EN), ("bm25",))]
    out = best_sentences(EN, spans, "reset button wifi updates every night", A)
    assert [(s.start, s.end) for s in out] == sorted({(s.start, s.end) for s in out})
    assert any("reset button" in EN[s.start:s.end] for s in out)


@pytest.mark.parametrize("question,word", [("恢复出厂设置要按哪些键？", "静音键"),
                                           ("How do I factory reset the hub?", "reset")])
def test_passages_carry_sentences_shorter_than_their_chunks(sample_kb, question, word):
    res = sample_kb.query(question)
    top = res.passages[0]
    assert top.sentences, top
    for s in top.sentences:
        inside = [m for m in top.matched if m.start <= s.start and s.end <= m.end]
        assert inside and s.child_id in {m.child_id for m in inside}
    assert any(word in top.text[s.start:s.end] for s in top.sentences)
    longest = max(m.end - m.start for m in top.matched)
    assert all(s.end - s.start < longest for s in top.sentences)
    assert res.to_dict()["passages"][0]["sentences"][0]["start"] == top.sentences[0].start
