"""The HTTP face: a FastAPI application over one or several knowledge bases.

    /healthz  /readyz  /metrics                       liveness, readiness, Prometheus text
    /v1/kbs                                           the knowledge bases served
    /v1/query  /v1/query/batch                        passages (and the trace when asked)
    /v1/documents (GET list, POST JSON ingest)  /v1/documents/{id} (GET, DELETE)
    /v1/files (POST multipart ingest)  /v1/jobs  /v1/jobs/{id}  /v1/jobs/{id}/events (SSE)
    /v1/sections/{parent_id}  /v1/stats  /v1/settings
    /v1/kbs/{name}/...                                the same for a named knowledge base
    /  /static/...                                    the web page
    /docs  /docs/assets/...  /openapi.json            the API docs (Swagger UI from the package)
    /mcp                                              the MCP server (streamable HTTP)

The parts: ``config`` (keys, limits), ``service`` (what requests share), ``middleware`` (keys,
roles, rates, sizes, metrics), ``deps`` (what routes depend on), ``routes/`` (one module per
resource), ``schemas`` (request and response models), ``errors`` (problem responses), ``jobs``
(the writer queue), ``pool``, ``uploads``, ``metrics``, ``ratelimit``.
"""
from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path

import anyio
from fastapi import Depends, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from ragsift import __version__
from ragsift.process import for_serving
from ragsift.server.apidocs import install as install_docs
from ragsift.server.config import WRITE, ServerConfig
from ragsift.server.deps import kb_path_param
from ragsift.server.errors import install as install_errors
from ragsift.server.middleware import Guard
from ragsift.server.routes import KB_ROUTERS, health
from ragsift.server.service import Server

QUERY_THREADS = 16  # queries answered at once (each also runs its channels on a shared pool)


def create_app(cfg: ServerConfig) -> FastAPI:
    """The application for a configuration (``ragsift serve`` runs it with uvicorn)."""
    for_serving()  # a server runs for months: native memory that stays put, no spinning BLAS threads (ragsift.process)
    server = Server(cfg)
    mcp_app, mcp_server = None, None
    if cfg.mcp:
        from ragsift.mcp import build_mcp

        mcp_server = build_mcp(server.pool, allow_ingest=cfg.mcp_ingest,
                               may_write=lambda request: request is not None
                               and request.scope.get("state", {}).get("role") == WRITE)
        mcp_app = mcp_server.streamable_http_app(streamable_http_path="/", stateless_http=True, json_response=True,
                                                 host=cfg.host)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        server.query_threads = anyio.CapacityLimiter(QUERY_THREADS)
        await anyio.to_thread.run_sync(server.start)
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            yield
        server.stop()

    app = FastAPI(title="ragsift", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Retrieval for RAG: ranked, context-complete passages with a trace of how each was "
                              "found. Send `Authorization: Bearer <key>` when the server has keys.")
    app.state.server = server
    install_errors(app)
    install_docs(app)  # /openapi.json with the key each route needs; /docs from the package (works offline)
    app.include_router(health.router)
    for router in KB_ROUTERS:
        app.include_router(router, prefix="/v1")
        app.include_router(router, prefix="/v1/kbs/{kb_name}", dependencies=[Depends(kb_path_param)])

    web = Path(str(resources.files("ragsift.server") / "web"))
    app.mount("/static", StaticFiles(directory=web), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(web / "index.html", media_type="text/html")

    if mcp_app is not None:
        app.mount("/mcp", mcp_app)
    app.add_middleware(Guard, cfg=cfg, metrics=server.metrics)
    return app
