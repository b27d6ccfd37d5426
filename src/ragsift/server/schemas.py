"""Request and response models of the HTTP API: what ``/openapi.json`` documents. Query
settings come from ``Settings.query_model()`` (what a caller may change per query), so the body
schema and the settings never drift apart; a passage is ``ragsift.kb.wire.Passage``, a section
``ragsift.kb.wire.Section`` and a document ``ragsift.kb.wire.Document``, the models the MCP tools
show too."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from ragsift.config import Settings
from ragsift.ingest.loaders.base import clean_metadata
from ragsift.ingest.pipeline import RESERVED_PATH
from ragsift.kb.wire import Document, Passage, Section
from ragsift.types import PATH_KEY


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


QuerySettingsBody = Settings.query_model()


class QueryRequest(QuerySettingsBody):  # type: ignore[misc, valid-type]
    """A question, an optional metadata filter, and query settings (any of those a caller may
    choose: how to search; the knowledge base's own are used for the rest)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={"examples": [
        {"question": "恢复出厂设置要按哪些键？", "max_passages": 2},
        {"question": "How do I reset the hub?", "filter": {"source": "smarthub_manual_en.md"}, "trace": True}]})
    question: str = Field(description="The question, in any language.")
    filter: dict[str, Any] | None = Field(None, description="Metadata filter, e.g. {\"source\": \"guide.md\"} or "
                                                            "{\"year\": {\"gte\": 2020}}.")
    trace: bool = Field(False, description="Return the trace (channels, fusion, timings) with the passages.")

    def overrides(self) -> dict[str, Any]:
        """The query settings this request sets."""
        return self.model_dump(exclude_unset=True, exclude={"question", "filter", "trace"})


class BatchRequest(_Body):
    queries: list[QueryRequest] = Field(description="Queries, answered in order.")


def _no_control(v: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in v):
        raise ValueError("must not contain control characters (NUL, newlines, ...)")
    return v


class DocumentIn(_Body):
    id: str = Field(min_length=1, max_length=512, description="The document's id; a stored id is replaced.")
    text: str
    title: str = ""
    source: str = Field("", max_length=4096)
    metadata: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="What KnowledgeBase.add_documents takes: filterable values are strings, numbers, booleans, "
                    "lists of strings (filtered with contains / in / nin) and dates as ISO 8601 text "
                    "(\"2024-05-01\"); other JSON values (objects, lists of numbers) are kept with the document, "
                    "not filterable. Nested at most 16 levels. The key 'path' is ragsift's own (where a file "
                    "is on the server) and is refused.",
        examples=[{"tags": ["手册", "manual"], "published": "2024-05-01", "year": 2024}])

    @field_validator("id", "source")
    @classmethod
    def _plain(cls, v: str) -> str:
        return _no_control(v)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        v = clean_metadata(v)  # the check every document gets (a ValueError naming the key: 422)
        if PATH_KEY in v:  # ragsift's own (add_documents skips such a document with the same reason)
            raise ValueError(RESERVED_PATH)
        return v


class DocumentsRequest(_Body):
    documents: list[DocumentIn]


# ------------------------------------------------------------------ request examples (Swagger's drop-down)
QUERY_EXAMPLES: dict[str, Any] = {
    "zh": {"summary": "中文问题", "value": {"question": "恢复出厂设置要按哪些键？", "max_passages": 2}},
    "en": {"summary": "An English question, filtered, with the trace",
           "value": {"question": "How do I reset the hub?", "filter": {"source": "smarthub_manual_en.md"},
                     "trace": True}},
    "list": {"summary": "Filter on a list field and a date",
             "value": {"question": "年假有几天？", "filter": {"tags": {"contains": "hr"},
                                                              "published": {"gte": "2024-01-01"}}}},
}
BATCH_EXAMPLES: dict[str, Any] = {
    "zh-en": {"summary": "中文 and English", "value": {"queries": [
        {"question": "绿茶怎么保存？", "max_passages": 1}, {"question": "How do I reset the hub?"}]}},
}
DOCUMENTS_EXAMPLES: dict[str, Any] = {
    "zh-en": {"summary": "A Chinese and an English document with metadata", "value": {"documents": [
        {"id": "policy-zh", "title": "年假制度", "text": "# 年假\n\n员工每年有十五天带薪年假，需提前两周申请。",
         "metadata": {"team": "hr", "tags": ["hr", "假期"], "published": "2024-05-01"}},
        {"id": "policy-en", "title": "Leave policy", "text": "Employees get fifteen days of paid leave a year.",
         "source": "hr/leave.md", "metadata": {"team": "hr", "tags": ["hr", "leave"], "year": 2024}}]}},
}


# ------------------------------------------------------------------ responses
class MatchOut(BaseModel):
    no_good_match: bool
    reason: str = Field(description="Why nothing matched well (empty when something did).")
    similarity: float | None = Field(description="The best passage similarity (null when unknown).")
    term_match: float | None = Field(description="The best passage term match (null when unknown).")
    standout: float | None = Field(description="How far the dense channel's best similarity stands out of the mean "
                                               "of its next 49 (null when unknown or fewer than 10).")
    cross_language: bool = Field(False, description="The dense channel's best is in another language than the "
                                                    "question: then its standout counts.")
    min_similarity: float | None = Field(description="The threshold it was judged by (setting min_similarity).")
    min_term_match: float | None = Field(description="The threshold it was judged by (setting min_term_match).")
    min_standout: float | None = Field(description="The threshold it was judged by (setting min_standout).")


class QueryResponse(BaseModel):
    query: str
    trace_id: str
    no_good_match: bool = Field(False, description="Nothing matched the question well: the question has nothing "
                                                   "to search (only emoji, punctuation: no passages then), or "
                                                   "no passage reaches min_similarity nor min_term_match and "
                                                   "the best does not stand out by min_standout. "
                                                   "match.reason says which.")
    match: MatchOut | None = Field(None, description="How well the passages match, and why not.")
    passages: list[Passage]
    warnings: list[str] = Field(default_factory=list, description=(
        "Why no passage was found, where that can be told: the knowledge base holds no documents, or "
        "the filter asks for a value no document holds ('no document has source \"guide.md\" (did you mean "
        "\"docs/guide.md\"?)')."))
    generation: int = Field(description="The committed generation the answer was read from.")
    timings_ms: dict[str, float]
    trace: dict[str, Any] | None = Field(None, description="With trace: true.")


class BatchResponse(BaseModel):
    results: list[QueryResponse]


# not one model with MCP's list_documents (mcp.tools.DocumentsAndFields): this carries where the page is
# (offset, limit), that the filter fields beside the page (which HTTP gives at GET /v1/stats); both
# pages' documents are ragsift.kb.wire.Document (MCP's with five of its fields)
class DocumentPage(BaseModel):
    """A page of the documents, where it is in the list, and how many there are in all."""

    total: int = Field(description="Documents in all (those that match q, with q).")
    offset: int
    limit: int
    documents: list[Document]  # type: ignore[valid-type]


class DocumentDetail(Document):  # type: ignore[misc, valid-type]
    sections: list[Section]


class Progress(BaseModel):
    done: int = Field(description="Chunks embedded so far.")
    total: int | None = Field(description="Chunks to embed (null while not known: a checkpointed ingest streams).")
    commits: int = Field(0, description="Commits of this job done so far: a checkpointed ingest commits in parts, "
                                        "each kept if the server stops later.")


class JobOut(BaseModel):
    id: str
    kb: str
    kind: str = Field(description="files, documents, delete or sync")
    items: int
    state: str = Field(description="queued, running, done or failed")
    phase: str
    progress: Progress
    created_at: float
    started_at: float | None
    finished_at: float | None
    report: dict[str, Any] | None = Field(description="An ingest's report, or a delete's deleted ids and generation.")
    error: str | None
    committed: str | None = Field(None, description=(
        "Set only when the server stopped before the job ended (it is then failed, and its error says so): what "
        "of it the knowledge base holds. none; part (the checkpoints it committed: send it again to resume); "
        "all (its commit landed, only its report was lost); unknown (it stopped during a commit)."))


class JobList(BaseModel):
    jobs: list[JobOut]


class KBList(BaseModel):
    default: str
    kbs: list[str]


class Health(BaseModel):
    status: str


class Ready(BaseModel):
    status: str
    default_kb: str


class StatsOut(BaseModel):
    """What ``KnowledgeBase.stats`` says; a store adds its own details (LanceDB: disk_bytes,
    kept_generations; Milvus: uri, collections, index). Where the knowledge base is on the server
    (its directory, a Milvus Lite file) is the operator's and not shown."""

    model_config = ConfigDict(extra="allow")
    backend: str = Field(description="lancedb or milvus")
    generation: int
    documents: int
    parents: int
    children: int
    dim: int | None = Field(description="The dense vectors' dimension (None before the first ingest).")
    fields: dict[str, str] = Field(description="Filterable fields and their types (string, int, float, bool, date, "
                                               "list).")
    committed_at: float | None = Field(None, description="When the generation was committed (Unix time).")
    settings: dict[str, Any]
    analyzer: dict[str, Any]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")  # what a later version adds is passed on, not cut


class OutlineItem(_Open):
    level: int
    heading: str
    parent_id: str


class ViewEntry(_Open):
    child_id: str
    kind: str = Field(description="chunk, or another entry of the small index (summary, question, ...)")
    start: int
    end: int
    tokens: int


class ViewParent(_Open):
    parent_id: str
    heading_path: list[str]
    location: dict[str, Any] | None
    synthetic: bool
    tokens: int
    tables: int
    text: str
    entries: list[ViewEntry]


class ScannedPage(_Open):
    page: int
    state: str = Field(description='"ocr" (read by OCR), "rotated" (found turned, read upright), "empty" (read '
                                   'by OCR, no text found) or "ocr_missing" (left out: OCR is not installed).')
    rotated: int = Field(description="Degrees counterclockwise the page stood turned (0, 90, 180, 270).")


class DocumentView(_Open):
    """How a document was read (``KnowledgeBase.view``): what ``ragsift show`` prints."""

    document: Document  # type: ignore[valid-type]
    outline: list[OutlineItem]
    parents: list[ViewParent]
    pages: int | None = Field(description="Pages (or slides) of its source, where it has them.")
    ocr_pages: list[int]
    ocr_missing: list[int]
    scanned_pages: list[ScannedPage] = Field(
        default_factory=list, description="What became of each page that had no text to take (a scan, an image).")


class SettingsOut(BaseModel):
    settings: dict[str, Any]
    channels: list[str] = Field(description="The channels a query may run on this knowledge base.")
    units: list[str] = Field(default_factory=list, description="The units a query may return (its unit setting).")
    unavailable: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="What a query may not choose on this knowledge base and why, by setting and value "
                    "(channels by name; rewrite as 'true'): what needs a language model when none is configured, "
                    "the engine's fusion on a store without one, entries the knowledge base was made without.")
    query_schema: dict[str, Any] = Field(description="The settings a query may change on this knowledge base "
                                                     "(JSON Schema; values in 'unavailable' left out).")
    operator_settings: list[str] = Field(description="Settings only the operator sets (not per query).")


