"""The README's code runs as pasted, from an empty folder: every Python block, in order, in one
interpreter (a reader going down the page), each starting from the sample documents the package
ships (``copy_sample("docs/")``); and the command-line block, line by line, starting with
``ragsift sample docs/``. The only change made to the text is the Milvus address, pointed at a
Milvus Lite server on 127.0.0.1. Lines that need what a test machine has not (another service,
the shared datasets) are listed below with the reason."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

README = ROOT / "README.md"
MILVUS_IN_README = "http://milvus.internal:19530"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

# command lines of the README not run here, each with why (by their first words)
CLI_NOT_RUN = {
    "ragsift eval ": "reads ../shared/datasets, which a fresh clone has not (tests/e2e/eval/test_eval.py runs "
                     "eval on a bundled set)",
    "ragsift compare ": "compares the report of the eval line above",
    "ragsift --kb my-kb tune --generate": "writes 60 questions with the local language model (minutes; "
                                          "tests/e2e/eval/test_tune.py covers --generate)",
    "ragsift --kb my-kb tune --qrels": "needs labels for the reader's own knowledge base (tests/e2e/eval/test_tune.py)",
}


def blocks(lang: str) -> list[str]:
    return [body for fence, body in FENCE.findall(README.read_text(encoding="utf-8")) if fence == lang]


SAMPLE = {"faq_en.html", "faq_zh.txt", "ml_textbook_en.md", "ml_textbook_zh.md", "smarthub_manual_en.md",
          "speaker_manual_zh.md"}  # what copy_sample and ragsift sample copy


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
from ragsift import KnowledgeBase
kb = ns["kb"]
print("RESULT " + json.dumps({"docs": sorted(d.source for d in kb.documents().values()),
                              "milvus": sorted(d.source for d in KnowledgeBase.open("my-kb-milvus").documents().values()),
                              "translate": ns["r"].trace.transforms.get("translate"),
                              "llm_first": ns["r"].passages[0].source,
                              "lang_sources": sorted({d.metadata["source"] for d in ns["docs"]}),
                              "haystack": [d.meta["source"] for d in ns["out"]["retriever"]["documents"]]},
                             ensure_ascii=False))
"""


def test_every_python_block_runs_as_pasted_from_an_empty_folder(tmp_path, milvus_uri):
    code = [b.replace(MILVUS_IN_README, milvus_uri) for b in blocks("python")]
    assert len(code) >= 7 and any("KnowledgeBase.open" in b for b in code)
    # each block stands alone: it imports what it uses (none leans on block 1's import)
    assert all(b.lstrip().startswith("from ") for b in code), [b[:60] for b in code]
    runner = tmp_path / "runner"
    runner.mkdir()
    (runner / "blocks.json").write_text(json.dumps(code, ensure_ascii=False), encoding="utf-8")
    folder = tmp_path / "empty"
    folder.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", RUNNER, str(runner / "blocks.json")], cwd=folder, capture_output=True,
                       text=True, timeout=1500, env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.count(": ok\n") == len(code)
    got = json.loads(p.stdout.split("RESULT ", 1)[1])
    assert SAMPLE <= set(got["docs"]) and set(got["milvus"]) == SAMPLE  # the sample, read from docs/, both stores
    # the language-model block: the English question over the Chinese manual, translated and found
    assert "zh" in json.dumps(got["translate"], ensure_ascii=False) and got["llm_first"] == "speaker_manual_zh.md"
    assert "llama" not in p.stderr and "ggml" not in p.stderr  # llama.cpp's own log lines stay off stderr
    # the LangChain line's filter={"lang": "zh"} kept Chinese sections, of every format
    assert got["lang_sources"] and set(got["lang_sources"]) <= {"speaker_manual_zh.md", "faq_zh.txt",
                                                                "ml_textbook_zh.md"}
    assert got["haystack"] and got["haystack"][0] == "smarthub_manual_en.md"
    assert sorted(f.name for f in folder.iterdir()) == ["docs", "my-kb", "my-kb-family", "my-kb-milvus"]


def test_the_command_line_block_runs_as_pasted_from_an_empty_folder(tmp_path, milvus_uri):
    cli = next(b for b in blocks("bash") if "ragsift --kb my-kb stats" in b)
    folder = tmp_path / "empty"
    folder.mkdir()
    ragsift = str(Path(sys.executable).with_name("ragsift"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    ran, skipped, lines = 0, [], 0
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
        stdin = None
        if line.startswith("echo "):  # a JSONL line on standard input
            echo, line = line.split(" | ", 1)
            stdin = shlex.split(echo)[1] + "\n"
        args = shlex.split(line)
        assert args[0] == "ragsift", line
        p = subprocess.run([ragsift, *args[1:]], cwd=folder, capture_output=True, text=True, input=stdin,
                           timeout=900, env=env)
        assert p.returncode == 0, f"{line}\n{p.stdout[-1500:]}\n{p.stderr[-3000:]}"
        ran += 1
        if "--filter" in args:  # the filter names a file of the sample: it finds something there
            passages = json.loads(p.stdout)["passages"]
            assert passages and {x["source"] for x in passages} == {"faq_zh.txt"}
    assert ran == lines - len(skipped) >= 12 and len(skipped) == len(CLI_NOT_RUN)
    assert sorted(f.name for f in (folder / "docs").iterdir()) == sorted(SAMPLE)


def test_the_sample_is_copied_and_an_unreachable_store_leaves_no_folder(tmp_path, monkeypatch):
    from ragsift.cli import main
    from ragsift.demo import copy_sample, sample_dir
    from ragsift.errors import StoreError
    from ragsift.kb import KnowledgeBase

    monkeypatch.chdir(tmp_path)
    assert main(["sample"]) == 0 and sorted(f.name for f in (tmp_path / "docs").iterdir()) == sorted(SAMPLE)
    zh = (tmp_path / "docs" / "speaker_manual_zh.md").read_text(encoding="utf-8")
    assert "恢复出厂设置" in zh and zh == (sample_dir() / "kb" / "speaker_manual_zh.md").read_text(encoding="utf-8")
    assert copy_sample(tmp_path / "more" / "docs") == tmp_path / "more" / "docs"  # again, elsewhere: made
    # a Milvus that cannot be reached: the error, and nothing left behind
    with pytest.raises(StoreError, match="cannot connect to Milvus"):
        KnowledgeBase.open(tmp_path / "kbs" / "my-kb-milvus", store_kind="milvus", store_uri="http://127.0.0.1:9")
    assert not (tmp_path / "kbs").exists()
