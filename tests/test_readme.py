"""The README's code runs as written: every Python block, in order, in one interpreter (a
reader going down the page), in a folder holding files of the bundled sample as ``docs/``
and ``corpus/``; and the command-line block, line by line. The only change made to the text is
the Milvus address, pointed at a Milvus Lite server on 127.0.0.1. Lines that need what a test
machine has not (another service, the shared datasets) are listed below with the reason."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragsift.demo import sample_dir

pytestmark = pytest.mark.slow  # the models, Milvus Lite, the local language model

README = Path(__file__).resolve().parent.parent / "README.md"
MILVUS_IN_README = "http://milvus.internal:19530"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

# command lines of the README not run here, each with why (by their first words)
CLI_NOT_RUN = {
    "ragsift eval ": "reads ../shared/datasets, which a fresh clone has not (tests/test_eval.py runs eval on a "
                     "bundled set)",
    "ragsift compare ": "compares the report of the eval line above",
    "ragsift --kb my-kb tune --generate": "writes 60 questions with the local language model (minutes; "
                                          "tests/test_tune.py covers --generate)",
    "ragsift --kb my-kb tune --qrels": "needs labels for the reader's own knowledge base (tests/test_tune.py)",
}


def blocks(lang: str) -> list[str]:
    return [body for fence, body in FENCE.findall(README.read_text(encoding="utf-8")) if fence == lang]


DOCS = ("speaker_manual_zh.md", "smarthub_manual_en.md", "faq_zh.txt")  # of the bundled sample


def _folder(tmp_path: Path) -> Path:
    """``docs/``: three files of the bundled sample (a Chinese manual, an English one, a Chinese
    text file); ``corpus/`` (the checkpoint examples): the English HTML FAQ. Every block ingests
    ``docs/`` again (the small-to-big family, Milvus): fewer files keep the test short."""
    for name, files in (("docs", DOCS), ("corpus", ("faq_en.html",))):
        (tmp_path / name).mkdir()
        for f in files:
            shutil.copy(sample_dir() / "kb" / f, tmp_path / name)
    return tmp_path


RUNNER = """
import sys, json, time, traceback
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
ns = {"__name__": "__readme__"}
for i, code in enumerate(blocks):
    t0 = time.perf_counter()
    try:
        exec(compile(code, f"README python block {i + 1}", "exec"), ns)
    except BaseException:
        print(f"README python block {i + 1} failed:\\n{code}", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
    print(f"block {i + 1} in {time.perf_counter() - t0:.1f} s: ok", flush=True)
kb = ns["kb"]
print("RESULT " + json.dumps({"docs": sorted(d.source for d in kb.documents().values()),
                              "lang_sources": sorted({d.metadata["source"] for d in ns["docs"]}),
                              "haystack": [d.meta["source"] for d in ns["out"]["retriever"]["documents"]]},
                             ensure_ascii=False))
"""


def test_every_python_block_runs_as_written(tmp_path, milvus_uri):
    code = [b.replace(MILVUS_IN_README, milvus_uri) for b in blocks("python")]
    assert len(code) >= 7 and any("KnowledgeBase.open" in b for b in code)
    folder = _folder(tmp_path)
    (folder / "blocks.json").write_text(json.dumps(code, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", RUNNER, "blocks.json"], cwd=folder, capture_output=True, text=True,
                       timeout=1500, env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.count(": ok\n") == len(code)
    got = json.loads(p.stdout.split("RESULT ", 1)[1])
    # the last knowledge base opened is the one on Milvus: the sample, read from docs/
    assert set(got["docs"]) == set(DOCS)
    # the LangChain line's filter={"lang": "zh"} kept Chinese sections, of every format
    assert got["lang_sources"] and set(got["lang_sources"]) <= {"speaker_manual_zh.md", "faq_zh.txt",
                                                                "ml_textbook_zh.md"}
    assert got["haystack"] and got["haystack"][0] == "smarthub_manual_en.md"


def test_the_command_line_block_runs_as_written(tmp_path, milvus_uri):
    cli = next(b for b in blocks("bash") if "ragsift --kb my-kb stats" in b)
    folder = _folder(tmp_path)
    (folder / "more").mkdir()
    _write_pdf(folder / "more" / "file.pdf")
    (folder / "docs.jsonl").write_text(json.dumps({"id": "jsonl-1", "text": "告警阈值在设置页修改。"},
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "docs" / "guide.md").write_text("# Guide\n\n## 告警\n\n告警阈值在设置页修改。\n", encoding="utf-8")
    ragsift = str(Path(sys.executable).with_name("ragsift"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    ran, skipped, lines = 0, [], 0
    doc_id = None
    for raw in cli.splitlines():
        line = raw.split("  #", 1)[0].strip()
        if not line:
            continue
        lines += 1
        reason = next((r for prefix, r in CLI_NOT_RUN.items() if line.startswith(prefix)), None)
        if reason:
            skipped.append(line)
            continue
        line = line.replace("http://127.0.0.1:19530", milvus_uri)
        if "DOC_ID" in line:  # the README's placeholder: a document the knowledge base holds
            line = line.replace("DOC_ID ...", doc_id or "")
        stdin = None
        if line.startswith("cat docs.jsonl | "):
            stdin, line = (folder / "docs.jsonl").read_text(encoding="utf-8"), line.split("| ", 1)[1]
        args = shlex.split(line)
        assert args[0] == "ragsift", line
        p = subprocess.run([ragsift, *args[1:]], cwd=folder, capture_output=True, text=True, input=stdin,
                           timeout=900, env=env)
        assert p.returncode == 0, f"{line}\n{p.stdout[-1500:]}\n{p.stderr[-3000:]}"
        ran += 1
        if args[3:4] == ["list"]:
            doc_id = next(ln.split()[0] for ln in p.stdout.splitlines() if "guide.md" in ln)
    assert ran == lines - len(skipped) >= 12 and len(skipped) == len(CLI_NOT_RUN)


def _write_pdf(path: Path) -> None:
    """A one-page PDF by LibreOffice (the README ingests ``more/file.pdf``)."""
    src = path.with_suffix(".txt")
    src.write_text("Backup\n\nThe hub backs up its settings every night.\n", encoding="utf-8")
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    assert soffice, "LibreOffice writes the PDF (make tools installs it)"
    subprocess.run([soffice, "--headless", "--convert-to", "pdf", "--outdir", str(path.parent), str(src)],
                   check=True, capture_output=True, timeout=300)
    src.unlink()
    assert path.exists()
