"""A question's chain of relations, read from its own structure: what multi-hop walks.

"Who is the nephew of the friend of Alice Smith?" asks two relations, walked from the person named
outwards: first ``friend`` (Alice Smith's passage names her friends), then ``nephew`` (the friend's
passage). ``relations`` gives them in that order:

- English ``of`` chains, "the R2 of the R1 of X": each relation is the phrase between a determiner
  (the, a, an, his, her, its, their) and ``of``, in lower case ("the Chief of Protocol" is a name,
  not a relation); read right to left;
- English possessives, "X's R1's R2": the lower-case word after each ``'s``, left to right, walked
  before the ``of`` chain around them ("the nephew of Alice's friend": friend, then nephew);
- Chinese ``的`` chains, "X的R1的R2是谁": the word after each ``的`` (jieba's cut; "目的" is one word,
  not a particle), left to right.

``rounds`` is the retrieval rounds such a chain needs: the question's own, then one per relation.
``mentions`` tells whether a sentence states a relation (a plural counts: "The friends of ..."
states ``friend``); multi-hop uses it to choose which of the names a passage gives to follow next.
"""
from __future__ import annotations

import re

from ragsift.text.analyzer import CHINESE_STOPWORDS, load_jieba
from ragsift.text.lang import CJK_RE

_OF_RE = re.compile(r"\b(?:[Tt]he|[Aa]n?|[Hh]is|[Hh]er|[Ii]ts|[Tt]heir)\s+((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)\s+of\s")
_POSSESSIVE_RE = re.compile(r"(?<=\w)['’]s\s+([a-z][\w-]*)")
#: nouns before "of" that pick a part of what follows rather than walk to another thing
_NOT_RELATIONS = frozenset({"name", "names", "title", "number", "kind", "type", "part", "one", "some", "all",
                            "most", "rest", "none", "each", "both", "any", "many", "few", "lot", "sort"})
#: a phrase with one of these describes (the person whose hobby is ...) rather than relates
_CLAUSE = frozenset({"who", "whose", "whom", "which", "that", "where", "when", "is", "was", "are", "were"})


#: relation words that name a group of relations: a passage states one of the members ("sibling":
#: "The sisters of X are ...")
GROUPS: dict[str, tuple[str, ...]] = {
    "sibling": ("brother", "sister"), "parent": ("mother", "father"), "child": ("son", "daughter"),
    "children": ("son", "daughter"), "spouse": ("husband", "wife"),
    "兄弟姐妹": ("哥哥", "弟弟", "姐姐", "妹妹", "兄弟", "姐妹"), "父母": ("父亲", "母亲"), "子女": ("儿子", "女儿"),
    "孩子": ("儿子", "女儿"), "配偶": ("丈夫", "妻子"),
}


def relations(question: str) -> list[str]:
    """The relations the question chains, in the order they are walked (from the thing named)."""
    if CJK_RE.search(question):
        return _chinese_relations(question)
    of = [m.group(1) for m in _OF_RE.finditer(question)
          if m.group(1).split()[-1] not in _NOT_RELATIONS and not _CLAUSE.intersection(m.group(1).split())]
    possessive = [m.group(1) for m in _POSSESSIVE_RE.finditer(question)]
    return possessive + of[::-1]


def _chinese_relations(question: str) -> list[str]:
    words = [w for w in load_jieba().lcut(question) if w.strip()]
    out = []
    for i, w in enumerate(words[:-1]):
        nxt = words[i + 1]
        if w == "的" and CJK_RE.match(nxt) and nxt not in CHINESE_STOPWORDS:
            out.append(nxt)
    return out


#: a question that asks for a thing (a date, a hobby) reads its last relation off the last passage
_ASKS_A_THING_RE = re.compile(r"^\s*(?:what|when|where|which|how)\b", re.IGNORECASE)
_ZH_ASKS_A_THING_RE = re.compile(r"什么|哪|何时|多少|几")


def rounds(question: str) -> int:
    """Retrieval rounds the question's chain needs: its own, then one per relation; one fewer when
    it asks for a thing rather than a person ("What is the hobby of the friend of X?": X, then the
    friend, whose passage states the hobby)."""
    chain = relations(question)
    if not chain:
        return 1
    zh = CJK_RE.search(question)
    thing = (_ZH_ASKS_A_THING_RE.search(question) and "谁" not in question) if zh else \
        _ASKS_A_THING_RE.match(question)
    return 1 + len(chain) - (1 if thing else 0)


def _stem(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def mentions(sentence: str, relation: str) -> bool:
    """Whether ``sentence`` states ``relation`` (whole words, a plural or singular form alike; in
    Chinese, the relation's characters), or one of its group's members (``GROUPS``)."""
    if any(mentions(sentence, m) for m in GROUPS.get(_stem(relation), ())):
        return True
    if CJK_RE.search(relation):
        return relation in sentence
    want = [_stem(w) for w in relation.split()]
    have = [_stem(w) for w in re.findall(r"[\w-]+", sentence)]
    n = len(want)
    return any(have[i:i + n] == want for i in range(len(have) - n + 1))
