"""Fusion is checked against ranx's implementation on real channel runs over the sample KB; a mode
registered by a test is fused and traced with no other module edited."""
import pytest
from ranx import Run
from ranx import fuse as ranx_fuse

from ragsift.retrieve.fusion import FUSIONS, Fused, FusionInput, normalize, rrf, weighted
from ragsift.retrieve.search import dedupe
from ragsift.retrieve.units import UNITS


def _channel_rankings(kb, question):
    res = kb.query(question)
    return {c.name: [(h.parent_id, h.score) for h in c.hits] for c in res.trace.channels}


def _ranx_run(rankings, channel, qid):
    return Run({qid: {pid: float(s) for pid, s in rankings[channel]}}, name=channel)


@pytest.mark.slow
def test_rrf_matches_ranx_on_real_runs(sample_kb, questions):
    for q in questions:
        r = _channel_rankings(sample_kb, q["question"])
        ours = dict(rrf(r, k=60))
        theirs = ranx_fuse([_ranx_run(r, "dense", q["id"]), _ranx_run(r, "bm25", q["id"])],
                           method="rrf", params={"k": 60}).to_dict()[q["id"]]
        assert ours.keys() == theirs.keys()
        for pid in ours:
            assert ours[pid] == pytest.approx(theirs[pid], rel=1e-9)


@pytest.mark.slow
def test_weighted_minmax_matches_ranx_wsum_on_real_runs(sample_kb, questions):
    for q in questions:
        r = _channel_rankings(sample_kb, q["question"])
        ours = dict(weighted(r, {"dense": 0.7, "bm25": 0.3}, "minmax"))
        theirs = ranx_fuse([_ranx_run(r, "dense", q["id"]), _ranx_run(r, "bm25", q["id"])],
                           norm="min-max", method="wsum", params={"weights": [0.7, 0.3]}).to_dict()[q["id"]]
        for pid in ours:
            assert ours[pid] == pytest.approx(theirs[pid], abs=1e-9)


def test_rrf_k_changes_scores_and_is_recorded(sample_kb):
    a = sample_kb.query("What does the amber LED mean?", fusion="rrf", rrf_k=1)
    b = sample_kb.query("What does the amber LED mean?", fusion="rrf", rrf_k=60)
    assert a.trace.fusion == {"mode": "rrf", "channels": ["dense", "bm25"], "k": 1}
    assert b.trace.fusion["k"] == 60
    assert a.passages[0].score > b.passages[0].score  # 1/(1+1) vs 1/(60+1) at rank 1


@pytest.mark.parametrize("method,expected", [
    ("minmax", [1.0, 0.5, 0.0]), ("zscore", [1.224744871391589, 0.0, -1.224744871391589]),
    ("none", [4.0, 3.0, 2.0]),
])
def test_normalizations(method, expected):
    assert normalize([4.0, 3.0, 2.0], method) == pytest.approx(expected)


@pytest.mark.parametrize("method", ["minmax", "zscore", "none"])
def test_fusion_handles_empty_and_single_channels(method):
    assert weighted({"dense": [], "bm25": []}, {"dense": 0.5, "bm25": 0.5}, method) == []
    assert rrf({"dense": []}) == []
    out = weighted({"dense": [("p1", 0.9)], "bm25": []}, {"dense": 0.5, "bm25": 0.5}, method)
    assert [p for p, _ in out] == ["p1"]


def test_chunks_of_one_parent_do_not_add_up():
    from ragsift.store.base import StoredHit

    hits = [StoredHit(f"p1c{i}", "p1", "d", 1.0 - i / 10, 0, 1) for i in range(5)]
    hits.append(StoredHit("p2c0", "p2", "d", 0.3, 0, 1))
    deduped = dedupe(hits, UNITS.make("parent").key)
    assert [(h.child_id, r) for h, r in deduped] == [("p1c0", 1), ("p2c0", 2)]
    fused = dict(rrf({"a": [(h.parent_id, h.score) for h, _ in deduped],
                      "b": [("p2", 1.0), ("p1", 0.5)]}, k=60))
    assert fused["p1"] == pytest.approx(fused["p2"])  # five chunks of p1 count once


def test_unknown_modes_list_valid_values():
    from ragsift.errors import ConfigError
    with pytest.raises(ConfigError, match="valid values: 'minmax', 'zscore', 'none'"):
        normalize([1.0], "l2")


def _z_of_top(scores):
    import numpy as np

    s = np.array(scores[:50], float)
    return max((s[0] - s[1:].mean()) / s[1:].std(), 1e-6)


def test_adaptive_weights_follow_how_far_each_channels_best_hit_stands_out():
    from ragsift.retrieve.fusion import adaptive_weights, confidence

    sharp = [("a", 10.0), ("b", 2.0), ("c", 1.9), ("d", 1.8), ("e", 1.7)]  # one clear winner
    flat = [("b", 0.81), ("a", 0.80), ("c", 0.79), ("d", 0.78), ("e", 0.77)]  # no clear winner
    assert confidence([s for _, s in sharp]) == pytest.approx(_z_of_top([s for _, s in sharp]))
    assert confidence([s for _, s in flat]) == pytest.approx(_z_of_top([s for _, s in flat]))
    w = adaptive_weights({"bm25": sharp, "dense": flat}, {"dense": 0.5, "bm25": 0.5})
    assert sum(w.values()) == pytest.approx(1.0) and w["bm25"] > 0.5 > w["dense"]
    cb, cd = _z_of_top([s for _, s in sharp]), _z_of_top([s for _, s in flat])
    assert w["bm25"] == pytest.approx(cb / (cb + cd))
    # fewer than three scores or a flat list: neutral; a channel with no hits keeps its weight
    assert confidence([3.0, 1.0]) == 1.0 and confidence([0.5] * 10) == 1.0
    assert adaptive_weights({"dense": [], "bm25": sharp}, {"dense": 0.4, "bm25": 0.6}) == {"dense": 0.4, "bm25": 0.6}
    # a power and a depth of its own (what the benchmarks measure): the confidence damped, read from fewer hits
    damped = adaptive_weights({"bm25": sharp, "dense": flat}, {"dense": 0.5, "bm25": 0.5}, power=0.5, depth=4)
    zb, zd = _z_of_top([s for _, s in sharp][:4]) ** 0.5, _z_of_top([s for _, s in flat][:4]) ** 0.5
    assert damped["bm25"] == pytest.approx(zb / (zb + zd)) and 0.5 < damped["bm25"] < w["bm25"]


@pytest.mark.slow
@pytest.mark.parametrize("question,power", [("What does the amber LED mean?", 1.0), ("橙色指示灯表示什么？", 1.0),
                                            ("What does the amber LED mean?", 0.5), ("橙色指示灯表示什么？", 0.5)])
def test_adaptive_fusion_is_weighted_fusion_with_the_traced_weights(sample_kb, question, power):
    res = sample_kb.query(question, fusion="adaptive", weights={"dense": 0.4, "bm25": 0.6}, adaptive_power=power)
    assert res.trace.strategy["chosen"] == "hybrid"  # one round: its fused order is the passages'
    f = res.trace.fusion
    assert f["mode"] == "adaptive" and f["weights"] == {"dense": 0.4, "bm25": 0.6}
    adapted = f["adapted_weights"]
    assert sum(adapted.values()) == pytest.approx(1.0) and adapted != f["weights"]
    r = _channel_rankings(sample_kb, question)  # the same channel lists (the default fusion does not change them)
    cd, cb = _z_of_top([s for _, s in r["dense"]]), _z_of_top([s for _, s in r["bm25"]])
    cd, cb = cd ** power, cb ** power  # the confidence raised to the query's power (1: itself)
    assert f["adaptive_power"] == power and adapted["dense"] == pytest.approx(0.4 * cd / (0.4 * cd + 0.6 * cb))
    # the fused order is ranx's weighted sum with those weights
    theirs = ranx_fuse([_ranx_run(r, "dense", "q"), _ranx_run(r, "bm25", "q")], norm="min-max", method="wsum",
                       params={"weights": [adapted["dense"], adapted["bm25"]]}).to_dict()["q"]
    ranked = sorted(theirs, key=lambda p: (-theirs[p], p))
    assert [p.parent_id for p in res.passages] == ranked[:len(res.passages)]


def test_where_the_engine_fuses_adaptive_fusion_runs_with_the_fixed_weights():
    from ragsift.config import FusionMode, Settings
    from ragsift.retrieve.channels.engine import EngineHybridChannel, engine_fusion

    EngineHybridChannel().check(Settings(store_kind="milvus", store_fusion="engine", fusion="adaptive"))  # no error
    assert (engine_fusion(FusionMode.ADAPTIVE), engine_fusion(FusionMode.WEIGHTED), engine_fusion(FusionMode.RRF)) \
        == ("weighted", "weighted", "rrf")


# ------------------------------------------------------------------ a mode added by a test
@pytest.fixture
def round_robin():
    """A toy mode: the channels take turns, each adding its best unit not yet taken; its info says
    which channel gave which place and the question's language. Registered under rrf's name (the
    settings take ``FusionMode``'s members), rrf's own registration put back after."""
    rrf_mode = FUSIONS.factory("rrf")

    @FUSIONS.register("rrf")
    def turns(inp: FusionInput) -> Fused:
        queues = {c: [u for u, _ in r] for c, r in inp.rankings.items()}
        ranking: list[tuple[str, float]] = []
        by: list[str] = []
        while any(queues.values()):
            for c, q in queues.items():
                while q and q[0] in {u for u, _ in ranking}:
                    q.pop(0)
                if q:
                    ranking.append((q.pop(0), 1.0 / (len(ranking) + 1)))
                    by.append(c)
        return Fused(ranking, {"turns": by[:5], "language": inp.language})

    yield turns
    FUSIONS.add("rrf", rrf_mode)


@pytest.mark.parametrize("question,language", [("What does the amber LED mean?", "en"), ("橙色指示灯表示什么？", "zh")])
def test_a_registered_mode_is_fused_and_its_info_traced(sample_kb, round_robin, question, language):
    res = sample_kb.query(question, fusion="rrf", channels=["dense", "bm25"])
    assert res.trace.strategy["chosen"] == "hybrid"  # one round: its fused order is the mode's
    f = dict(res.trace.fusion)
    f.pop("cross_language", None)  # BM25 hits on chunks in the other language of the sample, if any
    assert f == {"mode": "rrf", "channels": ["dense", "bm25"], "turns": ["dense", "bm25", "dense", "bm25", "dense"],
                 "language": language}
    lists = {c.name: list(dict.fromkeys(h.parent_id for h in c.hits)) for c in res.trace.channels}
    fused = [u for u, _ in res.trace.fused]
    assert fused[0] == lists["dense"][0] and fused[1] == next(u for u in lists["bm25"] if u != fused[0])
    assert res.to_dict()["trace"]["fusion"]["turns"][:2] == ["dense", "bm25"]  # JSON as it is


def test_a_registered_mode_is_gone_when_put_back(sample_kb):
    assert set(FUSIONS.names()) == {"rrf", "weighted", "adaptive"}
    res = sample_kb.query("What does the amber LED mean?", fusion="rrf", rrf_k=60)
    assert "turns" not in res.trace.fusion and res.trace.fusion["k"] == 60
