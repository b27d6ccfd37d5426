#!/usr/bin/env bash
# HyDE, rewriting and LLM-judge reranking with the packaged Qwen2.5-Coder-1.5B (local, CPU),
# on query subsets (a hypothesis costs ~4 s on 2 cores). Each set runs twice: first with an
# empty model cache (cold: every model call is made), then again (warm: every call is cached).
# Needs ../shared/datasets (or DATASETS=...), .venv with ragsift[llm,llm-models].
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS=${DATASETS:-../shared/datasets}
WORK=${WORK:-/tmp/ragsift-bench}
OUT=benchmarks/results
export HF_HUB_OFFLINE=1 RAGSIFT_CACHE_DIR="$WORK/llmcache"
rm -f "$RAGSIFT_CACHE_DIR/llm-cache.sqlite"*
CFG=benchmarks/configs/llm.json
A=hybrid,dense,hyde-dense,hybrid+hyde,hybrid+hyde-concat,hybrid+rewrite
B=hybrid,hybrid+hyde,hybrid+hyde-mean3,hybrid+judge5
# ragsift eval records its command and date; the harness adds the commit, dirty and host (stamp_file)
stamp() { .venv/bin/python benchmarks/harness.py stamp "$@"; }
run() {  # dataset, configs, queries, name
  .venv/bin/ragsift eval "$DATASETS/$1" --configs "$2" --config-file $CFG --embedder minilm --max-queries "$3" \
      --work-dir "$WORK/eval" --out "$OUT/llm/$4.json" --no-progress
  stamp "$OUT/llm/$4.json"
}
mkdir -p "$OUT/llm"
for pass in cold warm; do
  for ds in scifact hotpotqa-ircot-dev500; do
    run $ds $A 100 "$ds-A-$pass"
    run $ds $B 50 "$ds-B-$pass"
  done
done
