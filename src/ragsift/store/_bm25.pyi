"""Types of the compiled BM25 search (``_bm25.c``); ``ragsift.store.memindex`` calls it."""
from typing import Any

def search(post_rows: Any, post_tf: Any, indptr: Any, terms: Any, wks: Any, groups: Any, norm: Any, acc: Any,
           allowed: Any, member: Any, rest: Any, read: Any, out_rows: Any, out_scores: Any, k: int,
           floor: float) -> int: ...
