"""What a channel is, what it sees, and the registry that names channels.

A channel is a small object: a ``name``, the shared ``steps`` it waits for (an LLM generation
such as "hyde"), a ``check`` of the settings it needs, and ``search``, which turns one query
into store hits (best first, raw scores, higher is better) before the deadline. Channels run
in parallel (``ragsift.retrieve.runner``); one that fails or times out adds nothing and its
error is traced.

Adding a channel is one module and one registration::

    from ragsift.retrieve.channels import Channel, register_channel

    @register_channel("titles")
    class TitleChannel(Channel):
        def search(self, ctx, deadline):
            terms = ctx.analyzer.analyze(ctx.plain_query(deadline))
            return ctx.search(self.name, lambda kinds: ctx.store.search_bm25(terms, ctx.depth, ctx.where, kinds))

    kb.query("...", channels=["dense", "bm25", "titles"])
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragsift.cancel import Deadline
from ragsift.config import TIMED_STEPS, EntryKind, Settings, StoreFusion
from ragsift.errors import ConfigError
from ragsift.models.embedders import Embedder
from ragsift.names import did_you_mean
from ragsift.registry import Registry
from ragsift.retrieve.whole import Search, search_kinds
from ragsift.store.base import Store, StoredHit
from ragsift.store.filters import Node
from ragsift.text.analyzer import Analyzer

if TYPE_CHECKING:
    from ragsift.retrieve.steps import Steps

LLM_HINT = "set llm_model to 'local:qwen2.5-coder-1.5b' (offline) or 'openai:<model>' (any compatible endpoint)"


#: why what needs a model cannot run, said for a caller who cannot configure one (``Channel.unavailable``)
NO_MODEL = ("needs a language model, and this knowledge base has none configured; the server's operator can "
            "configure one (llm_model in the knowledge base's settings)")
NO_ENGINE = ("needs a store that fuses in its own engine (Milvus); this knowledge base is on {kind}, chosen when "
             "it was created")

ENGINE_HYBRID = "engine_hybrid"  # dense and BM25 as one search where the store fuses them itself


@dataclass(frozen=True)
class ChannelContext:
    """What one query gives every channel: the question, the settings in force, the filter, the
    store and models, and the query's shared steps."""

    query: str  # the question as asked (checked, stripped)
    language: str  # "zh", "en" or "other" (``ragsift.text.lang``)
    settings: Settings
    where: Node | None  # the parsed metadata filter
    store: Store
    analyzer: Analyzer
    embedder: Callable[[], Embedder]  # the knowledge base's embedder (loaded on first use)
    steps: Steps

    @property
    def depth(self) -> int:
        """How many entries a channel asks the store for."""
        return self.settings.query.channel_depth

    @property
    def kinds(self) -> tuple[EntryKind, ...]:
        """The small-index entry kinds a query searches."""
        return self.settings.query.index_kinds

    def search(self, channel: str, search: Search) -> list[StoredHit]:
        """``search`` (a store search over the kinds it is given) over the kinds the query
        searches: whole sections and their parts apart and mixed when ``channel`` has a whole
        weight and the query searches both (``ragsift.retrieve.whole``), else one search."""
        return search_kinds(search, self.kinds, self.settings.query.whole_weight(channel))

    def plain_query(self, deadline: Deadline) -> str:
        """The text plain channels search: the LLM rewrite when rewriting is on (and worked),
        else the question."""
        return self.steps.plain_query(deadline)

    def term_query(self, deadline: Deadline) -> str:
        """What term channels search: the plain query, and its translations into the knowledge
        base's other languages when a model translates (``translate``)."""
        return self.steps.term_query(deadline)

    def step(self, name: str, deadline: Deadline) -> Any:
        """The value of a shared step (computed once per query, by the first channel that asks)."""
        return self.steps.get(name, deadline)


class Channel:
    """Base class of channels: override ``search``; set ``steps`` and ``needs_llm`` when the
    channel waits for a model's output; override ``check`` for settings it needs."""

    name: str = ""
    steps: ClassVar[tuple[str, ...]] = ()  # shared steps it waits for (``ragsift.retrieve.steps``)
    needs_llm: ClassVar[bool] = False
    # matches words: its hit on an entry in another language than the question's can only come from
    # shared names and numbers, and counts ``cross_language_weight`` of a hit in fusion
    matches_terms: ClassVar[bool] = False
    # searches the kinds the query names (index_kinds), so whole sections among them (whole_weights)
    searches_kinds: ClassVar[bool] = True
    # the small-index entries it searches when they are its own (keywords, entities): without them
    # it finds nothing, and is not offered
    entries: ClassVar[EntryKind | None] = None

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            self.name = name

    def check(self, settings: Settings) -> None:
        """Raise ConfigError when the channel cannot run with these settings."""

    def unavailable(self, settings: Settings) -> str | None:
        """Why this channel cannot run on a knowledge base with these settings, said for a caller
        who cannot change them (None: it can run). What ``check`` refuses, a model it needs
        (``needs_llm``) and the entries it searches (``entries``) when the knowledge base has none."""
        if self.needs_llm and not settings.llm.model:
            return NO_MODEL
        if self.entries is not None and self.entries not in settings.index.small_index:
            return (f"searches the small index's '{self.entries.value}' entries, and this knowledge base was created "
                    "without them")
        try:
            self.check(settings)
        except ConfigError as e:
            return str(e)
        return None

    def search(self, ctx: ChannelContext, deadline: Deadline) -> list[StoredHit]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<channel {self.name}>"


class LLMChannel(Channel):
    """A channel that searches what the language model wrote (a shared step): it needs ``llm``."""

    needs_llm = True


class ChannelRegistry(Registry[Channel]):
    """Channels by name (``ragsift.registry.Registry``): single names (``bm25``) and families by
    prefix (``dense:<embedder>``, whose members the settings make available), and the checks a
    query's channels must pass."""

    def __init__(self) -> None:
        super().__init__("channel", ConfigError)

    def add(self, name: str, factory: Callable[..., Channel]) -> None:
        if not name or ":" in name:
            raise ConfigError(f"a channel name must be non-empty and without ':' (got {name!r}); "
                              "families of names use add_family")
        super().add(name, factory)

    def build(self, settings: Settings) -> dict[str, Channel]:
        """The channels a query runs, by name, after ``check``."""
        self.check(settings)
        return {name: self.make(name) for name in self.running(settings)}

    def unavailable(self, settings: Settings) -> dict[str, str]:
        """The channels that cannot run on a knowledge base with these settings, each with why
        (``Channel.unavailable``)."""
        out = {}
        for name in self.names(settings):
            why = self.make(name).unavailable(settings)
            if why:
                out[name] = why
        return out

    @staticmethod
    def running(settings: Settings) -> list[str]:
        """The channels a query runs: its ``channels``, with ``dense`` and ``bm25`` as one
        ``engine_hybrid`` where the store fuses them itself (``store_fusion = "engine"``)."""
        names = list(settings.query.channels)
        if settings.store.fusion is StoreFusion.ENGINE and {"dense", "bm25"} <= set(names):
            at = names.index("dense")
            names = [n for n in names if n not in ("dense", "bm25")]
            names.insert(min(at, len(names)), ENGINE_HYBRID)
        return names

    def check(self, settings: Settings) -> None:
        """Every named channel exists and can run with these settings; weights and timeouts name
        known channels or steps."""
        from ragsift.retrieve.steps import STEPS

        known = self.names(settings)
        q = settings.query
        for name in q.channels:
            if name not in known:
                hint = did_you_mean(name, known)
                raise ConfigError(f"unknown channel {name!r}; {hint + ' ' if hint else ''}valid channels: "
                                  f"{', '.join(known)}")
        chans = [self.make(name) for name in self.running(settings)]
        for ch in chans:
            ch.check(settings)
        needs = [ch.name for ch in chans if ch.needs_llm]
        if needs and not settings.llm.model:
            raise ConfigError(f"{', '.join(needs)} needs a language model: {LLM_HINT}")
        for setting, names in (("weight", q.weights), ("whole weight", q.whole_weights)):
            for name in names:
                if name not in known:
                    hint = did_you_mean(name, known)
                    raise ConfigError(f"{setting} for unknown channel {name!r}; {hint + ' ' if hint else ''}"
                                      f"valid channels: {', '.join(known)}")
        timed = known + list(TIMED_STEPS) + [s for s in STEPS if s not in known]
        for name in q.channel_timeouts:
            if name not in timed:
                raise ConfigError(f"timeout for unknown channel or step {name!r}; valid: {', '.join(timed)}")


CHANNELS = ChannelRegistry()


def register_channel(name: str) -> Callable[[type[Channel]], type[Channel]]:
    """Class decorator: register a Channel subclass under ``name``."""

    def wrap(cls: type[Channel]) -> type[Channel]:
        CHANNELS.add(name, lambda: cls(name))
        return cls
    return wrap
