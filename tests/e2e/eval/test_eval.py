"""The evaluation runner, end to end on a small BEIR-format set the test writes (zh + en)."""
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import write_files
from ranx import Qrels, Run
from ranx import compare as ranx_compare

from ragsift.eval.datasets import load_beir
from ragsift.eval.stats import paired_randomization_test

DOCS = [
    ("e1", "Solar panels", "Clean solar panels every six months; dusty areas need cleaning every three months."),
    ("e2", "Inverters", "Inverter error code E07 means the grid voltage is out of range."),
    ("e3", "Batteries", "Lithium batteries last longest between 20 and 80 percent charge."),
    ("e4", "Wind turbines", "Wind turbines stop automatically when wind speed exceeds 25 metres per second."),
    ("z1", "绿茶", "绿茶应在零至五摄氏度冷藏保存，避免受潮。"),
    ("z2", "乌龙茶", "乌龙茶可以常温保存，温度不宜超过二十五摄氏度。"),
    ("z3", "普洱茶", "普洱茶需要通风干燥的环境，相对湿度以百分之六十至七十为宜。"),
    ("z4", "红茶", "红茶属于全发酵茶，常温密封即可保存两年左右。"),
]
QUERIES = [("q1", "How often should solar panels be cleaned?", ["e1"]),
           ("q2", "What does error E07 mean on an inverter?", ["e2"]),
           ("q3", "When do wind turbines shut down?", ["e4"]),
           ("q4", "绿茶应该在什么温度保存？", ["z1"]),
           ("q5", "普洱茶对湿度有什么要求？", ["z3"]),
           ("q6", "红茶和乌龙茶怎么保存？", ["z4", "z2"])]


@pytest.fixture(scope="module")
def tiny_beir(tmp_path_factory):
    root = tmp_path_factory.mktemp("beir")
    write_files(root, {
        "corpus.jsonl": "\n".join(json.dumps({"_id": i, "title": t, "text": x}, ensure_ascii=False) for i, t, x in DOCS),
        "queries.jsonl": "\n".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) for q, t, _ in QUERIES),
        "qrels/test.tsv": "query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{d}\t1\n" for q, _, ds in QUERIES for d in ds),
    })
    return root


def test_load_beir(tiny_beir):
    ds = load_beir(tiny_beir)
    assert len(ds.queries) == 6 and ds.qrels["q6"] == {"z4": 1, "z2": 1}


def test_load_beir_reports_missing_files(tmp_path):
    with pytest.raises(Exception, match="not a BEIR-format folder: corpus.jsonl is missing"):
        load_beir(tmp_path)


def test_eval_writes_table_chart_per_query_and_compare(tiny_beir, tmp_path):
    out = tmp_path / "report"
    cmd = [sys.executable, "-m", "ragsift.cli", "eval", str(tiny_beir), "--embedder", "e5-small",
           "--work-dir", str(tmp_path / "work"), "--report-dir", str(out), "--out", str(out / "r.json"),
           "--no-progress"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    name = tiny_beir.name
    table = (out / f"{name}.md").read_text(encoding="utf-8")
    for config in ("bm25", "dense", "hybrid", "hybrid-weighted"):
        assert f"| {config} |" in table
    assert "Δ ndcg@10 vs bm25" in table and "Command: `ragsift eval" in table
    assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [json.loads(line) for line in (out / f"{name}-per-query.jsonl").read_text().splitlines()]
    assert len(rows) == 4 * 6 and {r["config"] for r in rows} == {"bm25", "dense", "hybrid", "hybrid-weighted"}
    data = json.loads((out / "r.json").read_text())
    res = data["results"]
    assert res["bm25"]["run"]["q2"][0] == "e2" and res["dense"]["run"]["q4"][0] == "z1"
    assert res["hybrid"]["metrics"]["recall@10"] == 1.0  # every judged doc is in a top 10 of 8
    # the multi-answer query: all_relevant@10 is 1, and per-query ndcg@10 equals the mean's parts
    assert res["hybrid"]["per_query"]["q6"]["all_relevant@10"] == 1.0
    nd = np.mean([v["ndcg@10"] for v in res["hybrid"]["per_query"].values()])
    assert nd == pytest.approx(res["hybrid"]["metrics"]["ndcg@10"])

    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "compare", str(out / "r.json"), "bm25", "hybrid",
                        "--metrics", "ndcg@10,mrr@10"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "| ndcg@10 |" in p.stdout and "| mrr@10 |" in p.stdout


def test_unknown_config_is_a_clear_error(tiny_beir, tmp_path):
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "eval", str(tiny_beir), "--configs", "bm25,magic",
                        "--work-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "unknown config(s) magic" in p.stderr


def test_randomization_test_agrees_with_ranx_fisher(sample_kb, questions):
    """Per-query nDCG@10 of two real channel runs (parent level) over the sample KB: ranx's
    Fisher randomization test and ours give the same p-value (up to resampling noise)."""
    from ranx import evaluate as ranx_evaluate

    runs = {"dense": {}, "bm25": {}}
    qrels = {}
    for q in questions:
        res = sample_kb.query(q["question"], max_passages=10)
        for c in res.trace.channels:
            runs[c.name][q["id"]] = {h.parent_id: float(len(c.hits) - h.rank + 1) for h in c.hits}
        parents = sample_kb.store.get_parents(h.parent_id for c in res.trace.channels for h in c.hits)
        qrels[q["id"]] = {pid: 1 for pid, sp in parents.items() if q["answer_hint"] in sp.parent.text}
    a, b = Run(runs["dense"], name="dense"), Run(runs["bm25"], name="bm25")
    for run in (a, b):
        ranx_evaluate(Qrels(qrels), run, "ndcg@10", save_results_in_run=True)
    pa = np.array([a.scores["ndcg@10"][q] for q in sorted(qrels)])
    pb = np.array([b.scores["ndcg@10"][q] for q in sorted(qrels)])
    assert not np.allclose(pa, pb)  # the two channels really differ on some queries
    report = ranx_compare(Qrels(qrels), [a, b], metrics=["ndcg@10"], stat_test="fisher",
                          n_permutations=20000, random_seed=1)
    theirs = report.comparisons[("dense", "bm25")]["ndcg@10"]["p_value"]
    ours = paired_randomization_test(pa, pb, resamples=20000, seed=1)
    assert ours == pytest.approx(theirs, abs=0.03)


def test_randomization_test_extremes():
    a = np.linspace(0.1, 0.5, 40)
    assert paired_randomization_test(a, a) == 1.0
    assert paired_randomization_test(a, a + 0.2) < 0.001
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.1, 40)
    assert paired_randomization_test(a, a + noise - noise.mean()) > 0.5
