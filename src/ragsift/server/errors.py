"""Every error the server answers is a problem response (RFC 9457, ``application/problem+json``):
a caller's mistake is a 4xx naming what was wrong and how to fix it; a full disk is 507; a
bug is a 500 that says nothing of the server's insides (its traceback goes to the log)."""
from __future__ import annotations

import errno
import logging
from typing import Any, get_args

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
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
from ragsift.names import did_you_mean

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


def _json_type(v: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _model_in(tp: Any) -> type[BaseModel] | None:
    """The model a field's type holds (``list[DocumentIn]`` -> ``DocumentIn``), if any."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in get_args(tp):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _unknown_field(request: Request, loc: tuple | list) -> str:
    """What to say of an unknown field: the fields its object takes (or the nearest one, for
    an object with many), found by walking the route's body model along ``loc``."""
    field = getattr(request.scope.get("route"), "body_field", None)
    model = _model_in(getattr(getattr(field, "field_info", None), "annotation", None))
    for part in list(loc)[1:-1]:  # past "body", up to the unknown name
        if model is None or isinstance(part, int):
            continue
        f = model.model_fields.get(str(part))
        model = _model_in(f.annotation) if f is not None else None
    name = str(loc[-1]) if loc else ""
    if model is None:
        return "unknown field; see the schema at /openapi.json"
    takes = list(model.model_fields)
    hint = did_you_mean(name, takes)
    hint = hint + " " if hint else ""
    if len(takes) > 12:  # a query: its settings
        return (f"unknown field; {hint}a query takes question, filter, trace and the query settings "
                "(GET /v1/settings lists them; the schema is at /openapi.json)")
    return f"unknown field; {hint}this object takes {', '.join(takes)}"


def _body_shape(request: Request, value: Any) -> str:
    """What to say of a body that is not a JSON object."""
    ctype = request.headers.get("content-type", "")
    if value in (None, b"", ""):
        return "the request needs a body: a JSON object, sent with Content-Type: application/json"
    if not ctype.split(";")[0].strip().lower().endswith("json"):
        sent = f"as {ctype.split(';')[0]}" if ctype else "without a Content-Type"
        return f"the body was sent {sent}; send a JSON object with Content-Type: application/json"
    return f"the body must be a JSON object, not {_json_type(value)}"


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
        kind, msg, loc = e.get("type", ""), e.get("msg", ""), tuple(e.get("loc", ()))
        if kind == "json_invalid":
            pos = loc[1] if len(loc) > 1 else "?"
            why = e.get("ctx", {}).get("error", "decode error")
            msg = f"not valid JSON at character {pos} ({why}); send a JSON object"
            errors.append({"loc": "body", "msg": msg})
            continue
        if loc == ("body",) and kind in ("missing", "model_attributes_type", "dict_type", "model_type"):
            errors.append({"loc": "body", "msg": _body_shape(request, e.get("input"))})
            continue
        if kind == "extra_forbidden":
            msg = _unknown_field(request, loc)
        elif kind == "missing":
            msg = "required field missing"
        elif kind.endswith("_type") or kind.endswith("_parsing"):  # a wrong type: say what came, in JSON's words
            for py, js in (("a valid dictionary", "a JSON object"), ("a valid list", "an array"),
                           ("a valid tuple", "an array")):
                msg = msg.replace(py, js)
            msg = f"{msg}; got {_json_type(e.get('input'))}"
        msg = msg.removeprefix("Value error, ")
        errors.append({"loc": _where(loc), "msg": msg})
    errors = errors or [{"loc": "body", "msg": "invalid request"}]
    detail = " | ".join(f"{e['loc']}: {e['msg']}" for e in errors[:3])
    more = f" | and {len(errors) - 3} more (see errors)" if len(errors) > 3 else ""
    return problem(422, "Invalid request", detail + more, errors=errors)


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
