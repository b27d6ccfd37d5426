"""Generative language models behind one small protocol (``base.LLM``), with a persistent cache.

- ``openai:<model>`` (``openai_chat``): any OpenAI-compatible chat endpoint.
- ``local:<name or path.gguf>`` (``local``): a GGUF model run in-process by llama.cpp
  (``pip install ragsift[llm]``), offline; packaged names in ``packaged.PACKAGED``.
- ``cache``: answers cached in SQLite; ``load_llm`` wraps every model in it unless told not to.

Every call takes a :class:`~ragsift.cancel.Deadline`: network timeouts are bounded by it and
local generation checks it between tokens, so a call ends when its channel's time is up.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ragsift.config import LLMSettings
from ragsift.errors import ConfigError
from ragsift.models.llm.base import LLM, LLMError, Messages
from ragsift.models.llm.cache import CachedLLM, LLMCache
from ragsift.models.llm.packaged import PACKAGED
from ragsift.process import cache_dir

__all__ = ["LLM", "LLMError", "Messages", "CachedLLM", "LLMCache", "PACKAGED", "cache_dir", "load_llm",
           "llm_for", "close_llms", "open_llm_files"]

# one model per distinct model setting, one open file per cache path, one wrapper per combination:
# settings that vary per query (a Python caller may vary them) never open a second model or file
# for what they do not change
_models: dict[tuple, LLM] = {}
_caches: dict[Path, LLMCache] = {}
_wrapped: dict[tuple, LLM] = {}
MAX_WRAPPED = 256  # wrappers hold nothing but references; the oldest are dropped past this
_load_lock = threading.Lock()


def load_llm(spec: str, *, base_url: str | None = None, cache: bool | str | Path = True,
             timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4,
             cache_max_entries: int = 100_000, cache_max_age_days: float = 90.0) -> LLM:
    """``openai:<model>`` or ``local:<packaged name | path.gguf>``, loaded once per process.

    ``cache``: True for ``$RAGSIFT_CACHE_DIR/llm-cache.sqlite`` (default ``~/.cache/ragsift``),
    a path for another file, False for none; bounded by ``cache_max_entries`` (least recently
    used go first) and ``cache_max_age_days``. A local model is loaded once whatever the client
    settings; an endpoint's client once per (model, base URL, timeout, retries, concurrency); a
    cache file is opened once (``close_llms`` closes them).
    """
    kind, _, model = spec.partition(":")
    if not model or kind not in ("openai", "local"):
        raise ConfigError(f"unknown llm {spec!r}; use 'openai:<model>' or 'local:<name or file.gguf>' "
                          f"(packaged: {', '.join(PACKAGED)})")
    model_key = (spec,) if kind == "local" else (spec, base_url, timeout_s, max_retries, max_concurrency)
    path = (cache_dir() / "llm-cache.sqlite" if cache is True else Path(cache)) if cache else None
    bounds = (cache_max_entries, cache_max_age_days * 86400)
    key = (model_key, path, bounds)
    with _load_lock:
        found = _wrapped.get(key)
        if found is not None:
            return found
        inner = _models.get(model_key)
        if inner is None:
            if kind == "openai":
                from ragsift.models.llm.openai_chat import OpenAILLM

                inner = OpenAILLM(model, base_url=base_url, timeout_s=timeout_s, max_retries=max_retries,
                                  max_concurrency=max_concurrency)
            else:
                from ragsift.models.llm.local import LocalLLM

                inner = LocalLLM(model)
            _models[model_key] = inner
        llm: LLM = inner
        if path is not None:
            resolved = path.expanduser().resolve()
            shared = _caches.get(resolved)
            if shared is None:
                shared = _caches[resolved] = LLMCache(resolved, *bounds)
            llm = CachedLLM(inner, shared, bounds)
        if len(_wrapped) >= MAX_WRAPPED:
            _wrapped.pop(next(iter(_wrapped)))
        _wrapped[key] = llm
        return llm


def close_llms() -> None:
    """Close every cache file opened by ``load_llm`` and forget the loaded models (a server's
    shutdown; later calls load again)."""
    with _load_lock:
        for c in _caches.values():
            c.close()
        _caches.clear()
        _models.clear()
        _wrapped.clear()


def open_llm_files() -> int:
    """How many cache files ``load_llm`` holds open (for tests and diagnostics)."""
    with _load_lock:
        return len(_caches)


def llm_for(s: LLMSettings) -> LLM:
    """The model a settings group names (loaded once per process)."""
    if not s.model:
        raise ConfigError("no language model configured: set llm_model to 'local:qwen2.5-coder-1.5b' (offline) "
                          "or 'openai:<model>'")
    return load_llm(s.model, base_url=s.base_url or None, cache=s.cache, max_retries=s.max_retries,
                    max_concurrency=s.max_concurrency, cache_max_entries=s.cache_max_entries,
                    cache_max_age_days=s.cache_max_age_days)
