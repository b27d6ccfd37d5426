"""Documents: list, read, add (as JSON or uploaded files) and delete, and the sections passages
come from. Every write is a job on the knowledge base's one writer (202 with the job); no
request waits on the write lock."""
from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Body, File, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ragsift.errors import InputError, NotFound
from ragsift.kb import DOCUMENT_SORTS, KnowledgeBase
from ragsift.kb.wire import Section
from ragsift.server.deps import WRITE_ROLE, KBName, ReadKB, ServerDep
from ragsift.server.jobs import JobKind
from ragsift.server.schemas import (
    DOCUMENTS_EXAMPLES,
    DocumentDetail,
    DocumentPage,
    DocumentsRequest,
    DocumentView,
    JobOut,
)
from ragsift.server.uploads import save_uploads
from ragsift.types import IngestReport

router = APIRouter(tags=["documents"])
#: what GET /documents sorts by: the knowledge base's own sorts (an enum, so the API docs list them)
DocumentSort = StrEnum("DocumentSort", {name: name for name in DOCUMENT_SORTS})  # type: ignore[misc]
ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"description": "Queued as a job: poll GET /jobs/{id} or stream /jobs/{id}/events"}}


@router.get("/documents", summary="List documents (a page; searched by source and title, sorted)",
            response_model=DocumentPage)
def documents(offset: int = Query(0, ge=0), limit: int = Query(50, ge=1),
              q: str | None = Query(None, max_length=200, description="Keep documents whose source or title "
                                    "holds every word of it (case-insensitive)."),
              sort: DocumentSort = Query(DocumentSort("source"),
                                         description="generation: the commit that wrote it (desc: newest first)."),
              order: Literal["asc", "desc"] = Query("asc"),
              *, kb: ReadKB, srv: ServerDep) -> dict[str, Any]:
    if limit > srv.cfg.limits.max_page:
        raise HTTPException(413, f"a page may hold at most {srv.cfg.limits.max_page} documents")
    total, page = kb.list_documents(offset, limit, q=q, sort=sort, order=order)
    return {"total": total, "offset": offset, "limit": limit, "documents": [d.__dict__ for d in page]}


@router.get("/documents/{doc_id:path}/view", summary="How a document was read: headings, sections, pages, chunks",
            response_model=DocumentView)
def view(doc_id: str, kb: ReadKB) -> dict[str, Any]:
    found = kb.view(doc_id)
    if found is None:
        raise NotFound(f"no document {doc_id[:200]!r}")
    return found


@router.get("/documents/{doc_id:path}", summary="A document and its sections", response_model=DocumentDetail)
def document(doc_id: str, kb: ReadKB) -> dict[str, Any]:
    found = kb.document(doc_id)
    if found is None:
        raise NotFound(f"no document {doc_id[:200]!r}")
    doc, sections = found
    return {**doc.__dict__, "sections": [sp.to_dict() for sp in sections]}


@router.delete("/documents/{doc_id:path}", status_code=202, dependencies=WRITE_ROLE, response_model=JobOut,
               summary="Delete a document (a job)", responses=ACCEPTED)
def delete(doc_id: str, kb: ReadKB, name: KBName,
           srv: ServerDep) -> dict[str, Any]:
    found = kb.document(doc_id)
    if found is None:
        raise NotFound(f"no document {doc_id[:200]!r}")
    source = found[0].source

    def run(progress: Any) -> dict[str, Any]:
        progress.commit_begins()  # recorded first: a server stopped now tells whether the delete landed
        deleted = kb.delete([doc_id])
        progress.commit_done()
        with kb.reading() as store:  # the ids deleted, and each one's source (what a person reads)
            return {"deleted": deleted, "sources": {doc_id: source}, "generation": store.generation}
    return srv.jobs.submit(name, JobKind.DELETE, 1, run, targets=[doc_id]).to_dict()


@router.get("/sections/{parent_id:path}", summary="A whole section (a passage's parent)", response_model=Section)
def section(parent_id: str, kb: ReadKB) -> dict[str, Any]:
    sp = kb.sections([parent_id]).get(parent_id)
    if sp is None:
        raise NotFound(f"no section {parent_id[:200]!r}")
    return sp.to_dict()


@router.post("/documents", status_code=202, dependencies=WRITE_ROLE, response_model=JobOut, responses=ACCEPTED,
             summary="Ingest documents sent as JSON (a job)")
def add_documents(body: DocumentsRequest = Body(openapi_examples=DOCUMENTS_EXAMPLES), *, name: KBName,
                  srv: ServerDep) -> dict[str, Any]:
    limit = srv.cfg.limits.max_documents
    if len(body.documents) > limit:
        raise HTTPException(413, f"at most {limit} documents a request; got {len(body.documents)}")
    kb = srv.pool.get(name, create=True)
    records = [{**d.model_dump(exclude={"source"}), **({"source": d.source} if d.source else {})}
               for d in body.documents]
    job = srv.jobs.submit(name, JobKind.DOCUMENTS, len(records),
                          lambda progress: kb.add_documents(records, progress=progress),
                          checkpointing=_checkpointing(kb))
    return job.to_dict()


@router.post("/files", status_code=202, dependencies=WRITE_ROLE, response_model=JobOut, responses=ACCEPTED,
             summary="Ingest uploaded files (a job)")
def add_files(files: list[UploadFile] = File(description="Markdown, text, HTML, PDF or JSONL files"),
              *, name: KBName, srv: ServerDep) -> dict[str, Any]:
    limits = srv.cfg.limits
    if len(files) > limits.max_files:
        raise HTTPException(413, f"at most {limits.max_files} files an upload; got {len(files)}")
    # saved (names and sizes checked) before the knowledge base is made: a refused upload creates nothing
    folder = save_uploads(srv.pool.upload_root(name), files, limits.max_upload_bytes)
    try:
        kb = srv.pool.get(name, create=True)
        job = srv.jobs.submit(name, JobKind.FILES, len(files),  # named by file name: the folder is temporary
                              lambda progress: kb.ingest(folder, progress=progress, record_paths=False),
                              cleanup=folder, checkpointing=_checkpointing(kb))
    except BaseException:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        raise
    return job.to_dict()


@router.post("/sync", dependencies=WRITE_ROLE,
             summary="Mirror the operator's folder (a job; dry_run: what would change)",
             responses={202: {**ACCEPTED[202], "model": JobOut},
                        200: {"description": "With dry_run: the changes, nothing written", "model": IngestReport}})
async def sync(request: Request, dry_run: bool = Query(False), *, name: KBName,
               srv: ServerDep) -> Any:
    """The folder is the operator's (``ragsift serve --sync-dir``): a caller chooses when, never which."""
    extra = sorted(set(request.query_params) - {"dry_run"})
    if extra or await request.body():
        raise InputError(f"a sync request names nothing but dry_run (it got {', '.join(extra) or 'a body'}): "
                         "the folder is the operator's (ragsift serve --sync-dir)")
    folder = srv.cfg.sync_dirs.get(name)
    if folder is None:
        raise NotFound(f"no folder to sync for knowledge base {name!r}: the operator sets one with --sync-dir")
    kb = srv.pool.get(name, create=True)
    if dry_run:
        report = await run_in_threadpool(_mirror, kb, folder, dry_run=True)
        return JSONResponse(report.to_dict())
    job = srv.jobs.submit(name, JobKind.SYNC, 1, lambda progress: _mirror(kb, folder, progress=progress),
                          checkpointing=_checkpointing(kb))
    return JSONResponse(job.to_dict(), status_code=202)


def _mirror(kb: KnowledgeBase, folder: Path, **kw: Any) -> IngestReport:
    """``kb.sync(folder)``; a folder gone is said without naming where it was (the operator's)."""
    if not folder.is_dir():
        raise InputError("the folder the operator set for this knowledge base to mirror (--sync-dir) is not there")
    return kb.sync(folder, **kw)


def _checkpointing(kb: KnowledgeBase) -> bool:
    """Whether the knowledge base's ingests commit in checkpoints (a job stopped midway keeps them)."""
    ing = kb.settings.ingest
    return bool(ing.checkpoint_documents or ing.checkpoint_seconds)
