"""Life over months: ``optimize`` keeps the last generations and drops the rest, ``check``
names the damage (a truncated or corrupted manifest, a removed data file), a kept generation
can be restored, and a failed write says what was (not) committed. Real stores, real files."""
from __future__ import annotations

import errno
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_files

from ragsift.errors import ConfigError, RetrievalError, StoreError
from ragsift.kb import KnowledgeBase, check_knowledge_base, restore_knowledge_base


def ragsift(*args):
    return subprocess.run([sys.executable, "-m", "ragsift.cli", *args], capture_output=True, text=True,
                          timeout=600)


def _release(root: Path, g: int) -> Path:
    """Generation g's documents: one English and one Chinese release note."""
    return write_files(root / f"release{g}", {
        f"en_{g}.md": f"# Release {g}\n\nVersion {g} adds feature number {g * 7} to the controller.",
        f"zh_{g}.md": f"# 第{g}版\n\n第{g}版为控制器新增了第{g * 7}号功能。"})


def _versions(kb_path: Path, table: str = "children") -> int:
    return len(list((kb_path / "lance" / f"{table}.lance" / "_versions").glob("*.manifest")))


def _sources(kb: KnowledgeBase) -> set[str]:
    return {d.source for d in kb.documents().values()}


def test_optimize_keeps_the_last_generations_and_shrinks_the_disk(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", optimize_every=0)
    for g in range(1, 7):
        assert kb.ingest(_release(tmp_path, g)).generation == g
        time.sleep(0.5)  # real commits are seconds apart; versions a moment older than kept ones are kept
    versions_before = _versions(kb.path)
    done = kb.optimize()
    assert done["generation"] == 7 and done["kept_generations"] == [6, 7]
    assert done["disk_bytes"] < done["disk_bytes_before"]
    assert kb.stats()["disk_bytes"] == done["disk_bytes"]
    assert _versions(kb.path) < versions_before
    report = kb.check()
    assert report.ok and report.generation == 7 and report.restorable == [6, 7]
    assert report.counts == {"documents": 12, "parents": 12, "children": 12}
    # the same documents, still found in both languages
    assert {p.source for p in kb.query("第3版新增了什么功能？", max_passages=1).passages} == {"zh_3.md"}
    assert {p.source for p in kb.query("What does version 5 add?", max_passages=1).passages} == {"en_5.md"}
    # a generation no longer kept cannot be restored; a kept one can
    with pytest.raises(StoreError, match="generation 3 cannot be restored; restorable: 6, 7"):
        restore_knowledge_base(kb.path, 3)


def test_restore_goes_back_to_a_kept_generation_and_can_be_undone(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", keep_generations=3)
    for g in range(1, 5):
        kb.ingest(_release(tmp_path, g))
    assert kb.check().restorable == [2, 3, 4]
    assert restore_knowledge_base(kb.path, 2) == 5
    back = KnowledgeBase.open(kb.path, create=False)
    assert back.stats()["generation"] == 5
    assert _sources(back) == {"en_1.md", "zh_1.md", "en_2.md", "zh_2.md"}
    assert {p.source for p in back.query("第2版", max_passages=1).passages} == {"zh_2.md"}
    assert back.check().ok
    # generation 4 is still kept: the restore itself can be undone
    assert restore_knowledge_base(kb.path, 4) == 6
    again = KnowledgeBase.open(kb.path, create=False)
    assert len(_sources(again)) == 8 and again.check().ok
    # and writing goes on from there
    assert again.ingest(_release(tmp_path, 9)).generation == 7 and len(again.documents()) == 10


def test_optimize_runs_by_itself_every_n_commits(tmp_path):
    auto = KnowledgeBase.open(tmp_path / "auto", embedder="minilm", optimize_every=3)
    never = KnowledgeBase.open(tmp_path / "never", embedder="minilm", optimize_every=0)
    for g in range(1, 8):
        auto.ingest(_release(tmp_path, g))
        never.ingest(_release(tmp_path, g))
        time.sleep(0.5)
    assert auto.store.manifest["optimized_generation"] == 6
    assert "optimized_generation" not in never.store.manifest
    assert _versions(auto.path) < _versions(never.path)
    assert auto.check().ok and auto.check().restorable == [6, 7]
    assert auto.stats()["documents"] == never.stats()["documents"] == 14
    got = [p.source for p in auto.query("Version 7 adds which feature?", max_passages=1).passages]
    assert got == [p.source for p in never.query("Version 7 adds which feature?", max_passages=1).passages] == ["en_7.md"]


@pytest.mark.parametrize("damage", ["truncated", "corrupted"])
def test_a_damaged_manifest_is_named_and_the_last_good_generation_restored(tmp_path, damage):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(_release(tmp_path, 1))
    kb.ingest(_release(tmp_path, 2))
    manifest = kb.path / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text[: len(text) // 2] if damage == "truncated" else text.replace('"versions"', '"ver{ions"'),
                        encoding="utf-8")
    with pytest.raises(StoreError, match=r"manifest\.json.*ragsift check"):
        KnowledgeBase.open(kb.path, create=False)
    report = check_knowledge_base(kb.path)
    assert not report.ok and report.restorable == [1, 2]
    assert any("manifest.json" in p and damage in p for p in report.problems), report.problems
    p = ragsift("--kb", str(kb.path), "check")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"manifest.json is {damage}" in p.stdout or f"manifest.json: {damage}" in p.stdout, p.stdout
    p = ragsift("--kb", str(kb.path), "check", "--restore")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "restored: generation 3 is now the newest" in p.stdout and p.stdout.rstrip().endswith("ok")
    back = KnowledgeBase.open(kb.path, create=False)
    assert back.stats()["generation"] == 3 and _sources(back) == {"en_1.md", "zh_1.md", "en_2.md", "zh_2.md"}
    assert {p.source for p in back.query("第2版新增了什么？", max_passages=1).passages} == {"zh_2.md"}


def test_a_removed_data_file_is_named_and_an_older_generation_restored(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(_release(tmp_path, 1))
    data = kb.path / "lance" / "children.lance" / "data"
    first = set(data.iterdir())
    kb.ingest(_release(tmp_path, 2))
    lost = sorted(set(data.iterdir()) - first)[0]
    lost.unlink()
    reader = KnowledgeBase.open(kb.path, create=False)
    # nothing could be searched: an error, never a silent "no passages"
    with pytest.raises(RetrievalError, match="every channel failed: dense: .*; bm25: "):
        reader.query("reset")
    p = ragsift("--kb", str(kb.path), "query", "第1版")
    assert p.returncode != 0 and "Traceback" not in p.stderr and "every channel failed" in p.stderr
    report = check_knowledge_base(kb.path)
    assert report.problems == [f"generation 2: table children: file lance/children.lance/data/{lost.name} is missing"]
    assert report.restorable == [1]
    p = ragsift("--kb", str(kb.path), "check", "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["restorable"] == [1]
    assert restore_knowledge_base(kb.path) == 3
    back = KnowledgeBase.open(kb.path, create=False)
    assert back.check().ok and _sources(back) == {"en_1.md", "zh_1.md"}
    assert [p.source for p in back.query("Version 1 adds which feature?", max_passages=1).passages] == ["en_1.md"]
    assert back.ingest(_release(tmp_path, 2)).generation == 4 and back.check().ok


def test_check_and_restore_refuse_what_is_not_a_knowledge_base(tmp_path):
    with pytest.raises(StoreError, match="no knowledge base"):
        check_knowledge_base(tmp_path / "nothing")
    p = ragsift("--kb", str(tmp_path / "nothing"), "check", "--restore", "x")
    assert p.returncode != 0 and "Traceback" not in p.stderr


def test_milvus_check_and_optimize_restore_is_refused(tmp_path, milvus_uri):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", store_kind="milvus", store_uri=milvus_uri)
    kb.ingest(_release(tmp_path, 1))
    kb.ingest(_release(tmp_path, 2))
    report = kb.check()
    assert report.ok and report.store == "milvus" and report.generation == 2
    assert report.counts["documents"] == 4
    done = kb.optimize()
    assert done["generation"] == 2
    assert kb.stats()["documents"] == 4
    assert [p.source for p in kb.query("第2版新增了什么？", max_passages=1).passages] == ["zh_2.md"]
    with pytest.raises(ConfigError, match="restore"):
        restore_knowledge_base(kb.path, 1)


@pytest.mark.parametrize("step", ["add", "optimize", "manifest"])
def test_a_full_disk_mid_write_is_one_clear_error_and_loses_nothing(tmp_path, monkeypatch, step):
    """ENOSPC injected at one write of the commit (a real full disk is in tests/e2e/kb/test_commit_steps.py)."""
    import lancedb.table

    import ragsift.store.lance_files as lance_files

    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    kb.ingest(_release(tmp_path, 1))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if step == "manifest":
        monkeypatch.setattr(lance_files, "write_atomic", full)
    else:
        monkeypatch.setattr(lancedb.table.LanceTable, step, full)
    with pytest.raises(StoreError, match=r"^ingest failed: \[Errno 28\] No space left on device; nothing was "
                                         r"committed and the knowledge base stays at generation 1$"):
        kb.ingest(_release(tmp_path, 2))
    monkeypatch.undo()
    assert kb.stats()["generation"] == 1 and _sources(kb) == {"en_1.md", "zh_1.md"}
    assert kb.check().ok
    assert kb.ingest(_release(tmp_path, 2)).generation == 2 and kb.check().ok
    assert [p.source for p in kb.query("第2版", max_passages=1).passages] == ["zh_2.md"]
