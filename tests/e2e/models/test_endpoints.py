"""Embeddings and reranking behind endpoints, against real local servers (model_servers.py)
serving packaged models: the knowledge base built through the endpoint ranks as the in-process
model does, instructions and batching reach the server, dead or garbage endpoints fail an
ingest cleanly (nothing committed) and a query's channel or reranker only."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import write_files
from model_servers import EmbeddingServer, RerankServer
from server_process import free_port

from ragsift.demo import sample_dir, sample_questions
from ragsift.errors import ConfigError, ModelError
from ragsift.kb import KnowledgeBase
from ragsift.models.embedders import load_embedder


@pytest.fixture(scope="module")
def local_minilm(tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("local") / "kb", embedder="minilm")
    kb.ingest(sample_dir() / "kb")
    return kb


def test_a_knowledge_base_built_through_the_endpoint_ranks_as_the_model_in_process(local_minilm, tmp_path, monkeypatch):
    # an endpoint embeds questions and passages on one graph (the server here: the package's); in process minilm
    # asks on its int8 copy (tests/models/test_embedders.py holds that), so this compares against the package's graph
    model = load_embedder("minilm")
    monkeypatch.setattr(model, "_query_sessions", model._sessions)
    with EmbeddingServer("minilm") as srv:
        kb = KnowledgeBase.open(tmp_path / "kb", embedder="openai:minilm", embed_base_url=srv.url,
                                embed_batch_size=8, embed_concurrency=3)
        assert kb.store.dim == 384  # discovered from the endpoint's answer
        report = kb.ingest(sample_dir() / "kb")
        assert report.children == local_minilm.stats()["children"]
        assert srv.max_in_flight > 1  # several batches in flight
        assert max(len(b["input"]) for p, b in srv.requests if p == "/v1/embeddings") <= 8
        for q in sample_questions():  # Chinese and English
            mine = kb.query(q["question"], channels=["dense"], max_passages=10, token_budget=100_000)
            theirs = local_minilm.query(q["question"], channels=["dense"], max_passages=10, token_budget=100_000)
            a = [h.parent_id for h in mine.trace.channels[0].hits[:10]]
            b = [h.parent_id for h in theirs.trace.channels[0].hits[:10]]
            sa = [h.score for h in mine.trace.channels[0].hits[:10]]
            sb = [h.score for h in theirs.trace.channels[0].hits[:10]]
            assert np.allclose(sa, sb, atol=1e-5), q["question"]
            # the same list, but for neighbours whose scores tie within float noise
            assert a == b or all(x == y or abs(s - t) < 1e-5 for x, y, s, t in zip(a, b, sa, sb)), q["question"]
        assert kb.query("恢复出厂设置要按哪些键？").passages[0].source == \
            local_minilm.query("恢复出厂设置要按哪些键？").passages[0].source


def test_instructions_go_before_queries_and_passages(tmp_path):
    with EmbeddingServer("minilm") as srv:
        kb = KnowledgeBase.open(tmp_path / "kb", embedder="openai:minilm", embed_base_url=srv.url, embed_prefixes="e5")
        kb.add_documents([{"id": "a", "text": "Green tea keeps best in a refrigerator."}])
        kb.query("how to store green tea", channels=["dense"])
        texts = [t for p, b in srv.requests if p == "/v1/embeddings" for t in b["input"]]
        assert any(t.startswith("passage: ") and "Green tea" in t for t in texts)
        assert "query: how to store green tea" in texts
    with pytest.raises(ConfigError, match="embed_prefixes applies to openai:<model> and st:<model>"):
        KnowledgeBase.open(tmp_path / "kb2", embedder="minilm", embed_prefixes="bge")
    with pytest.raises(ConfigError, match="built with embedder='openai:minilm'"):
        KnowledgeBase.open(tmp_path / "kb", embedder="minilm")


def test_transient_errors_are_retried(tmp_path):
    with EmbeddingServer("minilm", mode="flaky") as srv:
        kb = KnowledgeBase.open(tmp_path / "kb", embedder="openai:minilm", embed_base_url=srv.url)
        assert kb.add_documents([{"id": "a", "text": "绿茶应冷藏保存。"}]).added == ["a"]
        assert sum(1 for p, _ in srv.requests if p == "/v1/embeddings") >= 2  # one 503, then the answer


@pytest.mark.parametrize("mode,message", [("garbage", "not an embeddings answer"), ("500", "failed after 3 attempt")])
def test_a_bad_endpoint_fails_the_ingest_and_commits_nothing(tmp_path, mode, message):
    with EmbeddingServer("minilm") as good:
        kb = KnowledgeBase.open(tmp_path / "kb", embedder="openai:minilm", embed_base_url=good.url,
                                embed_timeout_s=5)
        kb.add_documents([{"id": "a", "text": "Green tea keeps best in a refrigerator."}])
    generation = kb.stats()["generation"]
    with EmbeddingServer("minilm", mode=mode) as bad:
        kb = KnowledgeBase.open(tmp_path / "kb", embed_base_url=bad.url)
        with pytest.raises(ModelError, match=message):
            kb.add_documents([{"id": "b", "text": "星云音箱长按静音键十秒恢复出厂设置。"}])
        assert kb.stats()["generation"] == generation and set(kb.documents()) == {"a"}
        assert kb.store.check_integrity() == []
        # at query time the dense channel fails, BM25 answers
        res = kb.query("green tea refrigerator")
        errors = {c.name: c.error for c in res.trace.channels}
        assert errors["bm25"] is None and message in errors["dense"] and res.passages[0].doc_id == "a"


def test_a_dead_endpoint_is_a_clear_error(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelError, match=r"openai:minilm at .*failed after .*APIConnectionError"):
        KnowledgeBase.open(tmp_path / "kb", embedder="openai:minilm", embed_base_url=dead, embed_timeout_s=3)
    with pytest.raises(ModelError, match="unknown embedder 'bert'; valid: 'e5-small', 'minilm', 'use-multilingual', 'st:<model>', "
                                         "'openai:<model>'"):
        load_embedder("bert")


@pytest.mark.parametrize("style", ["api", "tei"])
@pytest.mark.parametrize("question", ["恢复出厂设置要按哪些键？", "How do I reset the hub?"])
def test_rerank_endpoint_scores_with_the_served_model(local_minilm, style, question):
    with RerankServer("minilm") as srv:
        base = srv.url if style == "api" else srv.url.removesuffix("/v1")
        res = local_minilm.query(question, reranker=f"{style}:minilm-cosine", rerank_base_url=base, rerank_top_n=6)
        info = res.trace.rerank
        assert info["error"] is None and info["judged"] == 6 and info["model"] == f"{style}:minilm-cosine@{base}"
        path, body = srv.requests[-1]
        assert path == ("/v1/rerank" if style == "api" else "/rerank")
        texts = body["documents"] if style == "api" else body["texts"]
        expected = srv.scores(question, texts)  # the packaged encoder's own scores
        assert [s["score"] for s in info["scores"]] == [round(x, 4) for x in sorted(expected, reverse=True)]
        assert [p.parent_id for p in res.passages[:4]] == [s["id"] for s in info["scores"][:4]]


@pytest.mark.parametrize("mode", ["garbage", "500", "dead"])
def test_a_failing_rerank_endpoint_keeps_the_fused_order(local_minilm, mode):
    q = "How do I reset the hub?"
    plain = local_minilm.query(q)
    if mode == "dead":
        res = local_minilm.query(q, reranker="api:x", rerank_base_url=f"http://127.0.0.1:{free_port()}/v1",
                                 channel_timeouts={"rerank": 3})
    else:
        with RerankServer("minilm", mode=mode) as srv:
            res = local_minilm.query(q, reranker="api:x", rerank_base_url=srv.url, channel_timeouts={"rerank": 3})
    assert res.trace.rerank["error"] and res.trace.rerank["judged"] == 0
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in plain.passages]


def test_an_endpoint_embedder_as_an_extra_embedder(tmp_path):
    docs = write_files(tmp_path / "docs", {"tea.md": "# Tea\n\nGreen tea keeps best in a refrigerator.\n",
                                           "hub.md": "# Hub\n\nHold the reset button for ten seconds.\n"})
    with EmbeddingServer("minilm") as srv:
        kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", extra_embedders=["openai:minilm"],
                                embed_base_url=srv.url)
        kb.ingest(docs)
        res = kb.query("how do I reset it?", channels=["dense:openai:minilm"])
        assert res.trace.channels[0].error is None and res.passages[0].source == "hub.md"
