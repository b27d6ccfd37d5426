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
from ragsift.models.llm.cache import CachedLLM, LLMCache, cache_dir
from ragsift.models.llm.packaged import PACKAGED

__all__ = ["LLM", "LLMError", "Messages", "CachedLLM", "LLMCache", "PACKAGED", "cache_dir", "load_llm",
           "llm_for"]

_loaded: dict[tuple, LLM] = {}
_load_lock = threading.Lock()


def load_llm(spec: str, *, base_url: str | None = None, cache: bool | str | Path = True,
             timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4,
             cache_max_entries: int = 100_000, cache_max_age_days: float = 90.0) -> LLM:
    """``openai:<model>`` or ``local:<packaged name | path.gguf>``, cached per process.

    ``cache``: True for ``$RAGSIFT_CACHE_DIR/llm-cache.sqlite`` (default ``~/.cache/ragsift``),
    a path for another file, False for none; bounded by ``cache_max_entries`` (least recently
    used go first) and ``cache_max_age_days``.
    """
    kind, _, model = spec.partition(":")
    if not model or kind not in ("openai", "local"):
        raise ConfigError(f"unknown llm {spec!r}; use 'openai:<model>' or 'local:<name or file.gguf>' "
                          f"(packaged: {', '.join(PACKAGED)})")
    key = (spec, base_url, str(cache), timeout_s, max_retries, max_concurrency, cache_max_entries, cache_max_age_days)
    with _load_lock:
        if key not in _loaded:
            inner: LLM
            if kind == "openai":
                from ragsift.models.llm.openai_chat import OpenAILLM

                inner = OpenAILLM(model, base_url=base_url, timeout_s=timeout_s, max_retries=max_retries,
                                  max_concurrency=max_concurrency)
            else:
                from ragsift.models.llm.local import LocalLLM

                inner = LocalLLM(model)
            if cache:
                path = cache_dir() / "llm-cache.sqlite" if cache is True else Path(cache)
                inner = CachedLLM(inner, LLMCache(path, cache_max_entries, cache_max_age_days * 86400))
            _loaded[key] = inner
        return _loaded[key]


def llm_for(s: LLMSettings) -> LLM:
    """The model a settings group names (loaded once per process)."""
    if not s.model:
        raise ConfigError("no language model configured: set llm to 'local:qwen2.5-coder-1.5b' (offline) "
                          "or 'openai:<model>'")
    return load_llm(s.model, base_url=s.base_url or None, cache=s.cache, max_retries=s.max_retries,
                    max_concurrency=s.max_concurrency, cache_max_entries=s.cache_max_entries,
                    cache_max_age_days=s.cache_max_age_days)
