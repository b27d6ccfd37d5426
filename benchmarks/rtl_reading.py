"""Right-to-left PDFs as they come (issue 52): two Persian documents set by XeLaTeX, from TeX Live's
Arabic-script collection as Debian ships it (package texlive-lang-arabic; the PDFs and their LaTeX
sources side by side), read by ragsift's PDF loader.

    .venv/bin/python benchmarks/rtl_reading.py --work-dir /work/data-ext/rtl-reading
    # the code before, its own tree first on the path (as real_reading.py):
    .venv/bin/python benchmarks/rtl_reading.py --src=/tmp/old/src --tag before

- ``alpha-persian-p.userguide.pdf`` (27 pages): word F1 (real_reading.py's words and measure)
  against its LaTeX source as pandoc reads it (``pandoc -f latex -t plain``: a reader of the
  source, not of the PDF; its leftovers of macros it does not know, "prl", "raisebox", "5mm",
  count against every reader alike).
- ``lshort.pdf``, "The Not So Short Introduction to LaTeX" in Persian (147 pages): pandoc cannot
  read its source, so the measure is the share of the output's Persian words (Arabic-script runs)
  that its source spells somewhere, and the number of runs of twelve letters or more (words glued
  together: Persian words are seldom that long).

Writes benchmarks/results/rtl_reading.json (a row per ``--tag``).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--src=")), ROOT / "src")).resolve()
sys.path.insert(0, str(SRC))
sys.path.insert(1, str(ROOT / "benchmarks"))

from harness import multiset_f1, read_result, write_result  # noqa: E402
from real_reading import fetch, read_ragsift, words  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "rtl_reading.json"
DOC = "usr/share/doc/texlive-doc"
ARABIC = re.compile(r"[\u0600-\u06ff]")


def fetch_texlive_arabic(work: Path) -> Path:
    """texlive-lang-arabic unpacked into ``work``/root (``real_reading.fetch``), its LaTeX sources
    unzipped beside their PDFs."""
    root = fetch(work, ["texlive-lang-arabic"], f"{DOC}/latex/lshort-persian/lshort.pdf")
    for gz in (root / DOC).rglob("*.tex.gz"):
        if not gz.with_suffix("").exists():
            subprocess.run(["gunzip", "-k", str(gz)], check=True)
    return root


def lshort_source(folder: Path) -> str:
    """The book's LaTeX: lshort-base.tex with its chapters put in place of their \\include."""
    base = (folder / "lshort-base.tex").read_text(encoding="utf-8", errors="replace")
    return re.sub(r"\\include\{([^}]+)\}",
                  lambda m: (folder / f"{m.group(1)}.tex").read_text(encoding="utf-8", errors="replace"), base)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work-dir", type=Path, default=ROOT.parent / "data-ext" / "rtl-reading")
    ap.add_argument("--tag", default="after")
    ap.add_argument("--src", default=str(ROOT / "src"), help="=DIR: the ragsift source tree to measure")
    args = ap.parse_args()
    root = fetch_texlive_arabic(args.work_dir)
    out = read_result(OUT) or {}
    rows = out.setdefault("rows", {})
    guide = root / DOC / "bibtex/alpha-persian/alpha-persian-p.userguide.tex"
    ref = subprocess.run(["pandoc", "-f", "latex", "-t", "plain", "--wrap=none", str(guide)], capture_output=True,
                         text=True, check=True).stdout
    read = read_ragsift(guide.with_suffix(".pdf"))
    rw, ow = Counter(words(ref)), Counter(words(read.markdown))
    rows.setdefault("alpha-persian", {})[args.tag] = {"pages": read.pages, "seconds": round(read.seconds, 2),
                                                      "word_f1": round(multiset_f1(rw, ow), 3)}
    book = root / DOC / "latex/lshort-persian"
    vocab = set(words(re.sub(r"\\[A-Za-z]+", " ", lshort_source(book))))
    read = read_ragsift(book / "lshort.pdf")
    persian = [w for w in words(read.markdown) if ARABIC.search(w)]
    rows.setdefault("lshort-persian", {})[args.tag] = {
        "pages": read.pages, "seconds": round(read.seconds, 2), "persian_words": len(persian),
        "spelled_by_source": round(sum(w in vocab for w in persian) / max(1, len(persian)), 4),
        "runs_of_12_letters": sum(1 for w in persian if len(w) >= 12)}
    import ragsift

    assert Path(ragsift.__file__).resolve().is_relative_to(SRC), (ragsift.__file__, SRC)
    print(rows, flush=True)
    write_result(OUT, out)


if __name__ == "__main__":
    main()
