"""*Speed and memory*: a part from each of four scripts' results under one heading (ingest_speed.py,
scale.py, ann_recall.py, throughput.py), each rendered by its script's module."""
from __future__ import annotations

from . import ann_recall, ingest_speed, scale, throughput
from .common import load


def render() -> list[str]:
    lines = ["## Speed and memory", ""]
    lines += ingest_speed.speed_part()
    lines += scale.speed_part()
    lines += ann_recall.speed_part()
    lines += throughput.speed_part()
    if not load("ingest.json") and not load("scale.json"):
        lines += ["_Not run yet (`benchmarks/run_all.sh`)._", ""]
    return lines
