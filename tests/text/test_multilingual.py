"""Text beyond plain Chinese and English: the Unicode analyzer (German, French, Japanese,
Korean, Russian beside Chinese and English), sentence ends after numbers and capitalised words,
language detection that says "other", and a knowledge base that keeps the analyzer it was
made with."""
import pytest

from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.text import detect_language, sentence_spans
from ragsift.text.analyzer import DEFAULT_ANALYZER, UnicodeAnalyzer, ZhEnAnalyzer, analyzer_for
from ragsift.text.lang import entry_languages

A = UnicodeAnalyzer()


@pytest.mark.parametrize("text, expected", [
    # German: umlauts and ß are letters of the word, not breaks
    ("Der Zug fährt zurück nach München", ["der", "zug", "fährt", "zurück", "nach", "münchen"]),
    ("Die Straße", ["die", "strass"]),  # casefold ß -> ss, then an ASCII word (stemmed)
    # French: elisions come off, accents stay
    ("L'hôpital d'Orléans", ["hôpital", "orléans"]),
    # English: clitics come off, stop words go, words are stemmed
    ("John's dogs don't bark", ["john", "dog", "don", "bark"]),
    # full-width letters and digits are NFKC-folded to ASCII
    ("型号ＡＸ－Ｈ１", ["型号", "ax", "h1"]),
    ("ﬁnance", ["financ"]),
    # Russian: Cyrillic words whole, case-folded
    ("Москва — столица", ["москва", "столица"]),
])
def test_unicode_analyzer_keeps_words_of_every_script(text, expected):
    assert A.terms(text) == expected


def test_japanese_and_korean_are_bigrams_so_a_word_inside_a_run_matches():
    doc = A.terms("東京タワーに行きました")
    assert {"タワ", "ワー"} <= set(doc) and "東京" in doc
    assert set(A.terms("タワー")) <= set(doc)  # the query's word is found inside the run
    doc_ko = A.terms("서울에서 친구를 만났다")
    assert set(A.terms("서울")) <= set(doc_ko)  # a noun with its particle attached still matches
    # the first analyzer dropped every kana and hangul character
    assert ZhEnAnalyzer().terms("서울에서") == [] and "タワ" not in ZhEnAnalyzer().terms("東京タワー")


def test_chinese_words_outside_jiebas_vocabulary_also_index_their_characters():
    terms = A.terms("骁龙芯片的性能")
    assert {"骁龙", "骁", "龙", "芯片", "性能"} <= set(terms) and "的" not in terms
    # an in-vocabulary word is not split further than jieba's search mode does
    assert A.terms("机器学习") == ZhEnAnalyzer().terms("机器学习")


def test_mixed_scripts_split_at_the_script_boundary():
    assert A.terms("iPhone手机 snake_case") == ["iphon", "手机", "snake", "case"]


def test_the_ascii_fast_path_gives_the_terms_of_the_general_one():
    """``terms`` reads ASCII text with one regular expression and one stemming call; the general
    way (``_terms``: NFKC, a match at a time) must give the same terms, in order."""
    import random
    from pathlib import Path

    import ragsift

    cases = ["John's dogs don't bark", "rock'n'roll at 5 o'clock", "'quoted' words'", "it's l'homme qu'il",
             "snake_case __init__ x_1", "IL-6 and TNF-alpha (p<0.05); 3.5% n=12", "tab\tnew\nline\x00nul",
             "A's B'S c''d e' 'f", "", "   ", "THE AND OF", "Running RUNS ran"]
    sample = Path(ragsift.__file__).parent / "sample"
    cases += [line for f in sorted(sample.rglob("*")) if f.is_file() and f.suffix in (".md", ".txt")
              for line in f.read_text(encoding="utf-8").splitlines() if line.isascii()]
    rng = random.Random(7)
    alphabet = "abcXYZ019 '_-.,;:!?\t\n\"()[]/\\&*%$#@~`^|<>{}+="
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    ascii_cases = [c for c in cases if c.isascii()]
    assert len(ascii_cases) > 3000
    for text in ascii_cases:
        assert A.terms(text) == A._terms(text), text
    # text with one non-ASCII character takes the general way, Chinese included
    assert A.terms("John’s dogs") == A._terms("John’s dogs") == ["john", "dog"]
    assert A.terms("机器学习 in Python") == A._terms("机器学习 in Python") == ["机器", "学习", "python"]


def test_first_analyzer_is_unchanged_for_old_knowledge_bases():
    assert ZhEnAnalyzer().terms("Der Zug fährt zurück") == ["der", "zug", "f", "hrt", "zur", "ck"]
    assert analyzer_for("ragsift-zh-en-v1").name == "ragsift-zh-en-v1"
    with pytest.raises(ConfigError, match="unknown analyzer 'x'.*ragsift-unicode-v2"):
        analyzer_for("x")


@pytest.mark.parametrize("text, expected", [
    ("It was founded in 2023. It is big.", ["It was founded in 2023.", "It is big."]),
    ("Logs are in UTC. Each line has a time.", ["Logs are in UTC.", "Each line has a time."]),
    ("I saw IBM. They were there.", ["I saw IBM.", "They were there."]),
    ("J. Smith wrote it. Then he left.", ["J. Smith wrote it.", "Then he left."]),
    ("The U.S. Army won. Next.", ["The U.S. Army won.", "Next."]),
    ("He met Dr. Who in St. Louis on Jan. 5. It rained.", ["He met Dr. Who in St. Louis on Jan. 5.", "It rained."]),
    ("Pi is 3.14 here. Smith et al. showed it.", ["Pi is 3.14 here.", "Smith et al. showed it."]),
    ("up to version 2. and so on", ["up to version 2. and so on"]),  # a lower-case word goes on
    ("Er kam um 12 Uhr an. Dann ging er z.B. heim.", ["Er kam um 12 Uhr an.", "Dann ging er z.B. heim."]),
    ("Il est arrivé à Paris. Ensuite il est parti.", ["Il est arrivé à Paris.", "Ensuite il est parti."]),
    ("它成立于2023年。它很大！", ["它成立于2023年。", "它很大！"]),
    ("東京に行きました。楽しかった。", ["東京に行きました。", "楽しかった。"]),
])
def test_sentences_end_after_numbers_and_capitalised_words(text, expected):
    assert [text[s:e] for s, e in sentence_spans(text)] == expected


@pytest.mark.parametrize("text, lang", [
    ("什么是 BERT?", "zh"), ("机器学习是人工智能的一个分支。", "zh"),
    ("What is the capital of France?", "en"), ("BERT attention heads", "en"), ("naïve Bayes classifier", "en"),
    ("Der Hund ist zurück in der Stadt", "other"), ("Le chat est sur la table", "other"),
    ("El perro está en la casa", "other"), ("東京タワーに行きました", "other"), ("서울에서 만나요", "other"),
    ("Москва — столица России", "other"), ("zurück", "other"),
])
def test_language_detection_says_other_for_languages_it_does_not_know(text, lang):
    assert detect_language(text) == lang


def test_an_entry_is_in_its_documents_language_unless_its_own_text_clearly_is_not():
    zh = "长按复位键十二秒即可恢复出厂设置，指示灯闪烁三次后松开。请勿在升级固件时断电。"
    command = "$ lsb_release -a\nDistributor ID: Debian\nRelease: unstable\nCodename: sid"
    control = ("控制文件样例如下：\nPackage: hello\nVersion: 2.9-2\nArchitecture: amd64\nMaintainer: Santiago Vila\n"
               "Depends: libc6 (>= 2.14)\nConflicts: hello-traditional\nSection: devel\nPriority: optional\n"
               "Description: example package based on GNU hello\n The GNU hello program produces a familiar, "
               "friendly greeting. It allows non-programmers to use a classic computer science tool.")
    prose = "The reset button restores the factory settings when it is held for twelve seconds."
    de = "Der Zug fährt um acht Uhr zurück nach München, und die Fahrt dauert drei Stunden."
    texts = [zh, command, control, prose, command, prose, de, command]
    docs = ["manual-zh", "manual-zh", "manual-zh", "manual-zh", "guide-en", "guide-en", "notes-de", "notes-de"]
    # a command's output and a configuration file in a Chinese manual are Chinese; English prose in
    # it stays English; in an English guide the command is English; in a German one, German (other)
    assert entry_languages(texts, docs) == ["zh", "zh", "zh", "en", "en", "en", "other", "other"]
    assert [detect_language(t) for t in (command, control)] == ["en", "en"]  # each read alone
    # a document is what its entries say together: a short Chinese line over a long English sample
    # is still a Chinese document (Han characters weigh as words do in detect_language)
    assert entry_languages([zh[:20], command * 3], ["d", "d"]) == ["zh", "zh"]  # 20 Han, 27 words
    assert entry_languages([zh[:10], command * 3], ["d", "d"]) == ["zh", "en"]  # 10 Han: English
    assert entry_languages([], []) == []


def _docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "ja.md").write_text("# 旅行\n\n東京タワーに行きました。夜景がきれいでした。\n", encoding="utf-8")
    (d / "ko.md").write_text("# 여행\n\n서울에서 친구를 만났다. 날씨가 좋았다.\n", encoding="utf-8")
    (d / "de.md").write_text("# Reise\n\nDer Zug fährt zurück nach München.\n", encoding="utf-8")
    (d / "en.md").write_text("# Setup\n\nHold the reset button for twelve seconds.\n", encoding="utf-8")
    (d / "zh.md").write_text("# 设置\n\n长按复位键十二秒恢复出厂设置。\n", encoding="utf-8")
    return d


def _bm25_docs(kb, q):
    """The files BM25 alone finds for ``q``, best first."""
    return [p.source.rsplit("/", 1)[-1] for p in kb.query(q, channels=["bm25"]).passages]


def test_a_knowledge_base_keeps_the_analyzer_it_was_made_with(tmp_path):
    docs = _docs(tmp_path)
    new = KnowledgeBase.open(tmp_path / "new", embedder="minilm")
    new.ingest([docs])
    assert new.settings.index.analyzer == DEFAULT_ANALYZER
    st = new.stats()
    assert st["analyzer"] == {"name": DEFAULT_ANALYZER, "current": True}
    for q, doc in [("タワー", "ja.md"), ("서울", "ko.md"), ("zurück", "de.md"), ("reset", "en.md"), ("复位键", "zh.md")]:
        assert _bm25_docs(new, q)[:1] == [doc], q
    new.close()

    # a settings file written before analyzers had versions: the knowledge base was made with v1
    old = KnowledgeBase.open(tmp_path / "old", embedder="minilm", analyzer="ragsift-zh-en-v1")
    old.ingest([docs])
    old.close()
    toml = tmp_path / "old" / "ragsift.toml"
    toml.write_text("\n".join(ln for ln in toml.read_text(encoding="utf-8").splitlines()
                              if not ln.startswith("analyzer")), encoding="utf-8")
    assert Settings.load(toml).index.analyzer == "ragsift-zh-en-v1"
    old = KnowledgeBase.open(tmp_path / "old")
    st = old.stats()
    assert st["analyzer"]["name"] == "ragsift-zh-en-v1" and not st["analyzer"]["current"]
    assert "re-ingest into a new knowledge base" in st["analyzer"]["note"]
    assert _bm25_docs(old, "서울") == []  # v1 has no terms for hangul: it finds nothing
    assert _bm25_docs(old, "复位键")[:1] == ["zh.md"]  # and still finds what it always did
    old.close()
    with pytest.raises(ConfigError, match="analyzer"):
        KnowledgeBase.open(tmp_path / "bad", analyzer="whitespace")


def _mixed(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "reset-en.md").write_text("# Setup\n\nHold the reset button for twelve seconds to restore factory "
                                   "settings.\n", encoding="utf-8")
    (d / "reset-zh.md").write_text("# 设置\n\n型号 AX-200 的复位键需长按十二秒，即可恢复出厂设置。\n", encoding="utf-8")
    (d / "tea-en.md").write_text("# Tea\n\nStore green tea in a refrigerator between zero and five degrees.\n",
                                 encoding="utf-8")
    (d / "tea-zh.md").write_text("# 茶\n\n绿茶应在零至五摄氏度冷藏保存，型号 AX-200 冰箱最合适。\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest([d])
    return kb


def test_a_term_hit_in_another_language_counts_cross_language_weight_in_fusion(tmp_path):
    kb = _mixed(tmp_path)
    zh_docs = {i for i, doc in kb.documents().items() if doc.source.endswith("-zh.md")}
    q = "How long do I hold reset on the AX-200?"  # English; the Chinese manuals share only "AX-200"
    full = kb.query(q, fusion="rrf", cross_language_weight=1.0)
    none = kb.query(q, fusion="rrf", cross_language_weight=0.0)
    bm25 = {c.name: c for c in full.trace.channels}["bm25"].hits
    dense = {c.name: c for c in full.trace.channels}["dense"].hits
    cross = [h for h in bm25 if h.doc_id in zh_docs]
    assert len(cross) == 2 and len(bm25) > len(cross)  # both Chinese manuals match on the model name only
    assert full.trace.language == "en"
    assert full.trace.fusion["cross_language"] == {"question": "en", "weight": 1.0, "hits": {"bm25": 2}}
    assert none.trace.fusion["cross_language"]["weight"] == 0.0
    f1, f0 = dict(full.trace.fused), dict(none.trace.fused)
    dense_rank = {h.parent_id: h.rank for h in dense}
    for h in bm25:  # RRF: a cross-language hit's vote is gone at weight 0, a same-language one stays
        with_dense = 1 / (60 + dense_rank[h.parent_id]) if h.parent_id in dense_rank else 0.0
        assert f1[h.parent_id] == pytest.approx(with_dense + 1 / (60 + h.rank))
        expected = with_dense if h.doc_id in zh_docs else with_dense + 1 / (60 + h.rank)
        assert f0.get(h.parent_id, 0.0) == pytest.approx(expected)
    # the same question in Chinese: the Chinese manuals are same-language, the English ones are not
    zh = kb.query("AX-200 复位键要按多久？", fusion="rrf")
    assert zh.trace.language == "zh"
    hits = {c.name: c for c in zh.trace.channels}["bm25"].hits
    assert zh.trace.fusion.get("cross_language", {}).get("hits", {}).get("bm25", 0) == \
        sum(h.doc_id not in zh_docs for h in hits)
    # a question whose words match only same-language entries says nothing about languages
    same = kb.query("restore factory settings", fusion="weighted")
    assert "cross_language" not in same.trace.fusion
    kb.close()


def test_a_command_in_a_chinese_manual_is_chinese_where_it_is_stored_and_fused(tmp_path):
    d = tmp_path / "cli"
    d.mkdir()
    (d / "cli-zh.md").write_text(
        "# 复位\n\n长按复位键十二秒即可恢复出厂设置，指示灯闪烁三次后松开。升级固件时请勿断电，否则设备可能无法启动。"
        "恢复出厂设置会清除全部网络配置和管理员密码。\n\n## 命令行\n\n```\n$ axctl reset --factory --model AX-200\n"
        "Device: AX-200\nFirmware: 3.1.4\nStatus: factory settings restored\n```\n", encoding="utf-8")
    (d / "cli-en.md").write_text("# Reset\n\nTo restore the factory settings, hold the reset button until the "
                                 "status light blinks three times.\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest([d])
    zh_doc = next(i for i, doc in kb.documents().items() if doc.source.endswith("cli-zh.md"))
    q = "axctl reset factory settings AX-200"
    res = kb.query(q, fusion="rrf", channels=["dense", "bm25"])
    bm25 = {c.name: c for c in res.trace.channels}["bm25"].hits
    assert any(h.doc_id == zh_doc for h in bm25)  # the English question's words are the command's
    # the command section is Chinese (its manual's language): its BM25 hit counts cross-language,
    # and a filter on Chinese keeps it (read alone, the command is English: neither would hold)
    assert res.trace.fusion["cross_language"]["hits"]["bm25"] == sum(h.doc_id == zh_doc for h in bm25) >= 1
    kept = kb.query(q, filter={"lang": "zh"}).passages
    assert any("axctl reset" in p.text for p in kept) and {p.source.rsplit("/", 1)[-1] for p in kept} == {"cli-zh.md"}
    kb.close()


def test_the_languages_a_question_is_translated_into_and_hyde_writes_in():
    from ragsift.retrieve.channels import CHANNELS
    from ragsift.retrieve.steps import Steps, corpus_languages

    assert corpus_languages({"zh": 90, "en": 12, "other": 5}) == ["zh", "en"]
    assert corpus_languages({"zh": 95, "en": 4, "other": 30}) == ["zh"]  # other: no prompt to translate into
    assert corpus_languages({}) == []
    s = Settings(llm_model="openai:any", channels=["dense", "bm25", "hyde"])
    chans = CHANNELS.build(s)

    def steps(question_lang, corpus, **kw):
        return Steps("q", question_lang, s.replace(**kw) if kw else s, chans, lambda: None, None, corpus)

    st = steps("en", {"zh": 100})  # English question, Chinese knowledge base
    assert st.targets == ["zh"] and st.written_language == "zh" and st.translation is not None
    st = steps("en", {"zh": 60, "en": 40})  # mixed: also searched in Chinese, HyDE stays in English
    assert st.targets == ["zh"] and st.written_language == "en"
    st = steps("zh", {"zh": 100})
    assert st.targets == [] and st.written_language == "zh" and st.translation is None
    st = steps("en", {"zh": 100}, translate=False)
    assert st.targets == [] and st.written_language == "en"
    assert steps("en", {"zh": 100}, llm_model="").targets == []  # no model: nothing to translate with


def test_use_multilingual_as_an_extra_embedder_serves_chinese_beside_minilm(tmp_path):
    """minilm is English-only; the fast multilingual model as a second vector per entry answers
    the Chinese question (its own channel, dense:use-multilingual)."""
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", extra_embedders=["use-multilingual"])
    kb.ingest([_docs(tmp_path)])
    r = kb.query("复位键要按多久？", channels=["dense:use-multilingual"])
    assert r.passages[0].source.endswith("zh.md")
    r = kb.query("How long do I hold the reset button?", channels=["dense:use-multilingual"])
    assert r.passages[0].source.endswith(("en.md", "zh.md"))  # the same manual in either language
    kb.close()
