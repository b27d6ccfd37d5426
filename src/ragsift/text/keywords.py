"""Keywords, named entities and key sentences of a Chinese or English text, without a model.

They feed small side indexes (a keyword index, an entity index, a key-sentence index), so
everything here is deterministic, needs no download and reuses the BM25 analyzer's view of
words:

- ``keywords``: Chinese key words from jieba's TF-IDF (nouns and the like), with words that
  keep occurring side by side joined into phrases ("智能音箱"); English key phrases from a
  RAKE-style scorer over stopword-delimited candidate phrases ("solar panel cleaning").
  Mixed text gets both, each weighted by its share of the text.
- ``entities``: named entities typed "person", "place", "org", "product" or "other".
  Chinese from jieba's part-of-speech tags (nr, ns, nt, nz), organisation suffixes
  (…有限公司, …大学), titles in 《》 and model codes with the nouns before them
  ("星云智能音箱 S2"); English from the capitalised runs of ``keyterms.english_terms``,
  typed by honorifics, small gazetteers, suffixes and nearby cue words, plus model codes
  ("AX-H1", "XY-PA20") and versioned names ("Wi-Fi 6") as products.
- ``key_sentences``: TextRank over sentences, similarity = overlap of analyzer terms.
- ``keyword_terms`` / ``entity_terms``: the same, passed through the BM25 ``Analyzer`` so the
  side indexes speak the query-time analyzer's language.
"""
from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ragsift.text.analyzer import (
    CHINESE_STOPWORDS,
    ENGLISH_STOPWORDS,
    Analyzer,
    _load_jieba,
)
from ragsift.text.keyterms import _EN_CONNECT, english_terms
from ragsift.text.sentences import sentence_spans

__all__ = [
    "ENTITY_TYPES",
    "entities",
    "entity_terms",
    "key_sentences",
    "keyword_terms",
    "keywords",
]

ENTITY_TYPES = ("person", "place", "org", "product", "other")

_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# ---------------------------------------------------------------------------------------------
# shared analyzer
# ---------------------------------------------------------------------------------------------
_analyzer_lock = threading.Lock()
_analyzer_instance: Analyzer | None = None


def _analyzer() -> Analyzer:
    global _analyzer_instance
    if _analyzer_instance is None:
        with _analyzer_lock:
            if _analyzer_instance is None:
                _analyzer_instance = Analyzer()
    return _analyzer_instance


def _posseg(text: str) -> list[tuple[str, str]]:
    """jieba (word, POS tag) pairs covering ``text`` character for character."""
    _load_jieba()
    import jieba.posseg as pseg

    return [(w, t) for w, t in pseg.lcut(text)]


# ---------------------------------------------------------------------------------------------
# keywords
# ---------------------------------------------------------------------------------------------
# English tokens: words with inner hyphens, apostrophes or dots ("wi-fi", "user's", "v1.2")
_EN_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*")
_NUMERIC = re.compile(r"[0-9][0-9.,]*")
# RAKE needs a longer stop list than BM25 does: these words delimit phrases too
_RAKE_EXTRA_STOP = frozenset("""
also may might must shall will can could would should please make makes made sure use used uses
using via per etc e.g i.e get gets got just like well even much many every within without upon
onto toward towards across along among around behind beside besides beyond inside outside near
whether either neither yet still already always never often sometimes usually however therefore
thus hence though unless whereas one two three four five six seven eight nine ten first second
third last several various another able need needs needed let lets want see way ways thing things
lot lots really quite rather almost enough instead less least likely try tries tried back yes ok
okay simply new every everything something anything nothing someone anyone everyone us say says
said per cent percent
""".split())
_RAKE_STOP = ENGLISH_STOPWORDS | _RAKE_EXTRA_STOP
_RAKE_MAX_WORDS = 4

# jieba tags kept as Chinese keyword candidates: nouns, names, verbal nouns, abbreviations,
# set phrases and Latin words
_ZH_KEYWORD_POS = ("n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "vn", "j", "l", "eng")
_ZH_PHRASE_MAX_WORDS = 4
_ZH_PHRASE_MAX_CHARS = 12
# below this share of Latin words in a text with Chinese, English gets no phrases of its own
_MIN_ENGLISH_SHARE = 0.15


def keywords(text: str, k: int = 10) -> list[tuple[str, float]]:
    """The ``k`` best key words and phrases of ``text`` with scores, best first.

    Chinese words come from jieba's TF-IDF, plus phrases of keywords that occur side by side at
    least twice (scored as the sum of their words); English phrases come from a RAKE-style
    scorer (lower-cased, up to four words, variants grouped by stem). In mixed text each side
    is weighted by its share of the text. Scores are relative: the best keyword scores 1.0.
    """
    if k <= 0 or not text or not text.strip():
        return []
    zh_units = len(_CJK_RE.findall(text)) / 1.5  # about 1.5 characters a Chinese word
    en_units = sum(1 for m in _EN_TOKEN.finditer(text) if not _NUMERIC.fullmatch(m.group(0)))
    total = zh_units + en_units
    if total == 0:
        return []
    merged: dict[str, float] = {}
    first_pos: dict[str, int] = {}
    sides: list[tuple[float, list[tuple[str, float, int]]]] = []
    if zh_units:
        # Latin words inside Chinese text ("S2", "Wi-Fi") are scored by jieba along with the
        # Chinese, unless there is enough English for phrases of its own
        latin = en_units / total < _MIN_ENGLISH_SHARE
        sides.append((zh_units / total, _chinese_keywords(text, k, keep_latin=latin)))
    if en_units:
        sides.append((en_units / total, _english_keywords(text)))
    for weight, found in sides:
        if not found:
            continue
        top = max(s for _, s, _ in found)
        for phrase, score, pos in found:
            value = weight * score / top
            if value > merged.get(phrase, 0.0):
                merged[phrase] = value
            first_pos[phrase] = min(pos, first_pos.get(phrase, pos))
    if not merged:
        return []
    best = max(merged.values())
    ranked = sorted(merged, key=lambda p: (-round(merged[p], 12), first_pos[p], p))
    return [(p, round(merged[p] / best, 6)) for p in ranked[:k]]


def _verb_forms(bases: str) -> frozenset[str]:
    """Third-person and past forms of regular verbs ("reduce" -> "reduces", "reduced")."""
    out: set[str] = set()
    for b in bases.split():
        if b.endswith("y") and b[-2:-1] not in "aeiou":
            out |= {b[:-1] + "ies", b[:-1] + "ied"}
        elif b.endswith("e"):
            out |= {b + "s", b + "d"}
        elif b.endswith(("s", "sh", "ch", "x", "z")):
            out |= {b + "es", b + "ed"}
        else:
            out |= {b + "s", b + "ed"}
    return frozenset(out)


# verbs end a key phrase ("the status light blinks blue" -> "status light", "blue"). Base forms
# delimit only for verbs that are rarely nouns; inflected forms for verbs whose plural-looking
# form is rarely a noun (so "updates", "answers", "controls", "lights" stay phrase words).
_EN_VERB_BASES = frozenset("""
explain reduce connect remind blink include contain allow require provide seem describe ensure
enable prevent indicate receive appear happen remain suggest believe detect fail tell know think
give take come mean consist belong depend exist occur emit beep vibrate reboot recognize recognise
respond listen learn protect remove replace announce launch admire
""".split())
_EN_VERB_INFLECTED = _verb_forms(" ".join(sorted(_EN_VERB_BASES)) + """
say keep let begin bring leave reach send turn start stop work show open close press release play
run move increase decrease improve produce create clean check flash glow restart become find
change
""") | frozenset("""
said made took gave came went became began brought left sent kept held found thought knew told
led meant ran shown known given taken seen done
""".split())
_RAKE_DELIM = _RAKE_STOP | _EN_VERB_BASES | _EN_VERB_INFLECTED
_SENTENCE_END = re.compile(r"(?:^|[.!?:;。！？；\n])\W*$")


def _split_long(run: list[tuple[str, str, int]]) -> list[list[tuple[str, str, int]]]:
    """A run of content words longer than ``_RAKE_MAX_WORDS`` is split at a likely verb (a word
    in -s after a word not in -s: "controller reports solar panel temperature"), else dropped
    (title-case headings such as "Aurora SmartHub X1 User Guide")."""
    if not run:
        return []
    if len(run) <= _RAKE_MAX_WORDS:
        return [run]
    for i in range(1, len(run) - 1):
        w, prev = run[i][0], run[i - 1][0]
        if w.endswith("s") and not w.endswith("ss") and not prev.endswith("s"):
            return _split_long(run[:i]) + _split_long(run[i + 1:])
    return []


def _english_keywords(text: str) -> list[tuple[str, float, int]]:
    """RAKE: candidate phrases are runs of content words between stopwords, common verbs,
    punctuation, numbers and a switch between a name and lower-case words ("Tokyo" | "offices");
    a word scores degree / frequency, a phrase the sum of its words' scores times
    1 + ln(how often the phrase occurs)."""
    analyzer = _analyzer()
    candidates: list[list[tuple[str, str, int]]] = []  # [(surface, stem key, position)]
    run: list[tuple[str, str, int]] = []
    prev_end: int | None = None
    prev_cap: bool | None = None

    def flush() -> None:
        candidates.extend(_split_long(list(run)))
        run.clear()

    for m in _EN_TOKEN.finditer(text):
        token = m.group(0)
        if run and prev_end is not None and text[prev_end:m.start()].strip():
            flush()  # punctuation or CJK between two words ends a phrase
        prev_end = m.end()
        word = token.lower().replace("’", "'")
        word = word.removesuffix("'s")
        if len(word) < 2 or _NUMERIC.fullmatch(word) or word in _RAKE_DELIM or word.split("'")[0] in _RAKE_DELIM:
            flush()
            prev_cap = None
            continue
        # a capitalised word not at a sentence start is (part of) a name; one at a sentence
        # start may be either and goes with its neighbour
        cap: bool | None = token[:1].isupper()
        if cap and _SENTENCE_END.search(text[max(0, m.start() - 8):m.start()]):
            cap = None
        if run and cap is not None and prev_cap is not None and cap != prev_cap:
            flush()
        prev_cap = cap
        key = "-".join(analyzer.terms(word)) or word
        run.append((word, key, m.start()))
    flush()
    if not candidates:
        return []

    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for cand in candidates:
        for _, key, _ in cand:
            freq[key] += 1
            degree[key] += len(cand)
    word_score = {w: degree[w] / freq[w] for w in freq}

    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    first: dict[tuple[str, ...], int] = {}
    for cand in candidates:
        key = tuple(k for _, k, _ in cand)
        surfaces.setdefault(key, Counter())[" ".join(w for w, _, _ in cand)] += 1
        first.setdefault(key, cand[0][2])
    out: list[tuple[str, float, int]] = []
    for key, forms in surfaces.items():
        # the most frequent surface form names the phrase; the earliest one on a tie
        surface = max(forms.items(), key=lambda kv: kv[1])[0]
        count = sum(forms.values())
        out.append((surface, sum(word_score[w] for w in key) * (1 + math.log(count)), first[key]))
    return out


def _chinese_keywords(text: str, k: int, keep_latin: bool = True) -> list[tuple[str, float, int]]:
    """jieba TF-IDF words, Latin fragments mapped back to whole tokens ("Wi"+"Fi" -> "wi-fi"),
    and phrases of candidate words that stand side by side at least twice."""
    _load_jieba()
    import jieba.analyse

    tags = jieba.analyse.extract_tags(text, topK=max(3 * k, 30), withWeight=True, allowPOS=_ZH_KEYWORD_POS)
    whole: dict[str, str] = {}  # lower-cased jieba fragment -> lower-cased whole token
    for m in _EN_TOKEN.finditer(text):
        tok = m.group(0).lower()
        whole.setdefault(tok, tok)
        for part in re.split(r"[-'’.]", tok):
            whole.setdefault(part, tok)
    weights: dict[str, float] = {}
    for word, weight in tags:
        if _CJK_RE.search(word):
            if len(word) < 2 or word in CHINESE_STOPWORDS or not _CJK_RE.fullmatch(word[0]):
                continue
            key = word
        elif not keep_latin:
            continue
        else:
            key = whole.get(word.lower(), word.lower())
            if len(key) < 2 or _NUMERIC.fullmatch(key) or key in _RAKE_STOP:
                continue
        weights[key] = max(weights.get(key, 0.0), weight)
    if not weights:
        return []

    positions: dict[str, int] = {}
    lowered = text.lower()
    for key in weights:
        pos = lowered.find(key.lower())
        positions[key] = pos if pos >= 0 else len(text)

    # phrases: maximal runs of adjacent candidate words ("星云"+"智能"+"音箱")
    phrase_count: Counter[str] = Counter()
    phrase_parts: dict[str, tuple[str, ...]] = {}
    run: list[str] = []
    pos = 0
    phrase_pos: dict[str, int] = {}
    run_start = 0

    def flush() -> None:
        if 2 <= len(run) <= _ZH_PHRASE_MAX_WORDS:
            phrase = "".join(run)
            if len(phrase) <= _ZH_PHRASE_MAX_CHARS:
                phrase_count[phrase] += 1
                phrase_parts.setdefault(phrase, tuple(run))
                phrase_pos.setdefault(phrase, run_start)
        run.clear()

    for word, _tag in _posseg(text):
        if word in weights and _CJK_RE.search(word):
            if not run:
                run_start = pos
            run.append(word)
        else:
            flush()
        pos += len(word)
    flush()

    out = [(w, s, positions[w]) for w, s in weights.items()]
    for phrase, count in phrase_count.items():
        if count >= 2 and phrase not in weights:
            out.append((phrase, sum(weights[p] for p in phrase_parts[phrase]), phrase_pos[phrase]))
    return out


# ---------------------------------------------------------------------------------------------
# entities
# ---------------------------------------------------------------------------------------------
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
_VERSION_RE = re.compile(r"(?<![A-Za-z0-9-])([A-Z][A-Za-z]*(?:-[A-Za-z]+)*|[a-z]+[A-Z][A-Za-z]*) (\d{1,3}(?:\.\d+)*[A-Za-z]?)(?![A-Za-z0-9-])")
# camel-case product names ("SmartHub", "iPhone"), not surnames like "McDonald" or "DeVito"
_CAMEL_RE = re.compile(r"(?!(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von)[A-Z])[A-Za-z]*[a-z][A-Z][A-Za-z]*")
_ACRONYM_RE = re.compile(r"[A-Z]{2,6}")
_ZH_TITLE_RE = re.compile(r"《([^》]{1,40})》")

_NOT_VERSIONED = frozenset("""
Step Steps Chapter Section Sections Table Figure Fig Page Pages Part Day Days Week Weeks Month Year
Years Room Level Floor Note Item Items Line Option Appendix Grade Class Phase Stage Article Rule
Question Example Exercise Lesson Unit Number No Vol Volume Issue Episode Season Act Scene Verse Row
Column Slide Box Gate Platform Route Highway Channel Hour Hours Minute Minutes Second Seconds Press
Hold Wait Repeat Count Add Set Turn Select Choose Enter Type Use Call Dial Input Output Port Zone
Group Team Test Case Phone Tel Fax Ext Size Price Total Score Rank Age Point Points Top Over Under
""".split())
_VERSIONED_TECH = frozenset("""
Bluetooth Windows Android Zigbee Thread Matter Python Java Ubuntu Debian Fedora macOS iOS iPadOS
Linux PlayStation Xbox Galaxy Pixel Mate Model Series Gen HarmonyOS Office Photoshop Excel
""".split())

_HONORIFICS = frozenset("""
Mr Mrs Ms Miss Mx Dr Prof Professor Sir Dame Lord Lady President Senator Judge Captain General
Madame Monsieur Herr Frau Saint CEO CTO CFO COO Chairman Chairwoman Director Minister Chancellor
Governor Mayor Coach
""".split())
_PERSON_ROLES = frozenset("""
engineer scientist physicist chemist researcher professor author writer founder cofounder co-founder
ceo cto cfo director manager president chairman chairwoman designer artist actor actress singer
player doctor nurse teacher student leader minister mayor governor spokesman spokeswoman
spokesperson inventor mathematician biologist economist historian philosopher poet novelist
composer architect lawyer journalist editor analyst developer programmer colleague wife husband
son daughter mother father brother sister
""".split())
_PERSON_VERBS = frozenset("""
said says explained wrote writes founded discovered invented told argued believed married died
won received studied graduated joined led leads noted added announced recalled proposed
""".split())
_PLACE_CUES = (
    ("born", "in"), ("based", "in"), ("located", "in"), ("lives", "in"), ("lived", "in"),
    ("moved", "to"), ("city", "of"), ("capital", "of"), ("headquartered", "in"),
    ("headquarters", "in"), ("offices", "in"), ("office", "in"), ("factory", "in"),
    ("village", "of"), ("town", "of"), ("travelled", "to"), ("traveled", "to"), ("grew", "up"),
    ("up", "in"), ("returned", "to"), ("died", "in"), ("worked", "in"), ("work", "in"), ("studied", "in"),
)
_PRODUCT_NOUNS = frozenset("""
app application device speaker hub phone smartphone camera router console software platform
browser model series edition controller sensor headset headphones earbuds watch tablet laptop
robot vacuum thermostat firmware
""".split())
_FIRST_NAMES = frozenset("""
Aaron Adam Adrian Ahmed Alan Albert Alex Alexander Alice Amanda Amelia Amy Ana Andrea Andrew Angela
Anna Anne Anthony Antonio Ben Benjamin Bill Bob Brian Bruce Carl Carlos Caroline Catherine Charles
Charlie Charlotte Chris Christian Christina Christopher Claire Daniel David Diana Donald Edward
Elena Elizabeth Ella Emily Emma Eric Ethan Eva Frank Fred George Grace Hannah Harry Helen Henry Isaac
Isabella Jack Jacob James Jane Jason Jennifer Jessica Joe John Jonathan Jose Joseph Julia Karen Kate
Kevin Laura Leo Linda Lisa Lucas Lucy Luis Maria Marie Mark Martin Mary Matthew Michael Mohammed
Muhammad Nancy Nathan Nicholas Nina Noah Oliver Olivia Patrick Paul Peter Pierre Rachel Richard
Robert Ryan Sam Samuel Sarah Sophia Sophie Stephen Steve Steven Susan Thomas Tim Tom Victoria William
Ada Niels Werner Ludwig Wolfgang Johann Friedrich Karl Hans Giovanni Marco Luca
Hiroshi Yuki Kenji Akira Wei Li Ming Hui Jun Lin Yan Xiao Zhang Wang Liu Chen Raj Priya Ravi Amit
Olga Ivan Dmitri Sergei Natalia Fatima Ali Omar Hassan Jean Louis Jacques Claude Marcel Emile
""".split())
_PLACES = frozenset("""
Afghanistan Argentina Australia Austria Bangladesh Belgium Brazil Canada Chile China Colombia Cuba
Denmark Egypt England Ethiopia Finland France Germany Greece Hungary India Indonesia Iran Iraq
Ireland Israel Italy Japan Kenya Korea Malaysia Mexico Morocco Nepal Netherlands Nigeria Norway
Pakistan Peru Philippines Poland Portugal Russia Scotland Singapore Spain Sweden Switzerland Taiwan
Thailand Turkey Ukraine Vietnam Wales Africa Asia Europe America Antarctica Oceania Arctic
Amsterdam Athens Bangkok Barcelona Beijing Berlin Boston Brussels Budapest Cairo Chicago Copenhagen
Delhi Dubai Dublin Edinburgh Geneva Hamburg Helsinki Istanbul Jakarta Jerusalem Lisbon London
Madrid Manchester Melbourne Milan Montreal Moscow Mumbai Munich Nairobi Osaka Oslo Oxford Cambridge
Paris Prague Rome Seattle Seoul Shanghai Shenzhen Stockholm Sydney Tokyo Toronto Vancouver
Venice Vienna Warsaw Zurich Hangzhou Guangzhou Chengdu Wuhan Nanjing Kyoto Lyon Marseille Florence
Naples Texas California Florida Ohio Oregon Alaska Hawaii Bavaria Siberia Tibet Sahara Alps
Himalayas Nile Danube Thames Rhine Yangtze Mississippi Pacific Atlantic Mediterranean
""".split())
_PLACE_PHRASES = frozenset({
    "new york", "los angeles", "san francisco", "hong kong", "new delhi", "united states",
    "united kingdom", "south africa", "south korea", "north korea", "new zealand", "saudi arabia",
    "silicon valley", "las vegas", "rio de janeiro", "buenos aires", "mexico city", "cape town",
    "washington d.c", "united arab emirates", "czech republic", "sri lanka", "kuala lumpur",
})
_PLACE_SUFFIXES = frozenset("""
City County River Lake Mountain Mountains Mount Island Islands Street Avenue Road Province State
Bay Ocean Sea Valley Square Peninsula Desert Canyon Coast Harbour Harbor District Region
""".split())
_ORGS = frozenset("""
Google Microsoft Apple Amazon Facebook Meta IBM Intel Nvidia NVIDIA AMD Samsung Sony Huawei Xiaomi
Tencent Alibaba Baidu Lenovo Tesla Toyota Honda BMW Siemens Philips Nokia Ericsson Cisco Oracle
Netflix Twitter OpenAI NASA UNESCO UNICEF NATO WHO FBI CIA MIT BBC CNN IKEA Boeing Airbus Bosch
Panasonic Canon Nikon Dell HP Qualcomm Spotify Uber Airbnb ByteDance DJI
""".split())
_ORG_WORDS = frozenset("""
Inc Corp Corporation Company Co Ltd LLC PLC GmbH AG Labs Lab Laboratory Laboratories University
Institute College School Academy Foundation Association Society Agency Bank Group Council Ministry
Department Committee Commission Organization Organisation Hospital Museum Systems Technologies
Technology Electronics Motors Airlines Club Party Union Federation Authority Bureau Consortium
Industries Holdings Partners Studios Studio Press Observatory Library
""".split())
_EN_GENERIC = frozenset("""
User Users Guide Manual Quick Start Setup Set Up Instructions Overview Introduction Specifications
Specification Troubleshooting FAQ Notes Note Safety Warranty Information Contents Chapter Section
Appendix Table Figure Step Warning Caution Important Tip Tips Summary Conclusion Abstract References
Home Settings Menu Back Next OK Cancel Yes No On Off Help About Contact Support Index Page Welcome
""".split())
# verbs that open imperative sentences in manuals ("Press the button ...")
_EN_IMPERATIVE = frozenset("""
press open close connect disconnect plug unplug make use tap click select choose turn hold set
check remove insert place keep ensure note see go wait read follow download install update restart
reset enable disable enter return clean charge say ask add move try put pull push rotate slide
switch store avoid do don't never always please let find go visit call contact refer attach mount
""".split())

_ZH_TAG_TYPE = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org", "nz": "other"}
# well-known names jieba tags wrongly or not at all (华为 comes out as a person, 百度 as a noun)
_ZH_KNOWN = {
    "华为": "org", "小米": "org", "腾讯": "org", "阿里巴巴": "org", "阿里": "org", "百度": "org",
    "京东": "org", "联想": "org", "中兴": "org", "海尔": "org", "格力": "org", "大疆": "org",
    "字节跳动": "org", "比亚迪": "org", "网易": "org", "美团": "org", "微软": "org", "谷歌": "org",
    "三星": "org", "索尼": "org", "苹果公司": "org", "英特尔": "org", "英伟达": "org", "特斯拉": "org",
    "鸿蒙": "product", "微信": "product", "支付宝": "product", "抖音": "product", "淘宝": "product",
    "安卓": "product",
}
# common nouns jieba tags as names
_ZH_NOT_NAME = frozenset("""
蓝牙 麦克风 音箱 手机 电源 指示灯 路由器 空调 冰箱 电视 耳机 充电器 插座 遥控器 云端 马克杯 沙发 阳台
高清 金属 黄金 白金 高达 华丽 文中 云台 明星 高手
""".split())
_ZH_ORG_SUFFIX = frozenset("""
公司 有限公司 股份有限公司 有限责任公司 集团 大学 学院 研究院 研究所 研究中心 实验室 银行 医院 协会 学会
委员会 基金会 科技公司 工作室 出版社 电视台 报社 中学 小学 事务所
""".split())
_ZH_NOUNISH = ("n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "j", "eng", "vn")


def entities(text: str) -> list[tuple[str, str]]:
    """Named entities of ``text`` as (name, type) pairs, in order of first appearance, each name
    once (case-insensitively). Types: "person", "place", "org", "product", "other".

    A name found inside a longer one at the same place is dropped ("S2" inside "星云智能音箱 S2",
    "Wi-Fi" inside "Wi-Fi 6"); the same name found elsewhere on its own is still kept once.
    """
    if not text or not text.strip():
        return []
    tokens = _posseg(text) if _CJK_RE.search(text) else []
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
    for i, (w, _) in enumerate(tokens):
        starts.append(pos)
        pos += len(w)
        ends[pos] = i
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
            if not (_CJK_RE.search(w) and (tag in _ZH_NOUNISH or w in _ZH_KNOWN) and w not in CHINESE_STOPWORDS):
                break
            taken += 1
            j -= 1
        if taken and i is not None:
            start = starts[j + 1]
            if sum(len(tokens[t][0]) for t in range(j + 1, i + 1)) <= 10:
                out.append(_Cand(start, c.end, text[start:c.end], "product"))
    return out


_Tok = tuple  # (word, start, end) with absolute offsets into the text
_SPLIT_ALWAYS = frozenset({"in", "on", "at"})
_SPLIT_UNLESS_ORG = frozenset({"and", "&", "for"})


def _english_candidates(text: str) -> list[_Cand]:
    """Capitalised runs from ``keyterms.english_terms``, sentence by sentence: located in the
    text, split at "in"/"at"/"and" between names, sentence-initial common words dropped, typed."""
    out: list[_Cand] = []
    spans = sentence_spans(text)
    lower_words = set(re.findall(r"\b[a-z][a-z'-]*\b", text))
    for s_start, s_end in spans:
        # CJK characters become a separator so that a Latin word never swallows the Chinese
        # after it ("S2放在客厅") and offsets stay those of ``text``
        sentence = _CJK_RE.sub("|", text[s_start:s_end])
        cursor = 0
        for term in english_terms(sentence):
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


def _split_run(toks: list[_Tok]) -> list[list[_Tok]]:
    """"Aurora Labs in Paris" -> "Aurora Labs", "Paris"; "Berlin and Tokyo" -> two names; but
    "University of Oxford" and "Ministry for Foreign Affairs" stay whole."""
    org = any(w in _ORG_WORDS for w, _, _ in toks)
    runs: list[list[_Tok]] = [[]]
    for tok in toks:
        w = tok[0]
        if w in _SPLIT_ALWAYS or (w in _SPLIT_UNLESS_ORG and not org):
            runs.append([])
        else:
            runs[-1].append(tok)
    return [r for r in (_strip_connectors(r) for r in runs) if r]


def _common_initial(word: str, lower_words: set[str]) -> bool:
    """Whether a sentence-initial capitalised word is most likely just a common word."""
    if _known_single(word) or word.isupper() or any(c.isdigit() for c in word) or _CAMEL_RE.fullmatch(word):
        return False
    low = word.lower()
    return low in _RAKE_STOP or low in _EN_IMPERATIVE or low in lower_words


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
        if _CJK_RE.search(w) and (tag in _ZH_NOUNISH or kind):
            j = i
            while j < n and j - i < 5 and _CJK_RE.search(tokens[j][0]) and tokens[j][1] in _ZH_NOUNISH:
                if tokens[j][0] in _ZH_ORG_SUFFIX and j > i:
                    break
                j += 1
            if j < n and j > i and tokens[j][0] in _ZH_ORG_SUFFIX:
                s, e = starts[i], starts[j] + len(tokens[j][0])
                out.append(_Cand(s, e, text[s:e], "org"))
                i = j + 1
                continue
        if kind:
            j = i + 1
            name_end = starts[i] + len(w)
            while j < n:
                w2, tag2 = tokens[j]
                if kind == "person" and w2 == "·" and j + 1 < n and _CJK_RE.search(tokens[j + 1][0]):
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
    if word in _ZH_NOT_NAME or len(word) < 2 or not _CJK_RE.search(word):
        return None
    kind = _ZH_TAG_TYPE.get(tag)
    if kind == "person" and len(word) > 4:
        return None
    if kind is None and tag == "nt":
        return "org"
    return kind


# ---------------------------------------------------------------------------------------------
# key sentences
# ---------------------------------------------------------------------------------------------
_DAMPING = 0.85
_WORDY_RE = re.compile(r"[A-Za-z0-9\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def key_sentences(text: str, k: int = 3) -> list[tuple[int, int]]:
    """The ``k`` most central sentences of ``text`` as (start, end) spans, in document order.

    Sentences come from ``sentence_spans``; two sentences are similar by the overlap of their
    analyzer terms, normalised by log length (TextRank); PageRank over that graph ranks them,
    the earlier sentence winning a tie. With ``k`` or fewer sentences all are returned.
    """
    if k <= 0 or not text or not text.strip():
        return []
    spans = [(s, e) for s, e in sentence_spans(text) if _WORDY_RE.search(text, s, e)]
    if len(spans) <= k:
        return spans
    analyzer = _analyzer()
    bags = [set(analyzer.terms(text[s:e])) for s, e in spans]
    n = len(spans)
    weights = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            overlap = len(bags[i] & bags[j])
            if overlap:
                w = overlap / (math.log(1 + len(bags[i])) + math.log(1 + len(bags[j])))
                weights[i][j] = weights[j][i] = w
    scores = _pagerank(weights)
    best = sorted(range(n), key=lambda i: (-round(scores[i], 12), i))[:k]
    return [spans[i] for i in sorted(best)]


def _pagerank(weights: list[list[float]], iterations: int = 100, tol: float = 1e-10) -> list[float]:
    """Weighted PageRank by power iteration; a sentence with no neighbours keeps the base score."""
    n = len(weights)
    out_sum = [sum(row) for row in weights]
    # incoming edges of i: (j, share of j's weight that goes to i)
    incoming = [[(j, weights[j][i] / out_sum[j]) for j in range(n) if weights[j][i]] for i in range(n)]
    scores = [1.0 / n] * n
    for _ in range(iterations):
        new = [(1 - _DAMPING) / n + _DAMPING * sum(share * scores[j] for j, share in incoming[i]) for i in range(n)]
        delta = max(abs(a - b) for a, b in zip(new, scores))
        scores = new
        if delta < tol:
            break
    return scores


# ---------------------------------------------------------------------------------------------
# index terms
# ---------------------------------------------------------------------------------------------
def _analyzed(phrases: Iterable[str]) -> str:
    analyzer = _analyzer()
    out: list[str] = []
    seen: set[str] = set()
    for phrase in phrases:
        for term in analyzer.terms(phrase):
            if term not in seen:
                seen.add(term)
                out.append(term)
    return " ".join(out)


def keyword_terms(text: str, k: int = 10) -> str:
    """The ``k`` best keywords of ``text`` as BM25 analyzer terms, space-joined, each term once
    (in keyword rank order), ready for a keyword index queried with the same analyzer."""
    return _analyzed(p for p, _ in keywords(text, k))


def entity_terms(text: str) -> str:
    """The entity names of ``text`` as BM25 analyzer terms, space-joined, each term once."""
    return _analyzed(name for name, _ in entities(text))
