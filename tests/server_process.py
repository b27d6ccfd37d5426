"""A real ``ragsift serve`` process on 127.0.0.1 for the tests: started on a free port, waited
for until /readyz answers, stopped (and waited for) at the end."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

READ_KEY = "read-key-0123456789abcdef"
WRITE_KEY = "write-key-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    def __init__(self, args: list[str], keys: bool = True, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = args
        self.env = dict(os.environ, **(env or {}))
        if keys:
            self.env.update(RAGSIFT_API_KEYS=WRITE_KEY, RAGSIFT_READ_KEYS=READ_KEY)
        else:
            self.env.pop("RAGSIFT_API_KEYS", None)
            self.env.pop("RAGSIFT_READ_KEYS", None)
        self.keys = keys
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 180) -> ServerProcess:
        with open(Path(os.environ.get("TMPDIR", "/tmp")) / f"ragsift-serve-{self.port}.log", "w") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "ragsift.cli", *self.args, "--port", str(self.port),
                                          "--log-level", "warning"], env=self.env, stdout=log, stderr=log)
        self.log = log.name
        t = time.monotonic()
        while time.monotonic() - t < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ragsift serve exited with {self.proc.returncode}: {Path(self.log).read_text()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"ragsift serve not ready after {timeout}s: {Path(self.log).read_text()}")

    def client(self, key: str | None = WRITE_KEY, **kw) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=kw.pop("timeout", 120), **kw)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


PROBLEM = "application/problem+json"


def problem(resp: httpx.Response, status: int, text: str) -> dict:
    """The response is an RFC 9457 problem of ``status`` whose detail says ``text``."""
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM), resp.headers
    body = resp.json()
    assert body["status"] == status and text in body["detail"], body
    return body


def wait_job(client: httpx.Client, job: dict, timeout: float = 300) -> dict:
    """Poll a job (through its own knowledge base) until it has ended."""
    t = time.monotonic()
    while job["state"] in ("queued", "running"):
        assert time.monotonic() - t < timeout, job
        time.sleep(0.2)
        job = client.get(f"/v1/kbs/{job['kb']}/jobs/{job['id']}").json()
    return job


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc): a server's workers."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out
