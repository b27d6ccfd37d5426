"""The ablation runner: named retrieval configurations over one BEIR dataset, scored side by
side, with a Markdown table, a PNG chart, per-query results and paired significance tests.

    ragsift eval ../shared/datasets/scifact --configs bm25,dense,default,hybrid,hybrid-weighted \\
        --embedder minilm --report-dir reports/ --out reports/scifact.json
    ragsift compare reports/scifact.json bm25 hybrid-weighted
"""
from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsift.console import progress_factory
from ragsift.errors import InputError
from ragsift.eval.datasets import Dataset, load_beir
from ragsift.eval.metrics import evaluate, per_query
from ragsift.eval.stats import compare


def _package_default() -> dict[str, Any]:
    """The package's default fusion, spelled out (an evaluation knowledge base keeps the defaults
    it was made with; this configuration follows the code)."""
    from ragsift.config import Settings

    q = Settings().query.model_dump(mode="json")
    return {k: q[k] for k in ("channels", "fusion", "rrf_k", "weights", "normalization", "channel_depth",
                              "cross_language_weight")}


CONFIGS: dict[str, dict[str, Any]] = {
    "bm25": {"channels": ["bm25"]},
    "dense": {"channels": ["dense"]},
    "default": _package_default(),
    "hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf", "rrf_k": 60},
    "hybrid-weighted": {"channels": ["dense", "bm25"], "fusion": "weighted",
                        "weights": {"dense": 0.5, "bm25": 0.5}, "normalization": "minmax"},
}
METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "map@100", "all_relevant@5", "all_relevant@10"]
CHART_METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10"]


@dataclass
class ConfigResult:
    name: str
    settings: dict[str, Any]
    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]]
    run: dict[str, list[str]]
    latencies_ms: list[float] = field(default_factory=list)
    multihop: dict[str, Any] | None = None  # hops, LLM calls and stop reasons, when multi-hop ran

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else 0.0

    @property
    def p95(self) -> float:
        if not self.latencies_ms:
            return 0.0
        s = sorted(self.latencies_ms)
        return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def _why(e: BaseException) -> str:
    """Why a JSON file could not be read, in a few words."""
    if isinstance(e, OSError):
        return e.strerror or type(e).__name__
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if isinstance(e, KeyError):
        return f"no {e} in it"
    return str(e)[:200]


def load_configs(names: Sequence[str], config_file: str | None) -> dict[str, dict[str, Any]]:
    """Built-in configurations, plus any from a JSON file ``{"name": {query settings}}``."""
    available = dict(CONFIGS)
    if config_file:
        try:
            extra = json.loads(Path(config_file).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as e:  # unreadable, not UTF-8, not JSON, nested too deeply
            raise InputError(f"cannot read config file {config_file}: {_why(e)}") from None
        if not isinstance(extra, dict) or not all(isinstance(v, dict) for v in extra.values()):
            raise InputError("a config file maps names to objects of query settings")
        available.update(extra)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise InputError(f"unknown config(s) {', '.join(unknown)}; valid: {', '.join(available)}")
    return {n: available[n] for n in names}


def build_kb(ds: Dataset, work_dir: Path, embedder: str, progress: bool):
    """The dataset's knowledge base in ``work_dir`` (built once; unchanged documents are kept)."""
    from ragsift.kb import KnowledgeBase

    kb = KnowledgeBase.open(work_dir / f"{ds.name}-{embedder}", embedder=embedder)
    report = kb.ingest(ds.corpus, progress=progress_factory(progress))
    return kb, report


def judged_queries(ds: Dataset, max_queries: int | None, skip: int = 0) -> list[str]:
    qids = [q for q in ds.qrels if q in ds.queries][skip:]
    return qids[:max_queries]


def run_config(kb, ds: Dataset, name: str, overrides: dict[str, Any], qids: Sequence[str],
               metrics: Sequence[str] = METRICS, k: int = 100, progress: bool = False) -> ConfigResult:
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    make_bar = progress_factory(progress, unit="query")
    bar = make_bar(len(qids), name) if make_bar else None
    if qids:
        kb.rank_documents(ds.queries[qids[0]], k=k, **overrides)  # warm-up (model load, caches)
    hops: list[int] = []
    llm_calls: list[int] = []
    stops: dict[str, int] = {}
    for qid in qids:
        t = time.perf_counter()
        details: dict[str, Any] = {}
        ranked = kb.rank_documents(ds.queries[qid], k=k, details=details, **overrides)
        latencies.append((time.perf_counter() - t) * 1000)
        run[qid] = [d for d, _ in ranked]
        mh = details.get("multihop")
        if mh:
            hops.append(len(mh["hops"]))  # retrieval rounds run, a dropped last one included
            llm_calls.append(mh["llm_calls"])
            stops[mh["stop"]] = stops.get(mh["stop"], 0) + 1
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    qrels = {q: ds.qrels[q] for q in qids}
    mh_stats = {"hops_mean": statistics.fmean(hops), "llm_calls_mean": statistics.fmean(llm_calls),
                "stops": stops} if hops else None
    return ConfigResult(name, overrides, evaluate(run, qrels, metrics), per_query(run, qrels, metrics),
                        run, latencies, mh_stats)


def markdown_table(results: Sequence[ConfigResult], baseline: str | None,
                   metrics: Sequence[str] = METRICS) -> str:
    """One row per configuration; ``Δ nDCG@10`` and its paired randomization p-value are
    against ``baseline``."""
    base = next((r for r in results if r.name == baseline), None)
    head = ["config", *metrics, "p50 ms", "p95 ms"]
    with_hops = any(r.multihop for r in results)
    if with_hops:
        head += ["rounds", "LLM calls"]
    if base:
        head += [f"Δ ndcg@10 vs {base.name}", "p"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [r.name, *(f"{r.metrics[m]:.4f}" for m in metrics), f"{r.p50:.1f}", f"{r.p95:.1f}"]
        if with_hops:
            cells += [f"{r.multihop['hops_mean']:.2f}", f"{r.multihop['llm_calls_mean']:.2f}"] if r.multihop \
                else ["1.00", "0.00"]
        if base:
            if r is base:
                cells += ["—", "—"]
            else:
                c = compare(base.per_query, r.per_query, "ndcg@10")
                cells += [f"{c.diff:+.4f}", f"{c.p_value:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_chart(results: Sequence[ConfigResult], path: Path, title: str) -> bool:
    """Grouped bars per metric; False (and no file) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(CHART_METRICS) + 0.4 * len(results)), 4))
    width = 0.8 / max(1, len(results))
    for i, r in enumerate(results):
        xs = [j + i * width for j in range(len(CHART_METRICS))]
        bars = ax.bar(xs, [r.metrics[m] for m in CHART_METRICS], width, label=r.name)
        ax.bar_label(bars, fmt="%.3f", fontsize=6, rotation=90, padding=2)
    ax.set_xticks([j + width * (len(results) - 1) / 2 for j in range(len(CHART_METRICS))], CHART_METRICS)
    ax.set_ylim(0, 1.12)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


@dataclass
class EvalReport:
    """What ``run_eval`` did: the results per configuration, the table, the JSON payload."""

    results: list[ConfigResult]
    table: str
    summary: str
    payload: dict[str, Any]
    chart_skipped: bool = False


def run_eval(dataset: str | Path, configs: dict[str, dict[str, Any]], *, baseline: str | None = None,
             embedder: str = "minilm", split: str = "test", max_queries: int | None = None,
             skip_queries: int = 0, work_dir: Path = Path(".cache/eval"), out: Path | None = None,
             report_dir: Path | None = None, progress: bool = False, command: str = "") -> EvalReport:
    """Run named configurations (query settings by flat name) over a BEIR dataset's judged
    queries; write the JSON results to ``out`` and the Markdown table, chart and per-query file
    to ``report_dir`` when given."""
    ds = load_beir(dataset, split)
    names = list(configs)
    baseline = baseline or names[0]
    if baseline not in configs:
        raise InputError(f"baseline {baseline!r} is not among the configs run")
    qids = judged_queries(ds, max_queries, skip_queries)
    if not qids:  # told before a knowledge base is built for nothing
        raise InputError(f"{ds.path} has no judged query to run: qrels/{split}.tsv names "
                         f"{len(ds.qrels)} queries, queries.jsonl holds {len(ds.queries)}"
                         + (f", and --skip-queries {skip_queries} leaves none" if skip_queries else ""))
    kb, report = build_kb(ds, Path(work_dir), embedder, progress)
    summary = (f"{ds.name}: {len(qids)} judged queries; knowledge base {kb.path} "
               f"({report.children} children embedded now, {len(report.unchanged)} documents unchanged)")
    results = [run_config(kb, ds, n, configs[n], qids, progress=progress) for n in names]
    table = markdown_table(results, baseline)
    payload = {"dataset": str(ds.path), "split": split, "embedder": embedder,
               "date": time.strftime("%Y-%m-%d"), "command": command, "queries": len(qids),
               "baseline": baseline,
               "results": {r.name: {"settings": r.settings, "metrics": r.metrics, "p50_ms": r.p50,
                                    "p95_ms": r.p95, "per_query": r.per_query, "run": r.run,
                                    "latencies_ms": r.latencies_ms, "multihop": r.multihop}
                           for r in results}}
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    chart_skipped = False
    if report_dir:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / f"{ds.name}.md").write_text(
            f"# {ds.name}: {len(qids)} queries, embedder {embedder}, {payload['date']}\n\n"
            f"Command: `{command}`\n\n{table}\n", encoding="utf-8")
        with open(report_dir / f"{ds.name}-per-query.jsonl", "w", encoding="utf-8") as f:
            for r in results:
                for qid, vals in r.per_query.items():
                    f.write(json.dumps({"config": r.name, "qid": qid, **vals}) + "\n")
        chart_skipped = not write_chart(results, report_dir / f"{ds.name}.png", f"{ds.name} ({embedder})")
    return EvalReport(results, table, summary, payload, chart_skipped)


def compare_configs(results_file: Path, a: str, b: str, metrics: Sequence[str] | None = None) -> str:
    """Two configurations of an ``run_eval`` results file, metric by metric, with paired tests."""
    try:
        data = json.loads(Path(results_file).read_text(encoding="utf-8"))
        res = data["results"]
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as e:
        raise InputError(f"cannot read evaluation results {results_file}: {_why(e)}") from None
    if not isinstance(res, dict):
        raise InputError(f"{results_file} is not an eval --out file: its results are not an object")
    for name in (a, b):
        if name not in res:
            raise InputError(f"no config {name[:80]!r} in {results_file}; it has: {', '.join(res)}")
    lines = [f"| metric | {a} | {b} | Δ | p (paired randomization) | wins/losses/ties |", "|---|---|---|---|---|---|"]
    try:
        known = list(res[a]["metrics"])
        unknown = [m for m in metrics or [] if m not in known]
        if unknown:
            raise InputError(f"unknown metric(s) {', '.join(repr(m[:80]) for m in unknown)}; {results_file} has: "
                             f"{', '.join(known)}")
        for m in metrics or known:
            c = compare(res[a]["per_query"], res[b]["per_query"], m)
            lines.append(f"| {m} | {c.mean_a:.4f} | {c.mean_b:.4f} | {c.diff:+.4f} | {c.p_value:.4f} | "
                         f"{c.wins}/{c.losses}/{c.ties} |")
    except (KeyError, TypeError, ValueError) as e:  # a file that is not what eval --out writes
        raise InputError(f"{results_file} is not an eval --out file ({type(e).__name__}: {str(e)[:100]})") from None
    return "\n".join(lines)
