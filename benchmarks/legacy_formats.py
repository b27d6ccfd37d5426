"""The formats that need conversion or OLE parsing, on a public corpus nobody here wrote (issue 52):
Apache POI's test files (``.doc``, ``.xls``, ``.ppt``, ``.msg``, ``.rtf``, ``.ods``; bug reports'
attachments, fuzzers' finds, encrypted and damaged files among them), each read the way an ingest
reads it (``read_file``: a reading process with the default limits).

    .venv/bin/python benchmarks/legacy_formats.py --corpus /work/data-ext/poi-legacy [--no-soffice]

Per format: files read (a document made), refused with a reason, crashed (an exception out of
``read_file``: must be 0; a reading process that died is a refusal whose reason says so, counted
apart as ``died``); the wall-clock time per file (LibreOffice's start included) and the reading
process's own CPU time per file (LibreOffice's excluded: it is a child process). LibreOffice's
start is measured alone: the wall time of converting a one-paragraph .doc (median of 5), so a
file's time without it is its time less that. ``--no-soffice`` reads with a PATH without soffice
(every .doc/.xls/.ppt then refused, saying what to install; RTF by ragsift's own reader).

Writes benchmarks/results/legacy_formats[_no_soffice].json (with the command and the commit).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

SUFFIXES = (".doc", ".xls", ".ppt", ".msg", ".rtf", ".ods", ".odp")


def soffice_start(runs: int = 5) -> float:
    """Median wall seconds LibreOffice takes to convert a one-paragraph .doc (its start, mostly)."""
    from ragsift.ingest.loaders import LoadLimits, read_file

    with tempfile.TemporaryDirectory() as tmp:
        md = Path(tmp) / "a.md"
        md.write_text("One paragraph.\n", encoding="utf-8")
        subprocess.run(["pandoc", str(md), "-o", str(Path(tmp) / "a.docx")], check=True)
        subprocess.run(["soffice", f"-env:UserInstallation=file://{tmp}/p", "--headless", "--convert-to", "doc",
                        "--outdir", tmp, str(Path(tmp) / "a.docx")], check=True, capture_output=True)
        times = []
        for _ in range(runs):
            t = time.monotonic()
            res = read_file(Path(tmp) / "a.doc", "a.doc", LoadLimits())
            assert res.documents, res.skipped
            times.append(time.monotonic() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--no-soffice", action="store_true", help="read with a PATH without soffice")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if a.no_soffice:  # before any reading process starts: they inherit it
        os.environ["PATH"] = "/nonexistent"
    from ragsift.ingest.loaders import LoadLimits, read_file

    start = None if a.no_soffice else soffice_start()
    files = sorted(p for p in a.corpus.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
    per: dict[str, dict] = collections.defaultdict(lambda: {"files": 0, "read": 0, "refused": 0, "crashed": 0,
                                                           "died": 0, "wall": [], "cpu": [], "reasons": {}})
    rows = []
    for i, path in enumerate(files):
        fmt = path.suffix.lower()
        s = per[fmt]
        s["files"] += 1
        t = time.monotonic()
        try:
            res = read_file(path, path.name, LoadLimits())
        except Exception as e:  # a crash: what must never happen
            s["crashed"] += 1
            rows.append({"file": str(path.relative_to(a.corpus)), "crashed": f"{type(e).__name__}: {e}"})
            continue
        wall = time.monotonic() - t
        s["wall"].append(wall)
        s["cpu"].append(res.stats.get("cpu_seconds", 0.0))
        if res.documents:
            s["read"] += 1
        else:
            s["refused"] += 1
            reason = res.skipped[0].reason if res.skipped else "(nothing)"
            if "reading process" in reason or "reader crashed" in reason:
                s["died"] += 1
            key = reason.split(":")[0][:90]
            s["reasons"][key] = s["reasons"].get(key, 0) + 1
        rows.append({"file": str(path.relative_to(a.corpus)), "wall": round(wall, 3),
                     "documents": len(res.documents), "chars": sum(len(d.text) for d in res.documents),
                     "skipped": [x.reason for x in res.skipped][:3]})
        if i % 50 == 0:
            print(f"{i}/{len(files)} {path.name} {wall:.2f}s", flush=True)
    summary = {}
    for fmt, s in sorted(per.items()):
        summary[fmt] = {k: s[k] for k in ("files", "read", "refused", "crashed", "died")}
        summary[fmt].update({"wall_p50": round(percentile(s["wall"], 50, method="nearest"), 3), "wall_p90": round(percentile(s["wall"], 90, method="nearest"), 3),
                             "wall_mean": round(statistics.mean(s["wall"]), 3) if s["wall"] else None,
                             "cpu_p50": round(percentile(s["cpu"], 50, method="nearest"), 3),
                             "reasons": dict(sorted(s["reasons"].items(), key=lambda kv: -kv[1])[:8])})
        if start is not None and fmt in (".doc", ".xls", ".ppt", ".rtf"):
            summary[fmt]["wall_p50_less_start"] = round(percentile(s["wall"], 50, method="nearest") - start, 3)
        print(fmt, json.dumps(summary[fmt], ensure_ascii=False))
    out = a.out or ROOT / "benchmarks" / "results" / ("legacy_formats_no_soffice.json" if a.no_soffice
                                                      else "legacy_formats.json")
    write_result(out, {"corpus": "apache/poi test-data @ a528d43590",
                       "soffice_start_seconds": start, "summary": summary, "files": rows},
                 argv=[__file__, *(argv or sys.argv[1:])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
