"""Issue 54: a store and a loader are each one module and one registration. A module written here
(as an application would write its own) registers a toy store backend, kind "toy": the embedded
store fusing dense and BM25 itself, so it provides ``HybridSearch``; and a toy loader for ".toy"
files with the bytes they start with as its signature. Nothing else is told of them: every face
that lists stores or loaders finds them and works with them (the Python API, the command line,
the HTTP API, the reading processes), real models and a real store underneath. The
registrations are removed afterwards."""
from __future__ import annotations

import importlib
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import write_files

from ragsift.config import Settings, StoreKind
from ragsift.errors import ConfigError
from ragsift.ingest.loaders import LOADERS
from ragsift.ingest.loaders.base import unregister
from ragsift.ingest.loaders.sniff import SIGNATURES
from ragsift.kb import KnowledgeBase, check_knowledge_base, restore_knowledge_base
from ragsift.store import STORES, backends_that, store_backend, unregister_store
from ragsift.store.base import HybridSearch

MODULE = "ragsift_toy_parts"
TOY_PARTS = '''
"""A toy store backend and a toy file loader, each one registration."""
from __future__ import annotations

from dataclasses import replace

from ragsift.ingest.loaders.base import Budget, Markdown, register, structured
from ragsift.ingest.loaders.sniff import Magic
from ragsift.store import register_store
from ragsift.store.base import HybridSearch
from ragsift.store.lance import LanceStore


class ToyStore(LanceStore):
    """The embedded store, fusing dense and BM25 in "its engine" (reciprocal ranks)."""

    hybrid_calls = 0

    def search_hybrid(self, vector, terms, k, where, *, fusion="rrf", rrf_k=60, weights=(0.5, 0.5), depth=100,
                      kinds=("chunk",), normalize=True):
        type(self).hybrid_calls += 1
        scores, hits = {}, {}
        for ranking in (self.search_dense(vector, depth, where, kinds), self.search_bm25(terms, depth, where, kinds)):
            for rank, h in enumerate(ranking):
                scores[h.child_id] = scores.get(h.child_id, 0.0) + 1.0 / (rrf_k + rank + 1)
                hits.setdefault(h.child_id, h)
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:k]
        return [replace(hits[c], score=scores[c], raw=None) for c in best]

    def stats(self):
        return {**super().stats(), "backend": "toy"}


@register_store("toy", provides=(HybridSearch,))
def open_toy(path, settings, dim, vectors):
    st = settings.store
    return ToyStore(path, dim=dim, vectors=vectors, sparse=bool(settings.index.sparse_encoder),
                    lock_timeout_s=st.lock_timeout_s, keep_generations=st.keep_generations,
                    optimize_every=st.optimize_every, identity=settings.identity())


@register(".toy", signature=Magic("Toy file", starts=b"TOY1\\n"))
def load_toy(data, source, limits):
    """``TOY1``, a title line, then ``# heading`` lines and paragraphs."""
    budget = Budget(limits)
    lines = data.decode("utf-8").splitlines()[1:]
    md = Markdown()
    for line in lines[1:]:
        if line.startswith("# "):
            md.heading(1, line[2:])
        elif line.strip():
            budget.text(len(line))
            md.para(line)
    return structured(source, lines[0], md, data, "toy")
'''

TOY_FILE = ("TOY1\nThe toy lighthouse\n# Lamp\nThe lighthouse lamp turns once every twelve seconds and is "
            "seen thirty kilometres out to sea.\n# Keeper\nThe keeper climbs two hundred and twelve steps to "
            "wind the clockwork before dusk.\n")
OTHER_DOC = "# Bread\n\nSourdough rises overnight in a cool kitchen before it is baked at two hundred degrees.\n"
QUESTION = "How often does the lighthouse lamp turn?"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy module, imported from a folder on ``sys.path`` (the reading processes import it
    from there too); its registrations removed afterwards."""
    folder = tmp_path_factory.mktemp("toy_parts")
    (folder / f"{MODULE}.py").write_text(textwrap.dedent(TOY_PARTS), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(MODULE)
    finally:
        unregister_store("toy")
        unregister(".toy")
        sys.path.remove(str(folder))
        sys.modules.pop(MODULE, None)
        assert "toy" not in STORES and ".toy" not in LOADERS and ".toy" not in SIGNATURES
        assert "toy" not in [k.value for k in StoreKind]


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return write_files(tmp_path_factory.mktemp("toy_docs"), {
        "lighthouse.toy": TOY_FILE,
        "bread.md": OTHER_DOC,
        "liar.toy": "just text, no toy signature\n",  # refused by the signature before the loader sees it
        "toy_in_disguise.pdf": TOY_FILE,  # a toy file named as a PDF: told what it really is
        "notes.xyz": "a suffix no loader reads\n",
    })


@pytest.fixture(scope="module")
def toy_kb(toy, docs, tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("toy_kb") / "kb", store_kind="toy", embedder="minilm")
    report = kb.ingest(docs)
    yield kb, report
    kb.close()


def test_the_registrations_are_listed_where_stores_and_loaders_are(toy):
    assert "toy" in STORES.names() and ".toy" in LOADERS.names()
    assert "toy" in [k.value for k in StoreKind] and Settings(store_kind="toy").store.kind == "toy"
    with pytest.raises(ConfigError, match="unknown store_kind 'mysql'; valid values: 'lancedb', 'milvus', 'toy'"):
        Settings(store_kind="mysql")
    backend = store_backend("toy")
    assert backend.can(HybridSearch) and backends_that(HybridSearch) == ["milvus", "toy"]
    assert not store_backend("lancedb").can(HybridSearch)
    assert repr(SIGNATURES[".toy"]) == "Magic('Toy file')"


def test_the_python_api_ingests_queries_checks_and_copies(toy, toy_kb, tmp_path):
    kb, report = toy_kb
    assert kb.settings.store.kind == "toy" and isinstance(kb.store, toy.ToyStore)
    assert isinstance(kb.store, HybridSearch)  # what engine_hybrid asks of it
    assert sorted(report.added) and len(report.added) == 2, report
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["liar.toy"] == "not a Toy file as its name says: its content is text"
    assert reasons["toy_in_disguise.pdf"] == "not a PDF as its name says: its content is a Toy file"
    assert "unsupported file type '.xyz'" in reasons["notes.xyz"] and ".toy" in reasons["notes.xyz"]
    doc = next(d for d in kb.list_documents()[1] if d.source == "lighthouse.toy")
    assert doc.title == "The toy lighthouse" and doc.format == "toy"

    before = toy.ToyStore.hybrid_calls
    res = kb.query(QUESTION, store_fusion="engine", trace=True)  # dense and bm25 as one engine_hybrid
    assert toy.ToyStore.hybrid_calls > before
    assert res.passages[0].source == "lighthouse.toy" and "twelve seconds" in res.passages[0].text
    assert "engine_hybrid" in json.dumps(res.trace.to_dict(), default=str)
    assert kb.query(QUESTION).passages[0].source == "lighthouse.toy"  # ragsift's own fusion, the default

    st = kb.stats()
    assert st["backend"] == "toy" and st["documents"] == 2
    assert KnowledgeBase.committed_stats(kb.path) is None  # no committed_stats part: the store is opened
    assert kb.check().ok and check_knowledge_base(kb.path).ok  # no check part: opened and checked
    with pytest.raises(ConfigError, match="the toy store keeps no older generations to restore"):
        restore_knowledge_base(kb.path)

    on_lance = kb.copy_to(tmp_path / "on_lance", store_kind="lancedb")
    back = on_lance.copy_to(tmp_path / "back", store_kind="toy")
    try:
        assert isinstance(back.store, toy.ToyStore) and back.stats()["documents"] == 2
        assert back.query(QUESTION, store_fusion="engine").passages[0].source == "lighthouse.toy"
    finally:
        on_lance.close()
        back.close()
    with pytest.raises(ConfigError, match="needs a store that fuses in its engine: store = 'milvus' or "
                                          "store = 'toy' \\(this knowledge base is on lancedb\\)"):
        KnowledgeBase.open(tmp_path / "on_lance", create=False).query(QUESTION, store_fusion="engine")


def test_the_command_line_creates_ingests_queries_and_checks(toy, docs, tmp_path, capsys):
    from ragsift.cli import build_parser, main

    ingest = next(a for a in build_parser()._subparsers._group_actions[0].choices["ingest"]._actions  # type: ignore
                  if a.dest == "store_kind")
    assert "toy" in ingest.choices
    kb = tmp_path / "cli_kb"
    assert main(["--kb", str(kb), "ingest", "--store", "toy", "--embedder", "minilm", str(docs)]) == 0
    out = "".join(capsys.readouterr())
    assert "not a Toy file as its name says" in out and "not a PDF as its name says: its content is a Toy file" in out
    assert main(["--kb", str(kb), "stats", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["backend"] == "toy" and st["documents"] == 2
    assert main(["--kb", str(kb), "query", QUESTION, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passages"][0]["source"] == "lighthouse.toy"
    assert main(["--kb", str(kb), "check"]) == 0
    capsys.readouterr()


def test_the_http_api_offers_the_engines_fusion_and_reads_uploaded_toy_files(toy, docs, tmp_path):
    from fastapi.testclient import TestClient

    from ragsift.server.app import create_app
    from ragsift.server.config import ServerConfig

    path = tmp_path / "served"
    with KnowledgeBase.open(path, store_kind="toy", embedder="minilm") as kb:
        kb.ingest(docs / "bread.md")
    with TestClient(create_app(ServerConfig(kb=path, mcp=False))) as c:
        got = c.get("/v1/settings").json()
        assert json.dumps(got["settings"]).count('"toy"') >= 1
        assert "engine_hybrid" in got["channels"] and "store_fusion" not in got["unavailable"]
        files = [("files", ("harbour.toy", b"TOY1\nThe harbour\n# Tide\nThe harbour gate closes two hours "
                                          b"before low tide.\n", "application/octet-stream"))]
        r = c.post("/v1/files", files=files)
        assert r.status_code == 202, r.text
        job = r.json()
        t = time.monotonic()
        while job["state"] in ("queued", "running"):
            assert time.monotonic() - t < 300, job
            time.sleep(0.2)
            job = c.get(f"/v1/kbs/{job['kb']}/jobs/{job['id']}").json()
        assert job["state"] == "done" and job["report"]["skipped"] == [], job
        body = c.post("/v1/query", json={"question": "When does the harbour gate close?",
                                         "store_fusion": "engine"}).json()
        assert body["passages"][0]["source"] == "harbour.toy", body
