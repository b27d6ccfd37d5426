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
_POSSESSIVE_RE = re.compile(r"(?<=\w)['’]s\s+((?:(?:paternal|maternal)\s+)?[a-z][\w-]*)")
#: nouns before "of" that pick a part of what follows rather than walk to another thing
_NOT_RELATIONS = frozenset({"name", "names", "title", "number", "kind", "type", "part", "one", "some", "all",
                            "most", "rest", "none", "each", "both", "any", "many", "few", "lot", "sort"})
#: a phrase with one of these describes (the person whose hobby is ...) rather than relates
_CLAUSE = frozenset({"who", "whose", "whom", "which", "that", "where", "when", "is", "was", "are", "were"})


#: relation words that name a group of relations: a passage states one of the members ("sibling":
#: "The sisters of X are ..."); the "-or-" groups are either of two relations, the steps of an
#: in-law ("brother-in-law": a spouse's brother, or a sibling's husband)
GROUPS: dict[str, tuple[str, ...]] = {
    "sibling": ("brother", "sister"), "parent": ("mother", "father"), "child": ("son", "daughter"),
    "children": ("son", "daughter"), "spouse": ("husband", "wife"),
    "spouse-or-sibling": ("husband", "wife", "brother", "sister"),
    "brother-or-husband": ("brother", "husband"), "sister-or-wife": ("sister", "wife"),
    "兄弟姐妹": ("哥哥", "弟弟", "姐姐", "妹妹", "兄弟", "姐妹"), "兄弟": ("哥哥", "弟弟"), "姐妹": ("姐姐", "妹妹"),
    "父母": ("父亲", "母亲"), "子女": ("儿子", "女儿"), "孩子": ("儿子", "女儿"), "配偶": ("丈夫", "妻子"),
}

#: kinship words that a text rarely states but reaches through stated ones, by their common
#: meaning: "the nephew of X" walks X's siblings, then their sons. A chain walks these steps.
_GREAT = {"grand": ("parent", "parent"), "great-grand": ("parent", "parent", "parent")}
PATHS: dict[str, tuple[str, ...]] = {
    "nephew": ("sibling", "son"), "niece": ("sibling", "daughter"),
    "uncle": ("parent", "brother"), "aunt": ("parent", "sister"),
    "great-uncle": ("parent", "parent", "brother"), "great-aunt": ("parent", "parent", "sister"),
    "cousin": ("parent", "sibling", "child"), "male cousin": ("parent", "sibling", "son"),
    "female cousin": ("parent", "sibling", "daughter"), "first cousin": ("parent", "sibling", "child"),
    **{f"{g}{w}": (*up[:-1], w) for g, up in _GREAT.items() for w in ("parent", "father", "mother")},
    **{f"{g}{w}": (*("child",) * (len(up) - 1), k) for g, up in _GREAT.items()
       for w, k in (("child", "child"), ("son", "son"), ("daughter", "daughter"))},
    "mother-in-law": ("spouse", "mother"), "father-in-law": ("spouse", "father"),
    "parent-in-law": ("spouse", "parent"), "son-in-law": ("daughter", "husband"),
    "daughter-in-law": ("son", "wife"), "child-in-law": ("child", "spouse"),
    "brother-in-law": ("spouse-or-sibling", "brother-or-husband"),
    "sister-in-law": ("spouse-or-sibling", "sister-or-wife"),
    "sibling-in-law": ("spouse-or-sibling", "spouse-or-sibling"),
    **{f"{side} {w}": (parent, *PATH) for side, parent in (("paternal", "father"), ("maternal", "mother"))
       for w, PATH in (("grandfather", ("father",)), ("grandmother", ("mother",)), ("grandparent", ("parent",)),
                       ("uncle", ("brother",)), ("aunt", ("sister",)))},
    "stepmother": ("father", "wife"), "stepfather": ("mother", "husband"),
    "stepson": ("spouse", "son"), "stepdaughter": ("spouse", "daughter"), "stepchild": ("spouse", "child"),
    "侄子": ("兄弟", "儿子"), "侄女": ("兄弟", "女儿"), "外甥": ("姐妹", "儿子"), "外甥女": ("姐妹", "女儿"),
    "叔叔": ("父亲", "弟弟"), "伯伯": ("父亲", "哥哥"), "伯父": ("父亲", "哥哥"), "叔父": ("父亲", "弟弟"),
    "舅舅": ("母亲", "兄弟"), "姑姑": ("父亲", "姐妹"), "姑妈": ("父亲", "姐妹"), "阿姨": ("母亲", "姐妹"),
    "姨妈": ("母亲", "姐妹"), "爷爷": ("父亲", "父亲"), "祖父": ("父亲", "父亲"), "奶奶": ("父亲", "母亲"),
    "祖母": ("父亲", "母亲"), "外公": ("母亲", "父亲"), "外祖父": ("母亲", "父亲"), "外婆": ("母亲", "母亲"),
    "外祖母": ("母亲", "母亲"), "孙子": ("儿子", "儿子"), "孙女": ("儿子", "女儿"), "外孙": ("女儿", "儿子"),
    "外孙女": ("女儿", "女儿"), "公公": ("丈夫", "父亲"), "婆婆": ("丈夫", "母亲"), "岳父": ("妻子", "父亲"),
    "岳母": ("妻子", "母亲"), "女婿": ("女儿", "丈夫"), "儿媳": ("儿子", "妻子"), "儿媳妇": ("儿子", "妻子"),
    "堂兄弟": ("父亲", "兄弟", "儿子"), "堂姐妹": ("父亲", "兄弟", "女儿"),
    "表兄弟": ("父母", "兄弟姐妹", "儿子"), "表姐妹": ("父母", "兄弟姐妹", "女儿"),
    "小叔子": ("丈夫", "弟弟"), "大伯子": ("丈夫", "哥哥"), "小姑子": ("丈夫", "妹妹"),
    "小舅子": ("妻子", "弟弟"), "大舅子": ("妻子", "哥哥"), "小姨子": ("妻子", "妹妹"),
    "姐夫": ("姐姐", "丈夫"), "妹夫": ("妹妹", "丈夫"), "嫂子": ("哥哥", "妻子"), "弟媳": ("弟弟", "妻子"),
    "继母": ("父亲", "妻子"), "后妈": ("父亲", "妻子"), "继父": ("母亲", "丈夫"),
}


def relations(question: str) -> list[str]:
    """The relations the question chains, in the order they are walked (from the thing named);
    a kinship word that stated ones reach (``PATHS``) as its steps."""
    if CJK_RE.search(question):
        chain = _chinese_relations(question)
    else:
        of = [m.group(1) for m in _OF_RE.finditer(question)
              if m.group(1).split()[-1] not in _NOT_RELATIONS and not _CLAUSE.intersection(m.group(1).split())]
        possessive = [m.group(1) for m in _POSSESSIVE_RE.finditer(question)]
        chain = possessive + of[::-1]
    return [step for r in chain for step in PATHS.get(_singular(r), (r,))]


def _singular(relation: str) -> str:
    """A relation phrase with its last word singular ("the nephews of X": nephew)."""
    if CJK_RE.search(relation):
        return relation
    *head, last = relation.split()
    last = last[:-3] if last.endswith("children") else _stem(last)
    return " ".join([*head, last])


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


def rounds(question: str, chain: list[str] | None = None) -> int:
    """Retrieval rounds the question's chain needs: its own, then one per relation; one fewer when
    it asks for a thing rather than a person ("What is the hobby of the friend of X?": X, then the
    friend, whose passage states the hobby). ``chain``: ``relations(question)``, when the caller
    has it already."""
    chain = relations(question) if chain is None else chain
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
