"""Index expansion: keyword and named-entity entries searched by channels of their own, fused
with dense and BM25, in Chinese and English."""
from __future__ import annotations

import pytest
from conftest import write_files

from ragsift.kb import KnowledgeBase

EN = """# Notes on physics

## Radioactivity

Marie Curie worked in Paris on radioactivity and discovered polonium and radium with Pierre Curie.

## Lenses

A converging lens bends parallel rays so that they meet in a focal point behind it.
"""

ZH = """# 产品说明

## 音箱

星云智能音箱 S2 由星云科技有限公司在深圳设计，支持蓝牙 5.2。

## 茶叶

绿茶应在零至五摄氏度冷藏保存，红茶常温密封即可。
"""


@pytest.fixture(scope="module")
def expanded_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("expand")
    kb = KnowledgeBase.open(root / "kb", small_index=("chunks", "keywords", "entities"))
    kb.ingest(write_files(root / "docs", {"physics.md": EN, "products.md": ZH}))
    return kb


@pytest.mark.parametrize("question,needle", [("What did Marie Curie discover?", "polonium"),
                                             ("星云科技有限公司的产品有哪些？", "星云智能音箱")])
def test_entity_queries_hit_the_entity_channel(expanded_kb, question, needle):
    res = expanded_kb.query(question, channels=["dense", "bm25", "entities"])
    chans = {c.name: c for c in res.trace.channels}
    assert chans["entities"].error is None and chans["entities"].hits
    top = chans["entities"].hits[0]
    assert top.child_id.endswith("n")  # an entity entry, pointing at its chunk
    parent = expanded_kb.store.get_parents([top.parent_id])[top.parent_id].parent
    assert needle in parent.text[top.start:top.end] and needle in res.passages[0].text


@pytest.mark.parametrize("question", ["how do lenses bend light", "茶叶怎么保存"])
def test_a_question_without_entities_leaves_the_entity_channel_empty(expanded_kb, question):
    res = expanded_kb.query(question, channels=["dense", "bm25", "entities"])
    chans = {c.name: c for c in res.trace.channels}
    assert chans["entities"].hits == () and chans["entities"].error is None
    plain = expanded_kb.query(question, channels=["dense", "bm25"])
    assert [p.parent_id for p in res.passages] == [p.parent_id for p in plain.passages]  # no noise added


@pytest.mark.parametrize("question,needle", [("converging lens focal point", "focal point"),
                                             ("绿茶 冷藏", "绿茶")])
def test_the_keyword_channel_searches_key_phrases_only(expanded_kb, question, needle):
    res = expanded_kb.query(question, channels=["keywords"])
    (chan,) = res.trace.channels
    assert chan.hits and all(h.child_id.endswith("w") for h in chan.hits)
    assert needle in res.passages[0].text


def test_expansion_channels_without_their_entries_find_nothing(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.ingest(write_files(tmp_path / "docs", {"physics.md": EN}))
    res = kb.query("Marie Curie", channels=["dense", "entities", "keywords"])
    chans = {c.name: c for c in res.trace.channels}
    assert chans["entities"].hits == () and chans["keywords"].hits == () and res.passages


def test_a_second_embedding_model_is_a_channel_of_its_own(tmp_path, backend):
    """MiniLM is English only; with multilingual-e5 as an extra embedder the Chinese question is
    found by the dense:e5-small channel. Both vectors are stored per entry, on either store."""
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", extra_embedders=["e5-small"],
                            small_index=("chunks", "entities"), **backend)
    kb.ingest(write_files(tmp_path / "docs", {"physics.md": EN, "products.md": ZH}))
    res = kb.query("绿茶应该怎么保存？", channels=["dense", "dense:e5-small"])
    chans = {c.name: c for c in res.trace.channels}
    assert chans["dense:e5-small"].error is None
    top = chans["dense:e5-small"].hits[0]
    parent = kb.store.get_parents([top.parent_id])[top.parent_id].parent
    assert "绿茶" in parent.text[top.start:top.end]
    assert res.passages[0].heading.endswith("茶叶")
    # the extra vectors travel with a copy
    copy = kb.copy_to(tmp_path / "copy", store_kind="lancedb")
    again = copy.query("绿茶应该怎么保存？", channels=["dense", "dense:e5-small"])
    assert [p.parent_id for p in again.passages] == [p.parent_id for p in res.passages]
    with pytest.raises(Exception, match="unknown channel 'dense:bge'"):
        kb.query("x", channels=["dense:bge"])


@pytest.mark.parametrize("encoder,question,needle", [
    ("splade-tiny", "Which lens bends parallel rays to a focal point?", "converging lens"),
    ("e5-sparse", "绿茶应该怎么保存？", "绿茶"),
    ("e5-sparse", "Which lens bends parallel rays to a focal point?", "converging lens")])
def test_learned_sparse_vectors_are_a_channel_on_every_store(tmp_path, backend, encoder, question, needle):
    kb = KnowledgeBase.open(tmp_path / "kb", sparse_encoder=encoder, **backend)
    kb.ingest(write_files(tmp_path / "docs", {"physics.md": EN, "products.md": ZH}))
    res = kb.query(question, channels=["sparse"])
    (chan,) = res.trace.channels
    assert chan.error is None and chan.hits and all(h.score > 0 for h in chan.hits)
    top = chan.hits[0]
    parent = kb.store.get_parents([top.parent_id])[top.parent_id].parent
    assert needle in parent.text[top.start:top.end]
    # the stored vectors are the encoder's: the score is the dot product with the query's
    from ragsift.models.sparse import load_sparse_encoder, sparse_dot
    enc = load_sparse_encoder(encoder)
    stored = {ic.child.child_id: ic.sparse for _, _, cs in kb.store.export() for ic in cs}
    q = enc.encode_queries([question])[0]
    assert sparse_dot(q, stored[top.child_id]) == pytest.approx(top.score, rel=1e-4)


def test_the_sparse_channel_needs_a_sparse_index(tmp_path):
    from ragsift.errors import ConfigError
    kb = KnowledgeBase.open(tmp_path / "kb")
    with pytest.raises(ConfigError, match="sparse_encoder"):
        kb.query("x", channels=["sparse"])
