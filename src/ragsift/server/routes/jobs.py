"""Write jobs (ingests, deletes, syncs) of one knowledge base: listed, read, and followed as
Server-Sent Events. A job is visible only through the knowledge base it writes to (only that
knowledge base's records are read). Jobs are recorded on the disk (``server.jobs``): after a
restart, a job answers as it finished, or as failed with what of it was committed."""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from ragsift.errors import NotFound
from ragsift.server.deps import ServerDep, existing_kb_name
from ragsift.server.jobs import Job
from ragsift.server.schemas import JobList, JobOut

router = APIRouter(tags=["jobs"])
EVENTS = ("One event each time the job changes, named by its state (queued, running, done, failed), its data "
          "the job as GET /jobs/{id} gives it; the stream ends when the job has ended.")
EVENTS_EXAMPLE = ('event: running\ndata: {"id": "j-1", "state": "running", "phase": "embedding", '
                  '"progress": {"done": 3, "total": 10}, ...}\n\n')


def _job(job_id: str, name: str = Depends(existing_kb_name), *, srv: ServerDep) -> Job:
    j = srv.jobs.get(job_id, kb=name)
    if j is None:
        raise NotFound(f"no job {job_id[:80]!r} in knowledge base {name!r}")
    return j


@router.get("/jobs", summary="Write jobs (ingests, deletes), newest first", response_model=JobList)
async def jobs(name: str = Depends(existing_kb_name), *, srv: ServerDep) -> dict[str, Any]:
    return {"jobs": [j.to_dict() for j in srv.jobs.list(name)]}


@router.get("/jobs/{job_id}", summary="A job: state, progress, report", response_model=JobOut)
async def job(j: Job = Depends(_job)) -> dict[str, Any]:
    return j.to_dict()


@router.get("/jobs/{job_id}/events", summary="A job's progress as Server-Sent Events",
            response_class=StreamingResponse, responses={200: {"description": EVENTS, "content": {
                "text/event-stream": {"schema": {"type": "string"}, "example": EVENTS_EXAMPLE}}}})
async def job_events(request: Request, j: Job = Depends(_job), *, srv: ServerDep) -> StreamingResponse:
    async def events() -> AsyncIterator[str]:
        nonlocal j
        last = None
        while True:
            j = srv.jobs.get(j.id, kb=j.kb) or j  # another worker's job: read again
            d = j.to_dict()
            text = json.dumps(d, ensure_ascii=False)
            if text != last:
                yield f"event: {d['state']}\ndata: {text}\n\n"
                last = text
            if j.finished or await request.is_disconnected():
                return
            await asyncio.sleep(0.25)
    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
