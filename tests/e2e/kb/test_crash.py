"""Kill a real ingest process at several moments; the knowledge base must stay the last
committed one, with no child whose parent is missing, and the next ingest must succeed."""
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import write_files

from ragsift.kb import KnowledgeBase

CHILD = textwrap.dedent("""
    import os, signal, sys
    import ragsift.store.lance_write as lance_write
    import ragsift.store.milvus as milvus
    import ragsift.store.milvus_write as milvus_write
    lance_write.BATCH_CHILDREN = 40    # write to the tables often, so a kill lands between writes
    milvus_write.BATCH_CHILDREN = 40
    mode = sys.argv[3]
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "before-cleanup":       # Milvus: die after the commit, before old versions are removed
        real = milvus.MilvusTransaction._write_manifest
        def commit_then_die(self, manifest):
            real(self, manifest)
            die()
        milvus.MilvusTransaction._write_manifest = commit_then_die
    from ragsift.kb import KnowledgeBase
    kb = KnowledgeBase.open(sys.argv[1])
    class Progress:
        def update(self, n):
            print("progress", n, flush=True)
            if mode == "pause":            # wait for the test to say go on (or to kill us here)
                sys.stdin.readline()
        def close(self): pass
    kb.ingest(sys.argv[2], progress=lambda total, desc: Progress())
    print("committed", flush=True)
""")


def _corpus(n: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    files = {}
    for i in range(n):
        if i % 2:
            body = "".join(f"第{j}段说明设备{i}的第{rng.randint(1, 99)}项功能，需要按照步骤操作。" for j in range(12))
            files[f"zh_{i}.md"] = f"# 设备{i}手册\n\n## 概述\n\n{body}\n\n## 维护\n\n{body}"
        else:
            body = " ".join(f"Step {j} explains feature {rng.randint(1, 99)} of device {i} in detail." for j in range(25))
            files[f"en_{i}.md"] = f"# Device {i} manual\n\n## Overview\n\n{body}\n\n## Care\n\n{body}"
    return files


@pytest.fixture()
def committed_kb(tmp_path, backend):
    first = write_files(tmp_path / "first", _corpus(4, 1))
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", **backend)
    report = kb.ingest(first)
    assert report.generation == 1
    second = write_files(tmp_path / "second", {f"b_{k}": v for k, v in _corpus(40, 2).items()})
    return kb, second


def _run_and_kill(kb_path, docs, mode, kill_after_progress=None, kill_after_seconds=None):
    """Run an ingest in a child process and SIGKILL it: right after its Nth batch was written
    (mode "pause": the child waits there, so the moment is exact), or after a delay."""
    script = kb_path.parent / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(kb_path), str(docs), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    seen = 0
    try:
        if kill_after_seconds is not None:
            time.sleep(kill_after_seconds)
            proc.send_signal(signal.SIGKILL)
        else:
            for line in proc.stdout:
                if line.startswith("progress"):
                    seen += 1
                    if kill_after_progress is not None and seen >= kill_after_progress:
                        proc.send_signal(signal.SIGKILL)
                        break
                    if mode == "pause":
                        proc.stdin.write("go\n")
                        proc.stdin.flush()
                if line.startswith("committed"):
                    break
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, seen


def _assert_last_committed(kb_path, generation, documents):
    kb = KnowledgeBase.open(kb_path, create=False)
    st = kb.stats()
    assert st["generation"] == generation and st["documents"] == documents
    assert kb.store.check_integrity() == []
    # readers see only committed documents: none of the killed ingest's
    sources = {p.source for p in kb.query("device manual overview", max_passages=10).passages}
    assert sources and not any(s.startswith("b_") for s in sources)


def _children_written(kb) -> int:
    """Child rows physically written, committed or not (a LanceDB table version counts as one)."""
    if kb.settings.store.kind == "lancedb":
        import lancedb
        return lancedb.connect(str(kb.path / "lance")).open_table("children").version
    res = kb.store.client.query(kb.store.coll["children"], filter="gen >= 0", output_fields=["count(*)"])
    return int(res[0]["count(*)"])


@pytest.mark.parametrize("kill_after", [1, 3])
def test_kill_during_ingest_keeps_last_generation(committed_kb, kill_after):
    kb, second = committed_kb
    before = _children_written(kb)
    rc, seen = _run_and_kill(kb.path, second, "pause", kill_after)
    assert rc == -signal.SIGKILL and seen >= kill_after
    assert _children_written(kb) > before  # the killed writer had really written uncommitted rows
    _assert_last_committed(kb.path, 1, 4)
    # the next writer rolls the leftovers back and commits cleanly
    kb2 = KnowledgeBase.open(kb.path, create=False)
    report = kb2.ingest(second)
    assert report.generation == 2 and len(report.added) == 40
    assert kb2.stats()["documents"] == 44 and kb2.store.check_integrity() == []


def test_kill_at_random_moments_leaves_one_whole_generation(committed_kb):
    """Wherever the kill lands (loading, embedding, writing, indexing, committing), the
    knowledge base is either the old generation or the new one, whole."""
    kb, second = committed_kb
    rng = random.Random(7)
    for _ in range(3):
        before = KnowledgeBase.open(kb.path, create=False).stats()
        _run_and_kill(kb.path, second, "normal", kill_after_seconds=rng.uniform(1.0, 12.0))
        after = KnowledgeBase.open(kb.path, create=False)
        st = after.stats()
        assert after.store.check_integrity() == []
        if st["generation"] == before["generation"]:
            assert st["documents"] == before["documents"]  # rolled back
        else:
            assert st["generation"] == before["generation"] + 1 and st["documents"] == 44




def test_uninterrupted_child_process_commits(committed_kb):
    kb, second = committed_kb
    rc, _ = _run_and_kill(kb.path, second, "normal", None)
    assert rc == 0
    kb.store.refresh()
    assert kb.store.generation == 2 and kb.stats()["documents"] == 44
    assert kb.store.check_integrity() == []


@pytest.mark.parametrize("backend", ["milvus"], indirect=True)
def test_kill_between_the_commit_and_removing_old_versions(committed_kb, tmp_path):
    """Milvus removes replaced rows after the commit; killed in between, readers still see one
    version of each document, and the next writer finishes the removal."""
    kb, _ = committed_kb
    changed = write_files(tmp_path / "first", {k: v + "\n\nRevised." for k, v in _corpus(4, 1).items()})
    rc, _ = _run_and_kill(kb.path, changed, "before-cleanup", None)
    assert rc == -signal.SIGKILL
    reader = KnowledgeBase.open(kb.path, create=False)
    assert reader.store.manifest["retired"]  # the removal is pending
    st = reader.stats()
    assert st["generation"] == 2 and st["documents"] == 4 and reader.store.check_integrity() == []
    assert all(p.text.endswith("Revised.") for p in reader.query("device manual care", max_passages=10).passages
               if p.heading.endswith("Care"))
    assert _children_written(kb) > st["children"]  # old versions still on the server, filtered out
    writer = KnowledgeBase.open(kb.path, create=False)
    more = write_files(tmp_path / "more", {"x.md": "# X\n\nOne more document."})
    assert writer.ingest(more).generation == 3
    assert not writer.store.manifest["retired"] and _children_written(kb) == writer.stats()["children"]
    assert writer.store.check_integrity() == []
