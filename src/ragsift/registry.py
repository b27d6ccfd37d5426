"""One registry type for the extension points: parts of one kind found by name.

A registry holds exact names (``bm25``, ``minilm``, ``.pdf``) and families of names by prefix
(``dense:<embedder>``, ``st:<hub model>``). ``make(name, *args)`` builds a new part;
``load(name)`` builds it once per process and keeps it (models). The registries
(tests/project/test_truthful_lists.py checks this table against the code):

    registry          module             parts; how a module registers one
    CHANNELS          retrieve/channels  retrieval channels: dense, bm25, sparse, keywords, entities,
                                         hyde, hyde_bm25, multi_query, engine_hybrid, and the family
                                         dense:<extra embedder>; @register_channel(name), add_family
    STEPS             retrieve/steps     LLM steps a query's channels share (hyde, multi_query);
                                         register_step
    UNITS             retrieve/units     what a query returns: parent, child, document, window, auto;
                                         @register_unit
    FUSIONS           retrieve/fusion    how channel rankings are fused: rrf, weighted, adaptive;
                                         @FUSIONS.register
    EMBEDDERS         models/embedders   e5-small, minilm, use-multilingual, st:<model>; add, add_family
    SPARSE_ENCODERS   models/sparse      e5-sparse, splade-tiny, splade:<model>; add, add_family
    CROSS_ENCODERS    models/rerankers   cross-encoder:<model>; add_family
    LOADERS           ingest/loaders     file readers by suffix (.pdf, .docx, ...); @register(*suffixes)
    STORES            store              where an index lives: lancedb, milvus; @register_store
    ANALYZERS         text/analyzer      BM25 analyzers: ragsift-unicode-v2, ragsift-zh-en-v1; add

Not registries: the language models (``models.llm.load_llm``: ``local:`` and ``openai:``), the
rerankers besides cross-encoders (``models.rerankers.load_reranker``: ``llm-judge``, ``api:``,
``tei:``) and ``openai:<model>`` embedders (``models.embedders.load_embedder``) are chosen by
their prefix where they are loaded.

What a new part takes today:
- a channel, a unit or a file loader: its module, its registration (the decorator) and the
  import of its module in its package's ``__init__`` (channels and units are listed in that
  order); a step is registered in the channel module that uses it; a unit's rule on the settings
  is its own ``check``;
- an embedder, a sparse encoder, a cross-encoder or an analyzer: its class and its registration
  in the module above (an analyzer: its class in the tuple registered there);
- a fusion mode: its function (one ``FusionInput`` in, ``Fused(ranking, info)`` out) in
  ``retrieve/fusion.FUSIONS`` and its member of ``FusionMode`` in ``ragsift.config``;
- a store: its module and its registration (``register_store``: what opens it, and what else its
  backend can do without opening it); a file loader gives its format's signature in its
  registration (``register(".ext", signature=...)``).
Each is one module and one registration (a fusion mode, a closed set of the settings, also its
enum member); docs/architecture.md "Where to add" names the test that adds a toy part of each kind.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ragsift.errors import ConfigError, RagsiftError
from ragsift.names import did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Parts of one kind by name. An exact name's factory is called as ``factory(*args)``; a
    family's as ``factory(rest, *args)`` with ``rest`` the name after the prefix. ``members``
    of a family, given a context (the settings, say), lists the names it makes available."""

    def __init__(self, what: str, error: type[RagsiftError] = ConfigError, also: tuple[str, ...] = ()) -> None:
        self.what, self.error, self.also = what, error, also  # also: name forms handled elsewhere
        self._exact: dict[str, Callable[..., T]] = {}
        self._families: dict[str, tuple[Callable[..., T], Callable[[Any], Iterable[str]] | None]] = {}
        self._rest: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ registering
    def add(self, name: str, factory: Callable[..., T]) -> None:
        """Register ``factory`` under ``name`` (a later registration replaces it)."""
        self._exact[name] = factory

    def add_family(self, prefix: str, factory: Callable[..., T],
                   members: Callable[[Any], Iterable[str]] | None = None, rest: str = "name") -> None:
        """Register the names ``<prefix><rest>``; ``members(context)`` lists those available;
        ``rest`` names the part after the prefix in error messages."""
        self._families[prefix] = (factory, members)
        self._rest[prefix] = rest

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: register a class or function under ``name``."""

        def wrap(factory: Callable[..., T]) -> Callable[..., T]:
            self.add(name, factory)
            return factory
        return wrap

    def remove(self, name: str) -> None:
        """Forget an exact name or a family prefix (and what was loaded under it)."""
        self._exact.pop(name, None)
        self._families.pop(name, None)
        with self._lock:
            for key in [k for k in self._loaded if k == name or k.startswith(name)]:
                del self._loaded[key]

    # ------------------------------------------------------------------ finding
    def names(self, context: Any = None) -> list[str]:
        """The exact names, and with a context the family members it makes available."""
        out = list(self._exact)
        if context is not None:
            for _, members in self._families.values():
                if members is not None:
                    out += list(members(context))
        return out

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._exact or self._family(name) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def valid(self) -> str:
        """The valid names, for an error message."""
        return ", ".join([repr(n) for n in self._exact] + [repr(f"{p}<{self._rest[p]}>") for p in self._families]
                         + [repr(a) for a in self.also])

    def factory(self, name: str) -> Callable[..., T]:
        """What makes the part of that name (its class, for an exact name registered as one)."""
        if name in self._exact:
            return self._exact[name]
        fam = self._family(name)
        if fam is None:
            hint = did_you_mean(name, [*self._exact, *self.also])
            raise self.error(f"unknown {self.what} {name!r}; {hint + ' ' if hint else ''}valid: {self.valid()}")
        prefix, (factory, _) = fam
        return lambda *args, **kw: factory(name[len(prefix):], *args, **kw)

    def make(self, name: str, *args: Any, **kw: Any) -> T:
        """A new part of that name."""
        return self.factory(name)(*args, **kw)

    def load(self, name: str) -> T:
        """The part of that name, made on first use and kept (concurrent first uses make it once)."""
        with self._lock:
            if name not in self._loaded:
                self._loaded[name] = self.make(name)
            return self._loaded[name]

    def _family(self, name: str) -> tuple[str, tuple[Callable[..., T], Any]] | None:
        for prefix, fam in self._families.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                return prefix, fam
        return None
