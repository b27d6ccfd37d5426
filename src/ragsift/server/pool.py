"""The knowledge bases a server holds open: one (``--kb``, named "default"), or every one
under a directory by name (``--kb-root``). Each is opened once and shared by every request
(a KnowledgeBase serves many query threads beside one writer)."""
from __future__ import annotations

import re
import threading
from pathlib import Path

from ragsift.errors import RagsiftError
from ragsift.kb import SETTINGS_FILE, KnowledgeBase
from ragsift.server.config import ServerConfig

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class UnknownKB(RagsiftError):
    """No knowledge base by that name."""


class KBPool:
    def __init__(self, cfg: ServerConfig) -> None:
        if (cfg.kb is None) == (cfg.kb_root is None):
            raise RagsiftError("serve one knowledge base (--kb) or a directory of them (--kb-root)")
        self.cfg = cfg
        self._open: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()

    @property
    def default(self) -> str:
        return "default" if self.cfg.kb is not None else self.cfg.default_kb

    def _path(self, name: str) -> Path:
        if self.cfg.kb is not None:
            if name != "default":
                raise UnknownKB(f"no knowledge base {name!r}: this server serves one, 'default'")
            return self.cfg.kb
        if not NAME_RE.match(name):
            raise UnknownKB(f"bad knowledge-base name {name!r}: letters, digits, '_' and '-', at most 64")
        return self.cfg.kb_root / name  # type: ignore[operator]

    def names(self) -> list[str]:
        if self.cfg.kb is not None:
            return ["default"]
        root = self.cfg.kb_root
        found = sorted(p.name for p in root.iterdir() if (p / SETTINGS_FILE).exists() and NAME_RE.match(p.name)) \
            if root.is_dir() else []
        return found

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase:
        """The knowledge base by name (the default one for None); ``create``: make it when missing
        (with the server's embedder), as a write may."""
        name = name or self.default
        path = self._path(name)
        with self._lock:
            kb = self._open.get(name)
            if kb is None:
                exists = (path / SETTINGS_FILE).exists()
                if not exists and not create:
                    raise UnknownKB(f"no knowledge base {name!r}")
                extra = {"embedder": self.cfg.embedder} if self.cfg.embedder and not exists else {}
                kb = KnowledgeBase.open(path, create=create, **extra)
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
