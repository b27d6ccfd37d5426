"""Query transforms that call a language model: HyDE, rewriting, translation and multi-query.

HyDE (Gao et al., 2022, "Precise Zero-Shot Dense Retrieval without Relevance Labels"): the
model writes a hypothetical answer passage, which reads like the documents, and that passage
is searched. Three modes:

- ``hypothesis``: embed the hypothesis alone;
- ``query+hypothesis``: embed the question followed by the hypothesis;
- ``mean``: the paper's estimate, the mean of the vectors of N hypotheses and of the question.

The first hypothesis is greedy (temperature 0); the others in ``mean`` mode are sampled at
``hyde_temperature`` with seeds 1..N-1, so every answer is reproducible and cacheable.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragsift.cancel import Deadline
from ragsift.config import HydeMode
from ragsift.errors import RagsiftError
from ragsift.models.embedders import Embedder
from ragsift.models.llm import LLM, LLMError
from ragsift.text.lang import detect_language
from ragsift.text.prompts import answer_lines, clean_answer, get_prompt


@dataclass
class Hypotheses:
    texts: list[str]
    errors: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"hypotheses": self.texts, "errors": self.errors, "elapsed_ms": round(self.elapsed_ms, 3)}


def generate_hypotheses(llm: LLM, question: str, language: str, n: int, *, temperature: float,
                        max_tokens: int, prompts: Mapping[str, Any] | None, deadline: Deadline) -> Hypotheses:
    """Up to ``n`` hypotheses. Later samples that fail or run out of time are left out (their
    errors kept) as long as one hypothesis exists; with none, raises LLMError."""
    t = time.perf_counter()
    msgs = get_prompt("hyde", language, prompts).messages(question=question)
    out = Hypotheses([])
    for i in range(n):
        try:
            text = clean_answer(llm.generate(msgs, temperature=0.0 if i == 0 else temperature,
                                             max_tokens=max_tokens, seed=i, deadline=deadline))
            if not text:
                raise LLMError("empty hypothesis")
            out.texts.append(text)
        except RagsiftError as e:
            out.errors.append(f"sample {i}: {e}")
            if not out.texts or deadline.expired:
                break
    out.elapsed_ms = (time.perf_counter() - t) * 1000
    if not out.texts:
        raise LLMError("; ".join(out.errors) or "no hypothesis")
    return out


def hyde_vector(embedder: Embedder, question: str, hyp: Hypotheses, mode: HydeMode) -> np.ndarray:
    if mode == HydeMode.HYPOTHESIS:
        v = embedder.embed_passages([hyp.texts[0]])[0]
    elif mode == HydeMode.QUERY_HYPOTHESIS:
        v = embedder.embed_passages([question + "\n" + hyp.texts[0]])[0]
    else:  # mean of the N hypothesis vectors and the question's vector
        vecs = np.vstack([embedder.embed_passages(hyp.texts), embedder.embed_queries([question])])
        v = vecs.mean(axis=0)
    n = float(np.linalg.norm(v))
    return v / n if n else v


def hyde_text(question: str, hyp: Hypotheses, mode: HydeMode) -> str:
    """What the BM25 HyDE channel searches."""
    if mode == HydeMode.HYPOTHESIS:
        return hyp.texts[0]
    if mode == HydeMode.QUERY_HYPOTHESIS:
        return question + "\n" + hyp.texts[0]
    return "\n".join([question, *hyp.texts])


def _one_line(llm: LLM, kind: str, language: str, question: str, what: str, max_tokens: int, *,
              prompts: Mapping[str, Any] | None, deadline: Deadline) -> str:
    """The first line of the model's answer to prompt ``kind``; LLMError when there is none or
    it is far longer than the question."""
    msgs = get_prompt(kind, language, prompts).messages(question=question)
    lines = answer_lines(llm.generate(msgs, temperature=0.0, max_tokens=max_tokens, deadline=deadline))
    if not lines:
        raise LLMError(f"empty {what}")
    if len(lines[0]) > 4 * len(question) + 200:
        raise LLMError(f"{what} is {len(lines[0])} characters for a {len(question)}-character question")
    return lines[0]


def rewrite_query(llm: LLM, question: str, language: str, *, prompts: Mapping[str, Any] | None,
                  deadline: Deadline) -> str:
    """One rewritten query; raises LLMError when the answer is unusable."""
    return _one_line(llm, "rewrite", language, question, "rewrite", 96, prompts=prompts, deadline=deadline)


def translate_query(llm: LLM, question: str, target: str, *, prompts: Mapping[str, Any] | None,
                    deadline: Deadline) -> str:
    """The question translated into ``target`` (zh or en); raises LLMError when the answer is
    unusable (empty, far longer than the question, or not in the target language)."""
    out = _one_line(llm, "translate", target, question, "translation", 128, prompts=prompts, deadline=deadline)
    if detect_language(out) != target:
        raise LLMError(f"the translation is not in {target}: {out[:80]!r}")
    return out


def multi_queries(llm: LLM, question: str, language: str, n: int, *, prompts: Mapping[str, Any] | None,
                  deadline: Deadline) -> list[str]:
    msgs = get_prompt("multi_query", language, prompts).messages(question=question, n=n)
    text = llm.generate(msgs, temperature=0.0, max_tokens=64 * n, deadline=deadline)
    seen: set[str] = {question.strip().lower()}
    out: list[str] = []
    for q in answer_lines(text, numbered=True):
        if q.lower() not in seen and len(q) <= 4 * len(question) + 200:
            seen.add(q.lower())
            out.append(q)
    if not out:
        raise LLMError("no usable queries in the answer")
    return out[:n]
