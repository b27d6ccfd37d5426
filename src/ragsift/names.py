"""Names a caller got wrong, said one way in every face: a setting (``Settings(chekpoint_documents=5)``,
``kb.query(..., max_passage=2)``, a key of ``ragsift.toml``, a CLI flag, an HTTP field), a filter
field (``itemname``), an MCP tool's argument, a channel, a value of a setting. ``nearest`` finds
the known names closest to the one given (case, ``-`` and ``_`` aside: ``--max-pasages`` is near
``max_passages``, ``itemname`` near ``item_name``); ``did_you_mean`` says it.

Linear in what it is given: a name longer than ``MAX_NAME`` characters gets no suggestion (a
name that long is no typo), and only the first ``MAX_KNOWN`` known names are compared."""
from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_NAME = 64
MAX_KNOWN = 2000
CUTOFF = 0.75


def _plain(name: str) -> str:
    return name.casefold().lstrip("-$").replace("-", "").replace("_", "").replace(" ", "")


def nearest(name: object, known: Iterable[str], n: int = 1, cutoff: float = CUTOFF) -> list[str]:
    """The known names nearest ``name`` (at most ``n``, nearest first; none when nothing is near:
    ``cutoff`` is difflib's least ratio)."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        return []
    plain: dict[str, str] = {}
    for k in known:
        if len(plain) >= MAX_KNOWN:
            break
        if isinstance(k, str) and k != name and len(k) <= 4 * MAX_NAME:
            plain.setdefault(_plain(k), k)
    target = _plain(name)
    if not target:
        return []
    if target in plain:  # the same name but for case, '-' or '_'
        return [plain[target]]
    if len(target) >= 3:  # a name cut short or abbreviated: "meta" for metadata, "docs" for documents
        short = [k for p, k in plain.items() if p[:2] == target[:2] and len(p) > len(target) and _within(target, p)]
        if short:
            return short[:n]
    return [plain[m] for m in difflib.get_close_matches(target, list(plain), n=n, cutoff=cutoff)]


def _within(short: str, long: str) -> bool:
    """Whether ``short``'s letters stand in ``long`` in order (a subsequence)."""
    it = iter(long)
    return all(c in it for c in short)


def did_you_mean(name: object, known: Iterable[str], shown: str = "{}") -> str:
    """``"did you mean 'max_passages'?"`` (``shown`` formats the name: ``"--{}"``), or ``""``
    when no known name is near."""
    near = nearest(name, known, n=1)
    return f"did you mean {shown.format(near[0])!r}?" if near else ""


def unknown(what: str, name: object, known: Iterable[str], shown: str = "{}") -> str:
    """``"unknown setting 'max_passage'; did you mean 'max_passages'?"``: one name a caller got
    wrong, with the nearest known one when there is one."""
    text = repr(name) if not isinstance(name, str) or len(name) <= 80 else repr(name[:80] + "…")
    hint = did_you_mean(name, known, shown)
    return f"unknown {what} {text}" + (f"; {hint}" if hint else "")
