"""A chat model behind any OpenAI-compatible endpoint (``openai:<model>``): vLLM, Ollama,
llama.cpp's server, hosted Qwen or DeepSeek, OpenAI.

The base URL comes from the ``llm_base_url`` setting or ``RAGSIFT_LLM_BASE_URL`` /
``OPENAI_BASE_URL``; the key from ``RAGSIFT_LLM_API_KEY`` or ``OPENAI_API_KEY`` (never from the
knowledge base's settings file). Calls are retried a bounded number of times on transient
errors (connection errors, 429, 5xx) within their deadline; a semaphore caps calls in flight.
"""
from __future__ import annotations

import os
import socket
import threading
from typing import Any

from ragsift.cancel import Cancelled, Deadline
from ragsift.config import shown_url
from ragsift.errors import ModelError
from ragsift.models.llm.base import NO_WORDS, YES_WORDS, LLMError, Messages, short, yes_no_from_logprobs
from ragsift.models.retry import Transient, retried, transient_status


class _AbortableBackend:
    """Opens TCP connections as httpcore does and keeps their sockets, so another thread can
    shut them: a read blocked on a silent endpoint then ends at once (closing a socket from
    another thread does not wake a blocked read on Linux; shutting it down does)."""

    def __init__(self) -> None:
        import httpcore2

        self._inner = httpcore2.SyncBackend()
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()

    def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        stream = self._inner.connect_tcp(*args, **kwargs)
        sock = stream.get_extra_info("socket")
        with self._lock:
            self._socks.append(sock)
        return stream

    def __getattr__(self, name: str) -> Any:  # connect_unix_socket, sleep: as httpcore's own
        return getattr(self._inner, name)

    def abort(self) -> None:
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _abortable_client(timeout: float) -> tuple[Any, _AbortableBackend]:
    """An HTTP client for one call, and the backend that can abort it."""
    import httpcore2
    import httpx2

    backend = _AbortableBackend()
    transport = httpx2.HTTPTransport()
    transport._pool = httpcore2.ConnectionPool(ssl_context=httpx2.create_ssl_context(),
                                               network_backend=backend)  # type: ignore[arg-type]  # duck-typed backend
    return httpx2.Client(transport=transport, timeout=timeout), backend


class OpenAILLM:
    """A chat model behind an OpenAI-compatible endpoint."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ModelError("openai:* models need the 'openai' package") from e
        base_url = base_url or os.environ.get("RAGSIFT_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("RAGSIFT_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "none"
        self._openai = openai
        # our own retry loop runs within the channel's deadline; the client's would not
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s)
        self.model = model
        self.base_url = str(self._client.base_url)
        self.name = f"openai:{model}@{shown_url(self.base_url)}"  # never the URL's credentials
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def _call(self, deadline: Deadline | None, **kwargs: Any) -> Any:
        deadline = deadline or Deadline(self.timeout_s)

        def attempt(left: float) -> Any:
            if not self._slots.acquire(timeout=min(left, 3600.0)):
                raise LLMError(f"{self.model}: no free slot before the deadline")
            http = unregister = None
            try:
                timeout = deadline.bound(self.timeout_s)
                # each call has its own connection, shut at once when the deadline is cancelled
                # (a query whose client went away), not left to its network timeout
                http, backend = _abortable_client(timeout)
                unregister = deadline.on_cancel(backend.abort)
                client = self._client.with_options(http_client=http)
                return client.chat.completions.create(model=self.model, timeout=timeout, **kwargs)
            except Cancelled:
                raise LLMError(f"{self.model}: out of time") from None
            except self._openai.APITimeoutError:
                raise LLMError(f"{self.model}: timed out") from None
            except self._openai.APIStatusError as e:
                if transient_status(e.status_code):
                    raise Transient(f"HTTP {e.status_code}") from None
                raise LLMError(f"{self.model}: HTTP {e.status_code}: {short(e.message)}") from None
            except self._openai.APIConnectionError as e:
                if deadline.expired:
                    raise LLMError(f"{self.model}: cancelled") from None
                raise Transient(f"connection error ({short(str(e.__cause__ or e))})") from None
            except (self._openai.APIError, ValueError, TypeError) as e:  # unparseable body
                raise LLMError(f"{self.model}: bad response: {short(str(e))}") from None
            finally:
                if unregister is not None:
                    unregister()
                if http is not None:
                    http.close()
                self._slots.release()
        return retried(attempt, deadline=deadline, retries=self.max_retries,
                       fail=lambda why: LLMError(f"{self.model}: {why}"))

    def _choice(self, resp: Any) -> Any:
        try:
            choice = resp.choices[0]
            choice.message.content  # noqa: B018 - the attribute must exist
            return choice
        except (AttributeError, IndexError, TypeError):
            raise LLMError(f"{self.model}: bad response (not a chat completion): {short(repr(resp))}") from None

    def generate(self, messages: Messages, *, temperature: float = 0.0, max_tokens: int = 256,
                 seed: int = 0, deadline: Deadline | None = None) -> str:
        resp = self._call(deadline, messages=list(messages), temperature=temperature,
                          max_tokens=max_tokens, seed=seed)
        text = self._choice(resp).message.content
        if not isinstance(text, str) or not text.strip():
            raise LLMError(f"{self.model}: empty answer")
        return text.strip()

    def yes_no(self, messages: Messages, *, deadline: Deadline | None = None) -> float:
        resp = self._call(deadline, messages=list(messages), temperature=0.0, max_tokens=1,
                          logprobs=True, top_logprobs=20)
        choice = self._choice(resp)
        try:
            content = choice.logprobs.content if choice.logprobs else None
            if content:
                score = yes_no_from_logprobs([(t.token, t.logprob) for t in content[0].top_logprobs])
                if score is not None:
                    return score
            text = (choice.message.content or "").strip().lower()
        except (AttributeError, IndexError, TypeError):
            raise LLMError(f"{self.model}: bad response: {short(repr(resp))}") from None
        # endpoints without logprobs: the answer itself, as a hard vote
        if text.startswith(YES_WORDS):
            return 10.0
        if text.startswith(NO_WORDS):
            return -10.0
        raise LLMError(f"{self.model}: judge answered neither yes nor no: {short(text)!r}")

