"""The LLM layer, HyDE, rewriting, multi-query and reranking against a stub endpoint that
injects faults (tests/fault_llm_server.py). Real retrieval, real store, real embedder; the
stub stands in only for the remote model, to make it hang, fail or talk nonsense."""
from __future__ import annotations

import time

import numpy as np
import pytest
from fault_llm_server import FaultInjectingLLMServer

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.models.llm import CachedLLM, LLMCache, LLMError
from ragsift.models.llm.base import yes_no_from_logprobs
from ragsift.models.llm.openai_chat import OpenAILLM
from ragsift.retrieve import runner
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.transforms import Hypotheses, hyde_text, hyde_vector
from ragsift.text.prompts import clean_answer

MSGS = [{"role": "user", "content": "hello"}]
LLM_CHANNELS = ["dense", "bm25", "hyde", "hyde_bm25", "multi_query"]
HYPOTHESIS = ("To factory reset the hub, hold the reset button with a straightened paper clip for "
              "12 seconds until the light turns white.")


def _llm(server, **kw) -> OpenAILLM:
    return OpenAILLM("stub", base_url=server.url, **kw)


# ------------------------------------------------------------------ the client on its own
def test_a_good_answer_comes_back_stripped():
    with FaultInjectingLLMServer("ok", answer="  a passage \n") as srv:
        assert _llm(srv).generate(MSGS) == "a passage"
        assert srv.bodies[0]["model"] == "stub" and srv.bodies[0]["temperature"] == 0.0


@pytest.mark.parametrize("mode,message,requests", [
    ("500", "HTTP 500", 3),            # transient: retried max_retries (2) times
    ("close", "connection error", 3),  # transient: retried
    ("garbage", "bad response", 1),    # not retried: the endpoint is not speaking the protocol
    ("empty", "empty answer", 1),
])
def test_endpoint_faults_raise_a_clear_error_after_bounded_retries(mode, message, requests):
    with FaultInjectingLLMServer(mode) as srv:
        with pytest.raises(LLMError, match=message):
            _llm(srv, max_retries=2).generate(MSGS, deadline=Deadline(10))
        assert srv.requests == requests


def test_a_hanging_endpoint_is_abandoned_at_the_deadline_and_the_connection_closed():
    with FaultInjectingLLMServer("hang") as srv:
        llm = _llm(srv)
        t = time.perf_counter()
        with pytest.raises(LLMError, match="timed out|out of time"):
            llm.generate(MSGS, deadline=Deadline(0.5))
        assert 0.45 < time.perf_counter() - t < 1.0
        for _ in range(40):  # the server sees the client go away
            if srv.disconnects:
                break
            time.sleep(0.05)
        assert srv.disconnects == 1 and srv.requests == 1


def test_the_concurrency_limit_caps_calls_in_flight():
    import threading

    with FaultInjectingLLMServer("hang") as srv:
        llm = _llm(srv, max_concurrency=2)
        threads = [threading.Thread(target=lambda: pytest.raises(LLMError, llm.generate, MSGS,
                                                                 deadline=Deadline(0.6))) for _ in range(4)]
        for th in threads:
            th.start()
        time.sleep(0.4)
        assert srv.requests == 2  # two calls wait for a slot
        for th in threads:
            th.join()


def test_the_cache_is_keyed_by_model_messages_and_sampling_and_persists(tmp_path):
    with FaultInjectingLLMServer("ok", answer="cached text") as srv:
        llm = CachedLLM(_llm(srv), LLMCache(tmp_path / "c.sqlite"))
        assert llm.generate(MSGS) == "cached text"
        assert llm.generate(MSGS) == "cached text" and srv.requests == 1
        llm.generate(MSGS, temperature=0.7, seed=1)
        llm.generate([{"role": "user", "content": "other"}])
        assert srv.requests == 3
        again = CachedLLM(_llm(srv), LLMCache(tmp_path / "c.sqlite"))  # a new process, same file
        assert again.generate(MSGS) == "cached text" and srv.requests == 3 and again.hits == 1
    with FaultInjectingLLMServer("500") as srv:  # failures are not cached
        llm = CachedLLM(_llm(srv, max_retries=0), LLMCache(tmp_path / "d.sqlite"))
        for _ in range(2):
            with pytest.raises(LLMError):
                llm.generate(MSGS)
        assert srv.requests == 2


def test_the_cache_is_bounded_least_recently_used_first_and_by_age(tmp_path):
    import sqlite3

    path = tmp_path / "bounded.sqlite"
    old = sqlite3.connect(path)  # a cache file written before the bound existed
    old.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    old.execute("INSERT INTO answers VALUES ('legacy', '\"旧答案\"')")
    old.commit()
    old.close()
    cache = LLMCache(path, max_entries=5)
    assert cache.get("legacy") == "旧答案" and len(cache) == 1
    for i in range(4):
        cache.put(f"k{i}", f"answer {i} 答案")
        time.sleep(0.01)
    assert cache.get("legacy") == "旧答案"  # used again: now the most recent
    for i in range(4, 8):
        cache.put(f"k{i}", f"answer {i}")
        time.sleep(0.01)
    assert len(cache) == 5
    assert [k for k in ["legacy", *(f"k{i}" for i in range(8))] if cache.get(k) is not None] == [
        "legacy", "k4", "k5", "k6", "k7"]
    # by age: answers unused for longer than max_age_s are gone when the cache is next opened
    db = sqlite3.connect(path)
    db.execute("UPDATE answers SET used = used - 3600 WHERE key IN ('k4', 'k5')")
    db.commit()
    db.close()
    aged = LLMCache(path, max_entries=5, max_age_s=1800)
    assert len(aged) == 3 and aged.get("k4") is None and aged.get("k6") == "answer 6"


def test_yes_no_scores_from_logprobs_and_from_plain_answers():
    assert yes_no_from_logprobs([("Yes", -0.1), (" no", -2.5)]) == pytest.approx(2.4)
    assert yes_no_from_logprobs([("是", -1.0), ("否", -0.5), ("不", -1.5)]) == pytest.approx(
        -1.0 - np.log(np.exp(-0.5) + np.exp(-1.5)))
    assert yes_no_from_logprobs([("maybe", -0.1)]) is None
    with FaultInjectingLLMServer("ok", yes_if="paper clip") as srv:
        llm = _llm(srv)
        assert llm.yes_no([{"role": "user", "content": "a paper clip"}]) == pytest.approx(2.95)
        assert llm.yes_no([{"role": "user", "content": "nothing"}]) == pytest.approx(-2.95)
        assert srv.bodies[0]["max_tokens"] == 1 and srv.bodies[0]["logprobs"] is True


def test_answers_are_cleaned_of_labels_and_quotes():
    assert clean_answer('Passage: "the text"') == "the text"
    assert clean_answer("段落：绿茶应冷藏") == "绿茶应冷藏"
    assert clean_answer("  plain ") == "plain"


# ------------------------------------------------------------------ settings
def test_llm_settings_are_validated():
    # the settings check their own fields; the channel registry checks what channels need
    with pytest.raises(ConfigError, match="hyde, hyde_bm25 needs a language model"):
        CHANNELS.check(Settings(channels=("dense", "hyde", "hyde_bm25")))
    with pytest.raises(ConfigError, match="needs a language model"):
        Settings(rewrite=True)
    with pytest.raises(ConfigError, match="hyde_mode"):
        Settings(hyde_mode="average")
    with pytest.raises(ConfigError, match="unknown prompt"):
        Settings(prompts={"hyde.fr": {"system": "", "user": "{question}"}})
    with pytest.raises(ConfigError, match="unknown placeholder"):
        Settings(prompts={"hyde.en": {"system": "", "user": "{question} {answer}"}})
    with pytest.raises(ConfigError, match="must use"):
        Settings(prompts={"hyde.en": {"system": "", "user": "no placeholder"}})
    # weighted fusion: a channel its weights do not name counts 0.5
    assert Settings(channels=("dense", "hyde"), llm_model="openai:x", fusion="weighted").query.weight("hyde") == 0.5
    with pytest.raises(ConfigError, match="unknown channel or step"):
        CHANNELS.check(Settings(channel_timeouts={"hide": 3}))
    with pytest.raises(ConfigError, match="weight for unknown channel 'bm52'"):
        CHANNELS.check(Settings(weights={"bm52": 1.0}))
    with pytest.raises(ConfigError, match="unknown reranker"):
        Settings(reranker="colbert")
    s = Settings(channels=("dense", "hyde"), llm_model="openai:x", channel_timeouts={"hyde": 90}, channel_timeout_s=10)
    CHANNELS.check(s)
    assert s.timeout("hyde") == 90 and s.timeout("dense") == 10 and s.timeout("rewrite") == 5


def test_custom_prompts_round_trip_through_the_settings_file(tmp_path):
    s = Settings(prompts={"hyde.en": {"system": "Be brief.", "user": "Q: {question}\nA:"}})
    s.save(tmp_path / "s.toml")
    assert Settings.load(tmp_path / "s.toml").llm.prompts == s.llm.prompts
    zh = Settings(prompts={"hyde.zh": {"system": "请简要回答。", "user": "问题：{question}\n段落："}})
    zh.save(tmp_path / "zh.toml")
    assert Settings.load(tmp_path / "zh.toml").llm.prompts["hyde.zh"]["user"] == "问题：{question}\n段落："


# ------------------------------------------------------------------ HyDE modes
def test_hyde_modes_embed_and_search_what_they_say(sample_kb):
    emb = sample_kb.embedder()
    q = "How do I reset the hub?"
    hyp = Hypotheses([HYPOTHESIS, "The reset takes twelve seconds."])
    alone = hyde_vector(emb, q, hyp, "hypothesis")
    assert np.allclose(alone, emb.embed_passages([HYPOTHESIS])[0], atol=1e-5)
    joined = hyde_vector(emb, q, hyp, "query+hypothesis")
    assert np.allclose(joined, emb.embed_passages([q + "\n" + HYPOTHESIS])[0], atol=1e-5)
    mean = hyde_vector(emb, q, hyp, "mean")
    expect = np.vstack([emb.embed_passages(hyp.texts), emb.embed_queries([q])]).mean(0)
    assert np.allclose(mean, expect / np.linalg.norm(expect), atol=1e-5)
    assert abs(np.linalg.norm(mean) - 1) < 1e-5
    assert hyde_text(q, hyp, "hypothesis") == HYPOTHESIS
    assert hyde_text(q, hyp, "mean") == "\n".join([q, *hyp.texts])


def _query(kb, srv, question, **kw):
    # translate=False: the sample knowledge base is Chinese and English, so every question would also be
    # translated (one more request); test_translation_* cover that
    args = dict(channels=LLM_CHANNELS, llm_model="openai:stub", llm_base_url=srv.url, llm_cache=False, translate=False)
    args.update(kw)
    return kb.query(question, **args)


def test_hyde_runs_as_its_own_channels_and_the_hypothesis_is_in_the_trace(sample_kb):
    with FaultInjectingLLMServer("ok", answer=HYPOTHESIS) as srv:
        res = _query(sample_kb, srv, "How do I wipe the hub?", channels=["dense", "bm25", "hyde", "hyde_bm25"])
        chans = {c.name: c for c in res.trace.channels}
        assert all(c.error is None and c.hits for c in chans.values())
        assert res.trace.transforms["hyde"]["hypotheses"] == [HYPOTHESIS]
        assert res.trace.transforms["hyde"]["mode"] == "hypothesis"
        assert srv.requests == 1  # one hypothesis shared by the dense and BM25 HyDE channels
        assert set(res.trace.fusion["channels"]) == {"dense", "bm25", "hyde", "hyde_bm25"}
        top = sample_kb.store.get_parents([chans["hyde"].hits[0].parent_id])
        assert "Factory reset" in next(iter(top.values())).parent.heading_path
        # mean mode: N samples, the first greedy, the others sampled with seeds 1..N-1
        _query(sample_kb, srv, "How do I wipe the hub?", channels=["hyde"], hyde_mode="mean", hyde_samples=3)
        sampled = srv.bodies[1:]
        assert [b["temperature"] for b in sampled] == [0.0, 0.7, 0.7] and [b["seed"] for b in sampled] == [0, 1, 2]


@pytest.mark.parametrize("question,lang_word", [("How do I wipe the hub?", "expert"), ("绿茶应该怎样保存？", "专家")])
def test_prompts_follow_the_question_language(sample_kb, question, lang_word):
    with FaultInjectingLLMServer("ok", answer="绿茶应冷藏保存。") as srv:
        _query(sample_kb, srv, question, channels=["hyde"])
        assert lang_word in srv.bodies[0]["messages"][0]["content"]
        assert question in srv.bodies[0]["messages"][1]["content"]


def test_rewriting_replaces_the_plain_query_and_both_are_traced(sample_kb):
    with FaultInjectingLLMServer("ok", answer="Query: hub factory reset button seconds") as srv:
        res = _query(sample_kb, srv, "how long to hold the thing to wipe my hub", channels=["dense", "bm25"],
                     rewrite=True)
        rw = res.trace.transforms["rewrite"]
        assert rw == {"original": "how long to hold the thing to wipe my hub",
                      "rewritten": "hub factory reset button seconds", "error": None}
        assert srv.requests == 1  # one rewrite shared by both channels
        assert "Factory reset" in res.passages[0].heading_path


def test_multi_query_fuses_several_rewrites_in_one_channel(sample_kb):
    with FaultInjectingLLMServer("ok", answer="1. hub factory reset\n- 线性回归 学习率") as srv:
        res = _query(sample_kb, srv, "how do I wipe the hub", channels=["multi_query"], max_passages=4,
                     token_budget=20_000)
        assert res.trace.transforms["multi_query"] == {
            "queries": ["hub factory reset", "线性回归 学习率"], "error": None}
        mq = res.trace.channels[0]
        assert mq.error is None and mq.hits
        # each written query finds its own, fused into one channel: the hub's manual for the first,
        # and for the second (Chinese, about machine learning) a section the question never would
        heads = [(p.source, p.heading_path) for p in res.passages]
        assert any(p.source == "smarthub_manual_en.md" for p in res.passages), heads
        assert any(p.source == "ml_textbook_zh.md" and "学习率" in p.text for p in res.passages), heads


def test_llm_judge_reranks_the_top_n_and_leaves_the_rest(sample_kb):
    with FaultInjectingLLMServer("ok", yes_if="paper clip") as srv:
        plain = sample_kb.query("How do I start over with the hub?")
        res = _query(sample_kb, srv, "How do I start over with the hub?", channels=["dense", "bm25"],
                     reranker="llm-judge", rerank_top_n=5)
        rr = res.trace.rerank
        assert rr["judged"] == 5 and rr["error"] is None and rr["model"].startswith("llm-judge:openai:stub")
        assert srv.requests == 5
        assert "paper clip" in res.passages[0].text
        yes_ids = [s["id"] for s in rr["scores"] if s["score"] > 0]
        assert yes_ids and [s["id"] for s in rr["scores"]][: len(yes_ids)] == yes_ids
        assert [p for p, _ in res.trace.fused] == [p for p, _ in plain.trace.fused]  # fusion untouched
    with FaultInjectingLLMServer("500") as srv:  # a dead judge: fused order, error in the trace
        res = _query(sample_kb, srv, "How do I start over with the hub?", channels=["dense", "bm25"],
                     reranker="llm-judge", llm_max_retries=0)
        assert res.trace.rerank["judged"] == 0 and "HTTP 500" in res.trace.rerank["error"]
        assert [p.parent_id for p in res.passages] == [p.parent_id for p in plain.passages]


# ------------------------------------------------------------------ faults never fail a query
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hang", "500", "garbage", "empty", "close"])
@pytest.mark.parametrize("question", ["How many seconds do I hold the reset button?", "基尼指数是怎么计算的？"])
def test_a_broken_llm_leaves_errors_in_the_trace_and_results_from_the_other_channels(sample_kb, mode, question):
    timeout = 2.0
    with FaultInjectingLLMServer(mode) as srv:
        t = time.perf_counter()
        res = _query(sample_kb, srv, question, rewrite=True, reranker="llm-judge", channel_timeout_s=timeout,
                     channel_timeouts={"rerank": 1.0})
        elapsed = time.perf_counter() - t
        assert runner.active_channels() == 0  # nothing outlives the query
    chans = {c.name: c for c in res.trace.channels}
    assert chans["dense"].error is None and chans["bm25"].error is None and chans["dense"].hits
    for name in ("hyde", "hyde_bm25", "multi_query"):
        assert chans[name].error and chans[name].hits == ()
    assert res.passages and res.trace.fusion["channels"] == ["dense", "bm25"]
    rw = res.trace.transforms["rewrite"]
    assert rw["rewritten"] is None and rw["error"]  # fell back to the original question
    assert res.trace.transforms["hyde"]["errors"] and res.trace.transforms["hyde"]["hypotheses"] == []
    assert res.trace.rerank["error"] and res.trace.rerank["judged"] == 0
    # within the channel timeout plus the rerank timeout, plus a margin
    assert elapsed < timeout + 1.0 + 1.0
    expected = sample_kb.query(question)  # the plain result, unharmed
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in expected.passages]


# ------------------------------------------------------------------ the runner
def test_channels_run_concurrently_and_a_shared_step_runs_once():
    calls = []

    def step(d: Deadline) -> str:
        calls.append(1)
        time.sleep(0.3)
        return "value"

    shared = runner.Shared(step)

    def chan(d: Deadline):
        return [shared.get(d)]

    t = time.perf_counter()
    out = runner.run_channels({"a": chan, "b": chan, "c": lambda d: time.sleep(0.3) or ["c"]},
                              {"a": 5, "b": 5, "c": 5})
    assert time.perf_counter() - t < 0.75  # the slowest channel (0.3 s), not the sum (0.9 s)
    assert [o.value for o in out.values()] == [["value"], ["value"], ["c"]] and len(calls) == 1


def test_a_channel_that_honours_its_deadline_ends_when_cancelled():
    ended = []

    def cooperative(d: Deadline):
        while not d.expired:
            time.sleep(0.01)
        ended.append(time.perf_counter())
        return []

    t = time.perf_counter()
    out = runner.run_channels({"slow": cooperative, "fast": lambda d: ["x"]}, {"slow": 0.3, "fast": 1})
    assert out["slow"].error == "timed out after 0.3s" and out["fast"].value == ["x"]
    assert ended and ended[0] - t < 1.0 and runner.active_channels() == 0  # 0.3 s, plus scheduling on a busy machine


@pytest.mark.slow
def test_a_cross_encoder_that_cannot_load_leaves_the_fused_order_and_says_why(sample_kb):
    # no sentence-transformers here, or no hub to fetch the model from: a clear error, no failure
    plain = sample_kb.query("How do I start over with the hub?")
    res = sample_kb.query("How do I start over with the hub?", reranker="cross-encoder:BAAI/bge-reranker-v2-m3")
    assert "cross-encoder" in res.trace.rerank["error"] and res.trace.rerank["judged"] == 0
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in plain.passages]


def test_a_shared_step_ends_with_the_channels_that_run_not_with_those_configured(sample_kb):
    # hyde_bm25 is off: its (default, longer) timeout must not keep the hypothesis running
    with FaultInjectingLLMServer("hang") as srv:
        t = time.perf_counter()
        res = _query(sample_kb, srv, "How do I wipe the hub?", channels=["dense", "hyde"],
                     channel_timeout_s=30, channel_timeouts={"hyde": 1.0})
        assert time.perf_counter() - t < 1.0 + 1.5
        assert runner.active_channels() == 0
        assert res.trace.channels[1].error and res.passages


def test_translation_is_searched_by_term_channels_and_traced(sample_kb):
    """The sample knowledge base holds Chinese and English chunks: an English question is also
    searched in Chinese by BM25 (the stub answers with a fixed Chinese query); dense is untouched."""
    assert set(sample_kb.store.languages()) == {"zh", "en"}
    with FaultInjectingLLMServer("ok", answer="基尼指数怎么计算") as srv:
        res = _query(sample_kb, srv, "How is the Gini index computed?", channels=["dense", "bm25"], translate=True)
        assert srv.requests == 1 and "翻译成中文" in srv.bodies[0]["messages"][0]["content"]
        assert res.trace.transforms["translate"] == {"targets": ["zh"], "translations": {"zh": "基尼指数怎么计算"},
                                                     "error": None}
        bm25 = {c.name: c for c in res.trace.channels}["bm25"]
        top = sample_kb.store.get_parents([bm25.hits[0].parent_id])
        assert next(iter(top.values())).source.endswith("ml_textbook_zh.md")
        # searched in Chinese too, so a Chinese hit is not a cross-language one
        assert "cross_language" not in res.trace.fusion or \
            res.trace.fusion["cross_language"]["hits"].get("bm25", 0) < len(bm25.hits)


@pytest.mark.parametrize("mode", ["hang", "500", "garbage"])
def test_a_failed_translation_leaves_the_question_and_says_why(sample_kb, mode):
    with FaultInjectingLLMServer(mode) as srv:
        t = time.monotonic()
        res = _query(sample_kb, srv, "How is the Gini index computed?", channels=["dense", "bm25"], translate=True,
                     channel_timeouts={"translate": 1.0}, llm_max_retries=0)
        assert time.monotonic() - t < 15
        chans = {c.name: c for c in res.trace.channels}
        assert all(c.error is None and c.hits for c in chans.values())
        tr = res.trace.transforms["translate"]
        assert tr["targets"] == ["zh"] and tr["translations"] == {} and tr["error"]
    # an answer in the wrong language is refused, not searched
    with FaultInjectingLLMServer("ok", answer="How is the Gini index computed") as srv:
        res = _query(sample_kb, srv, "How is the Gini index computed?", channels=["dense", "bm25"], translate=True)
        assert "not in zh" in res.trace.transforms["translate"]["error"]
