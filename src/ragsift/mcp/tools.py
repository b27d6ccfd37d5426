"""The MCP tools, over a pool of knowledge bases (the server's ``KBPool``, or one knowledge base
for ``ragsift mcp`` over stdio). Listing and sections come from the knowledge base's own views
(``KnowledgeBase.list_documents``, ``StoredParent.to_dict``), as the HTTP routes use them."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ragsift import __version__
from ragsift.errors import RagsiftError
from ragsift.kb import KnowledgeBase
from ragsift.types import located

MAX_PASSAGES = 20
MAX_PAGE = 500


class Pool(Protocol):
    """Where the tools find knowledge bases by name (None: the default one)."""

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase: ...


class SinglePool:
    """One knowledge base, for ``ragsift mcp --kb PATH``."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def get(self, name: str | None = None, create: bool = False) -> KnowledgeBase:
        if name not in (None, "", "default"):
            raise ToolError(f"no knowledge base {name!r}: this server serves one, 'default'")
        return self.kb


def citations(result: Any) -> dict[str, Any]:
    """Passages numbered for citation, and a context text that cites them: "[1] source › heading"."""
    out = [{"citation": p.rank, "source": p.source, "heading": " > ".join(p.heading_path), "parent_id": p.parent_id,
            "doc_id": p.doc_id, "unit": p.unit, "score": round(p.score, 6), "truncated": p.truncated,
            "location": located(p.location), "text": p.text}
           for p in result.passages]
    return {"question": result.query, "passages": out, "context": result.to_context(),
            "generation": result.trace.generation, "trace_id": result.trace.trace_id}


def _call(fn: Any) -> Any:
    try:
        return fn()
    except RagsiftError as e:
        raise ToolError(f"{type(e).__name__}: {e}") from None


def build_mcp(pool: Pool, *, allow_ingest: bool = False,
              may_write: Callable[[Any], bool] | None = None) -> MCPServer:
    """The MCP server over a pool of knowledge bases. ``may_write``: over HTTP, whether the
    request's key may write (the server's own check); none over stdio, where the user is the operator."""
    server = MCPServer("ragsift", version=__version__,
                       instructions="Search the knowledge base with `search` and cite passages by their [n]; "
                                    "`get_section` returns a passage's whole section.")

    @server.tool(description="Search the knowledge base (Chinese or English). Returns ranked passages with "
                             "numbered citations and a context text that cites them.")
    def search(question: str, filter: dict[str, Any] | None = None, passages: int = 4,
               kb: str | None = None) -> dict[str, Any]:
        if not 1 <= passages <= MAX_PASSAGES:
            raise ToolError(f"passages must be between 1 and {MAX_PASSAGES}")
        return _call(lambda: citations(pool.get(kb).query(question, filter=filter, max_passages=passages)))

    @server.tool(description="List the documents in the knowledge base (id, source, title, counts).")
    def list_documents(offset: int = 0, limit: int = 50, kb: str | None = None) -> dict[str, Any]:
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise ToolError(f"offset must be >= 0 and limit between 1 and {MAX_PAGE}")
        total, page = _call(lambda: pool.get(kb).list_documents(offset, limit))
        return {"total": total, "documents": [
            {"doc_id": d.doc_id, "source": d.source, "title": d.title, "parents": d.parents,
             "metadata": d.metadata} for d in page]}

    @server.tool(description="The whole section (parent) a passage was cut from, by its parent_id.")
    def get_section(parent_id: str, kb: str | None = None) -> dict[str, Any]:
        sp = _call(lambda: pool.get(kb).sections([parent_id]).get(parent_id))
        if sp is None:
            raise ToolError(f"no section {parent_id!r}")
        d = sp.to_dict()
        return {"parent_id": d["parent_id"], "doc_id": d["doc_id"], "source": d["source"],
                "heading": " > ".join(d["heading_path"]), "location": d["location"], "text": d["text"]}

    if allow_ingest:
        @server.tool(description="Add documents ({id, text, title?, metadata?}) to the knowledge base; a "
                                 "document with a stored id replaces it.")
        def add_documents(documents: list[dict[str, Any]], ctx: Context, kb: str | None = None) -> dict[str, Any]:
            if may_write is not None and not may_write(ctx.request_context.request):
                raise ToolError("this key may read only: adding documents needs a write key")
            report = _call(lambda: pool.get(kb, create=True).add_documents(documents, source="mcp"))
            return report.to_dict()

    return server


def serve_stdio(kb: KnowledgeBase, allow_ingest: bool = False) -> None:
    """Run the MCP server on stdin/stdout until the client closes it."""
    build_mcp(SinglePool(kb), allow_ingest=allow_ingest).run("stdio")
