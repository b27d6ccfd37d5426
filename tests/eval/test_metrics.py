"""Our metrics against ranx on real runs over the sample knowledge base."""
import pytest
from ranx import Qrels, Run
from ranx import evaluate as ranx_evaluate

from ragsift.eval.metrics import all_relevant_at_k, evaluate, per_query


@pytest.fixture(scope="module")
def real_runs(sample_kb, questions):
    """Parent-level runs for each channel; graded qrels: the answering section 2, its siblings 1."""
    runs, qrels = {}, {}
    for q in questions:
        res = sample_kb.query(q["question"], max_passages=10)
        for c in res.trace.channels:
            runs.setdefault(c.name, {})[q["id"]] = [h.parent_id for h in c.hits]
        parents = sample_kb.store.get_parents(h.parent_id for c in res.trace.channels for h in c.hits)
        rel = {}
        for pid, sp in parents.items():
            if sp.source == q["expected_source"] and q["answer_hint"] in sp.parent.text:
                rel[pid] = 2
            elif sp.source == q["expected_source"]:
                rel[pid] = 1
        qrels[q["id"]] = rel
    return runs, qrels


METRICS = ["ndcg@10", "ndcg@3", "recall@10", "recall@5", "mrr@10", "map@100"]


@pytest.mark.parametrize("channel", ["dense", "bm25"])
def test_metrics_equal_ranx(real_runs, channel):
    runs, qrels = real_runs
    run = runs[channel]
    ours = evaluate(run, qrels, METRICS)
    ranx_run = Run({q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()})
    theirs = ranx_evaluate(Qrels(qrels), ranx_run, METRICS)
    for m in METRICS:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), m
    assert 0 < ours["ndcg@10"] < 1  # a real, imperfect run


def test_all_relevant_at_k():
    rels = {"a": 1, "b": 1, "c": 0}
    assert all_relevant_at_k(["a", "x", "b"], rels, 3) == 1.0
    assert all_relevant_at_k(["a", "x", "b"], rels, 2) == 0.0


def test_queries_without_relevant_docs_are_left_out_and_missing_runs_score_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}}
    pq = per_query({"q1": ["a"]}, qrels, ["ndcg@10"])
    assert pq == {"q1": {"ndcg@10": 1.0}, "q3": {"ndcg@10": 0.0}}
