"""A knowledge base's counts and settings: what it holds, what a query may change."""
from __future__ import annotations

import copy
import re
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter

from ragsift.config import CALLER_RERANKERS, OPERATOR_KEYS, Settings, shown_url
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.offer import unavailable
from ragsift.retrieve.units import UNITS
from ragsift.server.deps import ReadKB
from ragsift.server.schemas import QuerySettingsBody, SettingsOut, StatsOut

router = APIRouter(tags=["knowledge bases"])


#: a value that names a file on the server: an absolute path, alone or after a model's prefix
#: ("local:/models/qwen.gguf", "st:/srv/models/bge"), or a home-relative one
_SERVER_PATH = re.compile(r"^([A-Za-z][\w.+-]*:)?(/|~|[A-Za-z]:[\\/])")


def without_credentials(value: Any) -> Any:
    """Settings as a caller may see them: a URL's user and password (``http://user:pw@host``) and
    query string are removed wherever one appears, and a file on the server is named by its file
    name alone (``local:…/qwen.gguf``: where it is, is the operator's); API keys are never settings
    at all."""
    if isinstance(value, dict):
        return {k: without_credentials(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_credentials(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return shown_url(value)
    if isinstance(value, str) and (m := _SERVER_PATH.match(value)):
        name = PurePath(value[len(m.group(1) or ""):].replace("\\", "/")).name
        return f"{m.group(1) or ''}…/{name}"
    return value


@router.get("/stats", summary="Counts, generation and store details", response_model=StatsOut)
def stats(kb: ReadKB) -> dict[str, Any]:
    st = without_credentials(kb.stats())
    st.pop("path", None)  # where the knowledge base is on the server: the operator's (ragsift stats shows it)
    if "://" not in str(st.get("uri", "://")):  # a Milvus Lite file, not a server's address
        st.pop("uri")
    return st


def caller_schema(settings: Settings, missing: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The query settings' schema as one knowledge base takes them: the values that cannot run on
    it (``ragsift.retrieve.offer``) left out of its choices, each setting's description saying why."""
    schema = copy.deepcopy(QuerySettingsBody.model_json_schema())
    props, defs = schema["properties"], schema.get("$defs", {})

    def note(name: str) -> None:
        why = "; ".join(f"{v}: {r}" for v, r in missing[name].items())
        props[name]["description"] = f"{props[name].get('description', '')} Not on this knowledge base: {why}."

    # units are an open set (the registry's): the names registered in this process
    props["unit"]["anyOf"] = [{"type": "string", "enum": UNITS.names()}, {"type": "null"}]
    for name, values in missing.items():
        if name not in props:
            continue
        note(name)
        if name == "channels":
            props[name]["anyOf"][0]["items"]["enum"] = [c for c in CHANNELS.names(settings) if c not in values]
        elif name == "rewrite":
            props[name]["anyOf"][0] = {"type": "boolean", "const": False}
        elif name == "reranker":
            allowed = dict.fromkeys((*CALLER_RERANKERS, settings.rerank.model))
            props[name]["anyOf"][0]["enum"] = [r for r in allowed if r not in values]
        else:
            ref = next((a["$ref"] for a in props[name].get("anyOf", []) if "$ref" in a), None)
            enum = defs.get(ref.rsplit("/", 1)[-1], {}) if ref else {}  # an enum of this setting's own
            if "enum" in enum:
                enum["enum"] = [v for v in enum["enum"] if v not in values]
    return schema


@router.get("/settings", summary="The settings in force and what a query may change", response_model=SettingsOut)
def settings(kb: ReadKB) -> dict[str, Any]:
    missing = unavailable(kb.settings)
    ok = [c for c in CHANNELS.names(kb.settings) if c not in missing.get("channels", {})]
    return {"settings": without_credentials(kb.settings.to_dict()), "channels": ok,
            "units": UNITS.names(), "unavailable": missing, "query_schema": caller_schema(kb.settings, missing),
            "operator_settings": list(OPERATOR_KEYS)}
