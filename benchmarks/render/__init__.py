"""Renderers of docs/benchmarks.md: a module per benchmark script, named after it, rendering what its
result files give (benchmarks/report.py puts the sections in order; its docstring says the scheme)."""
