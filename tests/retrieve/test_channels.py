"""Channels as registered parts: each built-in channel searched alone (with its own context), a
channel and a shared step registered by a test and seen fused and traced, and the registry's
checks. Real store and embedders; HyDE and multi-query use the packaged local model."""
from __future__ import annotations

import threading

import pytest
from conftest import write_files

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.models.llm import llm_for
from ragsift.retrieve.channels import CHANNELS, Channel, ChannelContext, register_channel
from ragsift.retrieve.steps import STEPS, Steps, register_step
from ragsift.store.base import StoredHit
from ragsift.text.lang import detect_language

DOCS = {
    "speaker_zh.md": "# 星云智能音箱 S2 使用说明\n\n## 恢复出厂设置\n\n同时长按音量加键和静音键十秒，指示灯变红后松开，"
                     "音箱会清除全部数据。\n\n## 蓝牙配对\n\n在手机蓝牙列表中选择“星云 S2”完成配对。\n",
    "hub_en.md": "# Aurora SmartHub X1 Manual\n\n## Factory reset\n\nHold the reset button for ten seconds until the "
                 "ring turns red. All paired devices are removed.\n\n## Zigbee pairing\n\nPut the sensor in pairing "
                 "mode and press Add in the Aurora Home app made by Aurora Labs in Paris.\n",
    "tea_zh.txt": "绿茶应该密封后放入冰箱冷藏保存，温度保持在零到五摄氏度，避免受潮和串味。\n",
}
BUILT_IN = {"dense", "bm25", "sparse", "keywords", "entities", "hyde", "hyde_bm25", "multi_query"}


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("channels")
    kb = KnowledgeBase.open(root / "kb", small_index=["chunks", "keywords", "entities"], extra_embedders=["minilm"])
    kb.ingest(write_files(root / "docs", DOCS))
    return kb


def _ctx(kb, question: str, **overrides) -> ChannelContext:
    """The context a query gives its channels, made by hand so that one channel runs alone."""
    s = kb.settings.replace(**overrides)
    language = detect_language(question)
    steps = Steps(question, language, s, CHANNELS.build(s), lambda: llm_for(s.llm))
    return ChannelContext(question, language, s, None, kb.store, kb.analyzer, kb.embedder, steps)


def _sources(kb, hits: list[StoredHit]) -> list[str]:
    parents = kb.store.get_parents(h.parent_id for h in hits)
    return [parents[h.parent_id].source for h in hits]


def test_the_registry_lists_every_built_in_channel(kb):
    assert BUILT_IN <= set(CHANNELS.names())
    assert "dense:minilm" in CHANNELS.names(kb.settings)
    assert CHANNELS.make("dense:minilm").name == "dense:minilm"
    with pytest.raises(ConfigError, match="unknown channel .densse.; did you mean 'dense'. valid: 'dense', 'bm25', 'hyde', 'hyde_bm25', "
                                          "'multi_query', 'keywords', 'entities', 'sparse', 'engine_hybrid', 'dense:<name>'"):
        CHANNELS.make("densse")


@pytest.mark.parametrize("name,question,source", [
    ("dense", "怎么恢复出厂设置？", "speaker_zh.md"),
    ("dense", "How do I factory reset the hub?", "hub_en.md"),
    ("dense:minilm", "How do I factory reset the hub?", "hub_en.md"),
    ("bm25", "恢复出厂设置", "speaker_zh.md"),
    ("bm25", "reset button ten seconds", "hub_en.md"),
    ("keywords", "绿茶 冷藏", "tea_zh.txt"),
    ("keywords", "paired devices reset", "hub_en.md"),
    ("entities", "星云智能音箱 S2 怎么配对？", "speaker_zh.md"),
    ("entities", "Where is Aurora Labs?", "hub_en.md"),
])
def test_each_channel_alone(kb, name, question, source):
    ch = CHANNELS.make(name)
    hits = ch.search(_ctx(kb, question, channels=[name]), Deadline(30))
    assert hits and all(isinstance(h, StoredHit) for h in hits)
    assert _sources(kb, hits)[0] == source
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_entity_channel_adds_nothing_without_an_entity(kb):
    assert CHANNELS.make("entities").search(_ctx(kb, "how long should i hold it", channels=["entities"]),
                                           Deadline(30)) == []


@pytest.mark.slow
@pytest.mark.parametrize("name,question,source", [
    ("hyde", "恢复出厂设置要按哪些键？", "speaker_zh.md"),
    ("hyde_bm25", "How long must the reset button be held?", "hub_en.md"),
    ("multi_query", "How do I wipe the hub?", "hub_en.md"),
])
def test_each_llm_channel_alone_with_the_local_model(kb, name, question, source):
    ctx = _ctx(kb, question, channels=[name], llm_model="local:qwen2.5-coder-1.5b", hyde_max_tokens=48, multi_query_n=2,
               channel_timeout_s=300)
    hits = CHANNELS.make(name).search(ctx, Deadline(300))
    assert hits and source in _sources(kb, hits)[:3]
    trace = ctx.steps.trace()[CHANNELS.make(name).steps[0]]
    assert (trace.get("hypotheses") or trace.get("queries")) and not trace.get("error") and not trace.get("errors")


# ------------------------------------------------------------------ a channel added by a test
class _Counter:
    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()


@pytest.fixture
def heading_channel():
    """A new channel with a shared step of its own: the step finds the question's words that are
    headings' words (computed once), the channel searches BM25 for them."""
    counter = _Counter()

    @register_step("heading_words", trace=lambda words, err, s: {"words": words or []})
    def heading_words(inp, deadline):
        with counter.lock:
            counter.calls += 1
        return [w for w in inp.query.replace("？", " ").split() if w]

    @register_channel("headings")
    class HeadingChannel(Channel):
        steps = ("heading_words",)

        def search(self, ctx, deadline):
            words = " ".join(ctx.step("heading_words", deadline))
            return ctx.store.search_bm25(ctx.analyzer.analyze(words), ctx.depth, ctx.where, ctx.kinds)

    @register_channel("headings_again")
    class SecondChannel(HeadingChannel):
        pass

    yield counter
    CHANNELS.remove("headings")
    CHANNELS.remove("headings_again")
    STEPS.remove("heading_words")


@pytest.mark.parametrize("question,source", [("Zigbee pairing", "hub_en.md"), ("蓝牙 配对", "speaker_zh.md")])
def test_a_registered_channel_is_fused_and_traced(kb, heading_channel, question, source):
    res = kb.query(question, channels=["dense", "headings", "headings_again"], fusion="weighted",
                   weights={"dense": 0.0, "headings": 1.0, "headings_again": 1.0})
    names = [c.name for c in res.trace.channels]
    assert names == ["dense", "headings", "headings_again"]
    mine = res.trace.channels[1]
    assert mine.error is None and mine.hits
    # weighted fusion with dense at 0: the fused order is the new channel's
    assert [pid for pid, _ in res.trace.fused][: len(mine.hits)] == [h.parent_id for h in mine.hits]
    assert res.passages[0].source == source and "headings" in res.passages[0].matched[0].channels
    assert res.trace.transforms["heading_words"] == {"words": question.split()}
    assert heading_channel.calls == 1  # one shared step for both channels


def test_unknown_and_unready_channels_are_refused(kb):
    with pytest.raises(ConfigError, match="unknown channel 'headings'"):
        kb.query("x", channels=["headings"])
    with pytest.raises(ConfigError, match="sparse_encoder"):
        kb.query("x", channels=["sparse"])
    with pytest.raises(ConfigError, match="unknown channel 'dense:e5-base'"):
        kb.query("x", channels=["dense:e5-base"])
    with pytest.raises(ConfigError, match="multi_query needs a language model"):
        kb.query("x", channels=["dense", "multi_query"])
    with pytest.raises(ConfigError, match="without ':'"):
        CHANNELS.add("bad:name", Channel)
    assert Settings().query.channels == ("dense", "bm25")
