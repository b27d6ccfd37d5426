"""Models by name, each loaded once per process: exact names (``minilm``) and families by
prefix (``st:<hub model>``). Embedders, sparse encoders and rerankers each keep one registry,
so a new model kind is one class and one ``add``."""
from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

from ragsift.errors import ModelError, RagsiftError

T = TypeVar("T")


class ModelRegistry(Generic[T]):
    def __init__(self, what: str, error: type[RagsiftError] = ModelError, also: tuple[str, ...] = ()) -> None:
        self.what, self.error, self.also = what, error, also  # also: name forms loaded elsewhere
        self._exact: dict[str, Callable[[], T]] = {}
        self._families: dict[str, Callable[[str], T]] = {}
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    def add(self, name: str, factory: Callable[[], T]) -> None:
        self._exact[name] = factory

    def add_family(self, prefix: str, factory: Callable[[str], T]) -> None:
        """Names ``<prefix><rest>``; ``factory(rest)`` loads one."""
        self._families[prefix] = factory

    def valid(self) -> str:
        return ", ".join([repr(n) for n in self._exact] + [repr(f"{p}<model>") for p in self._families]
                         + [repr(a) for a in self.also])

    def load(self, name: str) -> T:
        """The model for a name, loaded on first use (concurrent first uses load it once)."""
        with self._lock:
            if name not in self._loaded:
                self._loaded[name] = self._make(name)
            return self._loaded[name]

    def _make(self, name: str) -> T:
        if name in self._exact:
            return self._exact[name]()
        for prefix, factory in self._families.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                return factory(name[len(prefix):])
        raise self.error(f"unknown {self.what} {name!r}; valid: {self.valid()}")
