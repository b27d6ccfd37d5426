"""A knowledge base's counts and settings: what it holds, what a query may change."""
from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter, Depends

from ragsift.config import OPERATOR_KEYS, shown_url
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.channels import CHANNELS
from ragsift.server.deps import read_kb
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
def stats(kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
    st = without_credentials(kb.stats())
    st.pop("path", None)  # where the knowledge base is on the server: the operator's (ragsift stats shows it)
    if "://" not in str(st.get("uri", "://")):  # a Milvus Lite file, not a server's address
        st.pop("uri")
    return st


@router.get("/settings", summary="The settings in force and what a query may change", response_model=SettingsOut)
def settings(kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
    return {"settings": without_credentials(kb.settings.to_dict()), "channels": CHANNELS.names(kb.settings),
            "query_schema": QuerySettingsBody.model_json_schema(), "operator_settings": list(OPERATOR_KEYS)}
