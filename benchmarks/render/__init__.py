"""Renderers of docs/benchmarks.md's sections."""
