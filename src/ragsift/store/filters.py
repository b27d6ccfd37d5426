"""Metadata filters: structured values, validated, then compiled safely for a store.

A filter is a dict. Each key is a field name or a logical operator::

    {"source": "manual.md"}                                 # equality
    {"item_name": {"in": ["Aurora SmartHub X1", "星云智能音箱 S2"]}}
    {"year": {"gte": 2020, "lt": 2024}}                      # several ops are AND-ed
    {"or": [{"source": "a.md"}, {"not": {"category": "faq"}}]}

Comparison operators: eq, ne, gt, gte, lt, lte, in, nin (a leading ``$`` is accepted, as in
``$in``). Logical: and, or (lists of filters), not (one filter). Keys at one level are AND-ed.

Built-in fields: ``doc_id``, ``source``, ``title``, ``format`` and ``lang``, the language detected
for each entry (``zh``, ``en`` or ``other``; ``{"lang": "zh"}`` keeps Chinese entries). What
ragsift keeps for itself (``types.INTERNAL_METADATA``: ``path``, where a file is on the server) is
no filter field, whatever a store recorded: a filter naming it is a FilterError.

Field types: string, int, float, bool, date and list (of strings). A date field holds ISO 8601
text (``"2024-05-01"``, ``"2024-05-01T09:30:00"``); its values are dates given as such text (or
``date`` objects) and compare as dates. A list field takes ``contains`` (it holds the value),
``in`` (it holds any of the values) and ``nin`` (it holds none of them)::

    {"tags": {"contains": "manual"}, "published": {"gte": "2024-01-01"}}

Parsing checks every field against the knowledge base's known fields and every value
against the field's type, and produces a small tree. Stores render the tree themselves,
quoting every value as a literal: a value full of quotes and operators stays a value.
"""
from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass
from typing import Any

from ragsift.errors import FilterError
from ragsift.names import did_you_mean
from ragsift.text.lang import LANGUAGES
from ragsift.types import INTERNAL_METADATA

COMPARISONS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")
LIST_OPS = ("contains", "in", "nin")
MAX_IN_VALUES = 10_000
MAX_DEPTH = 16
MAX_NODES = 1_000  # comparisons and logical operators in one filter (default of max_filter_nodes)
INT64_MIN, INT64_MAX = -(2 ** 63) + 1, 2 ** 63 - 1

# field type names: "string", "int", "float", "bool", "date", "list"


@dataclass(frozen=True)
class Cmp:
    field: str
    op: str
    value: Any  # scalar, or tuple for in / nin


@dataclass(frozen=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    item: Node


Node = Cmp | And | Or | Not


def parse_filter(spec: Any, fields: dict[str, str], max_nodes: int = MAX_NODES) -> Node | None:
    """Validate ``spec`` against ``fields`` (name -> type) and return the filter tree. A tree
    that passes renders and runs on every store: depth, size, value types, 64-bit integers,
    finite numbers and valid text are checked here."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise FilterError(f"a filter must be a JSON object, got {type(spec).__name__}")
    if not spec:
        return None
    node = _simplify(_parse(spec, fields, 0))
    n = _size(node)
    if n > max_nodes:
        raise FilterError(f"the filter has {n} comparisons and operators; the limit is {max_nodes} "
                          "(setting max_filter_nodes)")
    return node


def _simplify(node: Node) -> Node:
    """The same filter, shallower: ``not not x`` is ``x`` (every store renders ``not`` as total,
    so the two mean the same), and an and inside an and (or in an or) joins it."""
    if isinstance(node, Not):
        inner = _simplify(node.item)
        return inner.item if isinstance(inner, Not) else Not(inner)
    if isinstance(node, (And, Or)):
        items: list[Node] = []
        for n in node.items:
            n = _simplify(n)
            items.extend(n.items if type(n) is type(node) else (n,))  # type: ignore[union-attr]
        return items[0] if len(items) == 1 else type(node)(tuple(items))
    return node


def _size(node: Node) -> int:
    if isinstance(node, Cmp):
        return 1
    if isinstance(node, Not):
        return 1 + _size(node.item)
    return 1 + sum(_size(n) for n in node.items)


def _parse(spec: Any, fields: dict[str, str], depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise FilterError(f"filter nested deeper than {MAX_DEPTH} levels")
    if not isinstance(spec, dict) or not spec:
        raise FilterError(f"each filter must be a non-empty object, got {spec!r}")
    items: list[Node] = []
    for key, value in spec.items():
        op = key[1:] if isinstance(key, str) and key.startswith("$") else key
        if op in ("and", "or"):
            if not isinstance(value, list) or not value:
                raise FilterError(f"'{key}' takes a non-empty list of filters")
            sub = tuple(_parse(v, fields, depth + 1) for v in value)
            items.append(And(sub) if op == "and" else Or(sub))
        elif op == "not":
            items.append(Not(_parse(value, fields, depth + 1)))
        else:
            items.extend(_parse_field(key, value, fields))
    return items[0] if len(items) == 1 else And(tuple(items))


def _parse_field(name: str, value: Any, fields: dict[str, str]) -> list[Node]:
    if name in INTERNAL_METADATA:  # whatever the store recorded (a knowledge base made before: a column)
        raise FilterError(f"{name!r} is not a filter field: {INTERNAL_METADATA[name]}")
    if name not in fields:
        known = ", ".join(sorted(fields)) or "(none)"
        hint = did_you_mean(name, fields)
        raise FilterError(f"unknown filter field {name!r}; {hint + ' ' if hint else ''}known fields: {known}")
    ftype = fields[name]
    if isinstance(value, dict):
        if not value:
            raise FilterError(f"empty operator object for field {name!r}")
        out: list[Node] = []
        for op_key, v in value.items():
            op = op_key[1:] if isinstance(op_key, str) and op_key.startswith("$") else op_key
            if op not in COMPARISONS:
                hint = did_you_mean(op, COMPARISONS, "$" + "{}" if op is not op_key else "{}")
                raise FilterError(f"unknown operator {op_key!r} for field {name!r}; {hint + ' ' if hint else ''}"
                                  f"valid: {', '.join(COMPARISONS)}")
            out.append(_cmp(name, ftype, op, v))
        return out
    return [_cmp(name, ftype, "eq", value)]


def _cmp(name: str, ftype: str, op: str, value: Any) -> Cmp:
    if ftype == "list" and op not in LIST_OPS:
        raise FilterError(f"'{op}' is not defined for the list field {name!r}; use {', '.join(LIST_OPS)}")
    if op == "contains":
        if ftype != "list":
            raise FilterError(f"'contains' is for list fields; {name!r} holds {ftype} values")
        return Cmp(name, op, _check_value(name, "string", value))
    if op in ("in", "nin"):
        if not isinstance(value, (list, tuple)) or not value:
            raise FilterError(f"'{op}' on {name!r} takes a non-empty list")
        if len(value) > MAX_IN_VALUES:
            raise FilterError(f"'{op}' list on {name!r} longer than {MAX_IN_VALUES}")
        item = "string" if ftype == "list" else ftype
        return Cmp(name, op, tuple(_check_value(name, item, v) for v in value))
    if op in ("gt", "gte", "lt", "lte") and ftype in ("bool",):
        raise FilterError(f"'{op}' is not defined for the boolean field {name!r}")
    return Cmp(name, op, _check_value(name, ftype, value))


def _check_value(name: str, ftype: str, v: Any) -> Any:
    if ftype == "date":
        return _date_value(name, v)
    if name == "lang":
        return _lang_value(v)
    ok = {
        "string": isinstance(v, str),
        "bool": isinstance(v, bool),
        "int": isinstance(v, int) and not isinstance(v, bool),
        "float": isinstance(v, (int, float)) and not isinstance(v, bool),
    }.get(ftype, False)
    if not ok:
        raise FilterError(f"field {name!r} holds {ftype} values; got {v!r}")
    if isinstance(v, float) and not math.isfinite(v):
        raise FilterError(f"field {name!r}: value must be finite, got {v!r}")
    if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
        raise FilterError(f"field {name!r}: {v} is outside the 64-bit integers a store holds")
    if isinstance(v, str):
        if "\x00" in v:
            raise FilterError(f"field {name!r}: NUL characters are not allowed in filter values")
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise FilterError(f"field {name!r}: the value is not valid text (a lone surrogate)") from None
    return v


_LANG_NAMES = {"chinese": "zh", "中文": "zh", "汉语": "zh", "english": "en", "英文": "en", "英语": "en"}


def _lang_value(v: Any) -> str:
    """A value of the built-in ``lang`` field: ``zh``, ``en`` or ``other``; a language tag
    (``zh-CN``, ``en_US``, ``ZH``) or name ("Chinese", "中文") means its language."""
    if isinstance(v, str):
        low = v.strip().lower()
        code = _LANG_NAMES.get(low) or low.replace("_", "-").split("-")[0]
        if code in LANGUAGES:
            return code
    raise FilterError(f"field 'lang' is the language detected for each entry: one of {', '.join(LANGUAGES)} "
                      f"(a tag such as \"zh-CN\" is read as its language), got {v!r}")


def iso_date(value: datetime.date) -> str:
    """A date as ``YYYY-MM-DD``, a datetime as ``YYYY-MM-DDTHH:MM:SS`` (in UTC when it has a zone),
    so that dates compare as text in every store."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="seconds")
    return value.isoformat()


def parse_iso_date(text: str) -> datetime.date | None:
    """ISO 8601 text (``2024-05-01``, ``2024-05-01T09:30:00``) as a date or datetime, as a date
    field reads it (a filter's value, a document's metadata); None when it is not one."""
    try:
        return (datetime.datetime.fromisoformat(text) if "T" in text or " " in text.strip()
                else datetime.date.fromisoformat(text))
    except ValueError:
        return None


def _date_value(name: str, v: Any) -> str:
    """A filter value for a date field, as the ISO text the stores hold."""
    if isinstance(v, (datetime.date, datetime.datetime)):
        return iso_date(v)
    parsed = parse_iso_date(v) if isinstance(v, str) else None
    if parsed is not None:
        return iso_date(parsed)
    raise FilterError(f"field {name!r} holds dates; give one as ISO 8601 text such as \"2024-05-01\" "
                      f"or \"2024-05-01T09:30:00\", got {v!r}")


def filter_fields(node: Node | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, Cmp):
        return {node.field}
    if isinstance(node, Not):
        return filter_fields(node.item)
    return set().union(*(filter_fields(n) for n in node.items))


# ------------------------------------------------------------------ SQL rendering (LanceDB)
_SQL_OPS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def sql_literal(v: Any) -> str:
    """A value as a SQL literal. Strings are single-quoted with quotes doubled; nothing else
    of the value can become syntax."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise FilterError(f"unsupported filter value {v!r}")


def render_sql(node: Node, column: dict[str, str], lists: frozenset[str] = frozenset()) -> str:
    """Render for DataFusion SQL (LanceDB). ``column`` maps field names to column names;
    ``lists`` names the list fields."""
    if isinstance(node, Cmp):
        col = "`" + column[node.field].replace("`", "") + "`"
        if node.field in lists:
            if node.op == "contains":
                return f"COALESCE(array_has({col}, {sql_literal(node.value)}), FALSE)"
            expr = f"COALESCE(array_has_any({col}, make_array({', '.join(sql_literal(v) for v in node.value)})), FALSE)"
            return expr if node.op == "in" else f"(NOT {expr})"
        if node.op in ("in", "nin"):
            vals = ", ".join(sql_literal(v) for v in node.value)
            # NULL (field absent) never matches 'in'; it does match 'nin'
            if node.op == "in":
                return f"({col} IN ({vals}))"
            return f"({col} IS NULL OR {col} NOT IN ({vals}))"
        if node.op == "ne":
            return f"({col} IS NULL OR {col} != {sql_literal(node.value)})"
        return f"({col} {_SQL_OPS[node.op]} {sql_literal(node.value)})"
    if isinstance(node, Not):  # NOT binds tighter than AND / OR: no parentheses needed around it
        return f"NOT COALESCE({render_sql(node.item, column, lists)}, FALSE)"
    joiner = " AND " if isinstance(node, And) else " OR "
    return "(" + joiner.join(render_sql(n, column, lists) for n in node.items) + ")"


# ------------------------------------------------------------------ Milvus boolean expressions
def milvus_literal(v: Any) -> str:
    """A value as a Milvus expression literal. Strings are double-quoted; a quote or a
    backslash is escaped, so nothing of the value can become syntax (checked against a real
    server with quotes, backslashes, operators and control characters in the value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, str):
        out = ['"']
        for ch in v:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ch == "\r":
                out.append("\\r")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    raise FilterError(f"unsupported filter value {v!r}")


def render_milvus(node: Node, column: dict[str, str], json_fields: frozenset[str] = frozenset(),
                  lists: frozenset[str] = frozenset()) -> str:
    """Render for Milvus (2.5+ and milvus-lite). ``column`` maps field names to scalar columns;
    fields in ``json_fields`` live as keys of a JSON column (``column[f]`` is then the full
    path, e.g. ``meta["year"]``). Every comparison is made total (a missing key matches only
    ne / nin), so ``not`` means the same as on LanceDB."""
    if isinstance(node, Cmp):
        col = column[node.field]
        is_json = node.field in json_fields
        if node.field in lists:  # list fields live in the JSON column
            if node.op == "contains":
                return f"(exists {col} and json_contains({col}, {milvus_literal(node.value)}))"
            expr = f"(exists {col} and json_contains_any({col}, [{', '.join(milvus_literal(v) for v in node.value)}]))"
            return expr if node.op == "in" else f"(not {expr})"
        if node.op in ("in", "nin"):
            if is_json:  # JSON paths take no 'in' list: expand to comparisons
                eqs = " or ".join(f"{col} == {milvus_literal(v)}" for v in node.value)
                expr = f"(exists {col} and ({eqs}))"
            else:
                expr = f"({col} in [{', '.join(milvus_literal(v) for v in node.value)}])"
            return expr if node.op == "in" else f"(not {expr})"
        if node.op == "ne":
            expr = f"{col} != {milvus_literal(node.value)}"
            return f"(not exists {col} or {expr})" if is_json else f"({expr})"
        expr = f"{col} {_SQL_OPS[node.op] if node.op != 'eq' else '=='} {milvus_literal(node.value)}"
        return f"(exists {col} and {expr})" if is_json else f"({expr})"
    if isinstance(node, Not):
        return f"(not {render_milvus(node.item, column, json_fields, lists)})"
    joiner = " and " if isinstance(node, And) else " or "
    return "(" + joiner.join(render_milvus(n, column, json_fields, lists) for n in node.items) + ")"


def asked_values(node: Node | None) -> list[tuple[str, Any]]:
    """The (field, value) pairs a filter asks some document to hold: the values of ``eq``, ``in``
    and ``contains`` that are not under a ``not`` (what a filter that finds nothing may be
    looking for by a wrong value), each once, in the filter's order."""
    out: dict[tuple[str, Any], None] = {}

    def walk(n: Node) -> None:
        if isinstance(n, Cmp):
            if n.op in ("eq", "contains"):
                out[(n.field, n.value)] = None
            elif n.op == "in":
                out.update(((n.field, v), None) for v in n.value)
        elif isinstance(n, (And, Or)):
            for item in n.items:
                walk(item)

    if node is not None:
        walk(node)
    return list(out)


def missing_values(node: Node | None, held: dict[str, set[Any]]) -> list[str]:
    """Which values a filter asks for (``asked_values``) no document holds, said as a person reads
    it, with the nearest values documents do hold: ``no document has source "guide.md" (did you
    mean "docs/guide.md"?)``. ``held``: each field's values over the documents (a list field's
    items); a field not in it (``lang``, one entry's) is not judged. The nearest values are found
    by ``text.names.nearest``, within its bounds (a long value or many values cost no more)."""
    from ragsift.names import nearest

    out = []
    for name, value in asked_values(node):
        values = held.get(name)
        if values is None or value in values:
            continue
        text = str(value)
        words = sorted(str(v) for v in values)
        near = [w for w in words if isinstance(value, str)
                and (w.endswith("/" + text) or w.casefold() == text.casefold())]
        near += [w for w in nearest(text, words, n=3, cutoff=0.6) if w not in near]  # a value: looser than a name
        said = json.dumps(value, ensure_ascii=False, default=str)
        hint = " or ".join(json.dumps(w, ensure_ascii=False) for w in near[:3])
        out.append(f"no document has {name} {said}" + (f" (did you mean {hint}?)" if hint else ""))
    return out
