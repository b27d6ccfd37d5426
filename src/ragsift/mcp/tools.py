"""The MCP tools, over a pool of knowledge bases (the server's ``KBPool``, or one knowledge base
for ``ragsift mcp`` over stdio). Listing and sections come from the knowledge base's own views
(``KnowledgeBase.list_documents``, ``StoredParent.to_dict``), as the HTTP routes use them.

What an agent reads: each tool's text content is made for a prompt (``search``: the cited
context once, under a one-line header), and its structured content, described by an output
schema, carries the same passages with their metadata. Every parameter is described; the
``kb`` parameter is offered only where there is more than one knowledge base to name (HTTP).

No ``from __future__ import annotations`` here: a parameter's description is made when the tools
are built (the filter's names this knowledge base's fields), so annotations are evaluated then."""
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Annotated, Any, NamedTuple, NotRequired, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, create_model, with_config
from typing_extensions import TypedDict  # pydantic takes typing.TypedDict only from Python 3.12

from ragsift import __version__
from ragsift.errors import RagsiftError
from ragsift.kb import DOCUMENT_SORTS, KnowledgeBase, wire
from ragsift.names import did_you_mean
from ragsift.store.base import BUILTIN_FIELDS
from ragsift.store.filters import COMPARISONS, LIST_OPS
from ragsift.text.tokens import count_tokens, cut_to_tokens
from ragsift.types import Passage as PassageValue
from ragsift.types import Result, located

MAX_PASSAGES = 20
MAX_PAGE = 500
#: the unit of ``search``'s ``max_tokens``: ragsift's approximate tokens (``ragsift.text.tokens.count_tokens``)
TOKEN_UNIT = ("ragsift tokens: one per Chinese character, one per word or number, one per other symbol "
              "(an LLM counts about one token per Chinese character and about 1.3 per English word)")
DEFAULT_TOKENS, MIN_TOKENS, MAX_TOKENS = 3000, 100, 100_000
MIN_CUT_TOKENS = 20  # a passage is cut to fit only when this much of its text fits

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class Pool(Protocol):
    """Where the tools find knowledge bases by name (None: the default one)."""

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase: ...


class SinglePool:
    """One knowledge base, for ``ragsift mcp --kb PATH``: its tools take no ``kb`` parameter."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase:
        if name not in (None, "", "default"):
            raise ToolError(f"no knowledge base {name!r}: this server serves one, 'default'")
        return self.kb


# ------------------------------------------------------------------ what the tools return
def _heading() -> tuple[type, Any]:
    """The MCP's own ``heading`` of a passage and of a section: its heading path as one line."""
    return str, Field(description="The heading path of the section, 'A > B' (empty when none)")


#: a passage as ``search`` shows it: the fields an agent cites by, defined once with the HTTP API's
#: (``ragsift.kb.wire.Passage``, the same descriptions), and its own ``citation`` and ``heading``
Passage = create_model(  # type: ignore[call-overload]  # pydantic's stubs: field definitions as **dict
    "Passage",
    citation=(int, Field(description="The passage's number: cite it as [n]")),
    source=wire.shown(wire.Passage, "source"),
    heading=_heading(),
    **{name: wire.shown(wire.Passage, name) for name in ("parent_id", "doc_id", "unit", "score", "similarity",
                                                         "term_match", "truncated", "location", "text")})


class SearchResult(BaseModel):
    question: str
    no_good_match: bool = Field(description="Nothing matched the question well: the passages (if any) are weak "
                                            "and should not be taken as an answer; reason says why")
    reason: str = Field(description="Why nothing matched well (empty when something did)")
    warnings: list[str] = Field(description="Why no passage was found, where that can be told: the knowledge base "
                                            "holds no documents, or the filter asks for a value no document holds "
                                            "(with the nearest values documents do hold, to try again with)")
    passages: list[Passage] = Field(  # type: ignore[valid-type]
        description="Best first; the text content is these passages as cited context")
    max_tokens: int = Field(description=f"The budget the text content was held to, in {TOKEN_UNIT}")
    tokens: int = Field(description="The text content's size in the same unit")
    dropped: int = Field(description="Passages found but left out to fit max_tokens")
    generation: int = Field(description="The knowledge base generation that answered")
    trace_id: str


#: a document as ``list_documents`` shows it: fields of the HTTP API's (``ragsift.kb.wire.Document``,
#: the same descriptions)
Document = create_model(  # type: ignore[call-overload]  # pydantic's stubs: field definitions as **dict
    "Document", **{name: wire.shown(wire.Document, name) for name in ("doc_id", "source", "title", "parents",
                                                                      "metadata")})


# not one model with the HTTP API's page (server.schemas.DocumentPage): this carries the filter fields
# beside the page (list_documents is an agent's one way to learn them; HTTP gives them at GET /v1/stats),
# that where the page is (offset, limit, which an agent gave); both pages' documents are kb.wire.Document
# (this one's with five of its fields)
class DocumentsAndFields(BaseModel):
    """A page of the documents, and the fields a search filter can name."""

    total: int = Field(description="Documents in all (those that match q, with q)")
    documents: list[Document] = Field(  # type: ignore[valid-type]
        description="This page, in the order asked (sort, order)")
    fields: dict[str, str] = Field(description="The fields a search filter can name, with their types "
                                               "(string, int, float, bool, date, list)")


#: a section as ``get_section`` shows it: fields of the HTTP API's (``ragsift.kb.wire.Section``, the
#: same descriptions) and its own ``heading``
Section = create_model(  # type: ignore[call-overload]  # pydantic's stubs: field definitions as **dict
    "Section",
    **{name: wire.shown(wire.Section, name) for name in ("parent_id", "doc_id", "source")},
    heading=_heading(),
    **{name: wire.shown(wire.Section, name) for name in ("location", "text")})


@with_config(ConfigDict(extra="forbid"))
class NewDocument(TypedDict):
    id: Annotated[str, Field(description="The document's id; a stored document with this id is replaced")]
    text: Annotated[str, Field(description="The document's text (Markdown headings make its sections)")]
    title: NotRequired[Annotated[str, Field(description="Its title")]]
    source: NotRequired[Annotated[str, Field(description="What names it (default: its title, else its id)")]]
    metadata: NotRequired[Annotated[dict[str, Any], Field(
        description="Flat filterable values: string, int, float, bool, ISO 8601 date text, list of strings")]]


class Fitted(NamedTuple):
    """``search``'s answer held to a token budget: its text content and the passages in it."""

    text: str
    passages: tuple[PassageValue, ...]  # renumbered 1..n; the last may be cut (truncated)
    dropped: int  # passages left out
    max_tokens: int


def citations(result: Result, fit: Fitted) -> dict[str, Any]:
    """The structured content of ``search``: the passages kept, numbered for citation, with their metadata."""
    out = [{"citation": p.rank, "source": p.source, "heading": " > ".join(p.heading_path), "parent_id": p.parent_id,
            "doc_id": p.doc_id, "unit": p.unit, "score": round(p.score, 6), "similarity": p.similarity,
            "term_match": None if p.term_match is None else round(p.term_match, 4), "truncated": p.truncated,
            "location": located(p.location), "text": p.text}
           for p in fit.passages]
    return {"question": result.query, "no_good_match": result.no_good_match, "reason": result.match.reason,
            "warnings": list(result.warnings), "passages": out, "max_tokens": fit.max_tokens,
            "tokens": count_tokens(fit.text), "dropped": fit.dropped,
            "generation": result.trace.generation, "trace_id": result.trace.trace_id}


def _header(result: Result, kept: Sequence[PassageValue], dropped: int, cut: bool, max_tokens: int) -> str:
    """The lines before the context: what matched (or why nothing did), the section of each passage
    for ``get_section``, and what the budget left out."""
    lines = []
    if result.no_good_match:
        lines.append(f"No good match: {result.match.reason}."
                     + (" These passages are weak: do not take them as an answer." if kept else ""))
    elif not result.passages:
        lines.append(f"No passages found for {result.query!r}.")
    lines += [f"Why: {w}" + ("" if w.endswith((".", ")")) else ".") for w in result.warnings]  # why none was found
    if kept:
        ids = ", ".join(f"[{p.rank}] {p.parent_id}" for p in kept)
        lines.append(f"{len(kept)} passage{'s' if len(kept) > 1 else ''}, cite as [n]; whole sections by "
                     f"get_section(parent_id): {ids}")
    if dropped or cut:
        lines.append(f"To fit max_tokens={max_tokens} (ragsift tokens): "
                     + ", ".join(([f"{dropped} more passage{'s' if dropped > 1 else ''} left out"] if dropped else [])
                                 + (["the last passage cut"] if cut else [])) + ".")
    return "\n".join(lines)


def _pack(result: Result, passages: Sequence[PassageValue], left: int) -> tuple[list[PassageValue], bool]:
    """The passages, renumbered, whole while they fit in ``left`` tokens as cited context; the
    first that does not is cut to what is left (when ``MIN_CUT_TOKENS`` of its text fit), and the
    rest left out. Returns them and whether the last was cut."""
    kept: list[PassageValue] = []
    for p in passages:
        q = replace(p, rank=len(kept) + 1)
        need = count_tokens(Result(result.query, (q,), result.trace).to_context())
        if need <= left:
            kept.append(q)
            left -= need
            continue
        head = need - count_tokens(q.text)  # its citation line
        if left - head >= MIN_CUT_TOKENS:
            kept.append(replace(q, text=cut_to_tokens(q.text, left - head - 1, " …"), truncated=True))
            return kept, True
        break
    return kept, False


def fit_to_tokens(result: Result, max_tokens: int) -> Fitted:
    """The text content of ``search`` at most ``max_tokens`` tokens (``ragsift.text.tokens``): the
    header, then the passages as cited context (``Result.to_context``), best first, each whole
    while it fits; the first that does not is cut to what is left (when that leaves room for some
    of its text) and the rest left out."""
    n = len(result.passages)
    kept: list[PassageValue] = []
    cut = False
    for k in range(n, 0, -1):  # the most passages that fit beside the header that lists them
        # room for the longest header the first k give (each id listed, every note)
        left = max_tokens - count_tokens(_header(result, result.passages[:k], n, True, max_tokens)) - 2
        kept, cut = _pack(result, result.passages[:k], left)
        if kept:
            break
    dropped = n - len(kept)
    body = Result(result.query, tuple(kept), result.trace).to_context()
    text = _header(result, kept, dropped, cut, max_tokens) + (f"\n\n{body}" if body else "")
    if count_tokens(text) > max_tokens:  # a budget below the header itself: the header cut
        text = cut_to_tokens(text, max_tokens)
    return Fitted(text, tuple(kept), dropped, max_tokens)


def _fields(kb: KnowledgeBase) -> dict[str, str]:
    """The fields a filter can name, with their types: the document's own, then the metadata's by name."""
    with kb.reading() as store:
        fields = store.fields()
    return {k: fields[k] for k in sorted(fields, key=lambda k: (k not in BUILTIN_FIELDS, k))}


def _call(fn: Any) -> Any:
    try:
        return fn()
    except RagsiftError as e:
        raise ToolError(f"{type(e).__name__}: {e}") from None


# ------------------------------------------------------------------ parameters, described
#: what a built-in filter field means, where its name does not say it
FIELD_NOTES = {"lang": "the language detected for each passage: zh, en or other"}


def filter_description(fields: dict[str, str] | None = None) -> str:
    """The filter language as the parser (``ragsift.store.filters``) takes it; with ``fields``, the
    knowledge base's own metadata fields and their types."""
    ops = [op for op in COMPARISONS if op != "contains"]
    builtin = ", ".join(f"{k} ({FIELD_NOTES[k]})" if k in FIELD_NOTES else k for k in BUILTIN_FIELDS)
    own = {k: t for k, t in (fields or {}).items() if k not in BUILTIN_FIELDS}
    known = (f"This knowledge base's metadata fields: {', '.join(f'{k} ({t})' for k, t in own.items())}. "
             if own else "")
    return ("Metadata filter, a JSON object; omit it to search everything. Fields: the built-in "
            f"{builtin}, and the metadata fields of the documents (list_documents lists them with their types). "
            f"{known}"
            '{"field": value} is equality; {"field": {"op": value}} compares, with op one of '
            f"{', '.join(ops)} (in and nin take a list; a leading $ is accepted: $eq, $in, $gte...); "
            f"a list field takes {', '.join(LIST_OPS)} (contains: it holds the value). Dates are ISO 8601 text "
            "and compare as dates. Keys of one object are AND-ed; and / or take a list of filters, not takes one. "
            'Examples: {"source": "manual.md"}; {"category": {"$in": ["manual", "faq"]}}; '
            '{"or": [{"year": {"gte": 2020}}, {"not": {"category": "faq"}}]}.')


KB = Annotated[str | None, Field(description="The knowledge base to use, by name; omit for the default one")]


def _without_kb(fn: Callable[..., Any], described: dict[str, Any] | None = None) -> Callable[..., Any]:
    """``fn`` as a tool without its ``kb`` parameter (one knowledge base: nothing to name), with the
    parameters in ``described`` annotated anew (their descriptions made for that knowledge base)."""
    sig = inspect.signature(fn, eval_str=True)
    hints = {**typing.get_type_hints(fn, include_extras=True), **(described or {})}

    def one(**kwargs: Any) -> Any:
        return fn(**kwargs)

    one.__name__, one.__doc__ = fn.__name__, fn.__doc__
    one.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
        p.replace(annotation=hints[p.name]) for p in sig.parameters.values() if p.name != "kb"])
    one.__annotations__ = {k: v for k, v in hints.items() if k != "kb"}
    return one


class _Server(MCPServer):
    """The SDK's server, refusing a call that names an argument its tool does not take (the SDK
    would drop it silently, and the agent would never learn that its ``filtre`` filtered nothing):
    the error names the known arguments. The tools' input schemas say so too
    (``additionalProperties: false``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arguments: dict[str, list[str]] = {}  # tool -> the arguments it takes, in order
        # over HTTP, whether a request's key may write; the tools that write, listed only to keys that may
        self.may_write: Callable[[Any], bool] | None = None
        self.writing: set[str] = set()

    async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
        """The tools this caller's key may call: a read key is not offered ``add_documents``
        (calling it still answers that it needs a write key)."""
        result = await super()._handle_list_tools(ctx, params)
        if self.may_write is not None and self.writing and not self.may_write(getattr(ctx, "request", None)):
            result.tools = [t for t in result.tools if t.name not in self.writing]
        return result

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super().add_tool(fn, *args, **kwargs)
        hints = typing.get_type_hints(fn)
        self.arguments[kwargs.get("name") or fn.__name__] = [
            name for name in inspect.signature(fn).parameters if hints.get(name) is not Context]

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        for t in tools:
            if t.name in self.arguments:
                t.input_schema = {**t.input_schema, "additionalProperties": False}
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = self.arguments.get(name)
        if known is not None:
            _refuse_unknown("argument", f"for {name}: it takes", arguments, known)
            documents = arguments.get("documents") if "documents" in known else None
            for i, doc in enumerate(documents if isinstance(documents, list) else []):
                if isinstance(doc, dict):
                    _refuse_unknown("key", f"in documents[{i}]: a document takes", doc,
                                    list(NewDocument.__annotations__))
        return await super().call_tool(name, arguments, context)


def _refuse_unknown(what: str, where: str, given: dict[str, Any], known: list[str]) -> None:
    unknown = [k for k in given if k not in known]
    if unknown:
        shown = ", ".join(repr(k if len(k) <= 50 else k[:50] + "…") for k in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        hints = [h for h in (did_you_mean(k, known) for k in unknown[:5]) if h]
        raise ToolError(f"unknown {what}{'s' if len(unknown) > 1 else ''} {shown}{more} {where} "
                        f"{', '.join(known) or 'no arguments'}" + (f"; {' '.join(hints)}" if hints else ""))


class Tools:
    """The tools over a pool of knowledge bases, one method each (``TOOLS`` gives each its title,
    description and hints). ``may_write``: over HTTP, whether the request's key may write (the
    server's own check); none over stdio, where the user is the operator. ``fields``: one
    knowledge base's metadata fields, which ``search``'s filter parameter then names."""

    def __init__(self, pool: Pool, may_write: Callable[[Any], bool] | None = None,
                 fields: dict[str, str] | None = None) -> None:
        self.pool, self.may_write, self.fields = pool, may_write, fields

    def search(
        self,
        question: Annotated[str, Field(description="The question, in Chinese or English (a sentence or keywords)")],
        filter: Annotated[dict[str, Any] | None, Field(description=filter_description())] = None,
        passages: Annotated[int, Field(ge=1, le=MAX_PASSAGES,
                                       description="How many passages to return, best first")] = 4,
        max_tokens: Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS, description=(
            f"The most the text result may hold, in {TOKEN_UNIT}; passages that do not fit are left out "
            "(the last one kept may be cut) and the text says so"))] = DEFAULT_TOKENS,
        kb: KB = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        result = _call(lambda: self.pool.get(kb).query(question, filter=filter, trace=False, max_passages=passages,
                                                       token_budget=max_tokens))
        fit = fit_to_tokens(result, max_tokens)
        return CallToolResult(content=[TextContent(type="text", text=fit.text)],
                              structured_content=citations(result, fit))

    def list_documents(
        self,
        offset: Annotated[int, Field(ge=0, description="Documents to skip (for the next page)")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Documents to return")] = 50,
        q: Annotated[str | None, Field(max_length=200, description=(
            "Keep documents whose source or title holds every word of this (case-insensitive; Chinese as "
            "written, e.g. '手册' or 'manual')"))] = None,
        sort: Annotated[str, Field(description=f"Sort by one of: {', '.join(DOCUMENT_SORTS)} "
                                               "(generation: the commit that wrote it)")] = "source",
        order: Annotated[str, Field(pattern="^(asc|desc)$", description="asc or desc (generation desc: newest "
                                                                           "first)")] = "asc",
        kb: KB = None,
    ) -> Annotated[CallToolResult, DocumentsAndFields]:
        base = _call(lambda: self.pool.get(kb))
        total, page = _call(lambda: base.list_documents(offset, limit, q=q, sort=sort, order=order))
        out = DocumentsAndFields(total=total, fields=_call(lambda: _fields(base)), documents=[
            Document(doc_id=d.doc_id, source=d.source, title=d.title, parents=d.parents, metadata=d.metadata)
            for d in page])
        lines = [f"{total} documents; filter fields: {', '.join(f'{k} ({t})' for k, t in out.fields.items())}"]
        lines += [f"- {d.doc_id}  {d.source}  {d.title!r}  {d.parents} sections"
                  + (f"  {d.metadata}" if d.metadata else "") for d in page]
        return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))],
                              structured_content=out.model_dump(mode="json"))

    def get_section(
        self,
        parent_id: Annotated[str, Field(description="A passage's parent_id (from search)")],
        kb: KB = None,
    ) -> Annotated[CallToolResult, Section]:
        sp = _call(lambda: self.pool.get(kb).sections([parent_id]).get(parent_id))
        if sp is None:
            raise ToolError(f"no section {parent_id!r}")
        d = sp.to_dict()
        heading = " > ".join(d["heading_path"])
        out = Section(parent_id=d["parent_id"], doc_id=d["doc_id"], source=d["source"], heading=heading,
                      location=d["location"], text=d["text"])
        head = d["source"] + (f" › {heading}" if heading else "")
        return CallToolResult(content=[TextContent(type="text", text=f"{head}\n{d['text']}")],
                              structured_content=out.model_dump(mode="json"))

    def add_documents(
        self,
        documents: Annotated[list[NewDocument], Field(min_length=1, description="The documents to add")],
        ctx: Context,
        kb: KB = None,
    ) -> dict[str, Any]:
        if self.may_write is not None and not self.may_write(ctx.request_context.request):
            raise ToolError("this key may read only: adding documents needs a write key")
        report = _call(lambda: self.pool.get(kb, create=True).add_documents(documents))
        return report.to_dict()

    def tool(self, name: str, single: bool) -> Callable[..., Any]:
        """The method ``name`` as a tool: over one knowledge base without its ``kb`` parameter, and
        its filter described with that knowledge base's fields."""
        fn = getattr(self, name)
        if not single:
            return fn
        described = {"filter": Annotated[dict[str, Any] | None, Field(description=filter_description(self.fields))]}
        return _without_kb(fn, described)


class ToolSpec(NamedTuple):
    """A tool as a client lists it: its method on ``Tools``, title, description and hints; ``writes``:
    offered only with ingest allowed, and listed only to keys that may write."""

    name: str
    title: str
    description: str
    annotations: ToolAnnotations
    writes: bool = False


TOOLS = (
    ToolSpec("search", "Search the knowledge base",
             "Search the knowledge base (Chinese or English) for passages that answer a question. The text result "
             "is the passages as context ready for a prompt, each headed '[n] source › heading'; cite them by [n]. "
             f"It holds at most max_tokens ({TOKEN_UNIT}). When nothing matches the question well it begins "
             "'No good match:' with the reason, and any passages after it are weak; when nothing was found and it "
             "can tell why (an empty knowledge base, a filter value no document holds) a line 'Why: ...' says so, "
             "with the nearest values to try instead. The structured result has no_good_match and its reason, "
             "warnings, and each passage's citation, source, heading, parent_id, doc_id, unit, "
             "score, similarity, term_match, location and text.", READ_ONLY),
    ToolSpec("list_documents", "List the documents",
             "List the documents in the knowledge base (id, source, title, sections, metadata), a page at a time, "
             "and the fields a search filter can name.", READ_ONLY),
    ToolSpec("get_section", "Get a whole section",
             "The whole section (parent) a passage was cut from, by the passage's parent_id.", READ_ONLY),
    ToolSpec("add_documents", "Add documents",
             "Add documents ({id, text, title?, source?, metadata?}) to the knowledge base. A document whose id "
             "is stored already replaces it (the same documents twice leave the same knowledge base).",
             ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False),
             writes=True),
)


def build_mcp(pool: Pool, *, allow_ingest: bool = False,
              may_write: Callable[[Any], bool] | None = None) -> MCPServer:
    """The MCP server over a pool of knowledge bases: each of ``TOOLS`` (those that write with
    ``allow_ingest`` only). Over one knowledge base (``SinglePool``) the tools take no ``kb`` parameter."""
    server = _Server("ragsift", version=__version__,
                     instructions="Search the knowledge base with `search` and cite passages by their [n]; "
                                  "`get_section` returns a passage's whole section; `list_documents` shows the "
                                  "documents and the fields a filter can name.")
    single = isinstance(pool, SinglePool)
    tools = Tools(pool, may_write, _call(lambda: _fields(pool.kb)) if isinstance(pool, SinglePool) else None)
    for spec in (t for t in TOOLS if allow_ingest or not t.writes):
        server.add_tool(tools.tool(spec.name, single), title=spec.title, description=spec.description,
                        annotations=spec.annotations)
    if allow_ingest:
        server.may_write, server.writing = may_write, {t.name for t in TOOLS if t.writes}
    return server


def serve_stdio(kb: KnowledgeBase, allow_ingest: bool = False) -> None:
    """Run the MCP server on stdin/stdout until the client closes it."""
    from ragsift.process import for_serving

    for_serving()  # a long-running process (ragsift.process)
    build_mcp(SinglePool(kb), allow_ingest=allow_ingest).run("stdio")
