"""Every error the server answers is a problem response (RFC 9457, ``application/problem+json``):
a caller's mistake is a 4xx naming what was wrong and how to fix it; a full disk is 507; a
bug is a 500 that says nothing of the server's insides (its traceback goes to the log)."""
from __future__ import annotations

import errno
import logging
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ragsift.config import NOT_PER_QUERY, OPERATOR_KEYS, current_name, refused_per_query
from ragsift.errors import (
    Busy,
    Cancelled,
    ConfigError,
    FilterError,
    InputError,
    LimitError,
    LLMError,
    ModelError,
    NotFound,
    QueryError,
    RagsiftError,
    RetrievalError,
    StorageFull,
    StoreError,
    UnknownKB,
    UploadError,
)

log = logging.getLogger("ragsift.server")
PROBLEM = "application/problem+json"
TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
          409: "Conflict", 413: "Too large", 415: "Unsupported media type", 422: "Invalid request",
          429: "Too many requests", 500: "Internal error", 503: "Unavailable", 507: "Insufficient storage"}


def problem(status: int, title: str = "", detail: str = "", headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title or TITLES.get(status, "Error"), "status": status,
            "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


#: error class -> (status, title); the first class an error is an instance of wins
ERROR_STATUS: list[tuple[type[Exception], int, str]] = [
    (UnknownKB, 404, "Unknown knowledge base"),
    (NotFound, 404, "Not found"),
    (InputError, 400, "Bad request"),
    (FilterError, 400, "Bad filter"),
    (QueryError, 400, "Bad query"),
    (ConfigError, 400, "Bad settings"),
    (UploadError, 400, "Bad upload"),
    (LimitError, 413, "Too large"),
    (Busy, 503, "Busy"),
    (StorageFull, 507, "Insufficient storage"),
    (StoreError, 409, "Store unavailable"),
    (ModelError, 503, "Model unavailable"),
    (LLMError, 503, "Model unavailable"),
    (Cancelled, 503, "Out of time"),
    (RetrievalError, 503, "Retrieval failed"),
    (RagsiftError, 400, "Bad request"),
]


def ragsift_error(request: Request, exc: RagsiftError) -> JSONResponse:
    headers = {"Retry-After": str(max(1, round(exc.retry_after)))} if isinstance(exc, Busy) else None
    for cls, status, title in ERROR_STATUS:
        if isinstance(exc, cls):
            return problem(status, title, str(exc), headers=headers)
    return problem(400, "Bad request", str(exc))  # pragma: no cover - RagsiftError is in the table


def _where(loc: tuple | list) -> str:
    parts = [str(x) for x in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 naming the field and what it needs; a per-query setting that only the operator may set
    (or an index setting) is a 400 saying so."""
    errs = exc.errors()
    named = {str(e["loc"][-1]) for e in errs if e.get("type") == "extra_forbidden" and e.get("loc")}
    why = refused_per_query(n for n in named if current_name(n, warn=False) in set(OPERATOR_KEYS) | set(NOT_PER_QUERY))
    if why:
        return problem(400, "Bad settings", why)
    errors = []
    for e in errs:
        kind, msg = e.get("type", ""), e.get("msg", "")
        if kind == "json_invalid":
            pos = e["loc"][1] if len(e.get("loc", ())) > 1 else "?"
            why = e.get("ctx", {}).get("error", "decode error")
            msg = f"not valid JSON at character {pos} ({why}); send a JSON object"
            errors.append({"loc": "body", "msg": msg})
            continue
        if kind == "extra_forbidden":
            msg = "unknown field; see the schema at /openapi.json (GET /v1/settings lists the query settings)"
        elif kind == "missing":
            msg = "required field missing"
        errors.append({"loc": _where(e.get("loc", ())), "msg": msg})
    first = errors[0] if errors else {"loc": "body", "msg": "invalid request"}
    return problem(422, "Invalid request", f"{first['loc']}: {first['msg']}", errors=errors)


def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    return problem(exc.status_code, TITLES.get(exc.status_code, "Error"), str(exc.detail),
                   headers=dict(exc.headers) if exc.headers else None)


def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """A full disk is 507; anything else a 500 that names no internals (logged in full)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return problem(507, "Insufficient storage", "the server's disk is full; nothing was written")
    log.exception("internal error on %s %s", request.method, request.url.path)
    return problem(500, "Internal error", "the server failed to answer this request; its log says why")


def install(app: Any) -> None:
    app.add_exception_handler(RagsiftError, ragsift_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected_error)
