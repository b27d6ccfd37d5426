"""InsuranceQA (Chinese and English) in BEIR form: an insurance FAQ, questions -> answer entries.

    .venv/bin/python benchmarks/datasets/fetch_insuranceqa.py            # -> benchmarks/data/insuranceqa-{zh,en}

Downloads the sdist of PyPI ``insuranceqa-data==1.0`` (Hai Liang Wang's InsuranceQA-zh corpus:
the answers and questions of InsuranceQA v1, Feng et al., ASRU 2015, with Chinese translations
beside the English) with pip, reads ``answers.json.gz`` and ``test.json.gz`` straight out of the
archive and writes two sets with the same ids and judgements:

- ``insuranceqa-zh``: the Chinese questions of the test split -> the Chinese answers;
- ``insuranceqa-en``: the same questions in English -> the same answers in English.

The corpus is the pool of every answer judged correct for some test question (each entry one
document, no title); each question's judged answers are its relevant documents. The English
questions' doubled spaces are made single; the answers' leading spaces are stripped; nothing
else is changed. A SOURCE.md is written beside each set.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from beir import write_beir  # (beside this script)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "insuranceqa-data==1.0"


def download(tmp: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", PACKAGE,
                    "-d", str(tmp)], check=True)
    found = sorted(tmp.glob("insuranceqa_data-1.0*"))
    if not found:
        raise SystemExit(f"pip left no archive of {PACKAGE} in {tmp}")
    return found[0]


def read_member(archive: Path, name: str):
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/insuranceqa_data/" + name))
        with tar.extractfile(member) as f:  # type: ignore[union-attr]
            return json.loads(gzip.decompress(f.read()))


def clean(text: str) -> str:
    return re.sub(r"[ \t\u00a0\u3000]+", " ", text).strip()


def write_set(out: Path, lang: str, answers: dict, test: dict, archive: Path, digest: str) -> dict:
    pool = sorted({a for q in test.values() for a in q["answers"]}, key=int)
    qids = sorted(test, key=int)
    rows = write_beir(out, ({"_id": f"a{aid}", "title": "", "text": clean(answers[aid][lang])} for aid in pool),
                      ({"_id": f"q{qid}", "text": clean(test[qid][lang]), "domain": test[qid]["domain"]} for qid in qids),
                      ((f"q{qid}", f"a{aid}") for qid in qids for aid in test[qid]["answers"]))
    lengths = [len(clean(answers[a][lang])) for a in pool]
    counts = {"documents": len(pool), "queries": len(qids), "judgements": rows,
              "mean_chars": round(sum(lengths) / len(lengths), 1)}
    other = "English" if lang == "zh" else "Chinese"
    language = "Chinese" if lang == "zh" else "English"
    (out / "SOURCE.md").write_text(f"""# InsuranceQA, {language} (retrieval form)

- Source: PyPI `{PACKAGE}` (sdist `{archive.name}`, sha256 `{digest}`), files
  `insuranceqa_data/answers.json.gz` and `insuranceqa_data/test.json.gz`: InsuranceQA v1 (Feng, Xiang,
  Glass, Wang and Zhou, "Applying Deep Learning to Answer Selection: A Study and An Open Task", ASRU 2015;
  questions asked on insurancelibrary.com, answered by professionals) with the Chinese translation of
  Hai Liang Wang (github.com/chatopera/insuranceqa-corpus-zh). The Chinese text is a machine-assisted
  translation of the English; the {other} set beside this one has the same ids and judgements.
- License: the package's LICENSE (GPL-3.0); the original InsuranceQA is for research use. Not
  redistributed here: built by `benchmarks/datasets/fetch_insuranceqa.py`.
- Converted: corpus.jsonl = every answer judged correct for some question of the test split (the
  pool; `_id` a<answer id>, no title); queries.jsonl = the test split's {language} questions (`_id`
  q<question id>, file order = question id; `domain` = the insurance line); qrels/test.tsv = each
  question -> its judged answers (score 1). Runs of spaces made single, ends stripped.
- Counts: {counts['documents']:,} documents (mean {counts['mean_chars']} characters), {counts['queries']:,}
  questions, {counts['judgements']:,} judgements.
- Task: an FAQ: a short question -> the answer entries that answer it. Entries are short (one
  paragraph), so an entry cut into chunks loses what it says as a whole.
- Choose settings on even-numbered queries (file order, from 0), report on odd ones.
""", encoding="utf-8")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data"), help="the sets go to OUT/insuranceqa-{zh,en}")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = download(Path(tmp))
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        answers = read_member(archive, "answers.json.gz")
        test = read_member(archive, "test.json.gz")
        for lang in ("zh", "en"):
            counts = write_set(Path(args.out) / f"insuranceqa-{lang}", lang, answers, test, archive, digest)
            print(f"insuranceqa-{lang}: {counts}")


if __name__ == "__main__":
    main()
