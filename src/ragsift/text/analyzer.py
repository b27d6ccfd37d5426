"""The BM25 analyzer: one function from text to index terms, used at index AND query time.

- Chinese runs are segmented with jieba's search mode (``cut_for_search``: words plus
  their shorter in-vocabulary parts, so "机器学习" also indexes "机器" and "学习").
- Latin runs are lower-cased, split on non-alphanumerics, stop-worded and Snowball-stemmed.
- Punctuation and Chinese function words are dropped.

The store receives the terms as a space-joined string, so BM25 means the same thing on
every backend and Chinese never silently scores zero for lack of segmentation.
"""
from __future__ import annotations

import logging
import re
import threading

import Stemmer

_RUN_RE = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)|([A-Za-z0-9]+(?:['’][A-Za-z]+)?)")

ENGLISH_STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further had hadn't has hasn't have
haven't having he he'd he'll he's her here here's hers herself him himself his how how's
i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
myself no nor not of off on once only or other ought our ours ourselves out over own same
shan't she she'd she'll she's should shouldn't so some such than that that's the their
theirs them themselves then there there's these they they'd they'll they're they've this
those through to too under until up very was wasn't we we'd we'll we're we've were weren't
what what's when when's where where's which while who who's whom why why's with won't
would wouldn't you you'd you'll you're you've your yours yourself yourselves
""".split())

CHINESE_STOPWORDS = frozenset("""
的 了 是 在 和 与 及 或 等 吗 呢 吧 啊 呀 么 什么 怎么 怎样 如何 哪些 哪个 为什么 是否 有没有
一个 一种 这 那 这个 那个 这些 那些 之 其 也 就 都 而 并 但 被 把 对 从 到 以 于 为 着 过 让 给
请问 可以 能 会 要 应该 需要 我 你 他 她 它 我们 你们 他们 吗？ 多少 几 个
""".split())

_jieba_lock = threading.Lock()
_jieba = None


def _load_jieba():
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
    return _jieba


class Analyzer:
    """Text to BM25 terms. Stateless apart from the stemmer; safe to share across threads."""

    name = "ragsift-zh-en-v1"

    def __init__(self) -> None:
        self._stemmer_local = threading.local()

    def _stemmer(self) -> Stemmer.Stemmer:
        st = getattr(self._stemmer_local, "stemmer", None)
        if st is None:
            st = self._stemmer_local.stemmer = Stemmer.Stemmer("english")
        return st

    def terms(self, text: str) -> list[str]:
        out: list[str] = []
        stem = self._stemmer().stemWord
        for m in _RUN_RE.finditer(text):
            cjk, latin = m.group(1), m.group(2)
            if cjk:
                jieba = _load_jieba()
                for w in jieba.cut_for_search(cjk):
                    if w not in CHINESE_STOPWORDS:
                        out.append(w)
            else:
                w = latin.lower().replace("’", "'")
                if w in ENGLISH_STOPWORDS:
                    continue
                w = w.split("'")[0]
                if w:
                    out.append(stem(w))
        return out

    def analyze(self, text: str) -> str:
        """Terms as one space-joined string, the form the stores index."""
        return " ".join(self.terms(text))
