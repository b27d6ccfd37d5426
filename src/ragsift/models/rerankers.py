"""Rerankers behind one protocol: score (question, passage) pairs, higher is better.

- ``cross-encoder:<model>``: a sentence-transformers ``CrossEncoder`` from the hub or a local
  path, e.g. ``cross-encoder:BAAI/bge-reranker-v2-m3`` (``pip install ragsift[hub]``; needs
  internet or a local copy).
- ``llm-judge``: the configured LLM judges each pair; the score is log P(yes) - log P(no) for
  its next token. Works offline with a local model, but costs one model call per pair: rerank
  only the top few.

Rerankers are applied to the top ``rerank_top_n`` fused units only.
"""
from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ragsift.cancel import Deadline
from ragsift.config import shown_url
from ragsift.errors import ConfigError, ModelError
from ragsift.models.llm import LLM
from ragsift.models.retry import Transient, retried, transient_status
from ragsift.registry import Registry
from ragsift.text.lang import detect_language
from ragsift.text.prompts import get_prompt


class Reranker(Protocol):
    name: str

    def score(self, question: str, passages: Sequence[str], deadline: Deadline) -> list[float]:
        """Scores for a prefix of ``passages`` (all of them unless time ran out), in order."""
        ...


class CrossEncoderReranker:
    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise ModelError("cross-encoder rerankers need sentence-transformers "
                             "(pip install 'ragsift[hub]')") from None
        try:
            self._model = CrossEncoder(model, device="cpu")
        except Exception as e:  # hub errors come in many types
            raise ModelError(f"cannot load cross-encoder {model!r}: {e}") from None
        self.name = f"cross-encoder:{model}"
        self._lock = threading.Lock()

    def score(self, question: str, passages: Sequence[str], deadline: Deadline) -> list[float]:
        with self._lock:
            return [float(s) for s in self._model.predict([(question, p) for p in passages])]


class LLMJudgeReranker:
    def __init__(self, llm: LLM, prompts: Mapping[str, Any] | None = None) -> None:
        self.llm = llm
        self.prompts = prompts
        self.name = f"llm-judge:{llm.name}"

    def score(self, question: str, passages: Sequence[str], deadline: Deadline) -> list[float]:
        prompt = get_prompt("judge", detect_language(question), self.prompts)
        out: list[float] = []
        for p in passages:
            if deadline.expired:
                break
            out.append(self.llm.yes_no(prompt.messages(question=question, passage=p), deadline=deadline))
        return out


class EndpointReranker:
    """A reranker behind an HTTP endpoint, one request per query for all its passages.

    - ``api:<model>``: ``POST <base>/rerank`` with ``{"model", "query", "documents", "top_n"}``,
      answered ``{"results": [{"index", "relevance_score"}]}``: Cohere, Jina, vLLM.
    - ``tei:<model>``: Text Embeddings Inference's ``POST <base>/rerank`` with ``{"query",
      "texts"}``, answered ``[{"index", "score"}]``.

    Transient errors (connection errors, 429, 5xx) are retried within the deadline; anything
    else, or running out of time, raises ModelError (the caller keeps the fused order)."""

    def __init__(self, spec: str, base_url: str = "", max_retries: int = 2) -> None:
        self.kind, _, self.model = spec.partition(":")
        base = base_url or os.environ.get("RAGSIFT_RERANK_BASE_URL", "")
        if not base:
            raise ConfigError(f"reranker {spec!r} needs rerank_base_url (or $RAGSIFT_RERANK_BASE_URL)")
        self.url = base.rstrip("/") + "/rerank"
        self.key = os.environ.get("RAGSIFT_RERANK_API_KEY", "")
        self.name = f"{spec}@{shown_url(base)}"  # never the URL's credentials
        self.max_retries = max_retries

    def _post(self, body: dict[str, Any], deadline: Deadline) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"

        def attempt(left: float) -> Any:
            req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=max(0.05, min(left, 3600.0))) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as e:
                if transient_status(e.code):
                    raise Transient(f"HTTP {e.code}") from None
                raise ModelError(f"{self.name}: HTTP {e.code}: {e.read()[:200]!r}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
                raise Transient(f"{type(e).__name__}: {getattr(e, 'reason', e)}") from None
            except json.JSONDecodeError:
                raise ModelError(f"{self.name}: the answer is not JSON") from None
        return retried(attempt, deadline=deadline, retries=self.max_retries,
                       fail=lambda why: ModelError(f"{self.name}: {why}"))

    def score(self, question: str, passages: Sequence[str], deadline: Deadline) -> list[float]:
        if not passages:
            return []
        if self.kind == "tei":
            answer = self._post({"query": question, "texts": list(passages)}, deadline)
            rows, key = answer, "score"
        else:
            answer = self._post({"model": self.model, "query": question, "documents": list(passages),
                                 "top_n": len(passages)}, deadline)
            rows, key = (answer.get("results") if isinstance(answer, dict) else None), "relevance_score"
        try:
            scores = {int(r["index"]): float(r[key]) for r in rows}
        except (TypeError, KeyError, ValueError):
            raise ModelError(f"{self.name}: not a rerank answer: {str(answer)[:200]}") from None
        if sorted(scores) != list(range(len(passages))):
            raise ModelError(f"{self.name}: scores for {len(scores)} of {len(passages)} passages")
        return [scores[i] for i in range(len(passages))]


CROSS_ENCODERS: Registry[Reranker] = Registry("reranker", ConfigError)
CROSS_ENCODERS.add_family("cross-encoder:", CrossEncoderReranker, rest="model")


def load_reranker(spec: str, llm: Callable[[], LLM], prompts: Mapping[str, Any] | None = None,
                  base_url: str = "") -> Reranker:
    """``llm-judge`` (the configured model judges), ``cross-encoder:<model>`` (loaded once), or
    an endpoint: ``api:<model>`` / ``tei:<model>`` at ``base_url``."""
    if spec == "llm-judge":
        return LLMJudgeReranker(llm(), prompts)
    if spec.startswith("cross-encoder:"):
        return CROSS_ENCODERS.load(spec)
    if spec.startswith(("api:", "tei:")):
        return EndpointReranker(spec, base_url)
    raise ConfigError(f"unknown reranker {spec!r}; use 'llm-judge', 'cross-encoder:<model>', 'api:<model>' "
                      "or 'tei:<model>'")
