"""The examples in examples/ run, with the packaged local model as their LLM, on the bundled
sample knowledge base: a LangChain chain, a LlamaIndex query engine, the seed's HyDE node in
LangGraph."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

EXAMPLES = ROOT / "examples"


def run(name: str, kb, *args: str) -> str:
    p = subprocess.run([sys.executable, str(EXAMPLES / name), "--kb", str(kb.path), "--max-tokens", "40", *args],
                       capture_output=True, text=True, timeout=900, cwd=EXAMPLES)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


@pytest.mark.parametrize("question,source", [("恢复出厂设置要按哪些键？", "speaker_manual_zh.md"),
                                             ("How do I reset the hub?", "smarthub_manual_en.md")])
def test_langchain_chain(sample_kb, question, source):
    out = run("langchain_chain.py", sample_kb, question)
    assert f"sources: [1] {source} › " in out
    answer = out.split("answer:", 1)[1].strip()
    assert answer  # the model answered (what it says is the model's)


def test_llamaindex_query_engine(sample_kb):
    out = run("llamaindex_query_engine.py", sample_kb, "How do I reset the hub?")
    assert out.splitlines()[0].startswith("source: smarthub_manual_en.md › ")
    assert out.split("answer:", 1)[1].strip()


def test_langgraph_hyde_node(sample_kb):
    out = run("langgraph_hyde_node.py", sample_kb, "恢复出厂设置要按哪些键？")
    lines = out.splitlines()
    assert lines[0].startswith("hypothesis: ") and len(lines[0]) > len("hypothesis: ") + 5
    passages = [ln for ln in lines if ln.startswith("passage: ")]
    assert passages and all(ln.startswith("passage: speaker_manual_zh.md › ") for ln in passages)  # the filter held
    assert "恢复出厂设置" in passages[0]


def fails(name: str, *args: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=900,
                       cwd=EXAMPLES)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    ours = [ln for ln in p.stderr.splitlines() if not ln.startswith("decode: ")]  # llama.cpp logs an abort itself
    assert len(ours) == 1 and ours[0].startswith(f"{name}: error: ")  # one line
    return p


@pytest.mark.parametrize("name", ["langchain_chain.py", "llamaindex_query_engine.py", "langgraph_hyde_node.py"])
def test_an_example_fails_in_one_line(tmp_path, name):
    p = fails(name, "--kb", str(tmp_path / "none"), "How do I reset the hub?")
    assert "no knowledge base" in p.stderr


def test_a_model_out_of_time_is_one_line(sample_kb):
    p = fails("langchain_chain.py", "--kb", str(sample_kb.path), "--timeout", "0.01", "How do I reset the hub?")
    assert "out of time" in p.stderr
