"""The server's shared state: its configuration, the knowledge bases it serves, the write
jobs, the metrics, and the threads queries run on. One ``Server`` per application."""
from __future__ import annotations

import anyio

from ragsift.server.config import ServerConfig
from ragsift.server.jobs import JobQueue
from ragsift.server.metrics import Metrics
from ragsift.server.pool import KBPool


class Server:
    """What every request shares: the configuration, the knowledge bases, the write jobs, the
    metrics, and the threads queries run on."""

    def __init__(self, cfg: ServerConfig) -> None:
        cfg.check_bind()
        self.cfg = cfg
        self.pool = KBPool(cfg)
        self.metrics = Metrics()
        self.jobs = JobQueue(on_finish=self.metrics.job_finished, max_queued=cfg.limits.max_queued_jobs,
                             shared_dir=cfg.shared_dir)
        self.metrics.watch_jobs(self.jobs)
        self.ready = False
        self.query_threads: anyio.CapacityLimiter | None = None  # made in the event loop (start)

    def start(self) -> None:
        """Open the default knowledge base (created when missing) and load its models."""
        kb = self.pool.get(None, create=True)
        kb.embedder()
        self.ready = True

    def stop(self) -> None:
        from ragsift.models.llm import close_llms

        self.jobs.stop()
        self.pool.close()
        close_llms()
