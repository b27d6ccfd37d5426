"""The benchmarks stay a small library, checked on their source and by importing each:

- no script reaches into a private ragsift name (``from ragsift.x import _y``, ``obj._y``, code
  handed to a child process included), so a rename in src fails here, not silently in a benchmark;
- every script's docstring holds the command line that runs it;
- every script is named in ``benchmarks/run_all.sh``: run there, or listed with why it is not;
- every script that writes a result writes it through ``harness.write_result`` (command, commit,
  date and host stamped), and every one imports without ``../shared`` nor its optional tools;
- every file in ``benchmarks/results`` names the command and the commit that measured it, and every
  section of ``docs/benchmarks.md`` names the result files its figures come from;
- ``docs/benchmarks.md`` is what ``benchmarks/report.py`` renders from the stored results (through a
  renderer per script, ``benchmarks/render/``), and ``benchmarks/README.md`` what it renders of its index;
- that index (``report.INDEX``) names every script, result files that are there, headings the page has,
  and says truly whether ``run_all.sh`` runs each.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

BENCH = ROOT / "benchmarks"
SCRIPTS = sorted([*BENCH.glob("*.py"), *(BENCH / "datasets").glob("*.py")])
RENDERERS = sorted((BENCH / "render").glob("*.py"))  # docs/benchmarks.md's sections, imported by report.py
LIBRARIES = {"harness.py", "beir.py"}  # imported by the scripts, never run
# private names that are not ragsift's: (script, attribute) -> whose
NOT_RAGSIFT = {("readers.py", "_install_spacy_model"): "unstructured's tokenizer, patched to refuse a download"}


def _load_harness():  # by its file: benchmarks/ on sys.path would make its datasets/ folder the `datasets`
    import importlib.util  # package for the whole test run (lancedb then failed: "cannot import name 'Dataset'")

    spec = importlib.util.spec_from_file_location("harness", BENCH / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


harness = _load_harness()


def _trees(path: Path) -> list[ast.AST]:
    """The script, and each string in it that is Python importing ragsift (a child's code)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[ast.AST] = [tree]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import ragsift" in node.value:
            try:
                out.append(ast.parse(textwrap.dedent(node.value)))
            except SyntaxError:
                pass
    return out


def _private_uses(path: Path) -> list[str]:
    found = []
    for tree in _trees(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragsift"):
                names = [a.name for a in node.names if a.name.startswith("_")]
                if names or any(p.startswith("_") for p in node.module.split(".")):  # type: ignore[union-attr]
                    found.append(f"line {node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
            elif isinstance(node, ast.Import):
                found += [f"line {node.lineno}: import {a.name}" for a in node.names
                          if a.name.startswith("ragsift") and any(p.startswith("_") for p in a.name.split("."))]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if (path.name, node.attr) not in NOT_RAGSIFT:
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", SCRIPTS + RENDERERS, ids=lambda p: p.relative_to(BENCH).as_posix())
def test_no_benchmark_reaches_into_a_private_ragsift_name(path):
    assert _private_uses(path) == [], f"{path.name}: give it a public, documented name in src"


@pytest.mark.parametrize("path", [p for p in SCRIPTS if p.name not in LIBRARIES], ids=lambda p: p.name)
def test_every_script_says_its_command(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    rel = path.relative_to(BENCH).as_posix()
    assert re.search(rf"python\S*\s+(benchmarks/)?{re.escape(rel)}\b", doc), \
        f"{rel}: its docstring shows no command line (python benchmarks/{rel} ...)"


def test_run_all_names_every_script():
    text = (BENCH / "run_all.sh").read_text(encoding="utf-8") + (BENCH / "llm.sh").read_text(encoding="utf-8")
    missing = [p.name for p in SCRIPTS if p.parent == BENCH and p.name not in text]
    assert missing == [], "run_all.sh neither runs these nor says why not: " + ", ".join(missing)
    assert "datasets/*.py" in text


def test_every_result_goes_through_the_harness():
    """A script that writes a result file (an --out option or benchmarks/results) stamps it."""
    for path in SCRIPTS:
        text = path.read_text(encoding="utf-8")
        if path.parent != BENCH or path.name in LIBRARIES or path.name in ("report.py", "readers.py", "web_screenshots.py"):
            continue
        if '"--out"' in text or '"results"' in text:
            assert "write_result(" in text, f"{path.name} writes a result without harness.write_result"


def test_every_script_imports_without_the_shared_datasets(tmp_path):
    """Each script imports (its main not run) with DATASETS pointing nowhere; a package missing from
    this environment may only be one of benchmarks/requirements-*.txt (the anchors' own venvs). Each
    renderer of benchmarks/render/ imports too. Not marked slow: `make check` runs it."""
    optional = set()
    for req in BENCH.glob("requirements-*.txt"):
        for line in req.read_text(encoding="utf-8").splitlines():
            name = re.split(r"[<>=\[;@ ]", line.strip(), maxsplit=1)[0]
            if name and not name.startswith("#") and not name.startswith("-"):
                optional.add(name.lower().replace("-", "_"))
    code = (
        "import importlib, json, sys\n"
        "sys.argv = ['x']\n"
        "out = {}\n"
        "for folder, names in json.loads(sys.stdin.read()):\n"
        "    sys.path.insert(0, folder)\n"
        "    for n in names:\n"
        "        try:\n"
        "            importlib.import_module(n)\n"
        "            out[n] = None\n"
        "        except ModuleNotFoundError as e:\n"
        "            out[n] = 'missing:' + (e.name or '')\n"
        "        except BaseException as e:\n"
        "            out[n] = f'{type(e).__name__}: {e}'\n"
        "    sys.path.remove(folder)\n"
        "print(json.dumps(out))\n"
    )
    groups = [[str(BENCH), [p.stem for p in SCRIPTS if p.parent == BENCH] + [f"render.{p.stem}" for p in RENDERERS]],
              [str(BENCH / "datasets"), [p.stem for p in SCRIPTS if p.parent != BENCH]]]
    env = {**os.environ, "DATASETS": str(tmp_path / "no-shared"), "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(groups), capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    bad = {n: e for n, e in got.items()
           if e and not (e.startswith("missing:") and e.split(":", 1)[1].split(".")[0].lower() in optional)}
    assert bad == {}


def test_the_harness_stamps_every_result(tmp_path):
    out = tmp_path / "r.json"
    harness.write_result(out, {"p50_ms": 1.0}, argv=[str(BENCH / "scale.py"), "--sizes", "10 000"])
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["p50_ms"] == 1.0
    assert got["command"].endswith("benchmarks/scale.py --sizes '10 000'")
    assert set(got) >= {"command", "commit", "dirty", "date", "host"}
    assert got["host"]["cores"] == os.cpu_count() and got["host"]["cpu"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", got["date"])


def untraced(results: Path) -> list[str]:
    """Files in ``results`` that name no command or no commit: a JSON file by its keys (one gathering
    several runs, ``hostile.json``, by each run's under ``runs``); a table, chart or per-query file by
    the JSON of its run beside it (``scifact.md`` -> ``scifact.json``)."""
    bad = []
    for p in sorted(x for x in results.rglob("*") if x.is_file()):
        name = p.relative_to(results).as_posix()
        if p.suffix != ".json":
            if not p.with_name(p.name.split(".")[0].removesuffix("-per-query") + ".json").is_file():
                bad.append(f"{name}: no JSON of its run beside it")
            continue
        data = json.loads(p.read_text(encoding="utf-8"))
        runs = [data] if "command" in data or not isinstance(data.get("runs"), dict) else list(data["runs"].values())
        for run in runs:
            if not (isinstance(run, dict) and isinstance(run.get("command"), str) and run["command"].strip()):
                bad.append(f"{name}: no command")
            if not (isinstance(run, dict) and re.fullmatch(r"[0-9a-f]{7,40}", str(run.get("commit")))):
                bad.append(f"{name}: no commit (7 to 40 hex digits)")
    return bad


def unsourced(page: str) -> list[str]:
    """Sections (``## ``) of a page that name no file under benchmarks/results/ nor say they have none
    (not run yet, or a figure measured on data that cannot be in the repository: "no result file")."""
    sections = re.split(r"(?m)^(?=## )", page)[1:]
    return [s.splitlines()[0] for s in sections
            if "benchmarks/results/" not in s and not re.search(r"Not run yet|[Nn]o result file", s)]


def test_every_result_names_its_command_and_commit(tmp_path):
    assert untraced(BENCH / "results") == []
    (tmp_path / "a.json").write_text('{"command": "python benchmarks/a.py", "commit": "0123abc"}', encoding="utf-8")
    (tmp_path / "b.json").write_text('{"command": "python benchmarks/b.py", "date": "2026-12-05"}', encoding="utf-8")
    (tmp_path / "c.json").write_text('{"runs": {"x": {"command": "c", "commit": "zz"}}}', encoding="utf-8")
    (tmp_path / "a.png").write_bytes(b"")
    (tmp_path / "d-per-query.jsonl").write_text("", encoding="utf-8")
    assert untraced(tmp_path) == ["b.json: no commit (7 to 40 hex digits)", "c.json: no commit (7 to 40 hex digits)",
                                  "d-per-query.jsonl: no JSON of its run beside it"]
    harness.stamp_file(tmp_path / "b.json")  # what run_all.sh does after `ragsift eval`: one line kept one line
    assert "\n" not in (tmp_path / "b.json").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["date"] == "2026-12-05"


def test_every_section_names_its_result_files(index):
    """Each section of docs/benchmarks.md names a result file (or says why none), and each JSON result
    file is named in a section report.INDEX shows it in: a figure on the page leads to its file."""
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert unsourced(page) == []
    assert unsourced("## A\n\n3.2 ms\n## B\n\n`benchmarks/results/b.json`: 4 ms\n") == ["## A"]
    sections = {s.splitlines()[0][3:]: s for s in re.split(r"(?m)^(?=## )", page)[1:]}
    for script, row in index["index"].items():
        for name in [] if row["results"] == index["not_run"] else [n for n in row["results"] if n.endswith(".json")]:
            assert any(f"benchmarks/results/{name}" in sections[h] for h in row["sections"]), \
                f"{name} ({script}): named in none of its sections ({'; '.join(row['sections'])})"


def test_percentiles_are_numpys_or_the_nearest_measured():
    xs = list(np.random.default_rng(3).random(41))
    for p in (0, 5, 50, 90, 95, 99, 100):
        assert harness.percentile(xs, p) == pytest.approx(float(np.percentile(xs, p)))
        assert harness.percentile(xs, p, method="nearest") in xs
    assert harness.percentile([1.0, 2.0, 3.0, 10.0], 95, method="nearest") == 10.0
    assert harness.percentile([], 50, empty=0.0) == 0.0


def test_docs_benchmarks_is_what_report_renders():
    r = subprocess.run([sys.executable, str(BENCH / "report.py"), "--check"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, "docs/benchmarks.md differs from `python benchmarks/report.py`: " + r.stdout + r.stderr


@pytest.fixture(scope="module")
def index() -> dict:
    """report.INDEX, read in a child (benchmarks/ on this process's path would make datasets/ a package)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import report; "
            "print(json.dumps({'index': {k: v._asdict() for k, v in report.INDEX.items()}, 'not_run': report.NOT_RUN}))")
    r = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def test_the_index_names_every_script(index):
    scripts = {p.name for p in BENCH.glob("*.py")} | {p.name for p in BENCH.glob("*.sh")}
    assert set(index["index"]) == scripts, "report.INDEX: add (or drop) a row for each script in benchmarks/"


def test_the_index_names_the_result_files_there(index):
    """Each result file it names is in benchmarks/results (or the row says "not run"), and each file
    there is named by one row: a result no section reads, or a section reading a file nobody writes, fails."""
    results = BENCH / "results"
    named: dict[str, str] = {}
    for script, row in index["index"].items():
        if row["results"] == index["not_run"]:
            continue
        assert not isinstance(row["results"], str), f"{script}: results are file names or {index['not_run']!r}"
        for name in row["results"]:
            assert (results / name).is_file(), f"{script}: benchmarks/results/{name} is not there (or say 'not run')"
            assert name not in named, f"{name}: named by {named[name]} and {script}"
            named[name] = script
    stored = {p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file()}
    assert stored - set(named) == set(), "result files no row of report.INDEX names"


def test_the_index_names_headings_of_the_page(index):
    headings = {line[3:] for line in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("## ")}
    for script, row in index["index"].items():
        assert set(row["sections"]) <= headings, f"{script}: no such heading in docs/benchmarks.md"
        assert row["sections"] or not row["results"], f"{script}: its results show in no section"


def test_the_index_says_truly_what_run_all_runs(index):
    """run_all: True exactly when run_all.sh (or llm.sh, which it runs) runs the script, outside a comment."""
    def commands(name: str) -> str:
        text = (BENCH / name).read_text(encoding="utf-8")
        return "\n".join(line.split(" #")[0] for line in text.splitlines() if not line.lstrip().startswith("#"))

    run = commands("run_all.sh") + commands("llm.sh")
    for script, row in index["index"].items():
        runs = script == "run_all.sh" or f"benchmarks/{script}" in run
        assert row["run_all"] == runs, f"{script}: report.INDEX says run_all={row['run_all']}, run_all.sh says {runs}"
