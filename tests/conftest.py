"""Shared fixtures. Everything here uses the real models and real stores: LanceDB, and Milvus
through a milvus-lite server the session starts on 127.0.0.1."""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# model answers are cached per test session, never in the user's cache; assembled model files
# are kept where they were (assembling the 1.1 GB model takes a few seconds)
_user_cache = Path(os.environ.get("RAGSIFT_CACHE_DIR") or Path.home() / ".cache" / "ragsift")
os.environ.setdefault("RAGSIFT_MODELS_DIR", str(_user_cache / "models"))
os.environ["RAGSIFT_CACHE_DIR"] = tempfile.mkdtemp(prefix="ragsift-test-cache-")
atexit.register(shutil.rmtree, os.environ["RAGSIFT_CACHE_DIR"], ignore_errors=True)  # gone when the session ends

from ragsift.demo import sample_dir, sample_questions  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent  # the repository
DATA = Path(__file__).parent / "data"
E2E = Path(__file__).parent / "e2e"


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e/ is slow (kills, crashes, server processes, the browser, the
    language models, Milvus, big corpora): `make check` leaves it out, `make test` runs it. A slow
    test elsewhere says so itself (``@pytest.mark.slow``, or the Milvus ``backend`` below)."""
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def sample_kb(tmp_path_factory) -> KnowledgeBase:
    """The bundled sample knowledge base (Chinese + English), default settings and embedder."""
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("sample") / "kb")
    report = kb.ingest(sample_dir() / "kb")
    assert not report.skipped, report.skipped
    return kb


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory):
    from ragsift.store.milvus_lite import LiteServer

    server = LiteServer(tmp_path_factory.mktemp("milvus"))
    yield server.start()
    server.stop()


# a test on Milvus (a Milvus Lite server) is slow: `make test` runs it, `make check` does not; a test
# asking for milvus_uri itself, or for backend "milvus" by indirect parametrization, says so itself
BACKENDS = ("lancedb", pytest.param("milvus", marks=pytest.mark.slow))


@pytest.fixture(params=BACKENDS)
def backend(request) -> dict:
    """Settings that put a new knowledge base on each store in turn (the Milvus one marked slow)."""
    if request.param == "milvus":
        return {"store_kind": "milvus", "store_uri": request.getfixturevalue("milvus_uri")}
    return {}


@pytest.fixture(scope="session")
def questions() -> list[dict]:
    return sample_questions()


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return root


def pytest_terminal_summary(terminalreporter):
    """Print how many fuzz cases ran (tests/e2e/kb/test_fuzz.py), by door."""
    fuzz = sys.modules.get("test_fuzz")
    if fuzz is not None and fuzz.CASES:
        doors = {k: v for k, v in fuzz.CASES.items() if not k.startswith("_")}
        terminalreporter.write_line(f"fuzz: {sum(doors.values())} cases ("
                                    + ", ".join(f"{k} {v}" for k, v in doors.items()) + ")")
        terminalreporter.write_line("fuzz outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(fuzz.OUTCOMES.items())))
