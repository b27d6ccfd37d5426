"""One suggestion for a name a caller got wrong, the same in every face (``ragsift.names``):
settings in Python (``Settings``, ``KnowledgeBase.open``, ``kb.query``), keys of ``ragsift.toml``,
CLI flags, commands and values, filter fields and operators, channels. HTTP and MCP are checked
in tests/e2e/server/test_server.py and tests/e2e/mcp/test_mcp.py. Chinese and English documents and questions."""
from __future__ import annotations

import pytest

from ragsift.cli import main
from ragsift.config import FLAT, Settings
from ragsift.errors import ConfigError, FilterError
from ragsift.kb import KnowledgeBase
from ragsift.names import did_you_mean, nearest, unknown

DOCS = [{"id": "speaker-zh", "text": "长按音量加和静音键十秒即可恢复出厂设置。", "title": "恢复出厂设置",
         "metadata": {"item_name": "星云智能音箱 S2"}},
        {"id": "hub-en", "text": "Hold the reset button for ten seconds to wipe the hub.", "title": "Factory reset",
         "metadata": {"item_name": "Aurora SmartHub X1"}}]


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("names") / "kb", embedder="minilm")
    kb.add_documents(DOCS)
    return kb


def test_the_helper_finds_the_nearest_name_or_none():
    assert nearest("max_passage", FLAT) == ["max_passages"]
    assert nearest("--max-pasages", ["--max-passages", "--unit"]) == ["--max-passages"]
    assert nearest("itemname", ["item_name", "source"]) == ["item_name"]
    assert nearest("Item-Name", ["item_name", "source"]) == ["item_name"]  # case, '-' and '_' aside
    assert nearest("colour", FLAT) == [] and did_you_mean("colour", FLAT) == ""
    assert nearest("x" * 500, FLAT) == []  # a name that long is no typo: nothing compared
    assert nearest("商品名称", ["商品名", "来源"]) == ["商品名"]
    assert unknown("setting", "max_passage", FLAT) == "unknown setting 'max_passage'; did you mean 'max_passages'?"


@pytest.mark.parametrize("make", [
    lambda: Settings(chekpoint_documents=5),
    lambda: Settings().replace(chekpoint_documents=5),
    lambda: Settings.from_dict({"ingest": {"chekpoint_documents": 5}}),
])
def test_python_settings_suggest_the_nearest(make):
    with pytest.raises(ConfigError, match="did you mean 'checkpoint_documents'\\?"):
        make()


def test_open_and_query_suggest_the_nearest(kb, tmp_path):
    with pytest.raises(ConfigError, match="unknown setting 'chekpoint_documents'; did you mean 'checkpoint_documents'"):
        KnowledgeBase.open(tmp_path / "new", chekpoint_documents=5)
    assert not (tmp_path / "new").exists()  # refused before anything was made
    for question in ("恢复出厂设置要按哪些键？", "How do I wipe the hub?"):
        with pytest.raises(ConfigError, match="unknown setting 'max_passage'; did you mean 'max_passages'\\?"):
            kb.query(question, max_passage=2)
        with pytest.raises(ConfigError, match="unknown channel 'bm52'; did you mean 'bm25'\\? valid channels: dense"):
            kb.query(question, channels=["dense", "bm52"])
    assert kb.query("How do I wipe the hub?", max_passages=1).passages[0].doc_id == "hub-en"


def test_a_settings_file_key_suggests_the_nearest(kb, tmp_path):
    toml = (kb.path / "ragsift.toml").read_text(encoding="utf-8")
    bad = tmp_path / "ragsift.toml"
    bad.write_text(toml.replace("[ingest]\n", "[ingest]\nchekpoint_documents = 5\n"), encoding="utf-8")
    with pytest.raises(ConfigError, match="ragsift.toml: unknown setting 'chekpoint_documents'; did you mean "
                                          "'checkpoint_documents'"):
        Settings.load(bad)
    bad.write_text(toml.replace("[query]\n", "[qurey]\n", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting 'qurey'; did you mean 'query'"):
        Settings.load(bad)


def test_filter_fields_and_operators_suggest_the_nearest(kb):
    with pytest.raises(FilterError, match="unknown filter field 'itemname'; did you mean 'item_name'\\? "
                                          "known fields: .*item_name"):
        kb.query("恢复出厂设置要按哪些键？", filter={"itemname": "星云智能音箱 S2"})
    with pytest.raises(FilterError, match="unknown filter field 'sorce'; did you mean 'source'"):
        kb.query("How do I wipe the hub?", filter={"sorce": "hub-en"})
    with pytest.raises(FilterError, match="unknown operator '\\$inn' for field 'item_name'; did you mean '\\$in'"):
        kb.query("How do I wipe the hub?", filter={"item_name": {"$inn": ["Aurora SmartHub X1"]}})
    with pytest.raises(FilterError) as e:  # nothing near: the known fields alone
        kb.query("How do I wipe the hub?", filter={"colour": "red"})
    assert "did you mean" not in str(e.value) and "known fields:" in str(e.value)
    found = kb.query("恢复出厂设置要按哪些键？", filter={"item_name": "星云智能音箱 S2"})
    assert [p.doc_id for p in found.passages] == ["speaker-zh"]


@pytest.mark.parametrize("args,told", [
    (["query", "恢复出厂设置", "--max-pasages", "3"],
     "unrecognized arguments: --max-pasages 3; did you mean '--max-passages'? See 'ragsift --help'"),
    (["query", "wipe the hub", "--chanels", "dense"], "did you mean '--channels'?"),
    (["qurey", "wipe the hub"], "did you mean 'query'? See 'ragsift --help'"),
    (["query", "wipe the hub", "--fusion", "weigthed"], "did you mean 'weighted'? See 'ragsift query --help'"),
    (["query", "wipe the hub", "--fusion", "page"], "; see 'ragsift query --help'"),  # nothing near
    # a unit is an open set (an application may register one): its registry says it, not argparse
    (["query", "wipe the hub", "--unit", "parnet"], "unknown unit 'parnet'; did you mean 'parent'? valid: 'parent'"),
    (["query", "wipe the hub", "--unit", "page"], "unknown unit 'page'; valid: 'parent'"),  # nothing near
])
def test_cli_flags_commands_and_values_suggest_the_nearest(kb, capsys, args, told):
    try:
        code = main(["--kb", str(kb.path), *args])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and told in err and err.count("\n") == 1, err
    if args[-1] == "page":
        assert "did you mean" not in err


def test_cli_filter_field_suggests_the_nearest(kb, capsys):
    code = main(["--kb", str(kb.path), "query", "恢复出厂设置", "--filter", '{"itemname": "星云智能音箱 S2"}'])
    err = capsys.readouterr().err
    assert code == 2 and "unknown filter field 'itemname'; did you mean 'item_name'?" in err
