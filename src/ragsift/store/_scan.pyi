"""Types of the compiled int8 scan (``_scan.c``); ``ragsift.store.memindex`` calls it."""
from typing import Any

def scores(matrix: Any, rows: Any, query: Any, out: Any) -> None: ...
