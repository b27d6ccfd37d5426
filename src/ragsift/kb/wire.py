"""What the faces send, one definition each: the JSON form of the knowledge base's views as
pydantic models. ``Passage`` (with its ``Span``) is ``ragsift.types.Passage`` (its ``to_dict``):
the HTTP API answers ``/v1/query`` with it (its OpenAPI schema); the MCP ``search`` tool shows the
fields an agent cites by beside its own two, ``citation`` and ``heading``. ``Section`` is a whole
section (``StoredParent.to_dict``): ``GET /v1/sections/{parent_id}`` answers with it; MCP's
``get_section`` shows its fields beside its own ``heading``. ``Document`` is a stored document
(``StoredDocument``): the HTTP API lists and shows documents with it; MCP's ``list_documents``
shows some of its fields. A face takes a field it shows with ``shown``: the same type, the same
description.

Here, below both faces (server/ and mcp/ import the knowledge base; neither imports the other's
models), as the knowledge base's other views are."""
from __future__ import annotations

from typing import Any, get_type_hints

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

from ragsift.store.base import StoredDocument

# what a field means wherever it is shown (a passage, a section, a document)
DOC_ID = "The document's id."
SOURCE = "The document's source (file name or given source)."
LOCATION = ('Where it is in its source: {"page": 3}, {"pages": [3, 5]}, {"slide": 2}; null when the source '
            'has none.')


class Span(BaseModel):
    """A span of a passage's text (``ragsift.types.Span``): what a channel matched, or a sentence."""

    child_id: str
    start: int
    end: int
    channels: list[str]


class Passage(BaseModel):
    """A passage of an answer, best first (``ragsift.types.Passage``)."""

    rank: int
    parent_id: str = Field(description="The section the passage is from (its id): the section whole is "
                                       "GET /v1/sections/{parent_id}, or MCP's get_section.")
    doc_id: str = Field(description=DOC_ID)
    source: str = Field(description=SOURCE)
    title: str
    heading_path: list[str]
    score: float = Field(description="Fused score: ranks the passages of this answer (the first of a weighted "
                                     "fusion always scores 1); never compare it across questions.")
    similarity: float | None = Field(None, description="Cosine similarity (-1 to 1) of the question and the "
                                                       "passage's best entry, from the dense channel; null when "
                                                       "that channel did not find it. Comparable across questions.")
    term_match: float | None = Field(None, description="Share (0 to 1) of the question's search terms found in "
                                                       "the passage, its title or heading path; null for a "
                                                       "question without search terms.")
    scores: dict[str, float] = Field({}, description="Per channel that found it, the channel's own score of "
                                                     "its best entry: dense the cosine similarity, bm25 the BM25 "
                                                     "score (comparable within one knowledge base only).")
    tokens: int
    unit: str = Field(description="What the passage is: parent (a section), child, window or document.")
    truncated: bool = Field(description="The text was cut to the token budget.")
    matched: list[Span]
    sentences: list[Span] = Field([], description="Inside the matched spans: the sentences that best match "
                                                  "the question (a few a span, by the question's words).")
    metadata: dict[str, Any]
    provenance: list[dict[str, Any]]
    location: dict[str, Any] | None = Field(None, description=LOCATION)
    text: str = Field(description="The passage's text.")


class Section(BaseModel):
    """A whole section, what passages are cut from (``ragsift.store.base.StoredParent.to_dict``)."""

    parent_id: str = Field(description="The section's id (a passage's parent_id).")
    doc_id: str = Field(description=DOC_ID)
    source: str = Field(description=SOURCE)
    title: str
    heading_path: list[str]
    location: dict[str, Any] | None = Field(None, description=LOCATION)
    text: str = Field(description="The section's text.")
    tokens: int


#: what a stored document's fields mean, where the name does not say it all
ABOUT_DOCUMENT = {
    "doc_id": DOC_ID,
    "source": SOURCE,
    "parents": "Its sections.",
    "metadata": "Its metadata: the fields a search filter can name, and values kept with it but not filterable.",
}
#: a stored document (``ragsift.store.base.StoredDocument``): its fields one to one, so the two never drift
Document = create_model(  # type: ignore[call-overload]  # pydantic's stubs: field definitions as **dict
    "Document", __doc__="A stored document (``ragsift.store.base.StoredDocument``).",
    **{name: (typ, Field(description=ABOUT_DOCUMENT.get(name)))
       for name, typ in get_type_hints(StoredDocument).items()})


def shown(model: type[BaseModel], name: str) -> tuple[Any, FieldInfo]:
    """A field of ``model`` (``Passage``, ``Section``, ``Document``) for a face's model of its own
    (``pydantic.create_model``): its type and description, required (a face that shows it always
    sends it)."""
    f = model.model_fields[name]
    return f.annotation, Field(description=f.description)
