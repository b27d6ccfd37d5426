"""A unit is one module and one registration: a toy unit, written by this test as a temporary
module that registers itself with ``@register_unit`` (nothing else edited), is listed and runs
through every face that takes a unit (Python, the command line, the HTTP settings, schema and
query, MCP over a knowledge base whose unit it is), and its own ``check`` refuses what it cannot
run with, in each face's way. The module and its registration are removed afterwards."""
from __future__ import annotations

import asyncio
import importlib
import json
import sys

import pytest
from conftest import write_files
from fastapi.testclient import TestClient

from ragsift.cli import main
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.mcp import build_mcp
from ragsift.mcp.tools import SinglePool
from ragsift.retrieve.units import UNITS, unit_strategy
from ragsift.server.app import create_app
from ragsift.server.config import ServerConfig

TOY = '''
"""``toy``: each section found, cut to its first line (and never more than three)."""
from ragsift.config import Settings
from ragsift.errors import ConfigError
from ragsift.retrieve.found import candidate
from ragsift.retrieve.units.base import UnitStrategy, considered, register_unit
from ragsift.text.tokens import count_tokens


@register_unit
class ToyUnit(UnitStrategy):
    name = "toy"

    def key(self, h):
        return h.parent_id

    def candidates(self, ranked, found, spans, store, q):
        top = ranked[:considered(q)]
        parents = store.get_parents(pid for pid, _ in top)
        out = []
        for pid, score in top:
            if pid in parents:
                line = parents[pid].parent.text.strip().splitlines()[0]
                out.append(candidate(pid, score, parents[pid], line, count_tokens(line), (), "toy"))
        return out, {"toy": len(out)}

    def check(self, settings: Settings) -> None:
        if settings.query.max_passages > 3:
            raise ConfigError("the toy unit returns at most 3 passages: set max_passages to 3 or fewer")
'''
DOCS = {"guide.md": "# Guide\n\n## Backups\n\nBackups run nightly at two.\nEach is kept for a month.\n\n"
                    "## Restores\n\nRestores take an hour.\nAsk the operator first.\n"}
QUESTION = "When do backups run?"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy unit's module, imported (so registered) for this file's tests, then forgotten."""
    where = tmp_path_factory.mktemp("toy_module")
    (where / "ragsift_toy_unit.py").write_text(TOY, encoding="utf-8")
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("ragsift_toy_unit")
    finally:
        UNITS.remove("toy")
        sys.modules.pop("ragsift_toy_unit", None)
        sys.path.remove(str(where))


@pytest.fixture(scope="module")
def kb(toy, tmp_path_factory):
    root = tmp_path_factory.mktemp("toy")
    kb = KnowledgeBase.open(root / "kb", embedder="minilm")
    kb.ingest(write_files(root / "docs", DOCS))
    yield kb
    kb.close()


def test_python(kb):
    assert "toy" in UNITS.names() and unit_strategy("toy").name == "toy"
    res = kb.query(QUESTION, unit="toy", max_passages=2)
    assert res.passages and all(p.unit == "toy" and "\n" not in p.text for p in res.passages)
    assert res.passages[0].text == "Backups run nightly at two."
    assert res.trace.packing["unit"] == "toy" and res.trace.packing["toy"] >= len(res.passages)
    with pytest.raises(ConfigError, match="the toy unit returns at most 3 passages"):
        kb.query(QUESTION, unit="toy", max_passages=4)


def test_command_line(kb, capsys):
    args = ["--kb", str(kb.path), "query", QUESTION, "--unit", "toy", "--json"]
    assert main([*args, "--max-passages", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passages"][0]["unit"] == "toy" and out["passages"][0]["text"] == "Backups run nightly at two."
    assert main([*args, "--max-passages", "5"]) == 2
    assert "the toy unit returns at most 3 passages" in capsys.readouterr().err


def test_http_settings_schema_and_query(kb):
    with TestClient(create_app(ServerConfig(kb=kb.path, mcp=False))) as c:
        shown = c.get("/v1/settings").json()
        assert "toy" in shown["units"] and {"parent", "child", "document", "window", "auto"} <= set(shown["units"])
        assert "toy" in shown["query_schema"]["properties"]["unit"]["anyOf"][0]["enum"]
        body = c.post("/v1/query", json={"question": QUESTION, "unit": "toy", "max_passages": 2}).json()
        assert body["passages"][0]["unit"] == "toy" and body["passages"][0]["text"] == "Backups run nightly at two."
        bad = c.post("/v1/query", json={"question": QUESTION, "unit": "toy", "max_passages": 5})
        assert bad.status_code == 400 and "the toy unit returns at most 3 passages" in bad.text


def test_mcp_over_a_knowledge_base_whose_unit_it_is(kb, tmp_path):
    toy_kb = KnowledgeBase.open(kb.path, unit="toy", max_passages=2)
    try:
        result = asyncio.run(build_mcp(SinglePool(toy_kb)).call_tool("search", {"question": QUESTION, "passages": 2}))
        passages = result.structured_content["passages"]
        assert passages and all(p["unit"] == "toy" for p in passages)
        assert passages[0]["text"] == "Backups run nightly at two."
    finally:
        toy_kb.close()


def test_the_toy_unit_is_gone_after_its_module_is(toy):
    """What the fixture undoes: after it, the name is unknown again (run here by hand)."""
    UNITS.remove("toy")
    try:
        with pytest.raises(ConfigError, match="unknown unit 'toy'"):
            unit_strategy("toy")
    finally:
        importlib.reload(toy)  # registered again for the other tests of this module
