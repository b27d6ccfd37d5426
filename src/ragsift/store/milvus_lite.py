"""Start milvus-lite as a local server, for tests, benchmarks and trying the Milvus store
without a cluster. milvus-lite implements the Milvus client API (not its scale: it is slow
and single-node); production runs Milvus 2.5+ standalone or on Kubernetes."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from ragsift.errors import StoreError

# milvus-lite's gRPC server keeps grpc's strict default ping policy; pymilvus pings every 10 s,
# so an idle client gets "GOAWAY too_many_pings" and its next call may fail. Milvus proper
# accepts those pings; the launcher gives milvus-lite the same policy.
_LAUNCHER = """
import sys
import grpc
real = grpc.server
def server(*args, options=(), **kwargs):
    extra = [("grpc.http2.min_recv_ping_interval_without_data_ms", 5000), ("grpc.http2.max_ping_strikes", 0),
             ("grpc.keepalive_permit_without_calls", 1)]
    return real(*args, options=list(options) + extra, **kwargs)
grpc.server = server
from milvus_lite.cmdline import main
sys.exit(main(sys.argv[1:]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiteServer:
    """``with LiteServer(data_dir) as uri: ...``: a milvus-lite server on 127.0.0.1."""

    def __init__(self, data_dir: str | Path, port: int | None = None, start_timeout_s: float = 60.0) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir / "server.log", "ab") as log:  # the server keeps its own copy of the file
            self.proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, "server", "--data-dir", str(self.data_dir),
                                          "--host", "127.0.0.1", "--port", str(self.port)],
                                         stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StoreError(f"milvus-lite exited with {self.proc.returncode}; see {self.data_dir}/server.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self.uri
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise StoreError(f"milvus-lite did not listen on {self.port} within {self.start_timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
