import pytest

from ragsift.errors import FilterError
from ragsift.store.filters import And, Cmp, Not, Or, parse_filter, render_sql

FIELDS = {"source": "string", "item_name": "string", "year": "int", "score": "float", "draft": "bool"}
COLS = {f: f for f in FIELDS}


def test_parse_equality_in_and_ranges():
    node = parse_filter({"item_name": {"in": ["A", "星云"]}, "source": "manual.md",
                         "year": {"$gte": 2020, "lt": 2024}}, FIELDS)
    assert node == And((Cmp("item_name", "in", ("A", "星云")), Cmp("source", "eq", "manual.md"),
                        Cmp("year", "gte", 2020), Cmp("year", "lt", 2024)))


def test_parse_logical_operators():
    node = parse_filter({"or": [{"source": "a.md"}, {"not": {"draft": True}}]}, FIELDS)
    assert node == Or((Cmp("source", "eq", "a.md"), Not(Cmp("draft", "eq", True))))


@pytest.mark.parametrize("spec,message", [
    ({"colour": "red"}, "unknown filter field 'colour'; known fields:"),
    ({"year": "2020"}, "holds int values"),
    ({"year": {"between": [1, 2]}}, "unknown operator 'between'"),
    ({"source": {"in": []}}, "non-empty list"),
    ({"or": {"source": "a"}}, "takes a non-empty list"),
    ({"draft": {"gt": True}}, "not defined for the boolean"),
    ({"score": float("nan")}, "finite"),
    ("source = 'a'", "must be a JSON object"),
    ({"source": {}}, "empty operator object"),
])
def test_malformed_filters_are_clear_errors(spec, message):
    with pytest.raises(FilterError, match=None) as e:
        parse_filter(spec, FIELDS)
    assert message in str(e.value)


def test_injection_values_render_as_one_quoted_literal():
    evil = "x' OR '1'='1'; DROP TABLE children; --"
    sql = render_sql(parse_filter({"source": evil}, FIELDS), COLS)
    assert sql == "(`source` = 'x'' OR ''1''=''1''; DROP TABLE children; --')"
    sql = render_sql(parse_filter({"item_name": {"nin": ["a`b", "c\\'d"]}}, FIELDS), COLS)
    assert "'a`b'" in sql and "'c\\''d'" in sql


def test_chinese_values_are_literals():
    sql = render_sql(parse_filter({"item_name": "星云智能音箱 S2"}, FIELDS), COLS)
    assert sql == "(`item_name` = '星云智能音箱 S2')"


@pytest.mark.parametrize("value,code", [("zh", "zh"), ("ZH", "zh"), ("zh-CN", "zh"), ("zh_Hans", "zh"), ("en-US", "en"),
                                        ("English", "en"), ("中文", "zh"), ("other", "other")])
def test_the_built_in_lang_field_reads_tags_and_names(value, code):
    fields = {"lang": "string", "source": "string"}
    assert parse_filter({"lang": value}, fields) == Cmp("lang", "eq", code)
    assert parse_filter({"lang": {"in": [value, "en"]}}, fields) == Cmp("lang", "in", (code, "en"))


@pytest.mark.parametrize("value", ["fr", "", 3, ["zh"]])
def test_a_language_ragsift_does_not_tell_apart_is_a_clear_error(value):
    with pytest.raises(FilterError, match="language detected for each entry: one of zh, en, other"):
        parse_filter({"lang": value}, {"lang": "string"})
