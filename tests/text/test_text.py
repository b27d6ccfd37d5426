from ragsift.text import count_tokens, detect_language, sentence_spans
from ragsift.text.analyzer import UnicodeAnalyzer


def test_chinese_is_segmented_into_words_not_characters():
    terms = UnicodeAnalyzer().terms("监督学习使用带标签的数据训练模型")
    assert "监督" in terms and "学习" in terms and "数据" in terms
    assert "的" not in terms  # function word dropped


def test_english_is_lowercased_stemmed_and_stopworded():
    terms = UnicodeAnalyzer().terms("The Running dogs were trained on GPUs")
    assert terms == ["run", "dog", "train", "gpus"]


def test_same_analysis_at_index_and_query_time_for_mixed_text():
    a = UnicodeAnalyzer()
    doc = a.terms("长按 Reset 按钮 12 秒恢复出厂设置")
    query = a.terms("恢复出厂设置要按 reset 多少秒")
    assert {"恢复", "出厂", "设置", "reset"} <= set(doc) & set(query)


def test_detect_language():
    assert detect_language("什么是监督学习？") == "zh"
    assert detect_language("什么是 BERT 模型？") == "zh"
    assert detect_language("What is supervised learning?") == "en"


def test_sentence_spans_chinese_and_english():
    text = "监督学习使用标签。它包括回归和分类！对吗？是的；没错。Dr. Smith said e.g. this works. Pi is 3.14 here."
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["监督学习使用标签。", "它包括回归和分类！", "对吗？", "是的；", "没错。",
                   "Dr. Smith said e.g. this works.", "Pi is 3.14 here."]


def test_sentence_spans_split_paragraphs_and_list_items():
    text = "First line without stop\n\nSecond para\n- item one\n- item two"
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["First line without stop", "Second para", "- item one", "- item two"]


def test_count_tokens_counts_cjk_characters_and_words():
    assert count_tokens("监督学习 is great, 3.14!") == 4 + 2 + 1 + 3 + 1
