"""The API's own description: ``/openapi.json`` and the Swagger UI page at ``/docs``, both
served from the package (``web/vendor/swagger-ui``), so the docs work without internet.

The description says who may call what by the same rule the middleware enforces
(``middleware.OPEN_PATHS`` and ``READ_POSTS``): every operation outside the open paths needs
the bearer key (Swagger's Authorize button sends it), and those a read key may not call say so.
Every error is described as the problem body the server answers (``errors.problem``).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ragsift.server.errors import PROBLEM
from ragsift.server.middleware import OPEN_PATHS, OPEN_PREFIXES, READ_POSTS, SAFE_METHODS

SWAGGER_UI_VERSION = "5.35.0"  # web/vendor/swagger-ui/README.md
ASSETS = "/docs/assets"
SCHEME = "bearerAuth"

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem", "type": "object", "required": ["type", "title", "status", "detail"],
    "description": "An error (RFC 9457): `detail` names what was wrong and how to fix it; a request body "
                   "that does not fit its schema lists each field's error in `errors`.",
    "properties": {
        "type": {"type": "string", "examples": ["about:blank"]},
        "title": {"type": "string", "examples": ["Invalid request"]},
        "status": {"type": "integer", "examples": [422]},
        "detail": {"type": "string", "examples": ["documents.0.text: required field missing"]},
        "errors": {"type": "array", "description": "With 422: every field that was wrong.", "items": {
            "type": "object", "required": ["loc", "msg"],
            "properties": {"loc": {"type": "string", "description": "The field, dotted: documents.0.metadata"},
                           "msg": {"type": "string"}}}},
    },
}


def needs_key(path: str) -> bool:
    """Whether a server with keys asks a request to ``path`` for one (the middleware's rule)."""
    return not (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES))


def needs_write_key(method: str, path: str) -> bool:
    """Whether a read key is refused (403) on ``method path`` (the middleware's rule)."""
    return needs_key(path) and method.upper() not in SAFE_METHODS and not READ_POSTS.match(path)


def _problem(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


def describe(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document: FastAPI's, with the bearer scheme, the key each operation needs and
    errors as problem bodies."""
    api = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = api.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = PROBLEM_SCHEMA
    for name in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 body; ours is a problem
        schemas.pop(name, None)
    components["securitySchemes"] = {SCHEME: {
        "type": "http", "scheme": "bearer",
        "description": "An API key (RAGSIFT_API_KEYS: read and write; RAGSIFT_READ_KEYS: read and query only), "
                       "sent as `Authorization: Bearer <key>`. A server started without keys serves loopback only "
                       "and takes requests without one."}}
    for path, ops in api.get("paths", {}).items():
        for method, op in ops.items():
            responses = op.setdefault("responses", {})
            if "422" in responses:
                responses["422"] = _problem("The request does not fit its schema: `detail` names the field")
            if not needs_key(path):
                op["security"] = []
                continue
            op["security"] = [{SCHEME: []}]
            responses.setdefault("401", _problem("No key, or not a key of this server"))
            if needs_write_key(method, path):
                responses.setdefault("403", _problem("A read key: this needs a write key"))
                op["description"] = (op.get("description", "") + "\n\nNeeds a write key.").strip()
            responses.setdefault("429", _problem("Too many requests from this key: retry after Retry-After seconds"))
        for op in ops.values():  # every error is a problem body
            for code, r in op.get("responses", {}).items():
                if code[:1] in ("4", "5") and "content" not in r:
                    r["content"] = _problem("")["content"]
    return api


def install(app: FastAPI) -> None:
    """``/openapi.json`` as ``describe`` makes it, ``/docs`` and its assets; the app is made with
    ``docs_url=None, redoc_url=None`` (FastAPI's pages load Swagger UI and ReDoc from a CDN)."""
    assets = Path(str(resources.files("ragsift.server") / "web" / "vendor" / "swagger-ui"))
    app.mount(ASSETS, StaticFiles(directory=assets), name="docs-assets")

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = describe(app)
        return app.openapi_schema
    app.openapi = openapi  # type: ignore[method-assign]

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"), title=f"{app.title} API",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js", swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon-32x32.png",
            # validatorUrl: no badge fetched from validator.swagger.io; nothing else leaves the server
            swagger_ui_parameters={"validatorUrl": None, "displayRequestDuration": True, "tryItOutEnabled": False})
