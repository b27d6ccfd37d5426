"""A persistent cache of model answers (SQLite), keyed by model, messages and sampling."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from ragsift.cancel import Deadline
from ragsift.models.llm.base import LLM, Messages


def cache_dir() -> Path:
    """Where the answer cache lives: ``$RAGSIFT_CACHE_DIR``, default ``~/.cache/ragsift``."""
    d = os.environ.get("RAGSIFT_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "ragsift"



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

