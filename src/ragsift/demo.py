"""The main job: ingest the bundled sample knowledge base and answer its sample questions."""
from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from ragsift.console import ingest_progress, report_lines

DEMO_KB = Path("ragsift-demo-kb")


def sample_dir() -> Path:
    return Path(str(resources.files("ragsift") / "sample"))


def copy_sample(dest: str | Path = "docs") -> Path:
    """Copy the bundled sample documents (a Chinese and an English product manual, a Chinese and
    an English FAQ, a machine-learning textbook in each language: what ``ragsift demo`` ingests)
    into ``dest``, made when missing; a file already there with the same bytes is left as it is.
    Returns ``dest``: the README's examples start from it."""
    import shutil

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted((sample_dir() / "kb").iterdir()):
        target = dest / f.name
        if not (target.is_file() and target.read_bytes() == f.read_bytes()):
            shutil.copyfile(f, target)
    return dest


def sample_questions() -> list[dict[str, Any]]:
    path = sample_dir() / "questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def expected_rank(result, q: dict[str, Any]) -> int | None:
    """1-based rank of the passage that is the question's expected section, if returned."""
    for p in result.passages:
        if p.source != q["expected_source"]:
            continue
        if ((not q["expected_heading"] or (p.heading_path and p.heading_path[-1] == q["expected_heading"]))
                and q["answer_hint"] in p.text):
            return p.rank
    return None


def run_demo(kb_path: Path | None = None, progress: bool = False) -> int:
    from ragsift.kb import KnowledgeBase

    kb_path = kb_path or DEMO_KB
    print(f"knowledge base: {kb_path}  (sample documents: {sample_dir() / 'kb'})")
    kb = KnowledgeBase.open(kb_path)
    with ingest_progress(progress) as bar:
        report = kb.ingest(sample_dir() / "kb", progress=bar)
    print("\n".join(report_lines(report)))
    print()
    at1 = found = 0
    qs = sample_questions()
    for q in qs:
        res = kb.query(q["question"])
        rank = expected_rank(res, q)
        at1 += rank == 1
        found += rank is not None
        top = res.passages[0] if res.passages else None
        where = f"{top.source} :: {' > '.join(top.heading_path)}" if top else "(nothing)"
        mark = "ok " if rank == 1 else (f"#{rank} " if rank else "-- ")
        print(f"{mark} {q['question']}")
        print(f"     -> {where}   [{res.trace.timings_ms['total']:.0f} ms]")
    print()
    print(f"{at1}/{len(qs)} questions: the expected section is the first passage; "
          f"{found}/{len(qs)}: it is among the returned passages.")
    flt = {"item_name": "星云智能音箱 S2"}
    res = kb.query("How do I reset the device?", filter=flt)
    print(f"\nwith filter {json.dumps(flt, ensure_ascii=False)}: "
          + ", ".join(f"{p.source} :: {p.heading_path[-1] if p.heading_path else ''}" for p in res.passages))
    print("\nTry: ragsift --kb", kb_path, 'query "恢复出厂设置要按哪些键？" --trace')
    sys.stdout.flush()
    return 0
