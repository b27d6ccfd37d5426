"""Issue 26 beyond the HTTP routes: small files that unpack to gigabytes, a knowledge base whose
settings file was edited, emptied or lost, ``check --restore 0``, CLI flags checked like
settings, prompt templates bounded, and model clients and cache files made once per setting."""
from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import write_files
from fault_llm_server import FaultInjectingLLMServer

from ragsift.config import Settings
from ragsift.errors import ConfigError, StoreError
from ragsift.ingest.loaders import LoadLimits, load_file, split_front_matter
from ragsift.kb import KnowledgeBase, check_knowledge_base, restore_knowledge_base, rewrite_settings
from ragsift.models.llm import close_llms, open_llm_files


def _cli(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragsift.cli", *args], capture_output=True, text=True, input=input,
                          timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})


# ------------------------------------------------------------------ bombs in small files
def yaml_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\n"


@pytest.mark.parametrize("body", ["# 长城\n\n长城是中国古代的军事防御工程。\n", "# Walls\n\nThe wall was built over centuries.\n"])
def test_front_matter_with_aliases_is_refused_not_expanded(tmp_path, body):
    bomb = yaml_bomb()
    assert len(bomb) < 800
    meta, text = split_front_matter(bomb + body)
    assert meta == {} and text.startswith("---")  # refused: left as text, a few hundred bytes
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    write_files(tmp_path / "docs", {"bomb.md": bomb + body, "ok.md": "---\ntags: [a, b]\nlang: zh\n---\n" + body})
    report = kb.ingest(tmp_path / "docs")
    assert len(report.added) == 2 and not report.skipped
    docs = {d.source: d for d in kb.documents().values()}
    meta = {name: {k: v for k, v in d.metadata.items() if k != "path"} for name, d in docs.items()}  # path: identity
    assert meta["bomb.md"] == {} and meta["ok.md"] == {"tags": ["a", "b"], "lang": "zh"}
    assert docs["bomb.md"].children <= 3  # not 147 MB of "lol"
    result = kb.query(body.split("\n")[2][:8], max_passages=2)
    assert sum(len(p.text) for p in result.passages) < 5000


def pdf_bomb(pages: int = 200, stream_mb: float = 4.0) -> bytes:
    """A small PDF whose pages all draw one content stream that unpacks to ``stream_mb`` MB."""
    line = b"BT /F1 12 Tf 72 720 Td (All work and no play makes a dull day) Tj ET\n"
    packed = zlib.compress(line * int(stream_mb * 1_000_000 / len(line)), 9)
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + " ".join(f"{4 + i} 0 R" for i in range(pages)).encode()
            + b"] /Count " + str(pages).encode() + b" >>",
            b"<< /Length " + str(len(packed)).encode() + b" /Filter /FlateDecode >>\nstream\n" + packed + b"\nendstream"]
    objs += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 "
             + str(4 + pages).encode() + b" 0 R >> >> >>"] * pages
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_a_pdf_that_unpacks_to_gigabytes_is_skipped_and_costs_no_other_file(tmp_path):
    data = pdf_bomb()
    assert len(data) < 60_000
    path = write_files(tmp_path / "in", {"bomb.pdf": data}) / "bomb.pdf"
    res = load_file(path, "bomb.pdf", LoadLimits())
    assert not res.documents and "decompression bomb" in res.skipped[0].reason
    # each limit said by its setting
    assert "max_file_pages" in load_file(path, "bomb.pdf", LoadLimits(max_pages=50)).skipped[0].reason
    slow = load_file(path, "bomb.pdf", LoadLimits(max_chars=10**9, max_seconds=0.5)).skipped[0].reason
    assert "max_file_seconds" in slow or "decompression bomb" in slow
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", max_file_pages=100)
    write_files(tmp_path / "in", {"good.md": "# 说明\n\n设备每天凌晨两点自动备份。\n"})
    report = kb.ingest(tmp_path / "in")
    assert [s.path for s in report.skipped] == ["bomb.pdf"] and "100" in report.skipped[0].reason
    assert len(report.added) == 1


# ------------------------------------------------------------------ the knowledge base's identity
@pytest.fixture()
def made(tmp_path) -> Path:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", child_tokens=150, child_overlap_tokens=30)
    kb.add_documents([{"id": "zh", "text": "恢复出厂设置需要同时按住音量加和电源键十秒。"},
                      {"id": "en", "text": "Hold the reset button for ten seconds to wipe the hub."}])
    kb.close()
    return tmp_path / "kb"


@pytest.mark.parametrize("edit, named", [
    (lambda t: t.replace('embedder = "minilm"', 'embedder = "e5-small"'), "embedder"),  # same dimension, 384
    (lambda t: t.replace("child_tokens = 150", "child_tokens = 300"), "child_tokens"),
    (lambda t: t.replace('analyzer = "ragsift-unicode-v2"', 'analyzer = "ragsift-zh-en-v1"'), "analyzer"),
    (lambda t: "", "embedder"),  # emptied: the defaults are not what the store was made with
])
def test_a_settings_file_that_disagrees_with_the_store_is_an_error(made, edit, named):
    sfile = made / "ragsift.toml"
    original = sfile.read_text(encoding="utf-8")
    sfile.write_text(edit(original), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{named} is .* there, but the knowledge base was built with"):
        KnowledgeBase.open(made)
    p = _cli("--kb", str(made), "query", "how to wipe the hub")
    assert p.returncode == 2 and "does not match the knowledge base" in p.stderr and "Traceback" not in p.stderr
    rewrite_settings(made)  # what the store recorded goes back into the file
    kb = KnowledgeBase.open(made)
    assert kb.settings.index.embedder == "minilm" and kb.settings.index.child_tokens == 150
    assert kb.query("怎么恢复出厂设置？", max_passages=1).passages[0].doc_id == "zh"


def test_a_lost_settings_file_never_makes_a_second_knowledge_base(made):
    (made / "ragsift.toml").unlink()
    with pytest.raises(ConfigError, match="ragsift.toml is missing, but .* holds a knowledge base .*embedder='minilm'"):
        KnowledgeBase.open(made)
    new = made.parent / "new.md"
    new.write_text("# 新\n\n一份新文档。\n", encoding="utf-8")
    p = _cli("--kb", str(made), "ingest", str(new))
    assert p.returncode == 2 and "is missing" in p.stderr
    assert not (made / "ragsift.toml").exists()  # nothing was written with new defaults
    p = _cli("--kb", str(made), "check", "--rewrite-settings")
    assert p.returncode == 0 and "wrote" in p.stdout, p.stderr
    kb = KnowledgeBase.open(made)
    assert kb.query("How do I wipe the hub?", max_passages=1).passages[0].doc_id == "en"


def test_restore_refuses_the_empty_generation(made):
    with pytest.raises(StoreError, match="generation 0 is the empty knowledge base"):
        restore_knowledge_base(made, 0)
    for bad in ("0", "²", "-1", "x"):
        p = _cli("--kb", str(made), "check", "--restore", bad)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (bad, p.stderr)
    assert 0 not in check_knowledge_base(made).restorable
    kb = KnowledgeBase.open(made)
    assert len(kb.documents()) == 2  # nothing was lost


# ------------------------------------------------------------------ flags checked like settings
@pytest.mark.parametrize("flags, message", [
    (["--port", "70000"], "--port must be from 1 to 65535"),
    (["--port", "0"], "--port must be from 1 to 65535"),
    (["--workers", "0"], "--workers must be from 1 to 64"),
    (["--workers", "65"], "--workers must be from 1 to 64"),
    (["--max-body-mb", "nan"], "--max-body-mb must be a finite number"),
    (["--max-upload-mb", "-1"], "--max-upload-mb must be a finite number"),
    (["--max-batch", "0"], "--max-batch must be a finite number"),
    (["--max-files", "-3"], "--max-files must be a finite number"),
    (["--rate-limit", "inf"], "--rate-limit must be a finite number"),
    (["--max-query-seconds", "0"], "--max-query-seconds must be a finite number"),
    (["--default-kb", "../x", "--kb-root", "KBROOT"], "--default-kb must be a knowledge-base name"),
    (["--keys-file", "KEYS"], "is not UTF-8 text"),
])
def test_serve_flags_are_checked_in_one_line(tmp_path, flags, message):
    (tmp_path / "keys").write_bytes(b"\xff\xfe not utf-8 \x80\x81\n")
    flags = [f.replace("KBROOT", str(tmp_path / "root")).replace("KEYS", str(tmp_path / "keys")) for f in flags]
    p = _cli("--kb", str(tmp_path / "kb"), "serve", *flags)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("ragsift: error:") and message in p.stderr and "Traceback" not in p.stderr


# ------------------------------------------------------------------ prompts, clients, caches
@pytest.mark.parametrize("template, message", [
    ("{question:>30000000}", "without a format spec"),
    ("{question!r}", "without a format spec"),
    ("{question.__class__}", "unknown placeholder"),
    ("{question[0]}", "unknown placeholder"),
    ("问题：{question}" + "长" * 5000, "longer than 4000"),
    ("no placeholder at all", "must use {question}"),
])
def test_prompt_templates_are_plain_and_bounded(template, message):
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")):
        Settings(llm_model="openai:x", prompts={"hyde.zh": {"system": "s", "user": template}})
    Settings(llm_model="openai:x", prompts={"summary.en": {"system": "Summarise.", "user": "Text: {text}"}})  # its own field


def test_model_clients_and_cache_files_are_made_once_per_setting(tmp_path):
    """150 queries varying one client or cache setting open one cache file, not 150, and the
    process's file descriptors stay put (a fixed cache path: what a server's operator sets)."""
    close_llms()
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.add_documents([{"id": "a", "text": "绿茶应密封、避光、冷藏保存。Green tea is kept sealed and cold."}])
    cache = tmp_path / "answers.sqlite"
    fds = lambda: len(os.listdir("/proc/self/fd"))  # noqa: E731
    with FaultInjectingLLMServer("ok", answer="绿茶需要冷藏。") as llm:
        common = dict(llm_model="openai:stub", llm_base_url=llm.url, llm_cache=str(cache), channels=["dense", "hyde"])
        kb.query("绿茶怎么保存？", **common)
        before = fds()
        for i in range(150):
            kb.query(f"绿茶怎么保存？{i % 3}", llm_cache_max_entries=1000 + i, **common)
        grown = fds() - before
        assert open_llm_files() == 1 and grown <= 5, grown
        for i in range(20):  # retries and concurrency are client settings: a client each, no file each
            kb.query("How is green tea stored?", llm_max_retries=i % 5, **common)
        assert open_llm_files() == 1
    close_llms()
    assert open_llm_files() == 0
