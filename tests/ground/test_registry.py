"""The one registry type every extension point uses, and the one retry loop every HTTP client of
a model uses (issue 27): names and families, made or loaded once, clear errors; retries bounded
in number and by the deadline, only for transient failures."""
from __future__ import annotations

import threading
import time

import pytest

from ragsift.cancel import Deadline
from ragsift.errors import ConfigError, ModelError
from ragsift.models.embedders import EMBEDDERS
from ragsift.models.retry import Transient, retried, transient_status
from ragsift.registry import Registry
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.fusion import FUSIONS
from ragsift.retrieve.steps import STEPS
from ragsift.retrieve.units import UNITS
from ragsift.store import STORES
from ragsift.text.analyzer import ANALYZERS


class Part:
    made = 0

    def __init__(self, name: str = "") -> None:
        type(self).made += 1
        self.name = name


def test_exact_names_and_families():
    reg: Registry[Part] = Registry("part")
    reg.add("one", Part)
    reg.add_family("fam:", lambda rest: Part(rest), members=lambda ctx: [f"fam:{x}" for x in ctx])
    assert "one" in reg and "fam:x" in reg and "fam:" not in reg and "two" not in reg
    assert reg.make("fam:abc").name == "abc" and isinstance(reg.make("one"), Part)
    assert reg.names() == ["one"] and reg.names(["a", "b"]) == ["one", "fam:a", "fam:b"]
    with pytest.raises(ConfigError, match="unknown part 'two'; valid: 'one', 'fam:<name>'"):
        reg.make("two")
    reg.remove("fam:")
    assert "fam:x" not in reg


def test_load_makes_a_part_once_even_when_asked_at_once():
    reg: Registry[Part] = Registry("model", ModelError)
    Part.made = 0

    def slow() -> Part:
        time.sleep(0.05)
        return Part("slow")
    reg.add("slow", slow)
    got: list[Part] = []
    threads = [threading.Thread(target=lambda: got.append(reg.load("slow"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Part.made == 1 and len({id(p) for p in got}) == 1
    with pytest.raises(ModelError, match="unknown model"):
        reg.load("nope")


def test_a_decorator_registers_and_every_extension_point_is_a_registry():
    reg: Registry = Registry("fn")

    @reg.register("double")
    def double(x: int) -> int:
        return 2 * x
    assert reg.make("double", 21) == 42
    for registry, names in ((CHANNELS, {"dense", "bm25", "engine_hybrid"}), (UNITS, {"parent", "auto"}),
                            (FUSIONS, {"rrf", "weighted"}), (STORES, {"lancedb", "milvus"}),
                            (ANALYZERS, {"ragsift-unicode-v2", "ragsift-zh-en-v1"}), (EMBEDDERS, {"minilm", "e5-small"}),
                            (STEPS, {"hyde", "multi_query"})):
        assert isinstance(registry, Registry) and names <= set(registry.names()), registry.what


def test_retries_only_transient_failures_within_the_deadline():
    calls: list[float] = []

    def flaky(left: float) -> str:
        calls.append(left)
        if len(calls) < 3:
            raise Transient(f"HTTP {503 if len(calls) == 1 else 429}")
        return "ok"
    assert retried(flaky, deadline=Deadline(30), retries=2, fail=ModelError) == "ok" and len(calls) == 3
    calls.clear()
    with pytest.raises(ModelError, match=r"failed after 2 attempt\(s\): HTTP 503; HTTP 429"):
        retried(flaky, deadline=Deadline(30), retries=1, fail=ModelError)

    def fatal(left: float) -> str:
        raise ModelError("HTTP 401: bad key")
    with pytest.raises(ModelError, match="401"):  # not transient: no retry
        retried(fatal, deadline=Deadline(30), retries=5, fail=ModelError)

    def always(left: float) -> str:
        raise Transient("connection refused")
    t = time.monotonic()
    with pytest.raises(ModelError, match="failed after"):
        retried(always, deadline=Deadline(0.6), retries=50, fail=ModelError)
    assert time.monotonic() - t < 3  # the deadline, not the 50 retries, ends it
    with pytest.raises(ModelError, match="out of time"):
        retried(always, deadline=Deadline(0), retries=3, fail=ModelError)
    assert [transient_status(c) for c in (200, 400, 404, 429, 500, 503)] == [False, False, False, True, True, True]
