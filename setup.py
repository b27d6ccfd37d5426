"""The compiled part of ragsift: BM25's search (``src/ragsift/store/_bm25.c``, plain C against
Python's headers). Optional: where no C compiler is found the build goes on without it and BM25
runs in NumPy, to the same scores (``ragsift.store.memindex``). Everything else is in pyproject.toml."""
import sys

from setuptools import Extension, setup

# no fused multiply-add: the compiled scores must round as NumPy's do
FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]

setup(ext_modules=[Extension("ragsift.store._bm25", ["src/ragsift/store/_bm25.c"], extra_compile_args=FLAGS,
                             optional=True)])
