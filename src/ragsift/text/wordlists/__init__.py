"""The word lists of the text layer, as package data: one ``<name>.txt`` file per list.

A file holds words separated by white space (``words``), or one entry per line (``phrases``,
``table`` for "key value" lines); lines starting with ``#`` are comments. Each list is read once.
"""
from __future__ import annotations

from functools import cache
from importlib import resources


def _lines(name: str) -> list[str]:
    text = resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


@cache
def words(name: str) -> frozenset[str]:
    """The words of a list (separated by white space)."""
    return frozenset(w for ln in _lines(name) for w in ln.split())


@cache
def phrases(name: str) -> frozenset[str]:
    """The entries of a list, one per line (entries may contain spaces)."""
    return frozenset(_lines(name))


@cache
def table(name: str) -> dict[str, str]:
    """A list of "key value" lines as a mapping."""
    return dict(ln.split(None, 1) for ln in _lines(name))  # type: ignore[misc]
