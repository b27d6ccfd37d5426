"""Checkpointed ingests (settings checkpoint_documents / checkpoint_seconds): each checkpoint is a
whole generation, an error keeps the checkpoints before it, the same ingest run again resumes
and ends with the same documents as one uninterrupted ingest, and a real ingest process killed
with SIGKILL at ten random moments (some inside a checkpoint's commit) always leaves the last
checkpoint, whole."""
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import lancedb
import pytest
from conftest import write_files
from test_crash import _corpus

from ragsift.cli import main as cli_main
from ragsift.config import Settings
from ragsift.errors import ConfigError, ModelError, StoreError
from ragsift.ingest import pipeline as pipeline_module
from ragsift.ingest.loaders import doc_id_for
from ragsift.ingest.pipeline import IngestRun
from ragsift.kb import KnowledgeBase, restore_knowledge_base
from ragsift.store import lance
from ragsift.store.lance_files import generation_file, saved_generations
from ragsift.store.lance_upkeep import check_generation


def _snapshot(kb: KnowledgeBase) -> dict[str, tuple]:
    """Per document: content hash, parent and child counts (as recorded and as stored) and the
    sorted texts of its children."""
    out = {}
    docs = kb.documents()
    with kb.reading() as store:
        for doc, parents, children in store.export():
            d = docs[doc.doc_id]
            assert (d.parents, d.children) == (len(parents), len(children)), doc.doc_id  # no half document
            out[doc.doc_id] = (doc.content_hash, len(parents), len(children), sorted(c.child.text for c in children))
    return out


def _generation_problems_and_sizes(path) -> dict[int, tuple[list[str], int]]:
    """Every kept generation checked whole (each child's parent, each parent's document, the counts
    each document records), with its number of documents."""
    db = lancedb.connect(str(path / "lance"))
    out = {}
    for g in saved_generations(path):
        counts: dict[str, int] = {}
        m = json.loads(generation_file(path, g).read_text(encoding="utf-8"))
        out[g] = (check_generation(path, db, m, whole=True, counts=counts), counts.get("documents", 0))
    return out


class _Bar:
    """A progress bar that shows nothing."""

    def update(self, n):
        pass

    def close(self):
        pass


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_files(tmp_path_factory.mktemp("docs"), _corpus(10, 3))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, files):
    """The same files ingested in one commit (the default)."""
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("one") / "kb", embedder="minilm")
    report = kb.ingest(files)
    assert report.checkpoints == 1 and report.generation == 1 and len(report.added) == 10
    return _snapshot(kb)


def test_settings_are_strict_and_default_off(tmp_path):
    s = Settings()
    assert s.ingest.checkpoint_documents == 0 and s.ingest.checkpoint_seconds == 0
    assert Settings(checkpoint_documents=50, checkpoint_seconds=600.0).flat()["checkpoint_documents"] == 50
    for bad in ({"checkpoint_documents": -1}, {"checkpoint_documents": "5"}, {"checkpoint_documents": 2.5},
                {"checkpoint_seconds": -1.0}, {"checkpoint_seconds": float("nan")}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            Settings(**bad)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", checkpoint_documents=7)
    assert "checkpoint_documents = 7" in (tmp_path / "kb" / "ragsift.toml").read_text()
    assert KnowledgeBase.open(tmp_path / "kb").settings.ingest.checkpoint_documents == 7
    with pytest.raises(ConfigError, match="index settings cannot change per query: checkpoint_seconds"):
        kb.query("x", checkpoint_seconds=5.0)


def test_default_is_one_commit(tmp_path, files, uninterrupted):
    totals = []
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", keep_generations=10)
    report = kb.ingest(files, progress=lambda total, desc: totals.append(total) or _Bar())
    assert report.checkpoints == 1 and report.generation == 1 and saved_generations(kb.path) == [0, 1]
    assert totals == [report.children]  # the whole ingest is split before it is written
    assert _snapshot(kb) == uninterrupted
    again = kb.ingest(files)
    assert again.checkpoints == 0 and again.generation == 1 and len(again.unchanged) == 10


def test_checkpoints_are_whole_generations_and_a_rerun_resumes(tmp_path, files, uninterrupted):
    totals = []
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", checkpoint_documents=3, keep_generations=20)
    report = kb.ingest(files, progress=lambda total, desc: totals.append(total) or _Bar())
    assert (report.checkpoints, report.generation, len(report.added)) == (4, 4, 10)
    assert totals == [None]  # streamed: the total is not known up front
    kept = _generation_problems_and_sizes(kb.path)
    assert {g: size for g, (_, size) in kept.items()} == {0: 0, 1: 3, 2: 6, 3: 9, 4: 10}
    assert all(not problems for problems, _ in kept.values()), kept
    assert _snapshot(kb) == uninterrupted

    # back to the second checkpoint (as a kill there would leave it): the same ingest resumes
    restore_knowledge_base(kb.path, 2)
    resumed = KnowledgeBase.open(kb.path)
    assert resumed.stats()["documents"] == 6 and resumed.check().ok
    report = resumed.ingest(files)
    assert (len(report.unchanged), len(report.added), report.checkpoints) == (6, 4, 2)
    assert _snapshot(resumed) == uninterrupted


def test_checkpoint_seconds_commits_when_the_time_has_passed(tmp_path, files, uninterrupted, monkeypatch):
    monkeypatch.setattr(pipeline_module, "EMBED_BATCH", 1)  # one document per write
    real = IngestRun._put

    def slow_write(self, *args):
        time.sleep(0.06)
        return real(self, *args)

    monkeypatch.setattr(IngestRun, "_put", slow_write)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", checkpoint_seconds=0.05, keep_generations=20)
    report = kb.ingest(files)
    assert report.checkpoints == 10 and report.generation == 10  # every write took longer than 0.05 s
    assert all(not problems for problems, _ in _generation_problems_and_sizes(kb.path).values())
    assert _snapshot(kb) == uninterrupted

    other = KnowledgeBase.open(tmp_path / "kb2", embedder="minilm", checkpoint_seconds=3600.0)
    assert other.ingest(files).checkpoints == 1


@pytest.mark.parametrize("error", [OSError("disk gone"), ModelError("embedder endpoint down")])
def test_an_error_keeps_the_checkpoints_before_it(tmp_path, files, uninterrupted, monkeypatch, backend, error):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", checkpoint_documents=2, **backend)
    real = IngestRun._put
    calls = []

    def failing_write(self, *args):
        calls.append(1)
        if len(calls) == 3:  # two checkpoints of two documents each are committed
            raise error
        return real(self, *args)

    monkeypatch.setattr(IngestRun, "_put", failing_write)
    with pytest.raises(StoreError if isinstance(error, OSError) else ModelError) as e:
        kb.ingest(files)
    assert "the 2 checkpoint(s) this ingest committed are kept (the knowledge base is at generation 2)" in str(e.value)
    assert "run the same ingest again to resume" in str(e.value)
    kb = KnowledgeBase.open(tmp_path / "kb", create=False)
    st = kb.stats()
    assert (st["generation"], st["documents"]) == (2, 4)
    assert kb.store.check_integrity() == [] and kb.check().ok
    monkeypatch.setattr(IngestRun, "_put", real)
    report = kb.ingest(files)
    assert (len(report.unchanged), len(report.added), report.checkpoints, report.generation) == (4, 6, 3, 5)
    assert _snapshot(kb) == uninterrupted


def test_streaming_keeps_the_last_of_the_same_document_and_reports_the_same(tmp_path):
    """A checkpointed ingest loads one file at a time, yet ends as a full load does: the same
    document twice (two directories, JSONL rows) keeps its last loaded version."""
    a = write_files(tmp_path / "a", {"x.md": "# X\n\nfirst version of x", "y.md": "# Y\n\nonly in a",
                                     "z.md": "# Z\n\nz from a", "w.txt": "w from a"})
    b = write_files(tmp_path / "b", {"x.md": "# X\n\nsecond version of x", "z.md": "   \n",  # empty: skipped
                                     "rows.jsonl": '{"_id": "r1", "text": "row one"}\n'
                                                   '{"_id": "r1", "text": "row one again"}\n'
                                                   '{"_id": "r2", "text": "row two"}\nnot json\n'})
    c = write_files(tmp_path / "c", {"more.jsonl": '{"_id": "r2", "text": "row two, the last"}\n'})
    inputs = [a, b, c, tmp_path / "missing"]
    results = []
    for n, settings in enumerate(({}, {"checkpoint_documents": 2})):
        kb = KnowledgeBase.open(tmp_path / f"kb{n}", embedder="minilm", **settings)
        report = kb.ingest(inputs)
        assert report.checkpoints == (3 if settings else 1)
        texts = {d: "\n".join(sp.parent.text for sp in kb.document(d)[1]) for d in kb.documents()}
        results.append((sorted(report.added), sorted((s.path, s.reason) for s in report.skipped), texts))
    assert results[0] == results[1]
    texts = results[1][2]
    assert "second version of x" in texts[doc_id_for("x.md")]
    assert "z from a" in texts[doc_id_for("z.md")]  # the later z.md is empty: the earlier one stays
    assert texts["r1"] == "row one" and texts["r2"] == "row two, the last"
    assert len(texts) == 6 and len(results[1][1]) == 4  # missing, empty, duplicate row, bad line


def test_add_documents_reads_an_iterator_as_it_writes(tmp_path, monkeypatch):
    consumed = []
    at_commit = []

    def rows():
        for i in range(9):
            consumed.append(i)
            yield {"id": f"n{i}", "text": f"Note {i}: 第{i}条说明，关于设备维护。" * 3}

    real = lance.LanceTransaction.commit

    def commit(self, **kw):
        at_commit.append(len(consumed))
        return real(self, **kw)

    monkeypatch.setattr(lance.LanceTransaction, "commit", commit)
    monkeypatch.setattr(pipeline_module, "INGEST_GROUP", 2)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", checkpoint_documents=3)
    report = kb.add_documents(rows())
    assert report.checkpoints == 3 and len(report.added) == 9
    assert at_commit[0] < 9  # the first checkpoint was committed before the last rows were read


def test_cli_checkpoint_flags_apply_to_this_ingest(tmp_path, files, capsys):
    kb = tmp_path / "kb"
    assert cli_main(["--kb", str(kb), "ingest", str(files), "--embedder", "minilm", "--checkpoint-documents", "4",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("generation 3: 10 added") and "3 generations committed (checkpoints)" in out
    assert "checkpoint_documents = 0" in (kb / "ragsift.toml").read_text()  # not saved: this ingest only
    write_files(files.parent / "extra", {"e.md": "# E\n\nextra"})
    assert cli_main(["--kb", str(kb), "ingest", str(files.parent / "extra"), "--checkpoint-seconds", "0.5",
                     "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoints"] == 1


# ---------------------------------------------------------------- kill -9, ten times
CHILD = textwrap.dedent("""
    import os, random, signal, sys, threading
    import lancedb.table
    import ragsift.store.lance as lance
    import ragsift.store.lance_files as files
    import ragsift.store.lance_write as lance_write
    lance_write.BATCH_CHILDREN = 6     # rows reach the tables inside each checkpoint, between commits
    kb_path, docs, how, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    rng = random.Random(seed)
    stop_at = rng.randint(1, 2)
    state = {"commits": 0, "in_commit": False, "writes": 0, "optimizes": 0, "batches": 0}

    def die(*_):
        os.kill(os.getpid(), signal.SIGKILL)

    def die_in(seconds):
        t = threading.Timer(seconds, die)
        t.daemon = True
        t.start()

    real_commit = lance.LanceTransaction.commit
    def commit(self, **kw):
        state["commits"] += 1
        if state["commits"] == 2 and how in ("in-commit", "after-commit"):
            die()                      # the timer has not fired yet: die before a second checkpoint
        print("committing", self.generation, flush=True)
        if state["commits"] == 1 and how == "in-commit":
            die_in(rng.uniform(0.0, 0.08))  # a commit of three documents takes about 0.05-0.1 s here
        state["in_commit"] = state["commits"] == 1
        generation = real_commit(self, **kw)
        state["in_commit"] = False
        print("committed", generation, flush=True)
        if state["commits"] == 1 and how == "after-commit":
            die_in(rng.uniform(0.0, 1.0))
        return generation
    lance.LanceTransaction.commit = commit

    real_write = files.write_atomic
    def write_atomic(path, data):      # a commit's publish: generations/<N>.json, then manifest.json
        real_write(path, data)
        if state["in_commit"]:
            state["writes"] += 1
            if (how, state["writes"]) in (("generation-file", 1), ("manifest", 2)):
                die()
    files.write_atomic = write_atomic

    real_optimize = lancedb.table.LanceTable.optimize
    def optimize(self, *args, **kwargs):  # a commit folds new rows into the tables and the BM25 index
        if state["in_commit"] and how == "optimize":
            state["optimizes"] += 1
            if state["optimizes"] == stop_at:
                die()
        return real_optimize(self, *args, **kwargs)
    lancedb.table.LanceTable.optimize = optimize

    class Progress:
        def update(self, n):           # a batch of whole documents is in the open transaction
            state["batches"] += 1
            if how == "writing" and state["batches"] == stop_at + 1:
                die()
        def close(self):
            pass

    from ragsift.kb import KnowledgeBase
    kb = KnowledgeBase.open(kb_path)
    report = kb.ingest(docs, progress=lambda total, desc: Progress())
    print("done", report.generation, flush=True)
""")

# where each of the ten kills lands: inside a checkpoint's commit (at a random moment, after the
# generation file, after the manifest replace, in a table's optimize) or outside one
KILLS = ["in-commit", "in-commit", "in-commit", "generation-file", "manifest", "optimize",
         "after-commit", "after-commit", "writing", "writing"]
EVERY = 3  # documents per checkpoint
N_DOCS = 40


def test_kill_a_checkpointed_ingest_ten_times_then_resume(tmp_path):
    """Ten SIGKILLs of a real checkpointed ingest, some inside a commit: each time the knowledge
    base opens at the last checkpoint committed (or the one being committed, if the kill came
    after its manifest was replaced), passes every check, holds whole documents only (three per
    checkpoint), and the next run resumes; the last run ends with the same documents as one
    uninterrupted ingest of the same files."""
    docs = write_files(tmp_path / "docs", _corpus(N_DOCS, 18))
    one = KnowledgeBase.open(tmp_path / "one", embedder="minilm")
    assert one.ingest(docs).checkpoints == 1
    expected = _snapshot(one)

    path = tmp_path / "kb"
    KnowledgeBase.open(path, embedder="minilm", checkpoint_documents=EVERY).close()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    rng = random.Random(18)
    kills = KILLS[:]
    rng.shuffle(kills)
    generation = 0
    for run, how in enumerate(kills):
        proc = subprocess.run([sys.executable, str(script), str(path), str(docs), how, str(rng.randrange(10**6))],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        lines = [line.split() for line in proc.stdout.splitlines()]
        where = f"run {run} ({how}): {proc.stdout!r} {proc.stderr[-2000:]!r}"
        assert proc.returncode == -signal.SIGKILL, where
        committed = [int(w[1]) for w in lines if w[0] == "committed"]
        started = [int(w[1]) for w in lines if w[0] == "committing"]
        in_progress = started[-1] if started and (not committed or started[-1] > committed[-1]) else None
        last = committed[-1] if committed else generation

        kb = KnowledgeBase.open(path, create=False)
        now = kb.store.generation
        if how == "generation-file":  # killed before the manifest was replaced: not committed
            assert now == last and in_progress is not None, where
        elif how == "manifest":  # killed right after: committed
            assert now == in_progress, where
        else:
            assert now in {last, in_progress}, where
        assert now >= generation, where
        report = kb.check()
        assert report.ok and report.generation == now, (where, report.problems)
        assert kb.store.check_integrity() == [], where
        snapshot = _snapshot(kb)  # every document whole: its recorded counts are its rows
        assert len(snapshot) == EVERY * now, where  # whole checkpoints: three new documents each
        assert all(expected[d] == v for d, v in snapshot.items()), where
        kb.close()
        generation = now
    assert 0 < generation < (N_DOCS + EVERY - 1) // EVERY  # progress was made, and work is left

    kb = KnowledgeBase.open(path, create=False)
    report = kb.ingest(docs)
    assert len(report.unchanged) == EVERY * generation and len(report.added) == N_DOCS - EVERY * generation
    assert report.generation == (N_DOCS + EVERY - 1) // EVERY
    assert kb.check().ok and kb.store.check_integrity() == []
    assert _snapshot(kb) == expected
