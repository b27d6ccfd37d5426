"""Questions: one, or a batch. Each runs in a query thread with the server's time limit
(``max_query_seconds``) and stops when its client goes away. A caller chooses how to search,
never which models, endpoints, files or limits the server uses (``check_caller_overrides``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Body, Request
from starlette.exceptions import HTTPException

from ragsift.cancel import Deadline
from ragsift.config import check_caller_overrides
from ragsift.errors import ConfigError
from ragsift.kb import KnowledgeBase
from ragsift.retrieve.offer import refused
from ragsift.server.deps import ReadKB, ServerDep, run_cancellable
from ragsift.server.schemas import (
    BATCH_EXAMPLES,
    QUERY_EXAMPLES,
    BatchRequest,
    BatchResponse,
    QueryRequest,
    QueryResponse,
)
from ragsift.server.service import Server

router = APIRouter(tags=["query"])


def answer(result: Any, trace: bool) -> dict[str, Any]:
    d = result.to_dict(trace=trace)
    d["generation"] = result.trace.generation
    d["timings_ms"] = {"total": round(result.trace.timings_ms["total"], 3)}
    return d


def _query_fn(kb: KnowledgeBase, q: QueryRequest, srv: Server) -> Callable[[Deadline], Any]:
    overrides = q.overrides()
    check_caller_overrides(overrides, kb.settings)
    why = refused(overrides, kb.settings)  # what cannot run here, said for a caller (who can change it)
    if why:
        raise ConfigError(why)

    def run(deadline: Deadline) -> Any:
        res = kb.query(q.question, filter=q.filter, deadline=deadline, trace=q.trace, **overrides)
        srv.metrics.channels(res.trace.channels)
        return res
    return run


@router.post("/query", summary="Ask a question", response_model=QueryResponse, response_model_exclude_unset=True)
async def query(request: Request, body: QueryRequest = Body(openapi_examples=QUERY_EXAMPLES),
                *, kb: ReadKB, srv: ServerDep) -> dict[str, Any]:
    fn = _query_fn(kb, body, srv)
    kb.query_settings(**body.overrides())  # a bad setting is a 400 before any work
    result = await run_cancellable(request, fn, srv.cfg.limits.max_query_seconds, srv.query_threads)
    return answer(result, body.trace)


@router.post("/query/batch", summary="Ask several questions", response_model=BatchResponse,
             response_model_exclude_unset=True)
async def batch(request: Request, body: BatchRequest = Body(openapi_examples=BATCH_EXAMPLES),
                *, kb: ReadKB, srv: ServerDep) -> dict[str, Any]:
    limits = srv.cfg.limits
    if len(body.queries) > limits.max_batch:
        raise HTTPException(413, f"a batch may hold at most {limits.max_batch} queries; got {len(body.queries)}")
    if not body.queries:
        raise HTTPException(422, "a batch needs at least one query")
    fns = [_query_fn(kb, q, srv) for q in body.queries]
    for q in body.queries:  # every query's settings are checked before any runs
        kb.query_settings(**q.overrides())

    def run_all(deadline: Deadline) -> list[Any]:
        return [fn(deadline) for fn in fns]
    results = await run_cancellable(request, run_all, limits.max_query_seconds, srv.query_threads)
    return {"results": [answer(res, q.trace) for res, q in zip(results, body.queries)]}
