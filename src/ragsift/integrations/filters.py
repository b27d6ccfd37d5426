"""Filters in the frameworks' own shapes, translated to ragsift's filter language
(``ragsift.store.filters``), so a retriever takes what its framework's users already write:

- **Haystack**: ``{"field": "meta.lang", "operator": "==", "value": "zh"}`` and
  ``{"operator": "AND" | "OR" | "NOT", "conditions": [...]}``; operators ``== != > >= < <= in
  "not in"``. ``meta.`` names a metadata field (a bare name is taken as is).
- **LangChain**: the Mongo-style dicts of its vector stores (``{"$and": [{"lang": {"$eq": "zh"}}]}``,
  ``$eq $ne $gt $gte $lt $lte $in $nin $contains``; ragsift reads them as they are), ``$between``
  (``[low, high]``, both included), and the self-query retriever's ``Comparison`` / ``Operation``
  objects (``langchain_core.structured_query``).
- **LlamaIndex**: ``MetadataFilters`` / ``MetadataFilter`` (``== != > >= < <= in nin any all
  contains``; conditions ``and``, ``or``, ``not``).

A ragsift filter passes through unchanged. A comparison on a list field with ``==`` (Haystack,
LlamaIndex) means the list holds the value, as those frameworks' stores read it. What ragsift
cannot do (``like``, ``text_match``, ``is_empty``, a filter on ``content``) is a ``FilterError``
naming it. Objects are recognised by their attributes, so this module imports no framework.
"""
from __future__ import annotations

from typing import Any

from ragsift.errors import FilterError

_HAYSTACK_OPS = {"==": "eq", "!=": "ne", ">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "in": "in", "not in": "nin"}
_LLAMA_OPS = {"==": "eq", "!=": "ne", ">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "in": "in", "nin": "nin",
              "any": "in", "contains": "contains"}
_LC_COMPARATORS = {"eq": "eq", "ne": "ne", "gt": "gt", "gte": "gte", "lt": "lt", "lte": "lte", "in": "in", "nin": "nin",
                   "contain": "contains"}
_NOT_HERE = "ragsift filters metadata fields, not the text"


def translate_filter(spec: Any, fields: dict[str, str] | None = None) -> dict[str, Any] | None:
    """``spec`` in any of the shapes above as a ragsift filter. ``fields`` (name -> type, the
    knowledge base's filter fields) lets ``==`` on a list field mean "holds"."""
    if spec is None:
        return None
    types = fields or {}
    if hasattr(spec, "filters") and hasattr(spec, "condition"):  # LlamaIndex MetadataFilters
        return _llama(spec, types)
    if hasattr(spec, "key") and hasattr(spec, "operator") and hasattr(spec, "value"):  # LlamaIndex MetadataFilter
        return _llama_one(spec, types)
    if hasattr(spec, "comparator") or (hasattr(spec, "operator") and hasattr(spec, "arguments")):
        return _langchain_structured(spec, types)
    if not isinstance(spec, dict):
        raise FilterError(f"a filter must be a JSON object (or a framework's filter object), got {type(spec).__name__}")
    if "operator" in spec and ("field" in spec or "conditions" in spec):
        return _haystack(spec, types)
    return _mongo(spec, types)


def _cmp(field: str, op: str, value: Any, types: dict[str, str]) -> dict[str, Any]:
    if op == "eq" and types.get(field) == "list" and not isinstance(value, (list, tuple)):
        op = "contains"
    elif op == "ne" and types.get(field) == "list" and not isinstance(value, (list, tuple)):
        return {"not": {field: {"contains": value}}}
    return {field: {op: list(value) if isinstance(value, tuple) else value}}


# ------------------------------------------------------------------ Haystack
def _haystack(spec: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    op = spec.get("operator")
    if "conditions" in spec:
        conditions = spec["conditions"]
        logical = op.upper() if isinstance(op, str) else op
        if logical not in ("AND", "OR", "NOT") or not isinstance(conditions, list) or not conditions:
            raise FilterError(f"a Haystack logical filter takes operator AND, OR or NOT and a non-empty list of "
                              f"conditions, got operator {op!r}")
        parts = [_haystack(c, types) if isinstance(c, dict) else _bad_haystack(c) for c in conditions]
        if logical == "NOT":
            return {"not": parts[0] if len(parts) == 1 else {"and": parts}}
        return {logical.lower(): parts}
    field = spec.get("field")
    if not isinstance(field, str) or not field:
        raise FilterError(f"a Haystack comparison names its field: {{'field': 'meta.lang', 'operator': '==', "
                          f"'value': 'zh'}}, got {spec!r}")
    if op not in _HAYSTACK_OPS:
        raise FilterError(f"Haystack operator {op!r} on {field!r} is not one ragsift filters by; "
                          f"valid: {', '.join(_HAYSTACK_OPS)}")
    if "value" not in spec:
        raise FilterError(f"the Haystack comparison on {field!r} has no value")
    name = field.removeprefix("meta.")
    if name in ("content", "embedding", "sparse_embedding", "blob", "score") and not field.startswith("meta."):
        raise FilterError(f"a Haystack filter on {field!r}: {_NOT_HERE}; use a metadata field (meta.<name>)")
    if name == "id" and not field.startswith("meta."):
        name = "doc_id"
    return _cmp(name, _HAYSTACK_OPS[op], spec["value"], types)


def _bad_haystack(c: Any) -> dict[str, Any]:
    raise FilterError(f"each Haystack condition is an object, got {c!r}")


# ------------------------------------------------------------------ LangChain
def _mongo(spec: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    """ragsift's own language is LangChain's Mongo style with ``$`` optional; what it adds
    (``$between``, ``==`` on a list field) is rewritten, the rest passes through."""
    out: dict[str, Any] = {}
    for key, value in spec.items():
        bare = key[1:] if isinstance(key, str) and key.startswith("$") else key
        if bare in ("and", "or") and isinstance(value, list):
            out[key] = [_mongo(v, types) if isinstance(v, dict) else v for v in value]
        elif bare == "not" and isinstance(value, dict):
            out[key] = _mongo(value, types)
        elif isinstance(value, dict):
            ops: dict[str, Any] = {}
            for op_key, v in value.items():
                op = op_key[1:] if isinstance(op_key, str) and op_key.startswith("$") else op_key
                if op == "between":
                    if not isinstance(v, (list, tuple)) or len(v) != 2:
                        raise FilterError(f"'$between' on {key!r} takes [low, high]")
                    ops.update(gte=v[0], lte=v[1])
                elif op in ("like", "ilike", "exists", "regex", "text_match"):
                    raise FilterError(f"'{op_key}' on {key!r} is not a ragsift filter operator; ragsift compares "
                                      "values (eq, ne, gt, gte, lt, lte, in, nin, contains)")
                elif op == "eq" and types.get(key) == "list" and not isinstance(v, (list, tuple)):
                    ops["contains"] = v
                else:
                    ops[op_key] = v
            out[key] = ops
        elif types.get(key) == "list" and not isinstance(value, (list, tuple, dict)):
            out[key] = {"contains": value}
        else:
            out[key] = value
    return out


def _langchain_structured(node: Any, types: dict[str, str]) -> dict[str, Any]:
    if hasattr(node, "comparator"):
        comparator = getattr(node.comparator, "value", node.comparator)
        if comparator not in _LC_COMPARATORS:
            raise FilterError(f"LangChain comparator {comparator!r} on {node.attribute!r} is not one ragsift "
                              f"filters by; valid: {', '.join(_LC_COMPARATORS)}")
        return _cmp(node.attribute, _LC_COMPARATORS[comparator], node.value, types)
    operator = getattr(node.operator, "value", node.operator)
    parts = [_langchain_structured(a, types) for a in node.arguments]
    if operator == "not":
        return {"not": parts[0] if len(parts) == 1 else {"and": parts}}
    if operator not in ("and", "or") or not parts:
        raise FilterError(f"LangChain operator {operator!r} takes a non-empty list of arguments")
    return {operator: parts}


# ------------------------------------------------------------------ LlamaIndex
def _llama(filters: Any, types: dict[str, str]) -> dict[str, Any]:
    condition = getattr(filters.condition, "value", filters.condition) or "and"
    parts = [_llama(f, types) if hasattr(f, "filters") else _llama_one(f, types) for f in filters.filters]
    if not parts:
        raise FilterError("LlamaIndex MetadataFilters with no filters")
    if condition == "not":
        return {"not": parts[0] if len(parts) == 1 else {"and": parts}}
    if condition not in ("and", "or"):
        raise FilterError(f"LlamaIndex filter condition {condition!r}: ragsift takes and, or, not")
    return parts[0] if len(parts) == 1 else {condition: parts}


def _llama_one(f: Any, types: dict[str, str]) -> dict[str, Any]:
    op = getattr(f.operator, "value", f.operator)
    if op == "all":
        values = f.value if isinstance(f.value, (list, tuple)) else [f.value]
        return {"and": [{f.key: {"contains": v}} for v in values]}
    if op not in _LLAMA_OPS:
        raise FilterError(f"LlamaIndex operator {op!r} on {f.key!r} is not one ragsift filters by; "
                          f"valid: {', '.join(_LLAMA_OPS)}, all")
    return _cmp(f.key, _LLAMA_OPS[op], f.value, types)
