"""``ragsift serve --workers N``: N processes answer on one port, so queries use every core.

The supervisor binds the listening socket and forks the workers before anything heavy is
loaded: each worker opens its knowledge bases, loads its models and builds (or maps, in large
stores) its search indexes itself, and accepts connections from the shared socket (the kernel
spreads them). The workers share the job records beside the knowledge bases
(``jobs.JobRecords``), so any worker answers for any job; a worker started again after a crash
fails the jobs of the one that died, saying what of each was committed. Writes stay one at a
time: a worker's job waits for the knowledge base's write lock while another worker's job holds
it. A worker that dies is started again; SIGTERM or SIGINT to the supervisor stops every worker
and then itself.

Per worker, not shared: rate limits and in-flight counts per key (a client may reach up to N
times the limit), the metrics at ``/metrics`` (each answers for itself), the queue bound of
``max_queued_jobs``. Needs ``os.fork`` (Linux, macOS).
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import time

from ragsift.errors import ConfigError
from ragsift.server.config import ServerConfig

RESTART_PAUSE_S = 1.0  # between a worker's death and its replacement


def bind(host: str, port: int) -> socket.socket:
    """The listening socket every worker accepts from."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _worker(cfg: ServerConfig, sock: socket.socket, log_level: str) -> None:
    import uvicorn

    from ragsift.server.app import create_app

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides; SIGTERM stops uvicorn
    uvicorn.Server(uvicorn.Config(create_app(cfg), log_level=log_level)).run(sockets=[sock])


def serve(cfg: ServerConfig, log_level: str = "info") -> int:
    """Run ``cfg.workers`` worker processes on ``cfg.host:cfg.port`` until told to stop."""
    if not hasattr(os, "fork"):
        raise ConfigError("--workers above 1 needs os.fork (Linux, macOS); run one worker per port instead")
    sock = bind(cfg.host, cfg.port)
    children: dict[int, int] = {}  # pid -> worker number
    stopping = False

    def start(n: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                _worker(cfg, sock, log_level)
            except BaseException as e:  # noqa: BLE001  # reported, and the process ends here
                print(f"ragsift worker {n}: {type(e).__name__}: {e}", file=sys.stderr)
                code = 1
            finally:
                os._exit(code)
        children[pid] = n

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        for n in range(cfg.workers):
            start(n)
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid not in children:
                continue
            n = children.pop(pid)
            if not stopping:
                code = os.waitstatus_to_exitcode(status)
                print(f"ragsift worker {n} (pid {pid}) ended with {code}; starting it again", file=sys.stderr)
                time.sleep(RESTART_PAUSE_S)
                if not stopping:
                    start(n)
    finally:
        stop(signal.SIGTERM, None)
        for pid in list(children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        sock.close()
    return 0
