"""Native memory: the arena limit and the trim (ragsift.memory) on this machine's glibc, checked
by what the process's resident memory does, and the faces that run for long setting the limit."""
from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import os, sys, threading
    from ragsift.memory import limit_arenas, release

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    if sys.argv[1] == "limit":
        print("limited", limit_arenas(2))
    held = []
    def work():  # each thread fills its own arena with 1 KB blocks, then frees all but a few
        blocks = [os.urandom(1024) for _ in range(60_000)]
        held.extend(blocks[::500])
        del blocks
    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads: t.start()
    for t in threads: t.join()
    before = rss_mb()
    released = release()
    print("rss", before, rss_mb(), released)
''')


def _run(mode: str, env: dict[str, str] | None = None) -> list[str]:
    import os

    out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})}, check=True).stdout.split("\n")
    return [line for line in out if line]


def test_release_returns_freed_memory_to_the_system():
    (rss,) = _run("plain")
    _, before, after, released = rss.split()
    assert released == "True"
    assert float(before) - float(after) > 100  # ~360 MB were freed by Python; the trim hands most back


def test_arenas_are_limited_unless_the_operator_chose():
    lines = _run("limit")
    assert lines[0] == "limited True"
    assert _run("limit", {"MALLOC_ARENA_MAX": "4"})[0] == "limited False"  # the operator's variable wins


def test_the_server_limits_arenas_when_it_starts(monkeypatch, tmp_path):
    from ragsift.server import app as app_mod
    from ragsift.server.config import ServerConfig

    calls = []
    monkeypatch.setattr(app_mod, "limit_arenas", lambda: calls.append(1) or True)  # a spy
    app_mod.create_app(ServerConfig(kb=tmp_path / "kb"))
    assert calls == [1]
