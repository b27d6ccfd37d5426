"""A GGUF chat model run in process by llama.cpp (``local:<packaged name | file.gguf>``),
offline. One call at a time; the call's deadline is checked between tokens and, while the
prompt is evaluated, between graph nodes."""
from __future__ import annotations

import ctypes
import logging
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragsift.cancel import Deadline
from ragsift.errors import ModelError
from ragsift.models.llm.base import NO_WORDS, YES_WORDS, LLMError, Messages, logsumexp
from ragsift.models.llm.packaged import PACKAGED, packaged_model_path
from ragsift.process import model_threads

_NATIVE_LOG: Any = None  # the callback llama.cpp logs through (kept: llama.cpp holds only its address)


def quiet_native_log(llama_cpp: Any) -> None:
    """llama.cpp's own log lines (a model loading, a decode aborted at its deadline, a context
    smaller than the model's) go to the logger ``ragsift.llama`` at debug level (``-vv`` shows
    them), never straight onto stderr: what fails, ragsift says itself (llama-cpp-python prints
    every line of error level there, verbose or not)."""
    global _NATIVE_LOG
    if _NATIVE_LOG is not None:
        return
    log = logging.getLogger("ragsift.llama")

    @llama_cpp.llama_log_callback
    def native_log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s", text.decode("utf-8", "replace").rstrip())

    _NATIVE_LOG = native_log
    llama_cpp.llama_log_set(native_log, ctypes.c_void_p(0))


class LocalLLM:
    """A GGUF chat model run in-process by llama.cpp. One call at a time (one context)."""

    def __init__(self, model: str, *, n_ctx: int = 4096, threads: int | None = None,
                 timeout_s: float = 300.0) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelError("local:* models need llama-cpp-python (pip install 'ragsift[llm]')") from None
        quiet_native_log(llama_cpp)
        path = Path(model) if model.endswith(".gguf") else packaged_model_path(model)
        if not path.exists():
            raise ModelError(f"no GGUF model file at {path}")
        self.path = path
        self.name = f"local:{model if model in PACKAGED else path.name}"
        self.timeout_s = timeout_s
        threads = threads or model_threads()
        try:
            self._llm = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                                        verbose=False)
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"cannot load {path}: {e}") from None
        self._lock = threading.Lock()
        self._yes_ids: list[int] | None = None
        # llama.cpp asks this between graph nodes, so even a long prompt evaluation stops at the
        # deadline (decoding then fails and the context is reset). The callback takes the GIL at
        # every node: it is on only while a prompt is evaluated, where nodes are big; token by
        # token generation checks the deadline between tokens instead (measured: on for every
        # token, generation ran 2.3x slower beside a busy Python thread).
        self._deadline: Deadline | None = None
        self._llama_cpp = llama_cpp
        self._abort_cb = llama_cpp.ggml_abort_callback(self._should_abort)
        self._no_abort_cb = llama_cpp.ggml_abort_callback(0)

    def _should_abort(self, _data: Any) -> bool:
        d = self._deadline
        return d is not None and d.expired

    def _abort_on(self, on: bool) -> None:
        self._llama_cpp.llama_set_abort_callback(self._llm._ctx.ctx, self._abort_cb if on else self._no_abort_cb, None)

    @contextmanager
    def _call(self, deadline: Deadline) -> Iterator[None]:
        """One model call at a time, under ``deadline``; llama.cpp errors become LLMError and an
        aborted call resets the context (its cached prompt state is unknown)."""
        if not self._lock.acquire(timeout=min(deadline.remaining(), 3600.0)):
            raise LLMError(f"{self.name}: busy until the deadline")
        self._deadline = deadline
        self._abort_on(True)
        failed = True
        try:
            yield
            failed = False
        except (ValueError, RuntimeError) as e:
            if deadline.expired:
                raise LLMError(f"{self.name}: out of time (aborted)") from None
            raise LLMError(f"{self.name}: {e}") from None
        finally:
            self._deadline = None
            if failed:
                self._llm.reset()
            self._lock.release()

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str:
        deadline = deadline or Deadline(self.timeout_s)
        parts: list[str] = []
        with self._call(deadline):
            stream = self._llm.create_chat_completion(
                list(messages),  # type: ignore[arg-type]  # llama_cpp's stubs: TypedDict messages
                temperature=temperature, max_tokens=max_tokens, seed=seed, stream=True)
            for i, chunk in enumerate(stream):  # one token at a time: stop when the deadline passes
                if i == 0:
                    self._abort_on(False)  # the prompt is evaluated
                if deadline.expired:
                    stream.close()  # type: ignore[union-attr]  # llama_cpp's stubs: a generator when streaming
                    raise LLMError(f"{self.name}: out of time (generation stopped)")
                parts.append(chunk["choices"][0]["delta"].get("content") or "")  # type: ignore[index]  # llama_cpp
        text = "".join(parts).strip()
        if not text:
            raise LLMError(f"{self.name}: empty answer")
        return text

    def _token_sets(self) -> tuple[list[int], list[int]]:
        if self._yes_ids is None:
            def ids(words: Sequence[str]) -> list[int]:
                out: set[int] = set()
                for w in words:
                    for form in (w, w.capitalize(), " " + w, " " + w.capitalize()):
                        toks = self._llm.tokenize(form.encode("utf-8"), add_bos=False, special=False)
                        if len(toks) == 1:
                            out.add(toks[0])
                return sorted(out)
            self._yes_ids, self._no_ids = ids(YES_WORDS), ids(NO_WORDS)
        return self._yes_ids, self._no_ids

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        import numpy as np

        deadline = deadline or Deadline(self.timeout_s)
        captured: list[Any] = []

        def capture(ids: Any, logits: Any) -> Any:
            if not captured:
                captured.append(np.array(logits, dtype=np.float64))
            return logits

        with self._call(deadline):
            yes, no = self._token_sets()
            self._llm.create_chat_completion(list(messages), temperature=0.0, max_tokens=1,  # type: ignore[arg-type]
                                             logits_processor=[capture])  # type: ignore[arg-type]  # llama_cpp's stubs
        if not captured:
            raise LLMError(f"{self.name}: no logits")
        logits = captured[0]
        lse = logits.max() + math.log(float(np.exp(logits - logits.max()).sum()))
        logp = logits - lse
        return logsumexp([float(logp[i]) for i in yes]) - logsumexp([float(logp[i]) for i in no])

