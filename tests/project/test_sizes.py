"""Rooms sized to be read: a module in src/ holds at most ``MAX_MODULE_LINES`` lines and a function
(or method) at most ``MAX_FUNCTION_LINES``, unless docs/architecture.md's "Sizes" section has a
line naming it (```path``` for a module, ```path:Qualified.name``` for a function, the path under
src/ragsift/) and saying why after a colon."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import ragsift

SRC = Path(ragsift.__file__).parent
DOC = SRC.parents[1] / "docs" / "architecture.md"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """Every function and method with its qualified name (``Class.method``, ``outer.inner``) and length."""
    out: list[tuple[str, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append((name, (node.end_lineno or node.lineno) - start + 1))
            out += functions(node, name + ".")
        else:
            out += functions(node, prefix)
    return out


def oversized() -> list[str]:
    """``path`` of each module over the limit and ``path:name`` of each function over it."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES:
            out.append(rel)
        out += [f"{rel}:{name}" for name, n in functions(ast.parse(text)) if n > MAX_FUNCTION_LINES]
    return out


def excused() -> dict[str, str]:
    """The Sizes section's lines: what each names, and why."""
    section = DOC.read_text(encoding="utf-8").split("\n## Sizes\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        if m := re.match(r"^- `([^`]+)`: *(\S.*)$", line):
            out[m.group(1)] = m.group(2)
    return out


def test_every_module_and_function_is_within_its_size_or_says_why():
    reasons = excused()
    unexcused = [name for name in oversized() if name not in reasons]
    assert not unexcused, (f"over {MAX_MODULE_LINES} lines (a module) or {MAX_FUNCTION_LINES} (a function), "
                           f"and not in docs/architecture.md's Sizes section with a reason: {unexcused}")


def test_the_check_sees_long_functions_and_methods():
    tree = ast.parse("class A:\n    def f(self):\n" + "        x = 1\n" * 70 + "\ndef g():\n    def h():\n        pass\n")
    lengths = dict(functions(tree))
    assert lengths["A.f"] == 71 and lengths["g"] == 3 and lengths["g.h"] == 2
