"""Prompt templates in Chinese and English, chosen by the question's language, and the
cleaning of what a model answers to them.

Each template is a system text and a user text with ``{placeholders}``. ``translate.<lang>``
is chosen by the language translated into, every other kind by the question's language. Any of them can be
replaced through the ``prompts`` setting, e.g.
``prompts = { "hyde.en" = { system = "...", user = "Question: {question}" } }``.
"""
from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragsift.errors import ConfigError


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str

    def messages(self, **values: Any) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system.format(**values)},
                {"role": "user", "content": self.user.format(**values)}]


# placeholders each template's user text must use (and may only use)
FIELDS: dict[str, tuple[str, ...]] = {
    "hyde": ("question",),
    "rewrite": ("question",),
    "multi_query": ("question", "n"),
    "judge": ("question", "passage"),
    "follow_up": ("question", "found"),
    "summary": ("text",),
    "translate": ("question",),  # translate.zh: into Chinese; translate.en: into English
    "question": ("text",),  # ragsift tune without labels: a question a passage answers
}

DEFAULTS: dict[str, Prompt] = {
    "hyde.en": Prompt(
        "You are an expert in the subject of the question. Write one passage that answers it the "
        "way a reference text, paper or manual would: state the facts directly, with names, "
        "numbers and technical terms. No hedging words (may, might, possibly, likely, I think), "
        "no preamble, no lists, no mention of the question. About 120 words.",
        "Question: {question}\nPassage:"),
    "hyde.zh": Prompt(
        "你是这个问题所属领域的专家。请写一段文字回答问题，写法要像参考资料、论文或手册中的段落："
        "直接陈述事实，写出名称、数字和术语。不要使用“可能”“也许”“大概”“我认为”等含糊的词，"
        "不要开场白，不要列表，不要复述问题。约300字。",
        "问题：{question}\n段落："),
    "rewrite.en": Prompt(
        "Rewrite the user's question as one clear search query for a document search engine. "
        "Keep every product name, entity name, number and technical term exactly as written. "
        "Fix spelling, drop filler words, make implicit subjects explicit. Answer with the query "
        "only, on one line.",
        "{question}"),
    "rewrite.zh": Prompt(
        "把用户的问题改写成一条清楚的检索查询，用于文档搜索引擎。产品名、实体名、数字和术语必须"
        "原样保留。改正错别字，去掉口语和多余的词，补全省略的主语。只输出改写后的查询，一行。",
        "{question}"),
    "multi_query.en": Prompt(
        "Write {n} different search queries that together find the documents needed to answer the "
        "user's question. Keep product names, entity names, numbers and technical terms exactly as "
        "written. One query per line, no numbering, nothing else.",
        "{question}"),
    "multi_query.zh": Prompt(
        "写出{n}条不同的检索查询，合起来能找到回答用户问题所需的文档。产品名、实体名、数字和术语"
        "原样保留。每行一条，不要编号，不要其他内容。",
        "{question}"),
    "judge.en": Prompt(
        "You judge search results. Answer yes if the passage contains information that answers the "
        "question or directly supports an answer to it; otherwise answer no. Answer with one word: "
        "yes or no.",
        "Question: {question}\n\nPassage: {passage}\n\nDoes the passage answer the question?"),
    "judge.zh": Prompt(
        "你负责评判检索结果。如果段落包含能回答问题或直接支持答案的信息，回答“是”，否则回答“否”。"
        "只回答一个字：是 或 否。",
        "问题：{question}\n\n段落：{passage}\n\n这段文字能回答问题吗？"),
    "follow_up.en": Prompt(
        "You help answer a question that needs several searches. Given the question and the "
        "passages found so far, write the next search query: the one missing fact to look up, "
        "naming the entity found so far that it is about. If the passages already answer the "
        "question, answer DONE. Answer with the query only, on one line.",
        "Question: {question}\n\nFound so far:\n{found}\n\nNext search query:"),
    "follow_up.zh": Prompt(
        "你在帮助回答一个需要多次检索的问题。根据问题和已找到的段落，写出下一条检索查询：还缺的那一条"
        "事实，并写明它涉及的、已找到的实体。如果已找到的段落足以回答问题，回答 DONE。只输出查询，一行。",
        "问题：{question}\n\n已找到：\n{found}\n\n下一条检索查询："),
    "translate.en": Prompt(
        "Translate the user's search question into English. Keep names, numbers, product names and "
        "technical terms; use their usual English forms. Answer with the translation only, on one line.",
        "{question}"),
    "translate.zh": Prompt(
        "把用户的检索问题翻译成中文。保留名称、数字、产品名和术语，使用它们通常的中文写法。"
        "只输出译文，一行。",
        "{question}"),
    "question.en": Prompt(
        "Write one question that a user might ask and that the passage answers. Use the words a "
        "user would use, not a copy of a sentence. Answer with the question only, on one line.",
        "Passage:\n{text}\n\nQuestion:"),
    "question.zh": Prompt(
        "写一个用户可能会问、并且这段文字能够回答的问题。用用户自己的说法，不要照抄原句。只输出问题，一行。",
        "段落：\n{text}\n\n问题："),
    "summary.en": Prompt(
        "Summarise the text for a search index: one paragraph of at most 100 words that states its "
        "main facts, with the names, numbers and technical terms it uses. No preamble.",
        "Text:\n{text}\n\nSummary:"),
    "summary.zh": Prompt(
        "为检索索引概括这段文字：一段话，不超过150字，写出主要事实，保留其中的名称、数字和术语。"
        "不要开场白。",
        "文字：\n{text}\n\n概括："),
}


MAX_PROMPT_CHARS = 4000  # longest system or user text of a replaced template


def _placeholders(text: str, name: str) -> set[str]:
    """The fields a template names. Only plain ``{field}`` is allowed: a format spec or a
    conversion (``{question:>30000000}``, ``{question!r}``) could make a prompt of any size from a
    short question, and attribute or index access (``{question.__class__}``) reads Python objects."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as e:
        raise ConfigError(f"prompt {name!r}: bad template {text[:60]!r}: {e}") from None
    out = set()
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if spec or conversion:
            raise ConfigError(f"prompt {name!r}: a placeholder is a plain {{{field}}}, without a format spec or "
                              f"conversion (got {{{field}{'!' + conversion if conversion else ''}"
                              f"{':' + spec if spec else ''}}})"[:300])
        out.add(field)
    return out


def validate_prompts(overrides: Mapping[str, Any]) -> None:
    """Replaced templates: known names, a system and a user string of at most
    ``MAX_PROMPT_CHARS`` each, plain placeholders among the kind's fields, its first field used."""
    for name, value in overrides.items():
        kind, _, lang = name.partition(".")
        if kind not in FIELDS or lang not in ("en", "zh"):
            raise ConfigError(f"unknown prompt {name!r}; valid: {', '.join(sorted(DEFAULTS))}")
        if not isinstance(value, Mapping) or set(value) != {"system", "user"} or \
                not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"prompt {name!r} must be a table with the strings 'system' and 'user'")
        long = [k for k in ("system", "user") if len(value[k]) > MAX_PROMPT_CHARS]
        if long:
            raise ConfigError(f"prompt {name!r}: {long[0]} text longer than {MAX_PROMPT_CHARS} characters")
        used = _placeholders(value["user"], name) | _placeholders(value["system"], name)
        allowed = set(FIELDS[kind])
        if used - allowed:
            raise ConfigError(f"prompt {name!r} uses unknown placeholder(s) "
                              f"{', '.join(sorted(used - allowed))}; it may use {', '.join(sorted(allowed))}")
        if FIELDS[kind][0] not in used:
            raise ConfigError(f"prompt {name!r} must use {{{FIELDS[kind][0]}}}")


def get_prompt(kind: str, language: str, overrides: Mapping[str, Any] | None = None) -> Prompt:
    name = f"{kind}.{'zh' if language == 'zh' else 'en'}"
    if overrides and name in overrides:
        o = overrides[name]
        return Prompt(o["system"], o["user"])
    return DEFAULTS[name]


_LEAD = re.compile(r"^\s*(?:passage|answer|query|search query|rewritten query|段落|答案|查询|检索查询)\s*[:：]\s*",
                   re.IGNORECASE)
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\d+[.)、]|[（(]\d+[)）])\s*")


def clean_answer(text: str) -> str:
    """A model's answer without a leading label ("Passage:", "查询：") and surrounding quotes."""
    text = _LEAD.sub("", text.strip())
    return text.strip().strip('"“”「」').strip()


def answer_lines(text: str, numbered: bool = False) -> list[str]:
    """The non-empty lines of an answer, each cleaned; ``numbered``: list markers removed too."""
    out = []
    for ln in text.splitlines():
        ln = clean_answer(_NUMBERING.sub("", ln) if numbered else ln)
        if ln:
            out.append(ln)
    return out
