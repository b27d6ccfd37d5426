"""Liveness, readiness, metrics and the list of knowledge bases. They run on the event loop, not
in a worker thread, so they answer whatever the workers are doing."""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse

from ragsift.server.deps import ServerDep
from ragsift.server.errors import problem
from ragsift.server.schemas import Health, KBList, Ready

router = APIRouter()


@router.get("/healthz", summary="Liveness", response_model=Health, tags=["health"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: the default knowledge base and its models are loaded",
            response_model=Ready, responses={503: {"description": "Still loading"}}, tags=["health"])
async def readyz(srv: ServerDep) -> JSONResponse:
    if not srv.ready:
        return problem(503, "Not ready", "loading the knowledge base and its models")
    return JSONResponse({"status": "ready", "default_kb": srv.pool.default})


@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse, tags=["health"])
async def metrics(srv: ServerDep) -> PlainTextResponse:
    body, ctype = srv.metrics.render()
    return PlainTextResponse(body, media_type=ctype)


@router.get("/v1/kbs", summary="The knowledge bases served", response_model=KBList, tags=["knowledge bases"])
async def kbs(srv: ServerDep) -> dict[str, object]:
    return {"default": srv.pool.default, "kbs": srv.pool.names()}
