"""Filters in the frameworks' shapes (Haystack dicts, LangChain Mongo dicts and self-query
objects, LlamaIndex MetadataFilters, built with the real framework classes) translate to
ragsift's filter language, and select on a real knowledge base exactly what the native filter
selects, in Chinese and English."""
from __future__ import annotations

import pytest
from langchain_core.structured_query import Comparator, Comparison, Operation, Operator
from llama_index.core.vector_stores import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from ragsift.errors import FilterError
from ragsift.integrations.filters import translate_filter
from ragsift.kb import KnowledgeBase

FIELDS = {"lang": "string", "year": "int", "tags": "list", "source": "string", "doc_id": "string"}

CASES = [
    ({"field": "meta.lang", "operator": "==", "value": "zh"}, {"lang": {"eq": "zh"}}),
    ({"operator": "AND", "conditions": [{"field": "meta.year", "operator": ">=", "value": 2020},
                                        {"field": "meta.tags", "operator": "==", "value": "手册"}]},
     {"and": [{"year": {"gte": 2020}}, {"tags": {"contains": "手册"}}]}),
    ({"operator": "NOT", "conditions": [{"field": "id", "operator": "in", "value": ["a", "b"]}]},
     {"not": {"doc_id": {"in": ["a", "b"]}}}),
    ({"operator": "OR", "conditions": [{"field": "meta.lang", "operator": "not in", "value": ["en"]},
                                       {"field": "meta.year", "operator": "<", "value": 2000}]},
     {"or": [{"lang": {"nin": ["en"]}}, {"year": {"lt": 2000}}]}),
    ({"$and": [{"lang": {"$eq": "zh"}}, {"year": {"$between": [2019, 2023]}}]},
     {"$and": [{"lang": {"$eq": "zh"}}, {"year": {"gte": 2019, "lte": 2023}}]}),
    ({"tags": "manual"}, {"tags": {"contains": "manual"}}),
    (Operation(operator=Operator.AND, arguments=[Comparison(comparator=Comparator.EQ, attribute="lang", value="en"),
                                                 Comparison(comparator=Comparator.CONTAIN, attribute="tags",
                                                            value="guide")]),
     {"and": [{"lang": {"eq": "en"}}, {"tags": {"contains": "guide"}}]}),
    (Operation(operator=Operator.NOT, arguments=[Comparison(comparator=Comparator.GT, attribute="year", value=2020)]),
     {"not": {"year": {"gt": 2020}}}),
    (MetadataFilters(filters=[MetadataFilter(key="lang", value="zh"),
                              MetadataFilter(key="year", value=2020, operator=FilterOperator.GTE)],
                     condition=FilterCondition.OR),
     {"or": [{"lang": {"eq": "zh"}}, {"year": {"gte": 2020}}]}),
    (MetadataFilters(filters=[MetadataFilter(key="tags", value=["a", "b"], operator=FilterOperator.ALL)]),
     {"and": [{"tags": {"contains": "a"}}, {"tags": {"contains": "b"}}]}),
    (MetadataFilter(key="tags", value=["a", "b"], operator=FilterOperator.ANY), {"tags": {"in": ["a", "b"]}}),
    ({"source": "a.md", "year": {"gte": 2020}}, {"source": "a.md", "year": {"gte": 2020}}),  # ragsift's own
]


@pytest.mark.parametrize("spec,want", CASES)
def test_each_shape_translates(spec, want):
    assert translate_filter(spec, FIELDS) == want


@pytest.mark.parametrize("spec,message", [
    ({"field": "content", "operator": "==", "value": "x"}, "metadata fields, not the text"),
    ({"field": "meta.lang", "operator": "~=", "value": "x"}, "Haystack operator '~=' on 'meta.lang'"),
    ({"operator": "XOR", "conditions": [{"field": "meta.lang", "operator": "==", "value": "zh"}]},
     "operator AND, OR or NOT"),
    ({"title": {"$like": "%reset%"}}, "'\\$like' on 'title' is not a ragsift filter operator"),
    (MetadataFilter(key="title", value="reset", operator=FilterOperator.TEXT_MATCH), "LlamaIndex operator 'text_match'"),
    (Comparison(comparator=Comparator.LIKE, attribute="title", value="x"), "LangChain comparator 'like'"),
    ("lang=zh", "must be a JSON object"),
])
def test_what_ragsift_cannot_filter_is_named(spec, message):
    with pytest.raises(FilterError, match=message):
        translate_filter(spec, FIELDS)


def test_translated_filters_select_what_the_native_ones_select(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb")
    kb.add_documents([
        {"id": "zh-new", "text": "绿茶应该密封后冷藏保存，可以放一年。", "metadata": {"year": 2024, "tags": ["茶", "保存"]}},
        {"id": "zh-old", "text": "红茶常温密封即可，可以保存两年。", "metadata": {"year": 2015, "tags": ["茶"]}},
        {"id": "en-new", "text": "Keep green tea sealed in a refrigerator for up to a year.",
         "metadata": {"year": 2023, "tags": ["tea", "storage"]}},
        {"id": "en-old", "text": "Black tea keeps two years at room temperature when sealed.",
         "metadata": {"year": 2010, "tags": ["tea"]}},
    ])
    fields = kb.store.fields()

    def ids(flt):
        return {p.doc_id for p in kb.query("tea 茶 保存 keep", filter=flt, max_passages=10).passages}

    for framework, native, want in [
        ({"field": "meta.lang", "operator": "==", "value": "zh"}, {"lang": "zh"}, {"zh-new", "zh-old"}),
        ({"operator": "AND", "conditions": [{"field": "meta.year", "operator": ">", "value": 2020},
                                            {"field": "meta.tags", "operator": "==", "value": "tea"}]},
         {"year": {"gt": 2020}, "tags": {"contains": "tea"}}, {"en-new"}),
        (Operation(operator=Operator.OR, arguments=[Comparison(comparator=Comparator.EQ, attribute="lang", value="zh"),
                                                    Comparison(comparator=Comparator.LT, attribute="year",
                                                               value=2012)]),
         {"or": [{"lang": "zh"}, {"year": {"lt": 2012}}]}, {"zh-new", "zh-old", "en-old"}),
        (MetadataFilters(filters=[MetadataFilter(key="tags", value=["保存", "storage"], operator=FilterOperator.ANY)]),
         {"tags": {"in": ["保存", "storage"]}}, {"zh-new", "en-new"}),
        ({"$and": [{"lang": {"$eq": "en"}}, {"year": {"$between": [2000, 2015]}}]},
         {"lang": "en", "year": {"gte": 2000, "lte": 2015}}, {"en-old"}),
    ]:
        assert ids(translate_filter(framework, fields)) == ids(native) == want
