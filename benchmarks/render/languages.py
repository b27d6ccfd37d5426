"""*Languages*: a part from each of four scripts' results under one heading (multilingual.py,
translate.py, mixed.py, tune.py), each rendered by its script's module."""
from __future__ import annotations

from . import mixed, multilingual, translate, tune


def render() -> list[str]:
    lines = ["## Languages: the fast multilingual embedder, translation, a mixed knowledge base", ""]
    lines += multilingual.languages_part()
    lines += translate.languages_part()
    lines += mixed.languages_part()
    lines += tune.languages_part()
    return lines
