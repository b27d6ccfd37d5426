"""jieba's dictionary, opened in milliseconds: a per-user cache on disk.

jieba keeps its dictionary as one Python dict of about 580,000 words and prefixes, built from
``dict.txt`` or loaded from a marshal file; either takes 1 to 3 seconds, on every process that
segments Chinese (a ``ragsift query`` in Chinese paid it each time). Here the dictionary is
built once per user and dictionary version into a read-only SQLite file in the cache
directory (``$RAGSIFT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragsift``, else
``~/.cache/ragsift``), and a process looks words up in it as it needs them (a question needs a
few dozen). A process that looks up many words (an ingest) loads the whole dictionary from the
marshal file written beside it, once, and goes on with jieba's own dict: segmentation is the
same either way, word for word, since every look-up answers from the same dictionary.

Failures fall back, never fail: a cache directory that is missing and cannot be made,
read-only, or holding a damaged file means the dictionary is built in memory, as jieba does
without a cache. Processes that build at once each write their own temporary file and move
it into place (a reader sees no file or a whole one).
"""
from __future__ import annotations

import logging
import marshal
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

from ragsift.process import cache_dir, file_key

log = logging.getLogger(__name__)

FORMAT = 1  # of the cache files: part of their names
#: distinct words looked up in the on-disk dictionary before the whole of it is loaded
FULL_AFTER = 50_000


def cache_stem(dict_file: str, version: str) -> str:
    """The cache files' name for a dictionary: jieba's version, the file's size and mtime (a
    changed or upgraded dictionary is a new name, never a stale cache)."""
    return f"jieba-{version}-{file_key(dict_file)}-v{FORMAT}"


class LazyFreq:
    """jieba's ``FREQ`` (word -> count, 0 for a prefix of a word) answered from the SQLite
    cache, each word once; after ``FULL_AFTER`` distinct words the tokenizer is given the whole
    dictionary (``load_full``) and this object answers from it too."""

    def __init__(self, db: Path, load_full: Any) -> None:
        self._conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._seen: dict[str, int | None] = {}
        self._load_full = load_full
        self._full: dict[str, int] | None = None
        self.lookups = 0  # words read from the file (for tests and benchmarks)

    def meta(self) -> dict[str, str]:
        return dict(self._conn.execute("SELECT k, v FROM meta").fetchall())

    def _get(self, word: str) -> int | None:
        full = self._full
        if full is not None:
            return full.get(word)
        try:
            return self._seen[word]
        except KeyError:
            pass
        with self._lock:
            row = self._conn.execute("SELECT n FROM freq WHERE w = ?", (word,)).fetchone()
            self.lookups += 1
        value = None if row is None else int(row[0])
        self._seen[word] = value
        if len(self._seen) >= FULL_AFTER:
            self._full = self._load_full()
            self._seen = {}
        return value

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._get(word) is not None

    def __getitem__(self, word: str) -> int:
        value = self._get(word)
        if value is None:
            raise KeyError(word)
        return value

    def get(self, word: str, default: Any = None) -> Any:
        value = self._get(word)
        return default if value is None else value

    def __setitem__(self, word: str, value: int) -> None:  # jieba.add_word, suggest_freq
        if self._full is not None:
            self._full[word] = value
        else:
            self._seen[word] = value


def _write_atomic(path: Path, write: Any) -> None:
    """Write to a temporary file in the same directory, then move it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        os.close(fd)
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_db(path: Path, freq: dict[str, int], total: int, version: str) -> None:
    def write(tmp: Path) -> None:
        tmp.unlink()
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("CREATE TABLE freq (w TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
            conn.executemany("INSERT INTO freq VALUES (?, ?)", sorted(freq.items()))
            conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("total", str(total)), ("words", str(len(freq))), ("jieba", version), ("format", str(FORMAT))])
            conn.commit()
        finally:
            conn.close()
    _write_atomic(path, write)


def _write_marshal(path: Path, freq: dict[str, int], total: int) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            marshal.dump((freq, total), f)
    _write_atomic(path, write)


def _full_loader(tokenizer: Any, marshal_file: Path) -> Any:
    def load() -> dict[str, int]:
        try:
            with open(marshal_file, "rb") as f:
                freq, _ = marshal.load(f)
        except (OSError, EOFError, ValueError, TypeError) as e:
            log.debug("jieba dictionary: %s unreadable (%s); building it", marshal_file, e)
            with tokenizer.get_dict_file() as f:
                freq, _ = tokenizer.gen_pfdict(f)
        tokenizer.FREQ = freq  # jieba's own dict from now on: the same words and counts
        return freq
    return load


def dictionary_file(tokenizer: Any) -> str:
    """The path of a jieba ``Tokenizer``'s dictionary (jieba's own ``dict.txt`` by default)."""
    if tokenizer.dictionary:
        return str(tokenizer.dictionary)
    import jieba

    return os.path.join(os.path.dirname(os.path.abspath(jieba.__file__)), "dict.txt")


def open_dictionary(tokenizer: Any, version: str, directory: Path | None = None) -> str:
    """Give a jieba ``Tokenizer`` its dictionary: from the cache when there is one, else built
    (and cached when the directory is writable). Returns how: "cache", "built" (and cached) or
    "memory" (built, not cached)."""
    db = marshal_file = None
    try:
        directory = directory or cache_dir()
        stem = cache_stem(dictionary_file(tokenizer), version)
        db, marshal_file = directory / f"{stem}.sqlite", directory / f"{stem}.marshal"
        if db.is_file():
            freq = LazyFreq(db, _full_loader(tokenizer, marshal_file))
            meta = freq.meta()
            if meta.get("jieba") == version and meta.get("format") == str(FORMAT):
                tokenizer.FREQ, tokenizer.total = freq, int(meta["total"])
                tokenizer.initialized = True
                return "cache"
    except (OSError, RuntimeError, sqlite3.Error, ValueError, KeyError) as e:
        log.debug("jieba dictionary cache unusable (%s): building the dictionary", e)
    with tokenizer.get_dict_file() as f:
        full, total = tokenizer.gen_pfdict(f)
    tokenizer.FREQ, tokenizer.total = full, total
    tokenizer.initialized = True
    if db is None or marshal_file is None:
        return "memory"
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        _write_marshal(marshal_file, full, total)
        _write_db(db, full, total, version)
        return "built"
    except (OSError, sqlite3.Error) as e:
        log.debug("jieba dictionary not cached (%s)", e)
        return "memory"
