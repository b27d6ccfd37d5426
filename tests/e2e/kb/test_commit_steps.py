"""Kill a real writer process at every step of the commit, on both stores, and fill a real
disk: each time the knowledge base opens at a committed generation, whole (the old one or the
new one), ``check`` finds nothing wrong, and the next write succeeds.

The child process wraps every write of the transaction and its commit sequence (table adds, deletes, index
builds, compactions, restores and version cleanups on LanceDB; inserts, upserts, deletes and
flushes on Milvus; the generation file and manifest writes and renames, and the removal of
old generation files) and counts them from the moment the transaction is open (opening it rolls back what a killed
writer left). A first run counts the steps (and commits); then run k is killed with SIGKILL
just before its k-th step, for k = 1, 2, ... until the kill lands just after the commit
returned."""
from __future__ import annotations

import errno
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import write_files

from ragsift.errors import StoreError
from ragsift.kb import KnowledgeBase, check_knowledge_base

CHILD = textwrap.dedent("""
    import os, pathlib, signal, sys
    import lancedb.table
    import ragsift.store.lance as lance
    import ragsift.store.lance_files as lance_files
    milvus_kb = "milvus" in pathlib.Path(sys.argv[1], "ragsift.toml").read_text()
    if milvus_kb:  # (imported only when needed: each import costs the many child processes a second)
        import pymilvus
        import ragsift.store.milvus as milvus

    work, mode, target = sys.argv[2], sys.argv[3], int(sys.argv[4])
    state = {"commit": False, "n": 0}

    def step(label):
        if not state["commit"]:
            return
        state["n"] += 1
        if mode == "count":
            print("step", state["n"], label, flush=True)
        elif state["n"] == target:
            print("killed before", label, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(cls, name, label):
        real = getattr(cls, name)
        def wrapped(*args, **kwargs):
            step(label)
            return real(*args, **kwargs)
        setattr(cls, name, wrapped)

    for name in ("add", "delete", "create_index", "optimize", "restore", "add_columns"):
        wrap(lancedb.table.LanceTable, name, "lance " + name)
    if milvus_kb:
        for name in ("insert", "upsert", "delete", "flush"):
            wrap(pymilvus.MilvusClient, name, "milvus " + name)
    wrap(pathlib.Path, "unlink", "unlink")

    def write_atomic(path, data):  # the store's own sequence, with a step between its two writes
        name = "generations/N.json" if path.parent.name == "generations" else path.name
        step("write " + name + ".tmp")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(data, encoding="utf-8")
        step("rename to " + name)
        os.replace(tmp, path)
    lance_files.write_atomic = write_atomic

    for cls in (milvus.MilvusTransaction,) if milvus_kb else (lance.LanceTransaction,):
        def init(self, *args, _real=cls.__init__, **kwargs):
            _real(self, *args, **kwargs)  # (which rolls back what a killed writer left)
            state["commit"] = True  # then every write of the transaction and its commit
        cls.__init__ = init
        def commit(self, *args, _real=cls.commit, **kwargs):
            state["commit"] = True
            try:
                generation = _real(self, *args, **kwargs)
            except BaseException:
                state["commit"] = False
                raise
            step("(after the commit returned)")
            state["commit"] = False
            return generation
        cls.commit = commit

    from ragsift.kb import KnowledgeBase
    kb = KnowledgeBase.open(sys.argv[1], create=False)
    generation = kb.optimize()["generation"] if work == "optimize" else kb.ingest(work).generation
    print("committed", generation, flush=True)
""")


def _child(tmp: Path, kb_path: Path, work: str, mode: str, target: int = 0) -> tuple[int, list[str]]:
    script = tmp / "commit_child.py"
    script.write_text(CHILD)
    p = subprocess.run([sys.executable, str(script), str(kb_path), work, mode, str(target)],
                       capture_output=True, text=True, timeout=600)
    if mode == "count":
        assert p.returncode == 0, p.stderr[-2000:]
    return p.returncode, p.stdout.splitlines()


def _trial_docs(root: Path, k: int) -> Path:
    """Trial k: one new English and one new Chinese document, and a revision of en_0.md."""
    return write_files(root / f"trial{k}", {
        "en_0.md": f"# Device 0 manual\n\n## Overview\n\nRevision {k}: hold the reset button for {k + 10} seconds.",
        f"t{k}_en.md": f"# Trial {k}\n\nTrial {k} checks the backup schedule of cluster {k}.",
        f"t{k}_zh.md": f"# 试验{k}\n\n第{k}次试验检查集群{k}的备份计划。"})


def _state(kb_path: Path) -> tuple[int, set[str], str]:
    kb = KnowledgeBase.open(kb_path, create=False)
    try:
        docs = kb.documents()
        revision = next(sp.parent.text for sp in kb.document(next(i for i, d in docs.items() if d.source == "en_0.md"))[1])
        assert kb.store.check_integrity() == []
        return kb.stats()["generation"], {d.source for d in docs.values()}, revision
    finally:
        kb.close()


def _assert_whole_and_usable(kb_path: Path, question: str, source: str) -> None:
    report = check_knowledge_base(kb_path)
    assert report.ok, report.problems
    kb = KnowledgeBase.open(kb_path, create=False)
    try:
        assert source in [p.source for p in kb.query(question, max_passages=3).passages]
    finally:
        kb.close()


def _base(tmp_path: Path, backend: dict) -> Path:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", optimize_every=0, **backend)
    kb.ingest(write_files(tmp_path / "base", {
        "en_0.md": "# Device 0 manual\n\n## Overview\n\nRevision 0: hold the reset button for 3 seconds.",
        "zh_0.md": "# 设备0手册\n\n## 概述\n\n长按电源键五秒进入蓝牙配对模式。"}))
    kb.close()
    return tmp_path / "kb"


def test_kill_at_every_step_of_an_ingest_commit(tmp_path, backend):
    kb_path = _base(tmp_path, backend)
    rc, lines = _child(tmp_path, kb_path, str(_trial_docs(tmp_path, 0)), "count")
    steps = [line.split(" ", 2)[2] for line in lines if line.startswith("step ")]
    assert lines[-1] == "committed 2" and steps[-1] == "(after the commit returned)"
    if "lancedb" == KnowledgeBase.open(kb_path, create=False).settings.store.kind:
        assert {"lance add", "lance delete", "write generations/N.json.tmp", "rename to manifest.json"} <= set(steps), steps
    else:
        assert {"milvus insert", "milvus flush", "milvus upsert", "milvus delete"} <= set(steps)
    outcomes = {"old": 0, "new": 0}
    killed: list[str] = []
    for k in range(1, len(steps) + 5):  # (a commit after a kill may remove one more old file)
        generation, sources, revision = _state(kb_path)
        rc, lines = _child(tmp_path, kb_path, str(_trial_docs(tmp_path, k)), "kill", k)
        assert rc == -9 and len(lines) == 1 and lines[0].startswith("killed before "), (k, rc, lines)
        killed.append(lines[0].removeprefix("killed before "))
        after = _state(kb_path)
        if after[0] == generation:  # rolled back: exactly the old generation
            assert after == (generation, sources, revision), (k, killed[-1])
            outcomes["old"] += 1
        else:  # committed: exactly the new one
            assert after[0] == generation + 1, (k, killed[-1])
            assert after[1] == sources | {f"t{k}_en.md", f"t{k}_zh.md"} and after[2].startswith(f"Revision {k}:")
            outcomes["new"] += 1
        _assert_whole_and_usable(kb_path, "设备手册 蓝牙配对", "zh_0.md")
        if killed[-1] == steps[-1]:
            break
    assert killed[-1] == steps[-1] and set(killed) == set(steps), (steps, killed)
    assert outcomes["old"] >= 1 and outcomes["new"] >= 1  # kills landed on both sides of the commit point
    # the next writer succeeds
    kb = KnowledgeBase.open(kb_path, create=False)
    final = kb.ingest(_trial_docs(tmp_path, 999))
    assert final.generation == _state(kb_path)[0] and len(final.added) == 2 and len(final.updated) == 1
    _assert_whole_and_usable(kb_path, "第999次试验检查什么？", "t999_zh.md")
    print(f"\n{kb.settings.store.kind}: killed at {len(killed)} steps ({len(set(killed))} kinds); {outcomes}")


def test_kill_at_every_step_of_optimize(tmp_path):
    """LanceDB's optimize is a commit that also removes old table versions: a kill anywhere in
    it must leave the committed generation readable (Milvus compacts on the server)."""
    kb_path = _base(tmp_path, {})
    kb = KnowledgeBase.open(kb_path, create=False)
    for k in (1, 2, 3):
        kb.ingest(_trial_docs(tmp_path, k))
    kb.close()
    rc, lines = _child(tmp_path, kb_path, "optimize", "count")
    steps = [line.split(" ", 2)[2] for line in lines if line.startswith("step ")]
    assert lines[-1] == "committed 5" and "lance optimize" in steps
    expected = _state(kb_path)[1:]
    killed: list[str] = []
    for k in range(1, len(steps) + 5):
        generation = _state(kb_path)[0]
        rc, lines = _child(tmp_path, kb_path, "optimize", "kill", k)
        assert rc == -9 and len(lines) == 1, (k, lines)
        killed.append(lines[0].removeprefix("killed before "))
        after = _state(kb_path)
        assert after[0] in (generation, generation + 1) and after[1:] == expected, (k, killed[-1])
        _assert_whole_and_usable(kb_path, "Trial 2 checks which backup schedule?", "t2_en.md")
        if killed[-1] == steps[-1]:
            break
    assert killed[-1] == steps[-1] and set(killed) == set(steps), (steps, killed)
    assert check_knowledge_base(kb_path).restorable


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True)
    try:
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0


def test_a_full_disk_loses_nothing(tmp_path, monkeypatch):
    """A real full disk when the test may mount a small tmpfs (as root, in CI); otherwise the
    same sequence with ENOSPC injected into the store's table writes."""
    disk = tmp_path / "disk"
    mounted = _mount_tmpfs(disk, "24m")
    try:
        kb_path = _base(disk, {})
        big = write_files(tmp_path / "big", {
            f"doc{i}.md": f"# 文档{i}\n\n" + "".join(f"第{j}段记录了设备{i}的运行参数和维护步骤。" for j in range(20))
            + "\n\n" + " ".join(f"Paragraph {j} of document {i} records maintenance steps." for j in range(20))
            for i in range(12)})
        filler = disk / "filler"
        if mounted:
            free = shutil.disk_usage(disk).free
            with open(filler, "wb") as f:  # leave about 100 KB free: less than the ingest needs
                f.write(b"\0" * max(0, free - 100_000))
        else:
            import lancedb.table

            real = lancedb.table.LanceTable.add
            calls = {"n": 0}

            def add_until_full(self, *args, **kwargs):  # named fault injection: the disk fills up
                calls["n"] += 1
                if calls["n"] > 2:
                    raise OSError(errno.ENOSPC, "No space left on device")
                return real(self, *args, **kwargs)

            monkeypatch.setattr(lancedb.table.LanceTable, "add", add_until_full)
        kb = KnowledgeBase.open(kb_path, create=False)
        with pytest.raises(StoreError, match=r"^ingest failed: .*(No space left|os error 28).*; nothing was "
                                             r"committed and the knowledge base stays at generation 1$"):
            kb.ingest(big)
        monkeypatch.undo()
        # still generation 1, whole and searchable, while the disk is full
        assert _state(kb_path)[:2] == (1, {"en_0.md", "zh_0.md"})
        _assert_whole_and_usable(kb_path, "蓝牙配对", "zh_0.md")
        if mounted:
            filler.unlink()
        report = kb.ingest(big)
        assert report.generation == 2 and len(report.added) == 12
        _assert_whole_and_usable(kb_path, "设备7的运行参数", "doc7.md")
        print(f"\nfull disk: {'a real 24 MB tmpfs' if mounted else 'injected ENOSPC (no mount here)'}")
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=30)
