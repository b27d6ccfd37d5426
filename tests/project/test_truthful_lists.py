"""The lists written in prose that could drift from the code: the command line's commands
(cli.py's docstring), the registries and their parts (registry.py's), the fusion modes
(fusion.py's) and the settings groups (config.py's) are checked against what the code holds."""
from __future__ import annotations

import re
from pathlib import Path

import ragsift.registry
from ragsift.cli import COMMANDS
from ragsift.config import GROUPS, FusionMode
from ragsift.ingest.loaders import LOADERS
from ragsift.models.embedders import EMBEDDERS
from ragsift.models.rerankers import CROSS_ENCODERS
from ragsift.models.sparse import SPARSE_ENCODERS
from ragsift.registry import Registry
from ragsift.retrieve import fusion
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.steps import STEPS
from ragsift.retrieve.units import UNITS
from ragsift.store import STORES
from ragsift.text.analyzer import ANALYZERS

SRC = Path(ragsift.registry.__file__).parent
REGISTRIES = {"CHANNELS": CHANNELS, "STEPS": STEPS, "UNITS": UNITS, "FUSIONS": fusion.FUSIONS,
              "EMBEDDERS": EMBEDDERS, "SPARSE_ENCODERS": SPARSE_ENCODERS, "CROSS_ENCODERS": CROSS_ENCODERS,
              "LOADERS": LOADERS, "STORES": STORES, "ANALYZERS": ANALYZERS}


def test_the_command_lines_docstring_lists_every_command():
    import ragsift.cli

    listed = re.findall(r"^- [^:]+: (.*)$", ragsift.cli.__doc__ or "", re.M)
    named = [w for line in listed for w in re.findall(r"(?:^|, )(\w+)", re.sub(r"\([^)]*\)", "", line))]
    assert sorted(named) == sorted(COMMANDS)
    assert "sixteen commands" in (ragsift.cli.__doc__ or "") and len(COMMANDS) == 16  # the number it spells out


def test_every_registry_is_in_registry_pys_table_with_its_parts():
    assigned = set()
    for path in SRC.rglob("*.py"):
        assigned |= set(re.findall(r"^([A-Z_]+)(?::[^=\n]*)? = (?:Registry\(|ChannelRegistry\()", path.read_text(), re.M))
    assert assigned == set(REGISTRIES)  # a new registry joins the table (and this test)
    table = (ragsift.registry.__doc__ or "").split("registry          module")[1].split("Not registries")[0]
    rows = re.split(r"\n    (?=[A-Z_]+ )", table)
    for name, reg in REGISTRIES.items():
        assert isinstance(reg, Registry)
        row = next((r for r in rows if r.startswith(name + " ")), None)
        assert row is not None, name
        if name == "LOADERS":
            continue  # by suffix: the row gives examples
        words = set(re.findall(r"[\w.:-]+", row))
        for part in reg.names():
            assert part in words, (name, part)
        for prefix in reg._families:
            assert any(w.startswith(prefix) for w in words), (name, prefix)


def test_fusion_pys_header_names_every_mode():
    doc = fusion.__doc__ or ""
    assert set(fusion.FUSIONS.names()) == {m.value for m in FusionMode}
    for mode in FusionMode:
        assert f"- ``{mode.value}``" in doc


def test_config_pys_header_lists_every_group():
    import ragsift.config

    listed = re.findall(r"^      (\w+) +\S", (ragsift.config.__doc__ or "").split("Settings\n", 1)[1], re.M)
    assert listed == list(GROUPS)
