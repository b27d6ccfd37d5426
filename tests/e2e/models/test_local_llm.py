"""A real language model, run in-process: the packaged Qwen2.5-Coder-1.5B-Instruct (GGUF,
llama.cpp), for HyDE, the LLM judge and deadlines. Greedy decoding, so runs repeat.

(The packaged 0.5B model is faster but cannot judge Chinese: its yes/no margins between an
answering and an unrelated passage were -0.1 and 0.03, against 5.0 and 3.1 for the 1.5B.)"""
from __future__ import annotations

import re
import time

import pytest

from ragsift.cancel import Deadline
from ragsift.models.llm import LLMError, load_llm
from ragsift.retrieve import runner
from ragsift.text.prompts import get_prompt

MODEL = "local:qwen2.5-coder-1.5b"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    return load_llm(MODEL, cache=tmp_path_factory.mktemp("llmcache") / "cache.sqlite")


@pytest.mark.parametrize("question,expected_source,lang", [
    ("How many seconds do I need to hold the reset button to wipe the hub?", "smarthub_manual_en.md", "en"),
    ("基尼指数是怎么计算的？", "ml_textbook_zh.md", "zh"),
])
def test_a_real_hyde_run_with_the_local_model(sample_kb, llm, question, expected_source, lang):
    args = dict(channels=["dense", "bm25", "hyde", "hyde_bm25"], llm_model=MODEL, channel_timeout_s=300,
                llm_cache=str(llm.cache.path), hyde_max_tokens=128,
                translate=False)  # HyDE alone here (the sample is zh+en); translation has its own test
    res = sample_kb.query(question, **args)
    chans = {c.name: c for c in res.trace.channels}
    assert all(c.error is None for c in chans.values()), [c.error for c in chans.values()]
    hyp = res.trace.transforms["hyde"]["hypotheses"]
    assert len(hyp) == 1 and len(hyp[0]) > 20
    assert bool(CJK.search(hyp[0])) == (lang == "zh")  # the prompt follows the question's language
    assert chans["hyde"].hits and chans["hyde_bm25"].hits
    # the hypothesis, searched alone, finds the document that answers the question
    assert expected_source in {sample_kb.store.get_parents([h.parent_id])[h.parent_id].source
                               for h in chans["hyde"].hits[:3]}
    assert res.passages[0].source == expected_source
    # the same query again is served from the cache: same hypothesis, no generation
    hits = llm.hits
    t = time.perf_counter()
    again = sample_kb.query(question, **args)
    assert llm.hits == hits + 1 and again.trace.transforms["hyde"]["hypotheses"] == hyp
    assert time.perf_counter() - t < 5


def test_local_generation_stops_at_the_deadline(llm, capfd):
    capfd.readouterr()
    msgs = get_prompt("hyde", "en").messages(question="Explain the history of the Roman empire in detail.")
    t = time.perf_counter()
    with pytest.raises(LLMError, match="out of time"):
        llm.inner.generate(msgs, max_tokens=2000, temperature=0.7, seed=5, deadline=Deadline(1.0))
    assert time.perf_counter() - t < 1.5
    # a long prompt is aborted in the middle of its evaluation, and the model still works after
    long = get_prompt("judge", "en").messages(question="What is it?", passage="word " * 1500)
    t = time.perf_counter()
    with pytest.raises(LLMError, match="out of time"):
        llm.inner.yes_no(long, deadline=Deadline(0.3))
    assert time.perf_counter() - t < 0.8
    assert llm.inner.generate([{"role": "user", "content": "Say OK."}], max_tokens=4)
    # llama.cpp's own lines (the aborted decode) went to the 'ragsift.llama' logger, not onto stderr
    err = capfd.readouterr().err
    assert "decode" not in err and "llama" not in err, err


@pytest.mark.parametrize("question,good,bad", [
    ("How long should I hold the reset button to factory reset the hub?",
     "Factory reset: hold the reset button with a straightened paper clip for 12 seconds until the LED blinks white.",
     "Green tea should be stored in a refrigerator at zero to five degrees Celsius."),
    ("绿茶应该怎样保存？", "绿茶应在零至五摄氏度冷藏保存，密封避光。", "按住复位键12秒即可将集线器恢复出厂设置。"),
])
def test_the_llm_judge_prefers_the_passage_that_answers(llm, question, good, bad):
    from ragsift.models.rerankers import LLMJudgeReranker

    scores = LLMJudgeReranker(llm).score(question, [bad, good], Deadline(120))
    assert scores[1] > scores[0]


def test_a_slow_local_hyde_channel_times_out_and_the_query_still_answers(sample_kb, llm):
    t = time.perf_counter()
    res = sample_kb.query("What does it mean when the hub's light blinks amber three times?",
                          channels=["dense", "bm25", "hyde"], llm_model=MODEL, llm_cache=str(llm.cache.path),
                          hyde_mode="mean", hyde_samples=8, channel_timeouts={"hyde": 1.5},
                          translate=False)  # a translation would hold the model (and BM25) for its own time
    assert time.perf_counter() - t < 1.5 + runner.CANCEL_GRACE_S + 1.5
    chans = {c.name: c for c in res.trace.channels}
    assert chans["hyde"].error and chans["dense"].error is None and res.passages
    assert runner.active_channels() == 0


def test_summaries_by_the_local_model_index_their_sections(tmp_path, llm):
    from conftest import write_files

    from ragsift.kb import KnowledgeBase

    docs = write_files(tmp_path / "docs", {
        "en.md": "# Hub\n\n## Power\n\nThe hub takes 12 V from the supplied adapter. An amber LED means the "
                 "adapter delivers too little current; replace it if the LED stays amber.",
        "zh.md": "# 音箱\n\n## 电源\n\n音箱使用 20V 电源适配器供电。指示灯变为橙色表示电源功率不足，请更换原装适配器。"})
    kb = KnowledgeBase.open(tmp_path / "kb", small_index=("chunks", "summaries"), llm_model=MODEL,
                            llm_cache=str(llm.cache.path), channel_timeouts={"summary": 300})
    report = kb.ingest(docs)
    assert report.summaries == 2 and report.summary_fallbacks == 0
    entries = {ic.child.doc_id: ic.child for _, _, cs in kb.store.export() for ic in cs if ic.child.kind == "summary"}
    texts = [c.text for c in entries.values()]
    assert len(texts) == 2 and all(len(t) > 10 for t in texts)
    assert any(CJK.search(t) for t in texts) and any(not CJK.search(t) for t in texts)  # each in its language
    for q, word in (("What does an amber LED mean?", "amber"), ("指示灯橙色是什么意思", "橙色")):
        top = kb.query(q, index_kinds=["summary"]).passages[0]
        assert word in top.text and top.unit == "parent"


def test_a_real_translation_lets_bm25_find_the_chinese_section(sample_kb, llm):
    """English question, Chinese answer: the model translates the question, BM25 searches both."""
    q = "How is the Gini index calculated?"
    args = dict(channels=["dense", "bm25"], llm_model=MODEL, channel_timeout_s=300, llm_cache=str(llm.cache.path))
    without = sample_kb.query(q, **args, translate=False)
    res = sample_kb.query(q, **args)
    tr = res.trace.transforms["translate"]
    assert tr["error"] is None and "指数" in tr["translations"]["zh"]  # e.g. "Gini指数的计算方法是什么？"
    bm25 = {c.name: c for c in res.trace.channels}["bm25"]
    top = sample_kb.store.get_parents([bm25.hits[0].parent_id])
    assert next(iter(top.values())).source.endswith("ml_textbook_zh.md")
    assert "translate" not in without.trace.transforms
