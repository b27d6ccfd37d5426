"""Shared steps of one query: work several channels wait for, done once (``runner.Shared``).

- The **rewrite** (``rewrite = true``): the plain channels search an LLM rewrite of the question.
  It has its own, shorter timeout (half the channel timeout by default), so the channels waiting
  for it can still search the question as asked when it fails.
- The **translation** (``translate = true`` with a model, when the knowledge base holds chunks in
  another language than the question's): the term channels search the question and its
  translations (``term_query``); it has a timeout of its own like the rewrite, and a failed or
  late translation leaves the question alone.
- **Registered steps** (``register_step``): an LLM generation a channel declares in its
  ``steps``, e.g. ``hyde`` (hypothetical answers, for ``hyde`` and ``hyde_bm25``) and
  ``multi_query``. A step runs until the last channel that needs it must end, so it never
  outlives them nor starves one of them; its trace goes to ``Trace.transforms[<step>]``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import ConfigError, RagsiftError
from ragsift.models.llm import LLM
from ragsift.registry import Registry
from ragsift.retrieve.runner import Shared
from ragsift.retrieve.transforms import rewrite_query, translate_query


class NeedsSteps(Protocol):
    """What steps need to know of a channel: the shared steps it waits for."""

    @property
    def steps(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class StepInput:
    """What a step works from."""

    query: str
    language: str
    settings: Settings
    llm: Callable[[], LLM]
    corpus_language: str = ""  # the knowledge base's main language, when a model should write in it


CORPUS_SHARE = 0.1  # a language with at least this share of the chunks is one the question is translated into


def corpus_languages(counts: Mapping[str, int]) -> list[str]:
    """The knowledge base's languages a question can be translated into (zh, en), most chunks first."""
    total = sum(counts.values())
    return [lang for lang, n in sorted(counts.items(), key=lambda kv: -kv[1])
            if lang in ("zh", "en") and total and n / total >= CORPUS_SHARE]


@dataclass(frozen=True)
class Step:
    """A registered shared step: ``run(input, deadline) -> value``; ``trace(value, error,
    settings) -> dict`` for the trace (value and error are None when it never ran)."""

    name: str
    run: Callable[[StepInput, Deadline], Any]
    trace: Callable[[Any, BaseException | None, Settings], dict[str, Any]]


STEPS: Registry[Step] = Registry("step", ConfigError)

Run = Callable[[StepInput, Deadline], Any]


def register_step(name: str, trace: Callable[[Any, BaseException | None, Settings], dict[str, Any]]
                  ) -> Callable[[Run], Run]:
    """Decorator: register ``run(input, deadline)`` as the shared step ``name``."""

    def wrap(run: Run) -> Run:
        step = Step(name, run, trace)
        STEPS.add(name, lambda: step)
        return run
    return wrap


def error_text(e: BaseException | None) -> str | None:
    return f"{type(e).__name__}: {e}" if e is not None else None


class Steps:
    """The shared steps of one query, for the channels it runs."""

    def __init__(self, query: str, language: str, settings: Settings, channels: Mapping[str, NeedsSteps],
                 llm: Callable[[], LLM], parent: Deadline | None = None,
                 corpus: Mapping[str, int] | None = None) -> None:
        self.query, self.settings, self.language = query, settings, language
        langs = corpus_languages(corpus or {})
        use_model = bool(settings.llm.model and settings.transforms.translate)
        # HyDE writes in the knowledge base's main language when the question's is not one of its own
        main = langs[0] if use_model and langs and language not in langs else ""
        inp = StepInput(query, language, settings, llm, main)
        self.written_language = main or language  # what the model's passages (HyDE) are written in

        def until(seconds: float) -> Deadline:
            return parent.child(seconds) if parent is not None else Deadline(seconds)

        def last(names: list[str]) -> float:
            """When the last of these channels must end (channel deadlines run from the same start)."""
            return max((settings.timeout(n) for n in names), default=settings.query.channel_timeout_s)

        self.rewrite: Shared[str] | None = None
        self.rewrite_error: str | None = None
        if settings.transforms.rewrite:
            plain = [n for n, ch in channels.items() if not ch.steps]
            rewrite_until = until(min(settings.timeout("rewrite"), last(plain)))
            self.rewrite = Shared(lambda d: rewrite_query(llm(), query, language, prompts=settings.llm.prompts,
                                                          deadline=rewrite_until))
        self.translation: Shared[dict[str, str]] | None = None
        self.translation_error: str | None = None
        self.targets = [lang for lang in langs if lang != language] if use_model else []
        terms = [n for n, ch in channels.items() if getattr(ch, "matches_terms", False) and not ch.steps]
        if self.targets and terms:
            t_until = until(min(settings.timeout("translate"), last(terms)))
            self.translation = Shared(lambda d: {lang: translate_query(llm(), query, lang, prompts=settings.llm.prompts,
                                                                        deadline=t_until) for lang in self.targets})
        self._shared: dict[str, Shared[Any]] = {}
        for name in dict.fromkeys(s for ch in channels.values() for s in ch.steps):
            step = STEPS.make(name)
            step_until = until(last([n for n, ch in channels.items() if name in ch.steps]))
            # type-ignored: mypy cannot type a lambda with default arguments against a one-argument Callable
            self._shared[name] = Shared(
                lambda d, step=step, until=step_until: step.run(inp, until))  # type: ignore[misc]

    def plain_query(self, deadline: Deadline) -> str:
        """The rewrite, or the question when rewriting is off or fails."""
        if self.rewrite is None:
            return self.query
        try:
            return self.rewrite.get(deadline)
        except RagsiftError as e:
            self.rewrite_error = error_text(e)
            return self.query

    def translations(self, deadline: Deadline) -> dict[str, str]:
        """The question's translations by language ({} without them, or when they failed)."""
        if self.translation is None:
            return {}
        try:
            return self.translation.get(deadline)
        except RagsiftError as e:
            self.translation_error = error_text(e)
            return {}

    def term_query(self, deadline: Deadline) -> str:
        """What term channels search: the plain query and its translations."""
        return "\n".join([self.plain_query(deadline), *self.translations(deadline).values()])

    def searched_languages(self) -> set[str]:
        """The languages the term channels searched in: the question's and those translated into."""
        done = self.translation is not None and self.translation.done and self.translation.outcome()[1] is None
        translated = self.translation.outcome()[0] if done and self.translation is not None else None
        return {self.language, *(translated or {})}

    def get(self, name: str, deadline: Deadline) -> Any:
        return self._shared[name].get(deadline)

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.rewrite is not None and self.rewrite.done:
            value, err = self.rewrite.outcome()
            out["rewrite"] = {"original": self.query, "rewritten": value,
                              "error": self.rewrite_error or error_text(err)}
        if self.translation is not None and self.translation.done:
            translations, err = self.translation.outcome()
            out["translate"] = {"targets": self.targets, "translations": translations or {},
                                "error": self.translation_error or error_text(err)}
        for name, shared in self._shared.items():
            value, err = shared.outcome()
            out[name] = STEPS.make(name).trace(value, err, self.settings)
        return out
