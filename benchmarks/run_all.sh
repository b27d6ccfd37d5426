#!/usr/bin/env bash
# Runs the benchmarks that need only ../shared/datasets (or DATASETS=...), .venv (make install) and,
# where present, .venv-anchors and the readers' venv, one heavy job at a time, then renders
# docs/benchmarks.md (benchmarks/report.py). Several hours on two cores; embeddings and knowledge
# bases are cached under $WORK, so a rerun costs only the queries.
#   python3 -m venv .venv-anchors && .venv-anchors/bin/pip install -e . -r benchmarks/requirements-anchors.txt
#
# Not run here (each script's docstring has its command; tests/project/test_benchmarks.py checks that every
# script is named in this file):
#  measured once for one change, against an older checkout (rerun them beside the next change):
#   cli_start.py, filtered.py, first_query.py, same_rankings.py, serve_cpu.py, office.py (--before-src),
#   multihop_chains.py (--before-src; and PhantomWiki from datasets/fetch_phantomwiki.py),
#   entry_language.py (--before-src; and the Debian FAQ from datasets/fetch_faqs.py)
#  need the million-children store filtered.py builds (hours), or build one of their own:
#   exact_pass.py, graph_width.py, sign_bits.py, commit_cost.py, lance_cache.py
#  need files outside ../shared (not in the repository: ../data-ext, Apache POI's and docling's
#  test files, PDF manuals), LibreOffice or headless Chromium:
#   hostile.py, legacy_formats.py, real_reading.py, real_questions.py, rtl_reading.py, scans.py,
#   web_screenshots.py, layout_model_cost.py (and rapid-layout, installed beside: not a dependency)
#  need sets fetched by benchmarks/datasets/fetch_*.py (LawBench, InsuranceQA, PhantomWiki, the Debian
#  FAQ) and the knowledge bases entries.py builds from them (hours each):
#   entries.py, router.py, two_embedders.py, whole_sections.py, whole_weights.py, whole_vectors.py,
#   whole_rule.py
#  one-off studies whose figures are fixed in docs/benchmarks.md, on sets in ../shared:
#   confidence.py (the no_good_match thresholds: rerun when the default embedder changes),
#   bm25_engines.py, bm25_languages.py, bm25_query.py, e5_engine.py, expansion.py, longdoc.py,
#   milvus.py (pymilvus), query_int8.py, query_path.py, small_to_big.py
#  not benchmarks: harness.py (shared code), readers.py (the anchors' readers, run by reading.py),
#   datasets/*.py (fetch the sets above)
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS=${DATASETS:-../shared/datasets}
WORK=${WORK:-/tmp/ragsift-bench}
OUT=benchmarks/results
mkdir -p "$OUT" "$WORK" "$WORK/evals"
export HF_HUB_OFFLINE=1
# ragsift eval records its command and date; the harness adds the commit, dirty and host (stamp_file)
stamp() { .venv/bin/python benchmarks/harness.py stamp "$@"; }

for ds in scifact hotpotqa-ircot-dev500; do
  .venv/bin/ragsift eval "$DATASETS/$ds" --configs bm25,dense,hybrid,hybrid-weighted --embedder minilm \
      --work-dir "$WORK/eval" --report-dir "$OUT" --out "$OUT/$ds.json" --no-progress
  stamp "$OUT/$ds.json"
done
.venv/bin/python benchmarks/ingest_speed.py --dataset "$DATASETS/scifact" --docs 600 --embedder minilm \
    --out "$OUT/ingest.json"
.venv/bin/python benchmarks/throughput.py --dataset "$DATASETS/scifact" --out "$OUT/throughput.json"
# the 1M point: about 7 minutes to write and 20 to save its search indexes on two cores
.venv/bin/python benchmarks/scale.py --dataset "$DATASETS/scifact" --sizes 10000,100000,1000000 \
    --work-dir "$WORK/scale" --out "$OUT/scale.json"
# a million real-text vectors (wordllama, the bench extra): embedding 4 minutes, the graph about 20
.venv/bin/python benchmarks/ann_recall.py --datasets "$DATASETS" --n 1000000 --work-dir "$WORK/ann" \
    --out "$OUT/ann_recall.json"
.venv/bin/python benchmarks/kill_ingest.py --datasets "$DATASETS/scifact,$DATASETS/cmrc2018-dev" --out "$OUT/kill_ingest.json"
if [ -x .venv-anchors/bin/python ]; then
  .venv-anchors/bin/python benchmarks/anchors.py --dataset "$DATASETS/scifact" --out "$OUT/anchors-scifact.json" --cache-dir "$WORK/anchors" \
      --systems ragsift-hybrid,ragsift-weighted,langchain-ensemble,langchain-parent,llamaindex-fusion
  .venv-anchors/bin/python benchmarks/anchors.py --dataset "$DATASETS/scifact" --out "$OUT/anchors-scale.json" --cache-dir "$WORK/anchors" \
      --scale 100000 --systems ragsift-hybrid,langchain-ensemble,llamaindex-fusion
fi
# language models (HyDE, rewriting, judge) and multi-hop: about 2 hours on two cores, most of it
# the local 1.5B model generating
benchmarks/llm.sh
.venv/bin/python benchmarks/multihop.py --dataset "$DATASETS/hotpotqa-ircot-dev500" --work-dir "$WORK/eval"
RAGSIFT_CACHE_DIR="$WORK/llmcache" .venv/bin/python benchmarks/links.py --dataset "$DATASETS/hotpotqa-ircot-dev500" \
    --work-dir "$WORK/eval" --llm 100
# the seed's table and the router (HyDE on 260 questions: about 20 minutes cold)
RAGSIFT_CACHE_DIR="$WORK/llmcache" .venv/bin/python benchmarks/seed.py --datasets "$DATASETS" --work-dir "$WORK/eval"
.venv/bin/python benchmarks/serve_load.py --dataset "$DATASETS/scifact" --ingest-dataset "$DATASETS/hotpotqa-ircot-dev500" \
    --work-dir "$WORK/eval"
# issue 26: readers beside writers, against the code before it (a worktree of c2e3fdd)
[ -d /tmp/old/src ] || git worktree add /tmp/old c2e3fdd
.venv/bin/python benchmarks/writer_load.py --dataset "$DATASETS/scifact" --before-src /tmp/old/src
.venv/bin/python benchmarks/soak.py --zh "$DATASETS/cmrc2018-dev" --en "$DATASETS/scifact" --work-dir "$WORK/soak"
# issue 15: fusion defaults over six sets (builds e5-small and minilm knowledge bases: about an hour
# and a half on two cores), the fast multilingual embedder, translation, a mixed knowledge base, tune
.venv/bin/python benchmarks/fusion.py collect --work-dir "$WORK/fusion"
.venv/bin/python benchmarks/fusion.py parents --work-dir "$WORK/fusion"
.venv/bin/python benchmarks/fusion.py sweep --work-dir "$WORK/fusion"
for ds in scifact hotpotqa-ircot-dev500 xquad-zh xquad-xling cmrc2018-dev; do
  for m in e5-small use-multilingual; do
    .venv/bin/ragsift eval "$DATASETS/$ds" --configs dense,bm25,hybrid,hybrid-weighted --embedder "$m" \
        --work-dir "$WORK/eval" --out "$WORK/evals/$ds-$m.json" --no-progress
  done
done
cp "$OUT/scifact.json" "$WORK/evals/scifact-minilm.json"
cp "$OUT/hotpotqa-ircot-dev500.json" "$WORK/evals/hotpotqa-ircot-dev500-minilm.json"
.venv/bin/python benchmarks/multilingual.py --evals "$WORK/evals"
.venv/bin/python benchmarks/translate.py --dataset "$DATASETS/xquad-xling" --work-dir "$WORK/eval"
.venv/bin/python benchmarks/mixed.py --work-dir "$WORK/mixed"
.venv/bin/python benchmarks/tune.py --kb "$WORK/fusion/scifact-minilm-v2" --qrels "$DATASETS/scifact"
# reading documents (issue 28): the anchors' readers in their own venv (benchmarks/requirements-readers.txt)
.venv/bin/python benchmarks/reading.py --datasets "$DATASETS" --work-dir "$WORK/reading" \
    ${READERS_PYTHON:+--readers-python "$READERS_PYTHON"} --retrieval-docs 400 --scan-retrieval-questions 30 \
    --scan-retrieval-docs 80
.venv/bin/python benchmarks/report.py
