"""The API's routes, one module per resource. ``KB_ROUTERS`` are the routes of one knowledge
base: mounted at ``/v1`` for the default one and at ``/v1/kbs/{kb_name}`` for each named one."""
from ragsift.server.routes import documents, health, info, jobs, query

KB_ROUTERS = (query.router, documents.router, jobs.router, info.router)

__all__ = ["KB_ROUTERS", "health"]
