"""`ragsift tune` on a BEIR set (SciFact, LawBench): tuned on labels (even-numbered queries) and without labels
(questions the packaged model writes for sampled sections), both tested on the odd-numbered
labeled queries against the knowledge base's defaults.

    .venv/bin/python benchmarks/tune.py --kb /tmp/ragsift-eval/fusion/scifact-minilm-v2 \\
        --qrels ../shared/datasets/scifact --generate 60
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.eval.tune import capture, current_setting, generated_questions, labeled_questions, scores, tune  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

DEFAULT_KEYS = ("fusion", "rrf_k", "weights", "normalization", "channel_depth", "cross_language_weight")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", required=True, help="a knowledge base of the dataset (copied, not changed)")
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--generate", type=int, default=60, help="questions the model writes (0: tune on labels only)")
    ap.add_argument("--llm", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/tune")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tune.json"))
    args = ap.parse_args()
    work = Path(args.work_dir) / Path(args.kb).name
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(args.kb, work)

    longest = max(len(q) for q in load_dataset(args.qrels).queries.values())  # LawBench's statements run long
    kb = KnowledgeBase.open(work, llm_model=args.llm, max_query_chars=max(4000, longest))
    defaults = Settings().query.model_dump(mode="json")
    kb.set_defaults(**{k: defaults[k] for k in DEFAULT_KEYS}, llm_model=args.llm)  # start from today's package defaults
    labeled = labeled_questions(kb, args.qrels)
    odd = labeled[1::2]
    held = capture(kb, odd, sorted({50, 100, kb.settings.query.channel_depth}))
    base = scores(held, odd, current_setting(kb))
    runs = []

    def row(label: str, chosen: dict, seconds: float, extra: dict | None = None) -> None:
        tuned = scores(held, odd, chosen)
        runs.append({"label": label, "validation_queries": len(odd), "current": statistics.fmean(base),
                     "tuned": statistics.fmean(tuned), "p": paired_randomization_test(np.array(base), np.array(tuned)),
                     "chosen": ", ".join(f"{k}={v}" for k, v in chosen.items()), "seconds": round(seconds, 1),
                     **(extra or {})})
        print(runs[-1], flush=True)

    t = time.perf_counter()
    rep = tune(kb, labeled, source="labels", apply=False)  # chooses on the even queries
    row(f"labels: {len(labeled[0::2])} even-numbered queries", rep.chosen, time.perf_counter() - t)
    t_gen, gen = 0.0, []
    if args.generate:  # 0: labels only
        t = time.perf_counter()
        gen, log = generated_questions(kb, args.generate)
        t_gen = time.perf_counter() - t
        rep = tune(kb, gen, source="generated", apply=False)
        row(f"no labels: {len(gen)} questions written by {args.llm}", rep.chosen, time.perf_counter() - t,
            {"generation_s": round(t_gen, 1), "examples": [x for x in log if "question" in x][:5]})
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "dataset": args.qrels,
           "embedder": kb.settings.index.embedder, "defaults": {k: defaults[k] for k in DEFAULT_KEYS}, "runs": runs,
           "notes": [f"- Tested on the {len(odd)} odd-numbered labeled queries; 'current' is the package's default "
                     "fusion on this knowledge base. Label-free tuning chooses on its own questions (even positions) "
                     "and validates on them (odd); the labeled queries only test it."]
           + ([f"- Writing {len(gen)} questions took {t_gen:.0f} s."] if args.generate else [])}
    write_result(args.out, out)


if __name__ == "__main__":
    main()
