"""What a caller may choose on one knowledge base, and why the rest cannot run there: the channels,
strategies, modes and rerankers that need a language model when the operator configured none,
the engine's own fusion on a store that has none, the entries a knowledge base was not built with.

The server's page and ``GET /v1/settings`` offer only what can run (the rest is listed with its
reason), and a query that asks for what cannot run is refused with that reason, said for a caller:
who can change it (the operator), never a setting the caller may not set.
"""
from __future__ import annotations

from typing import Any

from ragsift.config import Settings
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.channels.base import NO_MODEL
from ragsift.retrieve.channels.engine import engine_unavailable

#: per-query settings whose values can run only with a language model: setting -> values (as JSON text)
NEEDS_MODEL: dict[str, tuple[str, ...]] = {
    "strategy": ("hyde", "combined"), "multihop_mode": ("llm",), "rewrite": ("true",), "reranker": ("llm-judge",),
}


def unavailable(settings: Settings) -> dict[str, dict[str, str]]:
    """What cannot run on a knowledge base with these settings: setting -> value -> why
    (``channels`` -> channel name -> why). A value is its JSON text (``rewrite``: ``"true"``)."""
    out: dict[str, dict[str, str]] = {"channels": CHANNELS.unavailable(settings)}
    if not settings.llm.model:
        for name, values in NEEDS_MODEL.items():
            out[name] = dict.fromkeys(values, NO_MODEL)
    no_engine = engine_unavailable(settings)
    if no_engine:
        out["store_fusion"] = {"engine": no_engine}
    return {k: v for k, v in out.items() if v}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def refused(overrides: dict[str, Any], settings: Settings) -> str | None:
    """Why a caller's per-query ``overrides`` cannot run on this knowledge base (None: they can),
    naming what it asked for, why, who can change it, and what it may choose instead."""
    if not any(overrides.get(k) is not None for k in ("channels", "store_fusion", *NEEDS_MODEL)):
        return None
    missing = unavailable(settings)
    bad = missing.get("channels", {})
    asked = [c for c in overrides.get("channels") or () if isinstance(c, str) and c in bad]
    if asked:
        why = "; ".join(f"{c} {bad[c]}" for c in asked)
        ok = [c for c in CHANNELS.names(settings) if c not in bad]
        return f"not available on this knowledge base: {why}. Channels available: {', '.join(ok)}"
    for name, values in missing.items():
        if name == "channels" or overrides.get(name) is None:
            continue
        value = _text(overrides[name])
        if value in values:
            return f"{name} = {value!r} is not available on this knowledge base: it {values[value]}"
    return None
