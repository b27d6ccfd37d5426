"""Prometheus metrics of a server: requests by route and status, their latency, channel
errors, channels still running, ingest jobs and the documents they ingested."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ragsift.retrieve import runner

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"})


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self._requests = Counter("ragsift_requests", "HTTP requests", ["method", "route", "status"], registry=r)
        self._latency = Histogram("ragsift_request_seconds", "HTTP request latency", ["route"], registry=r,
                                  buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self._channel_errors = Counter("ragsift_channel_errors", "Channels that failed or timed out in a query",
                                       ["channel"], registry=r)
        self._queries = Counter("ragsift_queries", "Queries answered", registry=r)
        Gauge("ragsift_active_channels", "Channel functions still running", registry=r) \
            .set_function(runner.active_channels)
        self._jobs_done = Counter("ragsift_ingest_jobs", "Ingest jobs finished", ["state"], registry=r)
        self._documents = Counter("ragsift_ingested_documents", "Documents added or updated by ingest jobs",
                                  registry=r)
        self._jobs_running = Gauge("ragsift_ingest_jobs_active", "Ingest jobs queued or running", registry=r)
        self._chunks = Gauge("ragsift_ingest_chunks_done", "Chunks embedded by the running ingest jobs", registry=r)

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count a request. Labels are bounded: a method outside HTTP's own is "other", a path
        that matched no route is "unmatched", a status outside 100-599 is "other"."""
        method = method if method in METHODS else "other"
        code = str(status) if 100 <= status <= 599 else "other"
        self._requests.labels(method, route, code).inc()
        self._latency.labels(route).observe(seconds)

    def channels(self, traces: Iterable[Any]) -> None:
        self._queries.inc()
        for c in traces:
            if c.error:
                self._channel_errors.labels(c.name).inc()

    def watch_jobs(self, jobs: Any) -> None:
        self._jobs_running.set_function(jobs.active)
        self._chunks.set_function(lambda: sum(j.done for j in jobs.running()))

    def job_finished(self, job: Any) -> None:
        self._jobs_done.labels(job.state).inc()
        if job.report and "added" in job.report:
            self._documents.inc(len(job.report["added"]) + len(job.report["updated"]))

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
