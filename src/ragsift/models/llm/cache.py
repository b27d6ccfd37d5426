"""A persistent cache of model answers (SQLite), keyed by model, messages and sampling."""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ragsift.cancel import Deadline
from ragsift.models.llm.base import LLM, Messages


class LLMCache:
    """A persistent cache of model answers (SQLite), keyed by model, messages and sampling.

    Bounded: at most ``max_entries`` answers (the least recently used go first) and none unused
    for ``max_age_s`` seconds. Several processes may share one file; each keeps the bound."""

    RECOUNT_EVERY = 100  # puts between two counts (other processes add answers too)

    def __init__(self, path: str | Path, max_entries: int = 100_000, max_age_s: float = 90 * 86400) -> None:
        self.path = Path(path)
        self.max_entries = max_entries
        self.max_age_s = max_age_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, used REAL)")
        if "used" not in {r[1] for r in self._db.execute("PRAGMA table_info(answers)")}:
            # a cache written before the bound: its answers count as used now
            self._db.execute("ALTER TABLE answers ADD COLUMN used REAL")
            self._db.execute("UPDATE answers SET used = ?", (time.time(),))
        self._db.execute("CREATE INDEX IF NOT EXISTS answers_used ON answers (used)")
        self._db.commit()
        self._lock = threading.Lock()
        self._puts = 0
        with self._lock:
            self._evict()

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            if row is not None:
                self._db.execute("UPDATE answers SET used = ? WHERE key = ?", (time.time(), key))
                self._db.commit()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any, bounds: tuple[int, float] | None = None) -> None:
        """Store an answer; ``bounds`` (most entries, longest age in seconds) replace the cache's
        own for this put (one file shared by settings that bound it differently)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers (key, value, used) VALUES (?, ?, ?)",
                             (key, json.dumps(value, ensure_ascii=False), time.time()))
            self._puts += 1
            if self._puts % self.RECOUNT_EVERY == 0 or self._puts == 1 or self._near_full or \
                    (bounds is not None and bounds != (self.max_entries, self.max_age_s)):
                self._evict(*(bounds or ()))
            self._db.commit()

    def close(self) -> None:
        """Close the file (later calls fail)."""
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def _evict(self, max_entries: int | None = None, max_age_s: float | None = None) -> None:
        """Drop answers unused for too long, then the least recently used past the bound."""
        max_entries = self.max_entries if max_entries is None else max_entries
        max_age_s = self.max_age_s if max_age_s is None else max_age_s
        self._db.execute("DELETE FROM answers WHERE used < ?", (time.time() - max_age_s,))
        n = int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
        if n > max_entries:
            self._db.execute("DELETE FROM answers WHERE key IN (SELECT key FROM answers ORDER BY used LIMIT ?)",
                             (n - max_entries,))
            n = max_entries
        # close to the bound, every put counts (so the bound holds exactly within one process)
        self._near_full = n >= min(max_entries, self.max_entries) - self.RECOUNT_EVERY
        self._db.commit()


class CachedLLM:
    """Wraps an LLM with a persistent cache. Only successful answers are cached."""

    def __init__(self, inner: LLM, cache: LLMCache, bounds: tuple[int, float] | None = None) -> None:
        self.inner = inner
        self.cache = cache
        self.bounds = bounds  # (most entries, longest age in seconds); None: the cache's own
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
        self.cache.put(key, text, self.bounds)
        return text

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        key = LLMCache.key("yes_no", self.name, list(messages))
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return float(hit)
        self.misses += 1
        score = self.inner.yes_no(messages, deadline=deadline)
        self.cache.put(key, score, self.bounds)
        return score

