"""ragsift as an MCP server, for agents: ``ragsift mcp`` over stdio, and the same tools mounted
by ``ragsift serve`` at /mcp (streamable HTTP), built with the official MCP Python SDK.

Tools (``tools``):
- ``search``: a question (and a filter) -> the cited context as text ("[n] source › heading",
  each passage once), and the passages with their metadata as structured content;
- ``list_documents``: what the knowledge base holds, and the fields a filter can name;
- ``get_section``: the whole section a passage was cut from;
- ``add_documents``: only when the operator enables it (``--allow-ingest``); over HTTP only
  with a key that may write.
"""
from ragsift.mcp.tools import MAX_PASSAGES, Pool, SinglePool, build_mcp, citations, serve_stdio

__all__ = ["MAX_PASSAGES", "Pool", "SinglePool", "build_mcp", "citations", "serve_stdio"]
