"""Settings as typed groups: flat names and groups, validation with one clear line per problem,
TOML tables (and the flat files of earlier versions), the JSON Schema, and CLI flags that take
their choices and help from the same definitions."""
from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from ragsift.cli import build_parser
from ragsift.config import (
    FLAT,
    GROUPS,
    INDEX_KEYS,
    OPERATOR_KEYS,
    FusionMode,
    HydeMode,
    MultiHop,
    Normalization,
    Settings,
    StoreKind,
    Unit,
)
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.pipeline import Retriever

# a ragsift.toml as the previous version wrote it: every setting flat, by hand
OLD_FLAT_TOML = '''# ragsift knowledge-base settings. Index settings are fixed at creation;
# query settings are defaults that a query may override.

embedder = "minilm"
parent_max_tokens = 1500
child_tokens = 120
child_overlap_tokens = 20
index_headings = true
analyzer = "ragsift-zh-en-v1"
small_index = ["chunks", "sentences"]
raptor_levels = 3
extra_embedders = []
sparse_encoder = ""
store = "lancedb"
store_uri = ""
store_name = ""
store_index = "FLAT"
channels = ["dense", "bm25"]
fusion = "weighted"
rrf_k = 60
weights = { dense = 0.7, bm25 = 0.3 }
normalization = "minmax"
channel_depth = 100
unit = "window"
index_kinds = ["chunk"]
window_sentences = 1
merge_threshold = 0.5
max_parents = 4
token_budget = 3000
channel_timeout_s = 30.0
channel_timeouts = { hyde = 60.0 }
max_query_chars = 4000
llm = ""
llm_base_url = ""
llm_cache = true
llm_max_retries = 2
llm_max_concurrency = 4
prompts = { "hyde.zh" = { system = "请简要回答。", user = "问题：{question}" } }
hyde_mode = "hypothesis"
hyde_samples = 4
hyde_temperature = 0.7
hyde_max_tokens = 256
rewrite = false
multi_query_n = 3
rerank = ""
rerank_top_n = 10
rerank_max_tokens = 256
multihop = "off"
hops_max = 3
hop_queries = 2
hop_top = 5
hop_min_gain = 0.3
hop_protect = 2
hop_llm_calls = 4
hop_time_s = 120.0
'''


def test_earlier_spellings_still_work_with_a_deprecation_note(tmp_path):
    """max_parents, llm, rerank, multihop and store (four of them also group names) still read, in
    code (with a DeprecationWarning), over HTTP bodies and in files (silently)."""
    with pytest.warns(DeprecationWarning, match="'max_parents' is now called 'max_passages'"):
        s = Settings(max_parents=2)
    assert s.query.max_passages == 2
    with pytest.warns(DeprecationWarning):
        s = Settings(llm="openai:qwen", rerank="llm-judge", multihop="llm", store="milvus", store_uri="http://h:1")
    assert (s.llm.model, s.rerank.model, s.multihop.mode, s.store.kind) == ("openai:qwen", "llm-judge", "llm", "milvus")
    assert Settings(llm={"model": "openai:qwen"}).llm.model == "openai:qwen"  # a table is still the group
    with pytest.warns(DeprecationWarning):
        assert Settings().replace(max_parents=3).query.max_passages == 3
    body = Settings.query_model().model_validate({"max_parents": 3, "multihop": "keywords"})
    assert body.max_passages == 3 and body.multihop_mode == "keywords"
    (tmp_path / "s.toml").write_text("[query]\nmax_parents = 5\n", encoding="utf-8")
    assert Settings.load(tmp_path / "s.toml").query.max_passages == 5
    assert Settings(small_index=["chunks", "sentences", "keysentences"]).index.small_index == ("chunk", "sentence", "keys")


def test_flat_names_and_groups_are_the_same_settings():
    assert Settings(unit="auto") == Settings(query={"unit": "auto"})
    s = Settings(store_kind="milvus", store_uri="http://127.0.0.1:19530", llm_model="openai:qwen", reranker="llm-judge",
                 multihop_mode="llm", hyde_mode="mean")
    assert s.store.kind is StoreKind.MILVUS and s.store.uri == "http://127.0.0.1:19530"
    assert s.llm.model == "openai:qwen" and s.rerank.model == "llm-judge"
    assert s.multihop.mode is MultiHop.LLM and s.transforms.hyde_mode is HydeMode.MEAN
    assert s.get("store_kind") == "milvus" and s.get("multihop_mode") == "llm"
    # every flat name maps to one field; the flat form round-trips
    assert len(FLAT) == sum(len(g.model_fields) for g in GROUPS.values())
    assert Settings.from_dict(s.flat()) == s == Settings.from_dict(s.to_dict())
    # replace changes a copy, ignores None, and keeps types
    t = s.replace(unit="child", channels="bm25", max_passages=None)
    assert t.query.unit is Unit.CHILD and t.query.channels == ("bm25",) and s.query.unit is Unit.PARENT
    assert t.query.max_passages == s.query.max_passages
    with pytest.raises(ValidationError):
        s.query.unit = "child"  # frozen


@pytest.mark.parametrize("change,message", [
    ({"unit": "page"}, "unknown unit 'page'; valid: 'parent', 'child', 'document', 'window', 'auto'"),
    ({"unit": "parnet"}, "unknown unit 'parnet'; did you mean 'parent'? valid: 'parent', 'child'"),
    ({"unit": "auto", "index_kinds": ["sentence"]}, "auto-merging measures the share of a section's chunks"),
])
def test_units_are_checked_where_settings_meet_the_query_layer(change, message):
    s = Settings().replace(**change)  # an open set: the settings take any name
    with pytest.raises(ConfigError) as e:
        Retriever.check(s)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("change,message", [
    ({"fusion": "sum"}, "unknown fusion 'sum'; valid values: 'rrf', 'weighted'"),
    ({"store_kind": "mysql"}, "unknown store_kind 'mysql'; valid values: 'lancedb', 'milvus'"),
    ({"index_kinds": ["paragraph"]}, "unknown index_kinds 'paragraph'"),
    ({"small_index": ["sentences"]}, "small_index must include 'chunk'"),
    ({"weights": [0.5, 0.5]}, "weights: input should be a valid dictionary"),
    ({"weights": {"dense": float("nan")}}, "weights: input should be a finite number"),
    ({"channel_timeout_s": float("inf")}, "channel_timeout_s: input should be a finite number"),
    ({"channel_timeout_s": "5"}, "channel_timeout_s: input should be a valid number (got '5')"),
    ({"channels": 5}, "channels: input should be a valid tuple"),
    ({"channels": []}, "channels: tuple should have at least 1 item"),
    ({"channel_depth": 10**12}, "channel_depth: input should be less than or equal to 10000"),
    ({"max_passages": True}, "max_passages: input should be a valid integer"),
    ({"fusion": "weighted", "weights": {"dense": 0, "bm25": 0}}, "needs a weight above 0"),
    ({"merge_threshold": 1.5}, "merge_threshold: input should be less than or equal to 1"),
    ({"llm_model": "gpt-4"}, "unknown llm 'gpt-4'"),
    ({"multihop_mode": "llm"}, "multihop_mode = 'llm' needs a language model"),
    ({"colour": "red"}, "unknown setting 'colour'"),
    ({"max_passage": 2}, "unknown setting 'max_passage'; did you mean 'max_passages'?"),
    ({"chekpoint_documents": 5}, "unknown setting 'chekpoint_documents'; did you mean 'checkpoint_documents'?"),
])
def test_bad_settings_are_one_clear_line(change, message):
    with pytest.raises(ConfigError) as e:
        Settings().replace(**change)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert "Traceback" not in str(e.value) and "pydantic" not in str(e.value)


def test_settings_files_are_toml_tables_and_old_flat_files_still_open(tmp_path):
    s = Settings(unit="window", weights={"dense": 0.7, "bm25": 0.3}, fusion="weighted",
                 prompts={"hyde.zh": {"system": "请简要回答。", "user": "问题：{question}"}})
    s.save(tmp_path / "ragsift.toml")
    text = (tmp_path / "ragsift.toml").read_text(encoding="utf-8")
    assert "[index]" in text and "[query]" in text and '"hyde.zh"' in text and "问题：{question}" in text
    assert Settings.load(tmp_path / "ragsift.toml") == s
    (tmp_path / "old.toml").write_text(OLD_FLAT_TOML, encoding="utf-8")
    old = Settings.load(tmp_path / "old.toml")
    assert old.index.embedder == "minilm" and old.index.child_tokens == 120
    assert old.query.unit is Unit.WINDOW and old.query.fusion is FusionMode.WEIGHTED
    assert old.query.weights == {"dense": 0.7, "bm25": 0.3} and old.query.channel_timeouts == {"hyde": 60.0}
    assert old.llm.prompts["hyde.zh"]["user"] == "问题：{question}"
    (tmp_path / "bad.toml").write_text(OLD_FLAT_TOML.replace('fusion = "weighted"', 'fusion = "sum"'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.toml: unknown fusion 'sum'"):
        Settings.load(tmp_path / "bad.toml")


def test_a_knowledge_base_with_an_old_flat_settings_file_opens(tmp_path):
    # made as that version made it: with the first BM25 analyzer (a flat file without one names it)
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm", child_tokens=120, child_overlap_tokens=20,
                            small_index=["chunks", "sentences"], analyzer="ragsift-zh-en-v1")
    kb.close()
    (tmp_path / "kb" / "ragsift.toml").write_text(OLD_FLAT_TOML, encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb")
    assert kb.settings.query.unit is Unit.WINDOW and kb.settings.index.small_index == ("chunk", "sentence")
    with pytest.raises(ConfigError, match="built with child_tokens=120; it cannot change to 200"):
        KnowledgeBase.open(tmp_path / "kb", child_tokens=200)


def test_the_json_schema_comes_from_the_definitions():
    schema = Settings.model_json_schema()
    assert set(schema["properties"]) == set(GROUPS)
    defs = schema["$defs"]
    assert defs["Unit"]["enum"] == [u.value for u in Unit]
    assert defs["QuerySettings"]["properties"]["channel_depth"]["maximum"] == 10_000
    assert "What comes back" in defs["QuerySettings"]["properties"]["unit"]["description"]
    q = Settings.query_model().model_json_schema()
    assert not set(q["properties"]) & set(INDEX_KEYS) and "store_uri" not in q["properties"]
    assert {"unit", "fusion", "hyde_mode", "multihop_mode", "reranker", "store_fusion"} <= set(q["properties"])
    assert not set(q["properties"]) & set(OPERATOR_KEYS)  # what the server calls is the operator's
    json.dumps(schema)  # plain JSON


def test_cli_choices_and_help_come_from_the_settings():
    parser = build_parser()
    query = parser._subparsers._group_actions[0].choices["query"]
    actions = {a.dest: a for a in query._actions}
    assert actions["unit"].choices is None  # units are an open set: the unit registry checks the name
    for dest, enum in (("fusion", FusionMode), ("normalization", Normalization),
                       ("hyde_mode", HydeMode), ("multihop_mode", MultiHop)):
        assert actions[dest].choices == [m.value for m in enum]
        assert " ".join(Settings.field_info(dest).description.split()) in actions[dest].help
    assert actions["token_budget"].type is int and actions["merge_threshold"].type is float
    assert "valid: chunk, sentence, keys" in actions["index_kinds"].help
    ingest = parser._subparsers._group_actions[0].choices["ingest"]
    assert {a.dest: a for a in ingest._actions}["store_kind"].choices == [k.value for k in StoreKind]


def test_repeated_query_overrides_reuse_the_checked_settings(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    a = kb.query_settings(**{"unit": "child", "weights": {"dense": 1.0, "bm25": 0.0}})
    b = kb.query_settings(**{"weights": {"bm25": 0.0, "dense": 1.0}, "unit": "child"})
    assert a is b and a.query.unit is Unit.CHILD and a.query.weights == {"dense": 1.0, "bm25": 0.0}
    assert kb.query_settings(**{"unit": "document"}).query.unit is Unit.DOCUMENT
    with pytest.raises(ConfigError, match="index settings cannot change per query: embedder"):
        kb.query_settings(**{"embedder": "e5-small"})
    with pytest.raises(ConfigError, match="unknown channel 'bm52'"):
        kb.query_settings(**{"channels": ["bm52"]})
