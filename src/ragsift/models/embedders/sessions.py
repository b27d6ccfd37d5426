"""ONNX Runtime sessions as the packaged embedders run them: their options (``ort_options``) and
a main session with a one-thread one for overlapping calls (``Sessions``)."""
from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragsift.process import model_threads


def ort_options(ort: Any, threads: int | None = None) -> Any:
    """ONNX Runtime session options: ``$RAGSIFT_THREADS`` intra-op threads, one inter-op thread, and no
    busy-waiting after a run unless ``$RAGSIFT_ORT_SPINNING=1``: spinning threads starve the store's
    and numpy's work that follows each query embedding (measured: embed + search 15.8 ms spinning,
    5 ms not); for ingest throughput benchmarks/throughput.py measures both.

    No CPU memory arena and no memory patterns unless ``$RAGSIFT_ORT_ARENA=1``: ONNX Runtime's arena
    keeps the largest batch's activations for the life of the session and grows in steps as batch
    shapes vary (benchmarks/soak.py's process, minilm and two knowledge bases: 2,087 MB at its first
    round with the arena, 508 MB without; tests/ground/test_process.py checks a large batch is handed back)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or model_threads()
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", os.environ.get("RAGSIFT_ORT_SPINNING", "0"))
    if os.environ.get("RAGSIFT_ORT_ARENA", "0") != "1":
        opts.enable_cpu_mem_arena = False
        opts.enable_mem_pattern = False
    return opts


class Sessions:
    """An ONNX model's sessions: the main one on ``$RAGSIFT_THREADS`` intra-op threads, and one on
    a single thread for a call that starts while another runs (made at the first overlap). When
    calls overlap, the cores are already busy: splitting a short run among threads only adds the
    cost of splitting (all-MiniLM-L6-v2, a SciFact question: 9.3 ms of CPU on one thread, 11.4 ms
    on two for 7.2 ms of wall time). A server under load embeds nearly every question on one
    thread, a lone question gets every thread. The vectors are the same either way (ONNX Runtime
    splits a product by its output blocks; tests/models/test_embedders.py checks it)."""

    def __init__(self, make: Any) -> None:
        self._make = make  # threads -> an InferenceSession
        threads = model_threads()
        self.main = make(threads)
        self._one: Any = self.main if threads == 1 else None
        self._running = 0
        self._lock = threading.Lock()
        self.overlapped = 0  # calls that ran on the one-thread session

    @contextmanager
    def session(self) -> Iterator[Any]:
        with self._lock:
            overlap = self._running > 0
            self._running += 1
            if overlap:
                if self._one is None:
                    self._one = self._make(1)
                self.overlapped += 1
            sess = self._one if overlap else self.main
        try:
            yield sess
        finally:
            with self._lock:
                self._running -= 1
