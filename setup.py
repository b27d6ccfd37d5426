"""The compiled parts of ragsift: BM25's search (``src/ragsift/store/_bm25.c``) and the int8 and
4-bit exact passes (``_scan.c``), plain C against Python's headers. Optional: where no C compiler is found the build
goes on without them; BM25 then runs in NumPy, to the same scores, and an exact pass reads every
row's float32 vector (``ragsift.store.memindex``). Everything else is in pyproject.toml."""
import sys

from setuptools import Extension, setup

# no fused multiply-add: the compiled scores must round as NumPy's do
FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]

# the int8 scan is integer arithmetic only: -O3 for the loop's vectorisation
SCAN_FLAGS = [] if sys.platform == "win32" else ["-O3"]

setup(ext_modules=[Extension("ragsift.store._bm25", ["src/ragsift/store/_bm25.c"], extra_compile_args=FLAGS,
                             optional=True),
                   Extension("ragsift.store._scan", ["src/ragsift/store/_scan.c"], extra_compile_args=SCAN_FLAGS,
                             optional=True)])
