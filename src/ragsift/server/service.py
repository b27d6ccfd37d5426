"""The server's shared state: its configuration, the knowledge bases it serves, the write
jobs, the metrics, and the threads queries run on. One ``Server`` per application."""
from __future__ import annotations

import json
import logging

import anyio

from ragsift.server.config import ServerConfig
from ragsift.server.jobs import JobQueue, JobRecords
from ragsift.server.metrics import Metrics
from ragsift.server.pool import KBPool

log = logging.getLogger(__name__)


class KBProbe:
    """What the job queue reads of a knowledge base (``jobs.Probe``): its committed generation
    (an embedded store's from its manifest, without opening it) and which documents it holds."""

    def __init__(self, pool: KBPool) -> None:
        self.pool = pool

    def generation(self, kb: str) -> int | None:
        from ragsift.store.lance_files import MANIFEST

        manifest = self.pool.path(kb) / MANIFEST
        if manifest.exists():  # an embedded store: the manifest is its commit point
            g = json.loads(manifest.read_text(encoding="utf-8")).get("generation")
            return g if isinstance(g, int) and not isinstance(g, bool) else None
        with self.pool.get(kb).reading() as store:
            return store.generation

    def stored(self, kb: str, ids: list[str]) -> set[str] | None:
        with self.pool.get(kb).reading() as store:
            return set(store.get_documents(ids))


class Server:
    """What every request shares: the configuration, the knowledge bases, the write jobs, the
    metrics, and the threads queries run on."""

    def __init__(self, cfg: ServerConfig) -> None:
        cfg.check_bind()
        self.cfg = cfg
        self.pool = KBPool(cfg)
        self.metrics = Metrics()
        self.jobs = JobQueue(on_finish=self.metrics.job_finished, max_queued=cfg.limits.max_queued_jobs,
                             records=JobRecords(self.pool.jobs_folder()), probe=KBProbe(self.pool),
                             wait_for_writers=cfg.workers > 1)
        self.metrics.watch_jobs(self.jobs)
        self.ready = False
        self.query_threads: anyio.CapacityLimiter | None = None  # made in the event loop (start)

    def start(self) -> None:
        """Open the default knowledge base (created when missing) and load its models; the jobs
        a server that stopped left unfinished answer what of them was committed, and the files
        they were sent are removed."""
        kb = self.pool.get(None, create=True)
        recovered = self.jobs.recover()
        if recovered:
            log.warning("%d write job(s) were left unfinished by a server that stopped; each answers why",
                        len(recovered))
        self.jobs.sweep_uploads(self.pool.upload_roots())
        kb.embedder()
        self.ready = True

    def stop(self) -> None:
        from ragsift.models.llm import close_llms

        self.jobs.stop()
        if self.jobs.records is not None and not self.jobs.running():  # with a job still running, the lock
            self.jobs.records.release()  # goes with the process, so none takes the job as stopped early
        self.pool.close()
        close_llms()
