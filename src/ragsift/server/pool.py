"""The knowledge bases a server holds open: one (``--kb``, named "default"), or every one
under a directory by name (``--kb-root``). Each is opened once and shared by every request
(a KnowledgeBase serves many query threads beside one writer). Opening one (loading its
models) holds a lock of that name only, so requests to the others never wait for it."""
from __future__ import annotations

import threading
from pathlib import Path

from ragsift.errors import InputError, UnknownKB
from ragsift.kb import SETTINGS_FILE, KnowledgeBase
from ragsift.server.config import NAME_RE, ServerConfig

__all__ = ["KBPool", "NAME_RE", "UnknownKB"]


class KBPool:
    def __init__(self, cfg: ServerConfig) -> None:
        if (cfg.kb is None) == (cfg.kb_root is None):
            raise InputError("serve one knowledge base (--kb) or a directory of them (--kb-root)")
        self.cfg = cfg
        self._open: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()
        self._opening: dict[str, threading.Lock] = {}

    @property
    def default(self) -> str:
        return "default" if self.cfg.kb is not None else self.cfg.default_kb

    def path(self, name: str) -> Path:
        """Where the knowledge base of that name lives (UnknownKB for a name that cannot be one)."""
        if self.cfg.kb is not None:
            if name != "default":
                raise UnknownKB(f"no knowledge base {name!r}: this server serves one, 'default'")
            return self.cfg.kb
        if not NAME_RE.match(name):
            raise UnknownKB(f"bad knowledge-base name {name[:80]!r}: letters, digits, '_' and '-', at most 64")
        return self.cfg.kb_root / name  # type: ignore[operator]

    def exists(self, name: str) -> bool:
        """Whether a knowledge base of that name exists (open or on disk)."""
        with self._lock:
            if name in self._open:
                return True
        return (self.path(name) / SETTINGS_FILE).exists()

    def names(self) -> list[str]:
        if self.cfg.kb is not None:
            return ["default"]
        root = self.cfg.kb_root
        assert root is not None  # __init__: exactly one of kb and kb_root is set
        found = sorted(p.name for p in root.iterdir() if (p / SETTINGS_FILE).exists() and NAME_RE.match(p.name)) \
            if root.is_dir() else []
        return found

    def upload_root(self, name: str) -> Path:
        """Where uploads for that knowledge base wait for their job: inside it when it is the only
        one, else beside the knowledge bases (so a refused upload creates nothing)."""
        if self.cfg.kb is not None:
            return self.cfg.kb / ".uploads"
        self.path(name)  # the name is checked
        return self.cfg.kb_root / ".uploads" / name  # type: ignore[operator]

    def upload_roots(self) -> dict[str, Path]:
        """Every knowledge base's upload folder that exists, by name."""
        if self.cfg.kb is not None:
            return {"default": self.cfg.kb / ".uploads"}
        base = self.cfg.kb_root / ".uploads"  # type: ignore[operator]
        try:
            return {p.name: p for p in base.iterdir() if p.is_dir() and NAME_RE.match(p.name)}
        except OSError:
            return {}

    def jobs_folder(self) -> Path:
        """Where the server records its write jobs (``jobs.JobRecords``): inside the knowledge base
        when it is the only one, else beside the knowledge bases (one folder a name inside)."""
        if self.cfg.kb is not None:
            return self.cfg.kb / ".jobs"
        return self.cfg.kb_root / ".jobs"  # type: ignore[operator]

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase:
        """The knowledge base by name (the default one for None); ``create``: make it when missing
        (with the server's embedder), as a write may."""
        name = name or self.default
        path = self.path(name)
        with self._lock:
            kb = self._open.get(name)
            if kb is not None:
                return kb
            opening = self._opening.setdefault(name, threading.Lock())
        with opening:  # one opener per name; other names go on
            with self._lock:
                kb = self._open.get(name)
            if kb is not None:
                return kb
            exists = (path / SETTINGS_FILE).exists()
            if not exists and not create:
                raise UnknownKB(f"no knowledge base {name!r}")
            extra = {"embedder": self.cfg.embedder} if self.cfg.embedder and not exists else {}
            kb = KnowledgeBase.open(path, create=create, **extra)
            with self._lock:
                self._open[name] = kb
            return kb

    def opened(self) -> list[KnowledgeBase]:
        with self._lock:
            return list(self._open.values())

    def close(self) -> None:
        with self._lock:
            for kb in self._open.values():
                kb.close()
            self._open.clear()
