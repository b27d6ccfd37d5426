"""The outermost layer of every request, before any body is read: the bearer key and its role
(401 without a valid key; 403 for a read key on anything but reading and querying), the
caller's rate (429 with Retry-After), the request's size (413, also for a chunked body that
grows past the limit), and metrics with bounded labels. A refusal is a problem (RFC 9457); on
/mcp it is also a JSON-RPC error, which MCP clients show ("401 Unauthorized: a valid API key...")."""
from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from ragsift.server.config import READ, WRITE, ServerConfig
from ragsift.server.errors import problem
from ragsift.server.metrics import Metrics
from ragsift.server.ratelimit import RateLimiter

#: pages and descriptions: they read nothing, so they need no key
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/", "/docs", "/docs/oauth2-redirect", "/openapi.json",
                        "/favicon.ico", "/redoc"})
OPEN_PREFIXES = ("/static/", "/docs/assets/")
#: what a read key may do besides GET: ask questions (and speak MCP, whose write tool checks the role)
READ_POSTS = re.compile(r"^/v1(?:/kbs/[^/]+)?/query(?:/batch)?/?$|^/mcp(?:/.*)?$")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MCP_PATHS = re.compile(r"^/mcp(?:/.*)?$")
MCP_REFUSED = -32001  # JSON-RPC error code (server-defined range): refused before MCP read the request


def refusal(path: str, status: int, title: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The answer to a refused request: a problem; on /mcp a JSON-RPC error (application/json) that
    also carries the problem's fields, since an MCP client reads only a JSON-RPC error from an
    error status and otherwise says "Server returned an error response"."""
    if not MCP_PATHS.match(path):
        return problem(status, title, detail, headers=headers)
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": MCP_REFUSED, "message": f"{status} {title}: {detail}"},
            "type": "about:blank", "title": title, "status": status, "detail": detail}
    return JSONResponse(body, status_code=status, headers=headers)


class Guard:
    """ASGI middleware; the role it finds is ``scope["state"]["role"]`` (READ, WRITE, or None on
    an open path of a server with keys)."""

    def __init__(self, app: Any, cfg: ServerConfig, metrics: Metrics) -> None:
        self.app, self.cfg, self.metrics = app, cfg, metrics
        lim = cfg.limits
        self.limiter = RateLimiter(lim.rate_per_s, lim.rate_burst, lim.max_inflight)
        self._keys = [(k.encode(), r) for k, r in cfg.keys.items()]

    def _key(self, headers: dict[bytes, bytes]) -> tuple[str | None, bytes]:
        """(role, token) of the request's bearer key; role None when it is not a key of ours."""
        auth = headers.get(b"authorization", b"")
        scheme, _, token = auth.partition(b" ")
        token = token.strip()
        if scheme.lower() != b"bearer" or not token:
            return None, b""
        role = None
        for key, r in self._keys:  # compare every key in constant time
            if hmac.compare_digest(key, token):
                role = r
        return role, token

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        path, method = scope["path"], scope["method"]
        headers = dict(scope.get("headers") or [])
        status = {"code": 500}
        caller: str | None = None

        async def send_counted(message: dict) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        async def answer(resp: Any) -> None:
            await resp(scope, receive, send_counted)

        try:
            open_path = path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)
            if not self.cfg.keys:
                role: str | None = WRITE  # no keys: the server binds loopback only (ServerConfig.check_bind)
                who = f"addr:{(scope.get('client') or ('?',))[0]}"
            elif open_path:
                role, who = None, ""
            else:
                role, token = self._key(headers)
                if role is None:
                    return await answer(refusal(path, 401, "Unauthorized", "a valid API key is required: "
                                                "Authorization: Bearer <key>",
                                                headers={"WWW-Authenticate": "Bearer"}))
                who = "key:" + hashlib.sha256(token).hexdigest()[:16]
            if role == READ and method not in SAFE_METHODS and not READ_POSTS.match(path):
                return await answer(refusal(path, 403, "Forbidden",
                                            "this key may read only: ingest and delete need a write key"))
            scope.setdefault("state", {})["role"] = role
            if not open_path:
                wait = self.limiter.acquire(who)
                if wait is not None:
                    seconds, why = wait
                    return await answer(refusal(path, 429, "Too many requests", f"{why}; retry after {seconds:g} s",
                                                headers={"Retry-After": str(int(seconds))}))
                caller = who
            await self._sized(scope, receive, send_counted, headers)
        finally:
            if caller is not None:
                self.limiter.release(caller)
            self.metrics.request(method, route_label(scope), status["code"], time.perf_counter() - t0)

    async def _sized(self, scope: dict, receive: Callable, send: Callable, headers: dict[bytes, bytes]) -> None:
        """Run the app with the request's size bounded: a declared length past the limit is
        refused at once; a body that grows past it (chunked) ends the request with 413, whatever
        the app would have answered to the cut body."""
        multipart = headers.get(b"content-type", b"").startswith(b"multipart/")
        limit = self.cfg.limits.max_upload_bytes if multipart else self.cfg.limits.max_body_bytes
        what = "an upload" if multipart else "a request body"

        def too_large() -> JSONResponse:  # made when needed: most requests are not refused
            return refusal(scope["path"], 413, "Too large", f"{what} may be at most {limit} bytes")
        try:
            length = int(headers.get(b"content-length", b"0") or 0)
        except ValueError:
            return await refusal(scope["path"], 400, "Bad request", "bad Content-Length")(scope, receive, send)
        if length > limit:
            return await too_large()(scope, receive, send)
        received = 0
        over = False
        replaced = False

        async def receive_limited() -> dict:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    raise HTTPException(413, f"{what} may be at most {limit} bytes")
            return message

        async def send_checked(message: dict) -> None:
            nonlocal replaced
            if over:  # whatever the app made of a cut body, the answer is 413
                if not replaced and message["type"] == "http.response.start":
                    replaced = True
                    await too_large()(scope, receive, send)
                return
            await send(message)

        await self.app(scope, receive_limited, send_checked)


def route_label(scope: dict) -> str:
    """The route's path template (a bounded set of labels), with the router's prefix."""
    route = getattr(scope.get("route"), "path", None)
    if route is None:
        return "unmatched"
    if route.startswith("/v1") or not scope["path"].startswith("/v1/"):
        return route
    if "kb_name" in scope.get("path_params", {}):
        return "/v1/kbs/{kb_name}" + route
    return "/v1" + route
