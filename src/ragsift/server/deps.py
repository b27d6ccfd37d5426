"""What routes depend on: the server (``service.Server``: what every request shares), the
knowledge base a path names, the caller's role, and running work in a thread that ends when the
client goes away or the server's time for it is up."""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio
from fastapi import Depends, Path, Request
from starlette.exceptions import HTTPException

from ragsift.cancel import Deadline
from ragsift.errors import UnknownKB
from ragsift.kb import KnowledgeBase
from ragsift.server.config import WRITE
from ragsift.server.service import Server


def server(request: Request) -> Server:
    return request.app.state.server


def kb_path_param(kb_name: str = Path(description="A knowledge base's name (GET /v1/kbs lists them).")) -> None:
    """Declares the ``{kb_name}`` of the named routes (read by ``kb_name``)."""


def kb_name(request: Request, srv: Server = Depends(server)) -> str:
    """The knowledge base the path names (``/v1/kbs/{kb_name}/...``), or the default one (``/v1/...``)."""
    return request.path_params.get("kb_name") or srv.pool.default


def existing_kb_name(name: str = Depends(kb_name), srv: Server = Depends(server)) -> str:
    """The name, if a knowledge base of that name exists (404 otherwise)."""
    if not srv.pool.exists(name):
        raise UnknownKB(f"no knowledge base {name[:80]!r}")
    return name


def read_kb(name: str = Depends(existing_kb_name), srv: Server = Depends(server)) -> KnowledgeBase:
    return srv.pool.get(name)


def require_write(request: Request) -> None:
    """403 unless the key may write (the middleware refuses read keys before the body is read;
    this holds the rule where a route is reached by another way)."""
    if request.scope.get("state", {}).get("role") != WRITE:
        raise HTTPException(403, "this key may read only: ingest and delete need a write key")


async def run_cancellable(request: Request, fn: Callable[[Deadline], Any], seconds: float,
                          limiter: anyio.CapacityLimiter | None = None) -> Any:
    """Run ``fn(deadline)`` in a worker thread with ``seconds`` to do it; when the client goes
    away, cancel the deadline (the query's channels stop) and leave without answering."""
    deadline = Deadline(seconds)
    result: dict[str, Any] = {}

    async def work() -> None:
        try:
            result["value"] = await anyio.to_thread.run_sync(fn, deadline, limiter=limiter)
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


# the dependencies as types a route's parameters name (FastAPI's Annotated form), and the one
# write-role check every writing route lists
ServerDep = Annotated[Server, Depends(server)]
KBName = Annotated[str, Depends(kb_name)]
ReadKB = Annotated[KnowledgeBase, Depends(read_kb)]
WRITE_ROLE = [Depends(require_write)]

