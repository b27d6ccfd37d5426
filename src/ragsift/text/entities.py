"""Named entities of a Chinese or English text, without a model: the one extractor behind the
entity side index (channel ``entities``) and multi-hop's follow-up terms.

- ``entities``: names typed "person", "place", "org", "product" or "other". Chinese from jieba's
  part-of-speech tags (nr, ns, nt, nz), organisation suffixes (…有限公司, …大学), titles in 《》
  and model codes with the nouns before them ("星云智能音箱 S2"); English from runs of
  capitalised words, typed by honorifics, small gazetteers, suffixes and nearby cue words, plus
  model codes ("AX-H1", "XY-PA20") and versioned names ("Wi-Fi 6") as products. The word lists
  are package data (``ragsift.text.wordlists``).
- ``entity_terms``: the names as BM25 analyzer terms, for the entity index.
- ``new_terms``: the entities of some passages that a question does not already name, best
  first (multi-hop follow-up queries); ``residual_words``: the question's words they do not cover.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragsift.text.analyzer import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, analyzed_terms, load_jieba, posseg
from ragsift.text.keywords import PHRASE_STOPWORDS
from ragsift.text.lang import CJK_RE
from ragsift.text.sentences import sentence_spans
from ragsift.text.wordlists import phrases, table, words

__all__ = ["ENTITY_TYPES", "entities", "entity_terms", "new_terms", "residual_words"]

ENTITY_TYPES = ("person", "place", "org", "product", "other")

_EN_CONNECT = {"of", "the", "and", "de", "da", "von", "van", "der", "del", "la", "le", "for", "in", "on", "at", "&"}
_EN_SKIP = words("en-skip")
# capitalised words that are rarely the entity a follow-up search needs
_EN_WEAK = words("en-weak")
_WORD = re.compile(r"[A-Za-z][\w'’\-.]*|\d{4}|&")
_QUOTED = re.compile(r"[\"“]([^\"”]{3,60})[\"”]")


def _capitalised_runs(text: str) -> list[str]:
    """Runs of capitalised words (with inner "of", "the", "and" ...) and quoted titles, in order;
    sentence-initial function words dropped."""
    out: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    matches = list(_WORD.finditer(text))
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].lower() in _EN_CONNECT:
            run.pop()
        if run:
            out.append(" ".join(run))
        run.clear()

    prev_end = -1
    for m in matches:
        w = m.group(0).rstrip(".")
        gap = text[prev_end:m.start()] if prev_end >= 0 else " "
        if run and gap.strip():  # punctuation between words ends a name
            flush()
        prev_end = m.end()
        if w.isdigit():  # numbers end a name and are not terms themselves
            flush()
            continue
        if w[:1].isupper():
            if not run and w in _EN_SKIP:
                continue
            run.append(w)
        elif run and w.lower() in _EN_CONNECT:
            run.append(w)
        else:
            flush()
    flush()
    return [t for t in out if t and t not in _EN_SKIP and t not in _EN_WEAK]


@dataclass(frozen=True)
class _Cand:
    start: int
    end: int
    name: str
    kind: str


# Latin model codes: a token with an upper-case letter and a digit, "S2", "X1", "AX-H1", "XY-PA20"
_CODE_RE = re.compile(
    r"(?<![A-Za-z0-9-])(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Z])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![A-Za-z0-9-])"
)
# a name with a version number: "Wi-Fi 6", "Bluetooth 5.3", "USB 3.0"
_VERSION_RE = re.compile(r"(?<![A-Za-z0-9-])([A-Z][A-Za-z]*(?:-[A-Za-z]+)*|[a-z]+[A-Z][A-Za-z]*) "
                         r"(\d{1,3}(?:\.\d+)*[A-Za-z]?)(?![A-Za-z0-9-])")
# camel-case product names ("SmartHub", "iPhone"), not surnames like "McDonald" or "DeVito"
_CAMEL_RE = re.compile(r"(?!(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von)[A-Z])[A-Za-z]*[a-z][A-Z][A-Za-z]*")
_ACRONYM_RE = re.compile(r"[A-Z]{2,6}")
_ZH_TITLE_RE = re.compile(r"《([^》]{1,40})》")

_NOT_VERSIONED = words("not-versioned")
_VERSIONED_TECH = words("versioned-tech")

_HONORIFICS = words("honorifics")
_PERSON_ROLES = words("person-roles")
_PERSON_VERBS = words("person-verbs")
_PLACE_CUES = (
    ("born", "in"), ("based", "in"), ("located", "in"), ("lives", "in"), ("lived", "in"),
    ("moved", "to"), ("city", "of"), ("capital", "of"), ("headquartered", "in"),
    ("headquarters", "in"), ("offices", "in"), ("office", "in"), ("factory", "in"),
    ("village", "of"), ("town", "of"), ("travelled", "to"), ("traveled", "to"), ("grew", "up"),
    ("up", "in"), ("returned", "to"), ("died", "in"), ("worked", "in"), ("work", "in"), ("studied", "in"),
)
_PRODUCT_NOUNS = words("product-nouns")
_FIRST_NAMES = words("first-names")
_PLACES = words("places")
_PLACE_PHRASES = phrases("place-phrases")
_PLACE_SUFFIXES = words("place-suffixes")
_ORGS = words("orgs")
_ORG_WORDS = words("org-words")
_EN_GENERIC = words("en-generic")
# verbs that open imperative sentences in manuals ("Press the button ...")
_EN_IMPERATIVE = words("en-imperative")

_ZH_TAG_TYPE = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org", "nz": "other"}
# well-known names jieba tags wrongly or not at all (华为 comes out as a person, 百度 as a noun)
_ZH_KNOWN = table("zh-known")
# common nouns jieba tags as names
_ZH_NOT_NAME = words("zh-not-name")
_ZH_ORG_SUFFIX = words("zh-org-suffix")
_ZH_NOUNISH = ("n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "j", "eng", "vn")


def entities(text: str) -> list[tuple[str, str]]:
    """Named entities of ``text`` as (name, type) pairs, in order of first appearance, each name
    once (case-insensitively). Types: "person", "place", "org", "product", "other".

    A name found inside a longer one at the same place is dropped ("S2" inside "星云智能音箱 S2",
    "Wi-Fi" inside "Wi-Fi 6"); the same name found elsewhere on its own is still kept once.
    """
    if not text or not text.strip():
        return []
    tokens = posseg(text) if CJK_RE.search(text) else []
    cands = _code_candidates(text, tokens) + _english_candidates(text)
    if tokens:
        cands += _chinese_candidates(text, tokens)
    cands.sort(key=lambda c: (c.start, -(c.end - c.start)))
    kept: list[_Cand] = []
    for c in cands:
        if any(k.start <= c.start and c.end <= k.end and (k.start, k.end) != (c.start, c.end) for k in kept):
            continue
        if any((k.start, k.end) == (c.start, c.end) for k in kept):
            continue
        kept.append(c)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for c in kept:
        key = re.sub(r"\s+", " ", c.name).casefold()
        if key and key not in seen:
            seen.add(key)
            out.append((c.name, c.kind))
    return out


def _code_candidates(text: str, tokens: list[tuple[str, str]]) -> list[_Cand]:
    """Model codes ("AX-H1"), in Chinese text with the nouns just before them ("星云智能音箱 S2"),
    and versioned names ("Wi-Fi 6")."""
    out: list[_Cand] = []
    for m in _CODE_RE.finditer(text):
        out.append(_Cand(m.start(), m.end(), m.group(0), "product"))
    for m in _VERSION_RE.finditer(text):
        word = m.group(1)
        if word in _NOT_VERSIONED or word in ENGLISH_STOPWORDS or word.lower() in ENGLISH_STOPWORDS:
            continue
        distinctive = "-" in word or _CAMEL_RE.fullmatch(word) or _ACRONYM_RE.fullmatch(word) or word in _VERSIONED_TECH
        if not distinctive and (_sentence_initial(text, m.start()) or word.lower() in _EN_IMPERATIVE):
            continue
        out.append(_Cand(m.start(), m.end(), m.group(0), "product"))
    if tokens:
        out += _chinese_product_names(text, tokens, [c for c in out if _CODE_RE.fullmatch(c.name)])
    return out


def _chinese_product_names(text: str, tokens: list[tuple[str, str]], codes: list[_Cand]) -> list[_Cand]:
    """A model code with the (up to four) Chinese nouns right before it: "星云智能音箱 S2"."""
    if not codes:
        return []
    ends: dict[int, int] = {}  # end offset of a token -> its index
    starts: list[int] = []
    pos = 0
    for n, (w, _) in enumerate(tokens):
        starts.append(pos)
        pos += len(w)
        ends[pos] = n
    out: list[_Cand] = []
    for c in codes:
        end = c.start
        if end > 0 and text[end - 1] == " ":
            end -= 1
        i = ends.get(end)
        j = i
        taken = 0
        while j is not None and j >= 0 and taken < 4:
            w, tag = tokens[j]
            if not (CJK_RE.search(w) and (tag in _ZH_NOUNISH or w in _ZH_KNOWN) and w not in CHINESE_STOPWORDS):
                break
            taken += 1
            j -= 1
        if taken and i is not None:
            assert j is not None  # taken > 0: the loop ran and left j an index
            start = starts[j + 1]
            if sum(len(tokens[t][0]) for t in range(j + 1, i + 1)) <= 10:
                out.append(_Cand(start, c.end, text[start:c.end], "product"))
    return out


_Tok = tuple  # (word, start, end) with absolute offsets into the text
_SPLIT_ALWAYS = frozenset({"in", "on", "at"})
_SPLIT_UNLESS_ORG = frozenset({"and", "&", "for"})


def _english_candidates(text: str) -> list[_Cand]:
    """Capitalised runs from ``_capitalised_runs``, sentence by sentence: located in the
    text, split at "in"/"at"/"and" between names, sentence-initial common words dropped, typed."""
    out: list[_Cand] = []
    spans = sentence_spans(text)
    lower_words = set(re.findall(r"\b[a-z][a-z'-]*\b", text))
    for s_start, s_end in spans:
        # CJK characters become a separator so that a Latin word never swallows the Chinese
        # after it ("S2放在客厅") and offsets stay those of ``text``
        sentence = CJK_RE.sub("|", text[s_start:s_end])
        cursor = 0
        for term in _capitalised_runs(sentence):
            words = term.split()
            if not words or not all(w[:1].isupper() or w in _EN_CONNECT or any(c.isdigit() for c in w) for w in words):
                continue  # quoted text, not a name
            pattern = re.compile(
                r"(?<![A-Za-z0-9])" + r"\.?\s+".join(re.escape(w) for w in words) + r"(?![A-Za-z0-9])"
            )
            m = pattern.search(sentence, cursor) or pattern.search(sentence)
            if m is None:
                continue
            cursor = m.end()
            toks: list[_Tok] = []
            at = m.start()
            for w in words:
                p = sentence.index(w, at)
                toks.append((w, s_start + p, s_start + p + len(w)))
                at = p + len(w)
            for run in _split_run(toks):
                if _sentence_initial(text, run[0][1]):
                    # "Press ...", "Firmware updates ...", "Pair the S2": the first word is
                    # capitalised by position only
                    while run and (_common_initial(run[0][0], lower_words) or (
                            len(run) > 2 and run[1][0] == "the" and not _known_single(run[0][0]))):
                        run = _strip_connectors(run[1:])
                    if not run:
                        continue
                    if (len(run) == 1 and not _known_single(run[0][0])
                            and not _capitalised_elsewhere(run[0][0], text)):
                        continue
                out += _type_english_run(text, s_start, s_end, run)
    return out


def _strip_connectors(run: list[_Tok]) -> list[_Tok]:
    while run and run[0][0] in _EN_CONNECT:
        run = run[1:]
    while run and run[-1][0] in _EN_CONNECT:
        run = run[:-1]
    return run


def _split_at(toks: list[_Tok], words: frozenset[str]) -> list[list[_Tok]]:
    """The tokens split at (and without) the given words."""
    parts: list[list[_Tok]] = [[]]
    for tok in toks:
        if tok[0] in words:
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts


def _split_run(toks: list[_Tok]) -> list[list[_Tok]]:
    """"Aurora Labs in Paris" -> "Aurora Labs", "Paris"; "Berlin and Tokyo" -> two names (each
    side a known name); but "University of Oxford", "Ministry for Foreign Affairs" and titles
    such as "Kiss and Tell" stay whole."""
    out: list[list[_Tok]] = []
    for run in _split_at(toks, _SPLIT_ALWAYS):
        parts = _split_at(run, _SPLIT_UNLESS_ORG)
        org = any(w in _ORG_WORDS for w, _, _ in run)
        if len(parts) > 1 and not org and all(p and _known_single(p[0][0]) for p in parts):
            out += parts
        else:
            out.append(run)
    return [r for r in (_strip_connectors(r) for r in out) if r]


def _common_initial(word: str, lower_words: set[str]) -> bool:
    """Whether a sentence-initial capitalised word is most likely just a common word."""
    if _known_single(word) or word.isupper() or any(c.isdigit() for c in word) or _CAMEL_RE.fullmatch(word):
        return False
    low = word.lower()
    return low in PHRASE_STOPWORDS or low in _EN_IMPERATIVE or low in lower_words


def _known_single(word: str) -> bool:
    return word in _PLACES or word in _FIRST_NAMES or word in _ORGS or word in _HONORIFICS


def _sentence_initial(text: str, pos: int) -> bool:
    """Whether ``pos`` starts a sentence or line, past quotes, brackets and bullets: checked on
    the text rather than trusting the splitter ("... Bluetooth 5.3. Hold 5 seconds")."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\r\n\"'“‘([*#>-•":
        if text[i] == "\n":
            return True
        i -= 1
    return i < 0 or text[i] in ".!?:;。！？；：…"


def _capitalised_elsewhere(word: str, text: str) -> bool:
    """Whether ``word`` also appears capitalised somewhere that is not a sentence start."""
    for m in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(word) + r"(?![A-Za-z0-9])", text):
        if not _sentence_initial(text, m.start()):
            return True
    return False


def _type_english_run(text: str, s_start: int, s_end: int, run: list[_Tok]) -> list[_Cand]:
    """Type one capitalised run. Honorifics make a person and are left out of the name; a run
    holding a model code is cut after the code and its remainder typed on its own."""
    if len(run) > 1 and run[0][0].rstrip(".") in _HONORIFICS:
        name_toks = run[1:]
        return [_Cand(name_toks[0][1], name_toks[-1][2], text[name_toks[0][1]:name_toks[-1][2]], "person")]
    for i, (w, _, _) in enumerate(run[:-1]):
        if _CODE_RE.fullmatch(w):
            rest = _strip_connectors(run[i + 1:])
            return _type_english_run(text, s_start, s_end, run[: i + 1]) + (
                _type_english_run(text, s_start, s_end, rest) if rest else []
            )
    words = [w for w, _, _ in run]
    if all(w in _EN_GENERIC or w in _EN_CONNECT for w in words):
        return []
    start, end = run[0][1], run[-1][2]
    kind = _english_type(text[s_start:start], text[end:s_end], words)
    return [_Cand(start, end, text[start:end], kind)]


def _english_type(before_text: str, after_text: str, words: list[str]) -> str:
    """Type a capitalised run from its words and the words around it in its sentence."""
    name = " ".join(words)
    before = re.findall(r"[a-z'-]+", before_text.lower())[-2:]
    after = re.findall(r"[a-z'-]+", after_text.lower())[:1]
    if any(_CODE_RE.fullmatch(w) or _CAMEL_RE.fullmatch(w) for w in words):
        return "product"
    if name in _ORGS or any(w in _ORG_WORDS for w in words):
        return "org"
    if name in _PLACES or name.lower() in _PLACE_PHRASES or (len(words) > 1 and words[-1] in _PLACE_SUFFIXES):
        return "place"
    if tuple(before) in _PLACE_CUES and words[0] not in _FIRST_NAMES:
        return "place"
    if words[0] in _FIRST_NAMES:
        return "person"
    if before and before[-1] in _PERSON_ROLES:
        return "person"
    if after and after[0] in _PERSON_VERBS and len(words) <= 3:
        return "person"
    appos = re.match(r"\s*,\s*(?:a|an|the|our|its|their)\s+((?:[A-Za-z-]+\s+){0,2}[A-Za-z-]+)", after_text)
    if appos and any(w.lower() in _PERSON_ROLES for w in appos.group(1).split()):
        return "person"
    if after and after[0] in _PRODUCT_NOUNS:
        return "product"
    if before and before[-1] in ("in", "near") and len(words) <= 3 and re.match(r"\s*(?:[.,;:!?)]|$)", after_text):
        return "place"  # "... in Cupertino." (weak: only at the end of a clause)
    return "other"


def _chinese_candidates(text: str, tokens: list[tuple[str, str]]) -> list[_Cand]:
    """Names from jieba POS tags (same-type neighbours joined, "玛丽·居里" across the dot),
    organisations ending in 公司/大学/..., known names jieba gets wrong, and 《titles》."""
    out: list[_Cand] = []
    starts: list[int] = []
    pos = 0
    for w, _ in tokens:
        starts.append(pos)
        pos += len(w)
    i = 0
    n = len(tokens)
    while i < n:
        w, tag = tokens[i]
        kind = _zh_token_type(w, tag)
        # organisation: nouns followed by an organisation suffix word ("星云"+"科技"+"有限公司")
        if CJK_RE.search(w) and (tag in _ZH_NOUNISH or kind):
            j = i
            while j < n and j - i < 5 and CJK_RE.search(tokens[j][0]) and tokens[j][1] in _ZH_NOUNISH:
                if tokens[j][0] in _ZH_ORG_SUFFIX and j > i:
                    break
                j += 1
            if j < n and j > i and tokens[j][0] in _ZH_ORG_SUFFIX:
                s, e = starts[i], starts[j] + len(tokens[j][0])
                out.append(_Cand(s, e, text[s:e], "org"))
                i = j + 1
                continue
        if kind is None and CJK_RE.search(w) and i + 2 < n and tokens[i + 1][0] == "·" \
                and CJK_RE.search(tokens[i + 2][0]):
            kind = "person"  # a transliterated name: 科利斯·阿彻
        if kind:
            j = i + 1
            name_end = starts[i] + len(w)
            while j < n:
                w2, tag2 = tokens[j]
                if w2 == "·" and j + 1 < n and CJK_RE.search(tokens[j + 1][0]):
                    kind = "person"  # names joined by "·" are transliterated person names: 秀兰·邓波儿
                    name_end = starts[j + 1] + len(tokens[j + 1][0])
                    j += 2
                    continue
                if kind == "place" and _zh_token_type(w2, tag2) == "place":
                    name_end = starts[j] + len(w2)
                    j += 1
                    continue
                break
            name = text[starts[i]:name_end]
            if len(name) > 1:
                out.append(_Cand(starts[i], name_end, name, kind))
            i = j
            continue
        i += 1
    for m in _ZH_TITLE_RE.finditer(text):
        title = m.group(1).strip()
        if title:
            kind = "product" if _CODE_RE.search(title) else "other"
            out.append(_Cand(m.start(1), m.end(1), title, kind))
    return out


def _zh_token_type(word: str, tag: str) -> str | None:
    """The entity type of one jieba word, or None when it is not a name."""
    if word in _ZH_KNOWN:
        return _ZH_KNOWN[word]
    if word in _ZH_NOT_NAME or len(word) < 2 or not CJK_RE.search(word):
        return None
    kind = _ZH_TAG_TYPE.get(tag)
    if kind == "person" and len(word) > 4:
        return None
    if kind is None and tag == "nt":
        return "org"
    return kind


def entity_terms(text: str) -> str:
    """The entity names of ``text`` as BM25 analyzer terms, space-joined, each term once."""
    return analyzed_terms(name for name, _ in entities(text))


def _contained(term: str, question: str) -> bool:
    q = question.lower()
    if term.lower() in q:
        return True
    words = [w for w in re.findall(r"\w+", term.lower()) if w not in _EN_CONNECT]
    return bool(words) and all(re.search(r"\b" + re.escape(w) + r"\b", q) for w in words)


def new_terms(question: str, passages: Sequence[str], limit: int = 3) -> list[str]:
    """Terms of ``passages`` (best first) that ``question`` does not contain, best first: a term
    scores by how many passages name it, with earlier passages and earlier mentions counting more."""
    score: Counter[str] = Counter()
    form: dict[str, str] = {}
    for rank, text in enumerate(passages):
        seen: set[str] = set()
        for pos, t in enumerate(name for name, _ in entities(text)):
            key = t.lower()
            if key in seen or _contained(t, question):
                continue
            seen.add(key)
            form.setdefault(key, t)
            multiword = 0.25 if (" " in t or "·" in t) else 0.0
            score[key] += 1.0 / (1 + rank) + 0.5 / (1 + pos) + multiword  # type: ignore[assignment]  # float counts
    # a term inside a longer term that is also there adds nothing
    ranked = [k for k, _ in score.most_common()]
    out: list[str] = []
    for k in ranked:
        if any(k in o.lower() or o.lower() in k for o in out):
            continue
        out.append(form[k])
        if len(out) == limit:
            break
    return out


def residual_words(question: str, passages: Sequence[str]) -> list[str]:
    """The question's content words that none of ``passages`` contains: the part of the
    question that what was found does not yet cover."""
    seen = " ".join(passages).lower()
    out: list[str] = []
    if CJK_RE.search(question):
        tokens = load_jieba().lcut(question)
    else:
        tokens = re.findall(r"[\w'’\-]+", question)
    for w in tokens:
        lw = w.lower()
        if len(lw) < 2 or lw in ENGLISH_STOPWORDS or w in CHINESE_STOPWORDS or not re.search(r"\w", lw):
            continue
        found = lw in seen if CJK_RE.search(w) else re.search(r"\b" + re.escape(lw) + r"\b", seen)
        if not found and lw not in (o.lower() for o in out):
            out.append(w)
    return out
