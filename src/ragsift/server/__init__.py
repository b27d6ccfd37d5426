"""The server face: an HTTP API (``app``), the web page (``web/``) and the MCP tools mounted
beside them. ``ragsift serve`` runs it with uvicorn."""
from ragsift.server.app import create_app
from ragsift.server.config import Limits, ServerConfig, load_keys

__all__ = ["create_app", "ServerConfig", "Limits", "load_keys"]
