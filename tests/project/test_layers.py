"""The layer contract, checked on the source: each part imports only from its own layer or the
layers below; ingest and retrieve never import each other, nor models and store; no module
imports itself back through others (no import cycles, lazy and type-checking imports included).

    faces    cli, demo, eval (and server, mcp, integrations)
    api      kb
    engine   ingest, retrieve
    parts    models, store
    ground   text, types, config, errors, names, cancel, console, registry, process
"""
from __future__ import annotations

import ast
from pathlib import Path

import ragsift

ROOT = Path(ragsift.__file__).parent
LAYERS = {
    "ground": ["text", "types", "config", "errors", "names", "cancel", "console", "registry", "process"],
    "parts": ["models", "store"],
    "engine": ["ingest", "retrieve"],
    "api": ["kb"],
    "faces": ["cli", "demo", "eval", "server", "mcp", "integrations"],
}
LEVEL = {part: i for i, parts in enumerate(LAYERS.values()) for part in parts}
SIDEWAYS = {("ingest", "retrieve"), ("retrieve", "ingest"), ("models", "store"), ("store", "models")}


def _modules() -> dict[str, Path]:
    out = {}
    # a compiled module (``store/_bm25.c``) is a module of its own, named by its type stub
    for f in [*ROOT.rglob("*.py"), *ROOT.rglob("*.pyi")]:
        parts = ("ragsift",) + f.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The project module an imported name lives in (a module, or the package that defines it)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path) -> set[str]:
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}  # "from pkg import module"
    return {m for m in (_resolve(t) for t in out if t.startswith("ragsift")) if m and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _part(module: str) -> str | None:
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else None


def test_every_part_has_a_layer():
    assert {_part(m) for m in MODULES if _part(m)} <= set(LEVEL)


def violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for src, targets in graph.items():
        a = _part(src)
        if a is None:  # the package itself re-exports the API
            continue
        for dst in targets:
            b = _part(dst)
            if b is None or b == a:
                continue
            if LEVEL[b] > LEVEL[a] or (a, b) in SIDEWAYS:
                bad.append(f"{src} -> {dst}")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_reaches_up_or_sideways():
    bad = violations(GRAPH)
    assert not bad, "imports that break the layers:\n" + "\n".join(bad)


def test_no_import_cycles():
    assert not cycles(GRAPH), f"import cycles: {cycles(GRAPH)}"


def test_the_checks_see_leaks_and_cycles():
    graph = {"ragsift.retrieve.a": {"ragsift.kb", "ragsift.ingest.b"}, "ragsift.ingest.b": {"ragsift.text.c"},
             "ragsift.text.c": {"ragsift.text.d"}, "ragsift.text.d": {"ragsift.text.c"}, "ragsift.kb": set()}
    assert violations(graph) == ["ragsift.retrieve.a -> ragsift.ingest.b", "ragsift.retrieve.a -> ragsift.kb"]
    assert cycles(graph) == [["ragsift.text.c", "ragsift.text.d"]]
    # the parser resolves relative and "from package import module" imports
    assert "ragsift.retrieve.channels.dense" in GRAPH["ragsift.retrieve.channels"]
    assert "ragsift.config" in GRAPH["ragsift.retrieve.search"]
