"""``Settings``: every group of a knowledge base's settings in one frozen model (flat names routed
to their groups, what spans groups checked, TOML tables saved and read), and the per-query model
a caller of the server sends (``Settings.query_model``)."""
from __future__ import annotations

import contextlib
import tomllib
from pathlib import Path
from typing import Annotated, Any

import tomli_w
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic.fields import FieldInfo

from ragsift.config.access import CALLER_KEYS, CALLER_RERANKERS, INDEX_KEYS, refused_per_query
from ragsift.config.groups import (
    DEPRECATED,
    FIRST_ANALYZER,
    FLAT,
    GROUPS,
    EmbeddingSettings,
    Group,
    Grouped,
    IndexSettings,
    IngestSettings,
    LLMSettings,
    MultiHopSettings,
    QuerySettings,
    RerankSettings,
    StoreSettings,
    TransformSettings,
    config_error,
    current_name,
)
from ragsift.config.values import EmbedPrefixes, EntryKind, MultiHop, Strategy
from ragsift.errors import ConfigError
from ragsift.names import unknown


def check_caller_overrides(overrides: dict[str, Any], settings: Settings) -> None:
    """Refuse per-query settings that a caller of the server may not choose (ConfigError naming
    them, ``refused_per_query``). A caller may ask for ``reranker`` only as '' (off), 'llm-judge'
    (on the operator's language model) or the reranker the operator configured."""
    why = refused_per_query(overrides)
    if why:
        raise ConfigError(why)
    asked = overrides.get("reranker")
    if asked is not None and asked not in CALLER_RERANKERS and asked != settings.rerank.model:
        allowed = [repr(r) for r in dict.fromkeys((*CALLER_RERANKERS, settings.rerank.model))]
        raise ConfigError(f"reranker {asked!r}: a query may ask for {', '.join(allowed)}; other rerankers are "
                          "set by the server's operator")


def _route(data: dict[str, Any], warn: bool = True) -> dict[str, Any]:
    """Flat names into their groups; groups given whole are kept (and flat names added to them).
    Flat names are unique; four earlier spellings were also group names (``store``, ``llm``,
    ``rerank``, ``multihop``): there a table or a group object is the group, anything else the
    earlier flat name."""
    out: dict[str, Any] = {}
    flat: list[tuple[str, Any]] = []
    for key, value in data.items():
        if key in GROUPS and isinstance(value, (dict, Group)):
            out[key] = value.model_dump() if isinstance(value, Group) else dict(value)
        elif key in FLAT or key in DEPRECATED:
            flat.append((current_name(key, warn), value))
        else:
            out[key] = value  # unknown: rejected by the model, named in the error
    for key, value in flat:
        group, field = FLAT[key]
        out.setdefault(group, {})[field] = value
    return out


class Settings(Grouped):
    """All settings of a knowledge base, one group per concern (see the module docstring).

    ``Settings(unit="auto", llm="openai:qwen")`` and ``Settings(query={"unit": "auto"})`` are the
    same; ``replace(**flat)`` returns a changed copy; ``flat()`` and ``to_dict()`` give the flat
    and the grouped form; ``save`` / ``load`` write and read ``ragsift.toml``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # the ignores below: pydantic's Field stubs reject these group classes as default_factory
    index: IndexSettings = Field(default_factory=IndexSettings)  # type: ignore[arg-type]
    store: StoreSettings = Field(default_factory=StoreSettings)  # type: ignore[arg-type]
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)  # type: ignore[arg-type]
    ingest: IngestSettings = Field(default_factory=IngestSettings)  # type: ignore[arg-type]
    query: QuerySettings = Field(default_factory=QuerySettings)  # type: ignore[arg-type]
    llm: LLMSettings = Field(default_factory=LLMSettings)  # type: ignore[arg-type]
    transforms: TransformSettings = Field(default_factory=TransformSettings)  # type: ignore[arg-type]
    rerank: RerankSettings = Field(default_factory=RerankSettings)  # type: ignore[arg-type]
    multihop: MultiHopSettings = Field(default_factory=MultiHopSettings)  # type: ignore[arg-type]

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise config_error(e, Settings) from None

    @model_validator(mode="before")
    @classmethod
    def _flat_names(cls, data: Any) -> Any:
        return _route(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _across_groups(self) -> Settings:
        needs = []
        if self.transforms.rewrite:
            needs.append("rewrite")
        if self.rerank.model == "llm-judge":
            needs.append("reranker = 'llm-judge'")
        if self.multihop.mode is MultiHop.LLM:
            needs.append("multihop_mode = 'llm'")
        if self.query.strategy in (Strategy.HYDE, Strategy.COMBINED):
            needs.append(f"strategy = '{self.query.strategy}'")
        if needs and not self.llm.model:
            raise ValueError(f"{', '.join(needs)} needs a language model: set llm_model to "
                             "'local:qwen2.5-coder-1.5b' (offline) or 'openai:<model>' (any compatible endpoint)")
        prefixed = self.index.embedder.startswith(("openai:", "st:"))
        if self.index.embed_prefixes is not EmbedPrefixes.NONE and not prefixed:
            raise ValueError(f"embed_prefixes applies to openai:<model> and st:<model> embedders; "
                             f"{self.index.embedder} adds its own")
        if EntryKind.SUMMARY in self.index.small_index and not self.llm.model:
            raise ValueError("small_index 'summary' needs a language model (llm_model) at ingest; "
                             "'keys' (key sentences) is the extractive index that needs none")
        return self

    # ------------------------------------------------------------------ reading
    def timeout(self, name: str) -> float:
        """The timeout of a channel or step: its own in ``channel_timeouts``, else
        ``channel_timeout_s`` (half of it for the rewrite and the translation, so that the channels
        waiting for them still have time to search the original question when they fail)."""
        q = self.query
        default = q.channel_timeout_s / 2 if name in ("rewrite", "translate") else q.channel_timeout_s
        return float(q.channel_timeouts.get(name, default))

    def get(self, flat_name: str) -> Any:
        """A setting by its flat name."""
        flat_name = current_name(flat_name)
        if flat_name not in FLAT:
            raise ConfigError(unknown("setting", flat_name, FLAT))
        group, field = FLAT[flat_name]
        return getattr(getattr(self, group), field)

    def flat(self) -> dict[str, Any]:
        """Every setting by its flat name, as JSON values."""
        grouped = self.to_dict()
        return {name: grouped[g][f] for name, (g, f) in FLAT.items()}

    def to_dict(self) -> dict[str, Any]:
        """The settings by group, as JSON values (what ``ragsift.toml`` holds)."""
        return self.model_dump(mode="json")

    def identity(self) -> dict[str, Any]:
        """The settings fixed at creation (``INDEX_KEYS``), by flat name, as JSON values: what a
        store records when it is made, and checks a settings file against when it is opened."""
        flat = self.flat()
        return {k: flat[k] for k in INDEX_KEYS}

    # ------------------------------------------------------------------ changing
    def replace(self, **changes: Any) -> Settings:
        """A copy with settings changed by flat name (``None`` leaves a setting as it is)."""
        changes = {current_name(k): v for k, v in changes.items() if v is not None}
        if not changes:
            return self
        wrong = sorted(set(changes) - set(FLAT))
        if wrong:
            raise ConfigError("; ".join(unknown("setting", k, FLAT) for k in wrong))
        data = {g: dict(getattr(self, g)) for g in GROUPS}
        for key, value in changes.items():
            group, field = FLAT[key]
            data[group][field] = value
        return Settings.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Settings from a grouped or a flat mapping (an old flat ``ragsift.toml``)."""
        if not isinstance(data, dict):
            raise ConfigError(f"settings must be a mapping, not {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise config_error(e, cls) from None

    # ------------------------------------------------------------------ TOML
    def save(self, path: Path) -> None:
        """Write ``ragsift.toml`` (one table per group) atomically."""
        text = ("# ragsift knowledge-base settings. [index] and the store kind, name and index are fixed\n"
                "# at creation; the rest are defaults that a query may override.\n\n"
                + tomli_w.dumps(self.to_dict()))
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        except OSError as e:  # a folder that cannot be written, a directory where the file goes
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise ConfigError(f"cannot write settings {path}: {e.strerror or e}") from None

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read ``ragsift.toml``: grouped tables, or the flat form of earlier versions."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read settings {path}: {e}") from None
        except RecursionError:  # arrays or tables nested thousands deep
            raise ConfigError(f"cannot read settings {path}: nested too deeply") from None
        index = data.get("index", data) if isinstance(data.get("index"), dict) else data
        if "analyzer" not in index:  # written before analyzers had versions: made with the first
            index["analyzer"] = FIRST_ANALYZER
        if isinstance(data.get("query"), dict) and "max_parents" in data["query"]:  # the earlier spelling
            data["query"]["max_passages"] = data["query"].pop("max_parents")
        if not isinstance(data.get("index"), dict):  # the flat form: earlier spellings read silently
            data = _route(data, warn=False)
        try:
            return cls.from_dict(data)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None

    # ------------------------------------------------------------------ schema
    @staticmethod
    def field_info(flat_name: str) -> FieldInfo:
        """The definition of a setting (type, default, constraints, description) by flat name."""
        group, field = FLAT[flat_name]
        return GROUPS[group].model_fields[field]

    @staticmethod
    def query_model() -> type[BaseModel]:
        """A flat model of the settings a caller of the server may override per query (how to
        search: ``CALLER_KEYS``), every field optional: the body schema of a query over HTTP."""
        return _query_model()


_QUERY_MODEL: type[BaseModel] | None = None


def _query_model() -> type[BaseModel]:
    global _QUERY_MODEL
    if _QUERY_MODEL is None:
        fields: dict[str, Any] = {}
        old = {new: o for o, new in DEPRECATED.items()}
        for name in CALLER_KEYS:
            info = Settings.field_info(name)
            typ: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
            alias = AliasChoices(name, old[name]) if name in old else None  # the earlier spelling still read
            fields[name] = (typ | None, Field(None, description=info.description, validation_alias=alias))
        _QUERY_MODEL = create_model("QueryOverrides", __config__=ConfigDict(extra="forbid", allow_inf_nan=False),
                                    **fields)
    return _QUERY_MODEL

