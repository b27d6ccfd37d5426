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

import threading
from typing import Any, Callable, Mapping, Protocol, Sequence

from ragsift.cancel import Deadline
from ragsift.errors import ConfigError, ModelError
from ragsift.models.llm import LLM
from ragsift.models.registry import ModelRegistry
from ragsift.text.prompts import get_prompt
from ragsift.text.lang import detect_language


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
            raise ModelError("cross-encoder rerankers need sentence-transformers (pip install 'ragsift[hub]')") from None
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


CROSS_ENCODERS: ModelRegistry[Reranker] = ModelRegistry("reranker", ConfigError)
CROSS_ENCODERS.add_family("cross-encoder:", CrossEncoderReranker)


def load_reranker(spec: str, llm: Callable[[], LLM], prompts: Mapping[str, Any] | None = None) -> Reranker:
    """``llm-judge`` (the configured model judges) or ``cross-encoder:<model>`` (loaded once)."""
    if spec == "llm-judge":
        return LLMJudgeReranker(llm(), prompts)
    if spec.startswith("cross-encoder:"):
        return CROSS_ENCODERS.load(spec)
    raise ConfigError(f"unknown reranker {spec!r}; use 'llm-judge' or 'cross-encoder:<model>'")
