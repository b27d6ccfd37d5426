"""XML files read as text, with defusedxml (no DTD entity is ever expanded, no external entity
or DTD fetched: a file that declares entities is skipped, saying so). An element with text of
its own (mixed content such as ``<p>Press <b>reset</b>.</p>``) is a paragraph; a short value in
an element of its own is a line ``name: value`` (``<price>12</price>``: "price: 12"), so a
record's fields keep their names; attributes are left out. The title: the first ``title``
element's text, else the file name. The file's encoding: its declaration, else as a text file's
(``encoding.decode``)."""
from __future__ import annotations

from typing import Any

from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, register, skipped, structured
from ragsift.ingest.loaders.encoding import declared_in_markup, decode
from ragsift.ingest.loaders.files import source_title

MAX_VALUE = 80  # characters of a leaf's text written as "name: value"


@register(".xml")
def load_xml(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
    from defusedxml.ElementTree import ParseError, fromstring

    budget = Budget(limits)
    got = decode(data, declared_in_markup(data))
    if got.text is None:
        return skipped(source, got.reason)
    text = _without_declaration(got.text)
    try:
        root = fromstring(text, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except EntitiesForbidden:
        return skipped(source, "XML that declares entities in its DTD: not read (entities are never expanded; "
                               "a few hundred bytes of them can make gigabytes)")
    except (ExternalReferenceForbidden, DTDForbidden):
        return skipped(source, "XML that refers to an external DTD or entity: not read (never fetched)")
    except ParseError as e:
        return skipped(source, f"malformed XML: {e}")
    md = Markdown()
    title = ""
    fields: list[str] = []
    stack: list[Any] = [root]
    while stack:
        el = stack.pop()
        budget.tick()
        if not isinstance(el.tag, str):  # a comment or processing instruction
            continue
        name = _local(el.tag)
        children = [c for c in el if isinstance(c.tag, str)]
        own = (el.text or "").strip() or any((c.tail or "").strip() for c in children)
        if own:
            value = " ".join("".join(el.itertext()).split())
            budget.text(len(value))
            if name.lower() == "title" and not title:
                title = value
            if not children and len(value) <= MAX_VALUE:
                fields.append(f"{name}: {value}")
                continue
            _fields(md, fields)
            md.para(value)
            continue
        _fields(md, fields)
        stack.extend(reversed(children))
    _fields(md, fields)
    return structured(source, title or source_title(source), md, data, "xml")


def _fields(md: Markdown, fields: list[str]) -> None:
    """Lines of ``name: value`` gathered so far, written as one paragraph."""
    if fields:
        md.para("\n".join(fields))
        fields.clear()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _without_declaration(text: str) -> str:
    """XML text without its declaration (it may name the encoding the bytes were in, not this text's)."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("<?xml"):
        end = stripped.find("?>")
        if end >= 0:
            return stripped[end + 2:]
    return text
