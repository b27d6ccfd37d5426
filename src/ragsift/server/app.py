"""The HTTP face: a FastAPI application over one or several knowledge bases.

    /healthz  /readyz  /metrics                       liveness, readiness, Prometheus text
    /v1/kbs                                           the knowledge bases served
    /v1/query  /v1/query/batch                        passages (and the trace when asked)
    /v1/documents (GET list, POST JSON ingest)  /v1/documents/{id} (GET, DELETE)
    /v1/files (POST multipart ingest)  /v1/jobs  /v1/jobs/{id}  /v1/jobs/{id}/events (SSE)
    /v1/sections/{parent_id}  /v1/stats  /v1/settings
    /v1/kbs/{name}/...                                the same for a named knowledge base
    /  /static/...                                    the web page;  /docs  /openapi.json
    /mcp                                              the MCP server (streamable HTTP)

Errors are problem details (RFC 9457, ``application/problem+json``): a user's mistake is a
4xx naming what was wrong, never a 500. See ``ragsift.server.config`` for keys and limits.
"""
from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import anyio
from fastapi import APIRouter, Depends, FastAPI, File, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.exceptions import HTTPException

from ragsift import __version__
from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import (ConfigError, FilterError, ModelError, QueryError, RagsiftError, RetrievalError,
                            StoreError)
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.channels import CHANNELS
from ragsift.server.config import WRITE, ServerConfig
from ragsift.server.jobs import JobQueue
from ragsift.server.metrics import Metrics
from ragsift.server.pool import KBPool, UnknownKB
from ragsift.server.uploads import UploadError, save_uploads

PROBLEM = "application/problem+json"
OPEN_PATHS = ("/healthz", "/readyz", "/", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/favicon.ico")


# ------------------------------------------------------------------ request models
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


QuerySettingsBody = Settings.query_model()


class QueryRequest(QuerySettingsBody):  # type: ignore[misc, valid-type]
    """A question, an optional metadata filter, and query settings (any of them; the knowledge
    base's own are used for the rest)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    question: str = Field(description="The question, in any language.")
    filter: dict[str, Any] | None = Field(None, description="Metadata filter, e.g. {\"source\": \"guide.md\"}.")
    trace: bool = Field(False, description="Return the trace (channels, fusion, timings) with the passages.")


class BatchRequest(_Body):
    queries: list[QueryRequest] = Field(description="Queries, answered in order.")


class DocumentIn(_Body):
    id: str = Field(min_length=1, max_length=512)
    text: str
    title: str = ""
    source: str = ""
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)


class DocumentsRequest(_Body):
    documents: list[DocumentIn]


# ------------------------------------------------------------------ errors
def problem(status: int, title: str, detail: str = "", **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM)


ERROR_STATUS: list[tuple[type[Exception], int, str]] = [
    (UnknownKB, 404, "Unknown knowledge base"),
    (FilterError, 400, "Bad filter"),
    (QueryError, 400, "Bad query"),
    (ConfigError, 400, "Bad settings"),
    (UploadError, 400, "Bad upload"),
    (StoreError, 409, "Store unavailable"),
    (ModelError, 503, "Model unavailable"),
    (RetrievalError, 503, "Retrieval failed"),
    (RagsiftError, 400, "Bad request"),
]


def _ragsift_error(request: Request, exc: RagsiftError) -> JSONResponse:
    for cls, status, title in ERROR_STATUS:
        if isinstance(exc, cls):
            return problem(status, title, str(exc))
    return problem(400, "Bad request", str(exc))  # pragma: no cover - RagsiftError is in the table


def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [{"loc": [str(x) for x in e.get("loc", ())], "msg": e.get("msg", "")} for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    return problem(422, "Invalid request", f"{'.'.join(first['loc'][1:]) or 'body'}: {first['msg']}", errors=errors)


def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    titles = {401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
              413: "Too large", 415: "Unsupported media type"}
    resp = problem(exc.status_code, titles.get(exc.status_code, "Error"), str(exc.detail))
    if exc.headers:
        resp.headers.update(exc.headers)
    return resp


# ------------------------------------------------------------------ keys, limits, metrics
class Guard:
    """Outermost middleware: the bearer key and its role, request size limits, and metrics."""

    def __init__(self, app: Any, cfg: ServerConfig, metrics: Metrics) -> None:
        self.app, self.cfg, self.metrics = app, cfg, metrics

    def _role(self, headers: dict[bytes, bytes]) -> str | None:
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        role = None
        for key, r in self.cfg.keys.items():  # compare every key in constant time
            if hmac.compare_digest(key.encode(), token.strip().encode()):
                role = r
        return role

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        path = scope["path"]
        headers = dict(scope.get("headers") or [])
        status = {"code": 500}

        async def send_counted(message: dict) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            if not self.cfg.keys:
                role = WRITE  # no keys: the server binds loopback only (ServerConfig.check_bind)
            elif path in OPEN_PATHS or path.startswith("/static/"):
                role = None  # pages and descriptions: they read nothing
            else:
                role = self._role(headers)
                if role is None:
                    resp = problem(401, "Unauthorized", "a valid API key is required: Authorization: Bearer <key>")
                    resp.headers["WWW-Authenticate"] = "Bearer"
                    return await resp(scope, receive, send_counted)
            scope.setdefault("state", {})["role"] = role
            multipart = headers.get(b"content-type", b"").startswith(b"multipart/")
            limit = self.cfg.limits.max_upload_bytes if multipart else self.cfg.limits.max_body_bytes
            try:
                length = int(headers.get(b"content-length", b"0") or 0)
            except ValueError:
                return await problem(400, "Bad request", "bad Content-Length")(scope, receive, send_counted)
            if length > limit:
                return await self._too_large(limit, multipart)(scope, receive, send_counted)
            received = 0

            async def receive_limited() -> dict:
                nonlocal received
                message = await receive()
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    if received > limit:
                        raise HTTPException(413, self._too_large_text(limit, multipart))
                return message

            await self.app(scope, receive_limited, send_counted)
        finally:
            self.metrics.request(scope["method"], _route_label(scope), status["code"], time.perf_counter() - t0)

    def _too_large_text(self, limit: int, multipart: bool) -> str:
        what = "an upload" if multipart else "a request body"
        return f"{what} may be at most {limit} bytes"

    def _too_large(self, limit: int, multipart: bool) -> JSONResponse:
        return problem(413, "Too large", self._too_large_text(limit, multipart))


def _route_label(scope: dict) -> str:
    """The route's path template (a bounded set of labels), with the router's prefix."""
    route = getattr(scope.get("route"), "path", None)
    if route is None:
        return "unmatched"
    if route.startswith("/v1"):
        return route
    if "kb_name" in scope.get("path_params", {}):
        return "/v1/kbs/{kb_name}" + route
    return ("/v1" + route) if scope["path"].startswith("/v1/") else route


# ------------------------------------------------------------------ the application
class Server:
    """What every request shares: the configuration, the knowledge bases, the jobs, the metrics."""

    def __init__(self, cfg: ServerConfig) -> None:
        cfg.check_bind()
        self.cfg = cfg
        self.pool = KBPool(cfg)
        self.metrics = Metrics()
        self.jobs = JobQueue(on_finish=self.metrics.job_finished)
        self.metrics.watch_jobs(self.jobs)
        self.ready = False

    def start(self) -> None:
        """Open the default knowledge base (created when missing) and load its models."""
        kb = self.pool.get(None, create=True)
        kb.embedder()
        self.ready = True

    def stop(self) -> None:
        self.jobs.stop()
        self.pool.close()


def require_write(request: Request) -> None:
    if request.scope.get("state", {}).get("role") != WRITE:
        raise HTTPException(403, "this key may read only: ingest and delete need a write key")




async def run_cancellable(request: Request, fn: Callable[[Deadline], Any]) -> Any:
    """Run ``fn(deadline)`` in a worker thread; when the client goes away, cancel the deadline
    (the query's channels stop) and leave without answering."""
    deadline = Deadline.never()
    result: dict[str, Any] = {}

    async def work() -> None:
        try:
            result["value"] = await anyio.to_thread.run_sync(fn, deadline)
        except BaseException as e:  # re-raised below, in the request's task
            result["error"] = e
        tg.cancel_scope.cancel()

    async def watch() -> None:
        while not await request.is_disconnected():
            await anyio.sleep(0.1)
        deadline.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(work)
        tg.start_soon(watch)
    if "error" in result:
        raise result["error"]
    return result["value"]


def _answer(result: Any, trace: bool) -> dict[str, Any]:
    d = result.to_dict(trace=trace)
    if not trace:
        d["generation"] = result.trace.generation
        d["timings_ms"] = {"total": round(result.trace.timings_ms["total"], 3)}
    return d


def _query_fn(kb: KnowledgeBase, q: QueryRequest, metrics: Metrics) -> Callable[[Deadline], Any]:
    overrides = q.model_dump(exclude_unset=True, exclude={"question", "filter", "trace"})

    def run(deadline: Deadline) -> Any:
        res = kb.query(q.question, filter=q.filter, deadline=deadline, **overrides)
        metrics.channels(res.trace.channels)
        return res
    return run


def kb_router(server: Server, named: bool) -> APIRouter:
    """The routes of one knowledge base: the default one (at /v1), or one named in the path
    (at /v1/kbs/{kb_name})."""
    r = APIRouter()
    limits = server.cfg.limits

    if named:
        def kb_name(kb_name: str) -> str:
            return kb_name
    else:
        def kb_name() -> str:  # type: ignore[misc]
            return server.pool.default

    def read_kb(name: str = Depends(kb_name)) -> KnowledgeBase:
        return server.pool.get(name)

    @r.post("/query", summary="Ask a question")
    async def query(body: QueryRequest, request: Request, kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        result = await run_cancellable(request, _query_fn(kb, body, server.metrics))
        return _answer(result, body.trace)

    @r.post("/query/batch", summary="Ask several questions")
    async def batch(body: BatchRequest, request: Request, kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        if len(body.queries) > limits.max_batch:
            raise HTTPException(413, f"a batch may hold at most {limits.max_batch} queries; got {len(body.queries)}")
        if not body.queries:
            raise HTTPException(422, "a batch needs at least one query")
        for q in body.queries:  # every query's settings are checked before any runs
            kb.query_settings(**q.model_dump(exclude_unset=True, exclude={"question", "filter", "trace"}))
        fns = [_query_fn(kb, q, server.metrics) for q in body.queries]

        def run_all(deadline: Deadline) -> list[Any]:
            return [fn(deadline) for fn in fns]
        results = await run_cancellable(request, run_all)
        return {"results": [_answer(res, q.trace) for res, q in zip(results, body.queries)]}

    @r.get("/documents", summary="List documents")
    def documents(offset: int = Query(0, ge=0), limit: int = Query(50, ge=1),
                  kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        if limit > limits.max_page:
            raise HTTPException(413, f"a page may hold at most {limits.max_page} documents")
        docs = sorted(kb.documents().values(), key=lambda d: (d.source, d.doc_id))
        return {"total": len(docs), "offset": offset, "limit": limit,
                "documents": [d.__dict__ for d in docs[offset:offset + limit]]}

    @r.get("/documents/{doc_id:path}", summary="A document and its sections")
    def document(doc_id: str, kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        found = kb.document(doc_id)
        if found is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        doc, sections = found
        return {**doc.__dict__, "sections": [_section(sp) for sp in sections]}

    @r.delete("/documents/{doc_id:path}", summary="Delete a document", dependencies=[Depends(require_write)])
    def delete(doc_id: str, kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        if kb.document(doc_id) is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        return {"deleted": kb.delete([doc_id]), "generation": kb.stats()["generation"]}

    @r.get("/sections/{parent_id:path}", summary="A whole section (a passage's parent)")
    def section(parent_id: str, kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        sp = kb.sections([parent_id]).get(parent_id)
        if sp is None:
            raise HTTPException(404, f"no section {parent_id!r}")
        return _section(sp)

    @r.post("/documents", status_code=202, summary="Ingest documents sent as JSON (a job)",
            dependencies=[Depends(require_write)])
    def add_documents(body: DocumentsRequest, name: str = Depends(kb_name)) -> dict[str, Any]:
        if len(body.documents) > limits.max_documents:
            raise HTTPException(413, f"at most {limits.max_documents} documents a request; got {len(body.documents)}")
        kb = server.pool.get(name, create=True)
        records = [{**d.model_dump(exclude={"source"}), **({"source": d.source} if d.source else {})}
                   for d in body.documents]
        job = server.jobs.submit(name, "documents", len(records),
                                 lambda progress: kb.add_documents(records, progress=progress))
        return job.to_dict()

    @r.post("/files", status_code=202, summary="Ingest uploaded files (a job)", dependencies=[Depends(require_write)])
    def add_files(files: list[UploadFile] = File(description="Markdown, text, HTML, PDF or JSONL files"),
                  name: str = Depends(kb_name)) -> dict[str, Any]:
        if len(files) > limits.max_files:
            raise HTTPException(413, f"at most {limits.max_files} files an upload; got {len(files)}")
        kb = server.pool.get(name, create=True)
        folder = save_uploads(kb.path / ".uploads", files, limits.max_upload_bytes)
        job = server.jobs.submit(name, "files", len(files),
                                 lambda progress: kb.ingest(folder, progress=progress), cleanup=folder)
        return job.to_dict()

    @r.get("/jobs", summary="Ingest jobs, newest first")
    def jobs(name: str = Depends(kb_name)) -> dict[str, Any]:
        return {"jobs": [j.to_dict() for j in server.jobs.list(name)]}

    @r.get("/jobs/{job_id}", summary="An ingest job: state, progress, report")
    def job(job_id: str) -> dict[str, Any]:
        j = server.jobs.get(job_id)
        if j is None:
            raise HTTPException(404, f"no job {job_id!r}")
        return j.to_dict()

    @r.get("/jobs/{job_id}/events", summary="An ingest job's progress as Server-Sent Events")
    async def job_events(job_id: str, request: Request) -> StreamingResponse:
        j = server.jobs.get(job_id)
        if j is None:
            raise HTTPException(404, f"no job {job_id!r}")

        async def events() -> AsyncIterator[str]:
            last = None
            while True:
                d = j.to_dict()
                text = json.dumps(d, ensure_ascii=False)
                if text != last:
                    yield f"event: {d['state']}\ndata: {text}\n\n"
                    last = text
                if j.finished or await request.is_disconnected():
                    return
                await asyncio.sleep(0.25)
        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @r.get("/stats", summary="Counts, generation and store details")
    def stats(kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        return kb.stats()

    @r.get("/settings", summary="The settings in force and what a query may change")
    def settings(kb: KnowledgeBase = Depends(read_kb)) -> dict[str, Any]:
        return {"settings": kb.settings.to_dict(), "channels": CHANNELS.names(kb.settings),
                "query_schema": QuerySettingsBody.model_json_schema()}

    return r


def _section(sp: Any) -> dict[str, Any]:
    p = sp.parent
    return {"parent_id": p.parent_id, "doc_id": p.doc_id, "source": sp.source, "title": sp.title,
            "heading_path": list(p.heading_path), "text": p.text, "tokens": p.tokens}


def create_app(cfg: ServerConfig) -> FastAPI:
    """The application for a configuration (``ragsift serve`` runs it with uvicorn)."""
    server = Server(cfg)
    mcp_app, mcp_server = None, None
    if cfg.mcp:
        from ragsift.mcp import build_mcp

        mcp_server = build_mcp(server.pool, allow_ingest=cfg.mcp_ingest, over_http=True)
        mcp_app = mcp_server.streamable_http_app(streamable_http_path="/", stateless_http=True, json_response=True,
                                                 host=cfg.host)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(server.start)
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            yield
        server.stop()

    app = FastAPI(title="ragsift", version=__version__, lifespan=lifespan,
                  description="Retrieval for RAG: ranked, context-complete passages with a trace of how each was "
                              "found. Send `Authorization: Bearer <key>` when the server has keys.")
    app.state.server = server
    app.add_exception_handler(RagsiftError, _ragsift_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]

    @app.get("/healthz", summary="Liveness")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness: the default knowledge base and its models are loaded")
    def readyz() -> JSONResponse:
        if not server.ready:
            return problem(503, "Not ready", "loading the knowledge base and its models")
        return JSONResponse({"status": "ready", "default_kb": server.pool.default})

    @app.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        body, ctype = server.metrics.render()
        return PlainTextResponse(body, media_type=ctype)

    @app.get("/v1/kbs", summary="The knowledge bases served")
    def kbs() -> dict[str, Any]:
        return {"default": server.pool.default, "kbs": server.pool.names()}

    app.include_router(kb_router(server, named=False), prefix="/v1")
    app.include_router(kb_router(server, named=True), prefix="/v1/kbs/{kb_name}")

    web = Path(str(resources.files("ragsift.server") / "web"))
    app.mount("/static", StaticFiles(directory=web), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(web / "index.html", media_type="text/html")

    if mcp_app is not None:
        app.mount("/mcp", mcp_app)
    app.add_middleware(Guard, cfg=cfg, metrics=server.metrics)
    return app
