"""What every renderer of docs/benchmarks.md shares: where the results are, ``load`` (a result file, None when
absent), ``ran`` (date, command, commit), ``paths`` and ``source`` (the result files a section's figures
come from, as the page names them), ``host_of``, ``fmt`` and ``fmt_p`` (figures, p values), ``opened`` (a
section's heading and result, or its "not run yet" line) and ``written`` (a section written by hand in
benchmarks/sections/NAME.md)."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SECTIONS = ROOT / "benchmarks" / "sections"


def load(name: str) -> dict | None:
    p = RESULTS / name
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


def host_of(r: dict) -> str:
    """The host a result names: a line written by hand (older files), or the harness's record."""
    h = r.get("host")
    if h is None or isinstance(h, str):
        return h or "not recorded"
    return f"{h['cpu']}, {h['cores']} cores, AVX-512 VNNI {'yes' if 'avx512_vnni' in h.get('flags', []) else 'no'}"


def ran(r: dict, command: bool = True) -> str:
    """``Date: ...; command: `...``` and the commit measured: the harness's stamp, or for an older file the
    ``command_from`` / ``commit_from`` added after the run (the docs' command, the commit that stored it)."""
    out = f"Date: {r['date']}" + (f"; command: `{r['command']}`" if command else "")
    if command and r.get("command_from"):
        out += " (as the docs gave it: the run did not record its command)"
    if r.get("commit"):
        out += f"; commit {r['commit']}" + (" with changes not committed" if r.get("dirty") else "")
        if r.get("commit_from"):
            out += " (the commit that stored the file: the run did not record its own)"
    return out


def paths(*names: str) -> str:
    """Result files as the page names them: ```benchmarks/results/NAME```, comma-separated."""
    return ", ".join(f"`benchmarks/results/{n}`" for n in names)


def source(*names: str) -> str:
    """Where a section's figures are stored: ``result file `benchmarks/results/NAME` `` (the file names
    the command and the commit that measured them)."""
    return ("result file " if len(names) == 1 else "result files ") + paths(*names)


def fmt(x: float, nd: int = 4) -> str:
    return f"{x:.{nd}f}"


def opened(result: str, title: str, how: str) -> tuple[dict | None, list[str]]:
    """A section's stored result and its heading (with a line saying how to make it when not run yet)."""
    r = load(result)
    lines = [f"## {title}", ""]
    return r, (lines if r is not None else lines + [f"_Not run yet: `{how}`._", ""])


def fmt_p(p: float | None) -> str:
    return "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def written(name: str) -> list[str]:
    """A section written by hand from its result file (``benchmarks/sections/NAME.md``): prose
    around a few figures, where a renderer would be longer than the text; the result file it
    quotes names the command and the commit measured."""
    return (SECTIONS / f"{name}.md").read_text(encoding="utf-8").split("\n")[:-1]
