"""Native resources (ragsift.process): the arena limit and the trim on this machine's glibc, checked
by what the process's resident memory does; the BLAS thread limit, checked by what threadpoolctl
reports in a fresh process; the faces that run for long setting them."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent('''
    import os, sys, threading
    from ragsift.process import limit_arenas, release

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
    monkeypatch.setattr(app_mod, "for_serving", lambda: calls.append(1) or {})  # a spy
    app_mod.create_app(ServerConfig(kb=tmp_path / "kb"))
    assert calls == [1]


BLAS = textwrap.dedent('''
    import json, numpy
    from threadpoolctl import threadpool_info
    from ragsift.process import for_serving
    before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    done = for_serving()
    after = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    a = numpy.ones((300, 300), numpy.float32)
    print(json.dumps({"before": before, "after": after, "done": done, "product": float((a @ a)[0, 0])}))
''')


def test_serving_limits_blas_to_one_thread_unless_the_operator_chose():
    import json
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS", "MALLOC_ARENA_MAX")}
    out = json.loads(subprocess.run([sys.executable, "-c", BLAS], capture_output=True, text=True, timeout=120,
                                    env=env, check=True).stdout)
    assert out["done"] == {"arenas": True, "blas": True}
    assert out["after"] and set(out["after"]) == {1} and out["product"] == 300.0
    if (os.cpu_count() or 1) > 1:
        assert max(out["before"]) > 1  # it was more, and is one now
    chosen = json.loads(subprocess.run([sys.executable, "-c", BLAS], capture_output=True, text=True, timeout=120,
                                       env={**env, "OPENBLAS_NUM_THREADS": "2"}, check=True).stdout)
    assert chosen["done"]["blas"] is False and set(chosen["after"]) == {2}


ORT_CHILD = textwrap.dedent('''
    import json
    from ragsift.models.embedders import load_embedder
    from ragsift.process import release

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    emb = load_embedder("minilm")
    emb.embed_queries(["warm"])
    base = rss_mb()
    texts = [("Retrieval keeps the passage whole. " * 40), ("检索保留完整的段落。" * 120)]
    for size in (48, 7, 23, 2):  # batches of other shapes, one of them large, in both languages
        emb.embed_passages([texts[i % 2] for i in range(size)])
    release()
    print(json.dumps({"base": base, "after": rss_mb()}))
''')


def _embed_rss(env: dict[str, str]) -> dict:
    import json
    import os

    out = subprocess.run([sys.executable, "-c", ORT_CHILD, "x"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", **env}, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow  # hundreds of megabytes of activations, twice: `make test` runs it
def test_onnx_runtime_hands_a_large_batch_back_unless_the_operator_keeps_its_arena():
    """A batch of 48 long passages (zh + en) needs hundreds of megabytes of activations: without
    ONNX Runtime's arena they are returned after the batch; with it (RAGSIFT_ORT_ARENA=1) they stay."""
    off = _embed_rss({"RAGSIFT_ORT_ARENA": "0"})
    on = _embed_rss({"RAGSIFT_ORT_ARENA": "1"})
    assert off["after"] - off["base"] < 150, off
    assert on["after"] - on["base"] > 300, on  # the arena keeps what the large batch took


def test_a_child_dies_with_the_parent_it_names_not_with_pid_1():
    """``die_with_parent`` exits only when the parent it was told is gone: a reading worker whose
    parent is pid 1 (a server in a container) went on reading; told a pid that is not its parent
    (the parent died before the call), it exits at once."""
    code = ("import os, sys; from ragsift.process import die_with_parent; "
            "die_with_parent(int(sys.argv[1]) or os.getppid()); print('读取中 reading')")
    alive = subprocess.run([sys.executable, "-c", code, "0"], capture_output=True, text=True, timeout=60)
    assert alive.returncode == 0 and alive.stdout.strip() == "读取中 reading"
    gone = subprocess.run([sys.executable, "-c", code, str(2 ** 22 + 7)], capture_output=True, text=True, timeout=60)
    assert gone.returncode == 0 and gone.stdout == ""
