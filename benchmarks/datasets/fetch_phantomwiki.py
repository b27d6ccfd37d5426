"""Generate a PhantomWiki universe locally and write it as a BEIR-format multi-hop retrieval set.

PhantomWiki (PyPI ``phantom-wiki==1.0.3``, MIT) builds a fictional universe of people (family trees,
a friendship graph, jobs, hobbies, dates of birth), one article per person, and questions generated
from a grammar together with the Prolog query that answers them. Most questions name only their
first person, or none ("... of the person whose hobby is X?"), so the later articles of the chain
cannot be found by matching titles.

Set-up (once; PhantomWiki needs Python >= 3.12 and SWI-Prolog, so it lives in its own venv):

    apt-get update && apt-get install -y swi-prolog-nox
    /root/.pyenv/versions/3.12.1/bin/python3 -m venv /tmp/pw-venv
    /tmp/pw-venv/bin/pip install phantom-wiki==1.0.3
    # optional, to check the hash recorded in SOURCE.md:
    /tmp/pw-venv/bin/pip download --no-deps phantom-wiki==1.0.3 -d /tmp/pwdl

Run (with the project's Python; the generation itself runs in the 3.12 venv as a subprocess):

    .venv/bin/python benchmarks/datasets/fetch_phantomwiki.py            # -> benchmarks/data/phantomwiki

Writes corpus.jsonl, queries.jsonl, qrels/test.tsv, queries_meta.jsonl and SOURCE.md.

Relevance is not guessed from text: every question is re-proved against PhantomWiki's own Prolog
database with a small meta-interpreter that expands the derived relations (nephew, cousin,
brother-in-law, ...) down to the relations an article states (mother, father, son, daughter,
brother, sister, husband, wife, friend, job, hobby, date of birth, gender). The people in those
proofs -- the start person(s), every intermediate person (including the hidden ones inside a derived
relation, e.g. the sibling through whom a nephew is reached) and the answer person(s) -- are the
supporting articles. Proofs are enumerated over all answers, and the answers they yield are checked
against PhantomWiki's own answers.

Deterministic for a given ``--seed`` and settings (the subprocess runs with PYTHONHASHSEED=0).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from beir import write_beir  # (beside this script)

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE, VERSION = "phantom-wiki", "1.0.3"
WHEEL = "phantom_wiki-1.0.3-py3-none-any.whl"
WHEEL_SHA256 = "866b87284c740d0e8d1b6a5b5dfdcf4de8eddedb7eebe063718f428d02429e84"

# Relations/attributes that an article states directly (primitive steps of a proof). Everything
# else (nephew, cousin, ..._in_law, grand..., great_...) is a rule of PhantomWiki's and is expanded.
RELATION_PRIMITIVES = ["parent", "child", "sibling", "sister", "brother", "mother", "father", "son",
                       "daughter", "wife", "husband", "married", "friend"]
ATTRIBUTE_PRIMITIVES = ["dob", "job", "hobby", "gender"]
TYPE_CHECKS = ["female", "male", "nonbinary", "gender"]  # gender tests inside rules; not hops

META_INTERPRETER = r"""
rs_prim(P) :- memberchk(P, [%(prims)s]).
rs_prove(true, []) :- !.
rs_prove((A, B), S) :- !, rs_prove(A, SA), rs_prove(B, SB), append(SA, SB, S).
rs_prove(X \= Y, []) :- !, X \= Y.
rs_prove(G, [step(N, X, none)]) :- G =.. [N, X], rs_prim(N), !, call(G).
rs_prove(G, [step(N, X, Y)]) :- G =.. [N, X, Y], rs_prim(N), !, call(G).
rs_prove(G, S) :- clause(G, Body), rs_prove(Body, S).
rs_encode(Steps, Str) :-
    findall(L, (member(step(N, X, Y), Steps), format(string(L), "~w\t~w\t~w", [N, X, Y])), Ls),
    atomic_list_concat(Ls, '\n', A), atom_string(A, Str).
rs_proofs(Goal, Ans, Max, Out) :-
    findall(R, limit(Max, (rs_prove(Goal, S), rs_encode(S, E), format(string(R), "~w\n~w", [Ans, E]))), Out).
"""

# Runs inside the Python 3.12 venv that has phantom-wiki installed.
HELPER = r'''
import contextlib, importlib, json, os, sys
from importlib.metadata import version

cfg = json.loads(sys.argv[1])
gd = importlib.import_module("phantom_wiki.generate_dataset")  # the package re-exports a function of that name
from phantom_wiki.utils import decode

held = {}
_get_database = gd.get_database
def _capture(*a):
    held["db"] = _get_database(*a)
    return held["db"]
gd.get_database = _capture

work = cfg["workdir"]
with contextlib.redirect_stdout(sys.stderr):
    gd.generate_dataset(**cfg["generate"], output_dir=work, article_format="json", question_format="json",
                        quiet=True)
db = held["db"]
mi = os.path.join(work, "rs_meta.pl")
with open(mi, "w") as f:
    f.write(cfg["meta_interpreter"])
db.consult(mi)

articles = json.load(open(os.path.join(work, "articles.json")))
questions = json.load(open(os.path.join(work, "questions.json")))
out_q = []
for q in questions:
    query, ans_var = q["prolog"]["query"], q["prolog"]["answer"]
    row = {"type": q["type"], "template": " ".join(q["template"][:-1]) + q["template"][-1],
           "question": q["question"], "query": query, "answer_var": ans_var, "answers": q["answer"],
           "aggregation": q["is_aggregation_question"], "difficulty": q["difficulty"], "proofs": None}
    if not q["is_aggregation_question"]:
        goal = ", ".join(query[::-1])  # the order PhantomWiki's get_answer evaluates it in
        res = db.query(f"rs_proofs(({goal}), {ans_var}, {cfg['max_proofs']}, Out)")
        row["proofs"] = [decode(x) for x in res[0]["Out"]]
    out_q.append(row)
json.dump({"version": version("phantom-wiki"),
           "articles": [{"title": a["title"], "article": a["article"]} for a in articles],
           "questions": out_q}, open(os.path.join(work, "export.json"), "w"))
'''


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def run_generator(python: str, gen: dict, max_proofs: int) -> dict:
    prims = ", ".join(RELATION_PRIMITIVES + ATTRIBUTE_PRIMITIVES + ["female", "male", "nonbinary"])
    with tempfile.TemporaryDirectory(prefix="phantomwiki-") as work:
        cfg = {"workdir": work, "generate": gen, "max_proofs": max_proofs,
               "meta_interpreter": META_INTERPRETER % {"prims": prims}}
        helper = Path(work) / "rs_helper.py"
        helper.write_text(HELPER)
        env = dict(os.environ, PYTHONHASHSEED="0", TQDM_DISABLE="1")
        proc = subprocess.run([python, str(helper), json.dumps(cfg)], env=env, capture_output=True,
                              text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"phantom-wiki generation failed (exit {proc.returncode}); see the set-up in this "
                             f"script's docstring")
        return json.loads((Path(work) / "export.json").read_text())


def parse_proof(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    answer, _, body = text.partition("\n")
    steps = [tuple(line.split("\t")) for line in body.split("\n") if line]
    return answer, steps  # type: ignore[return-value]


def analyse(q: dict) -> dict:
    """Supporting people, hops and reads of one question from its proofs."""
    person_answer = q["question"].startswith("Who is")
    supporting: set[str] = set()
    answers: set[str] = set()
    hops, reads = [], []
    for text in q["proofs"]:
        answer, steps = parse_proof(text)
        answers.add(answer)
        people: list[str] = []
        for name, x, y in steps:
            people.append(x)
            if name in RELATION_PRIMITIVES:
                people.append(y)
        supporting.update(people)
        real = [s for s in steps if s[0] not in TYPE_CHECKS]
        hops.append(len(real))
        # articles that must be read: all people of the proof; a person answer only counts when the
        # chain passes through it (it appears in two or more real steps), else its name is read off
        # the previous article
        mentioned: dict[str, int] = {}
        for name, x, y in real:
            for p in ([x, y] if name in RELATION_PRIMITIVES else [x]):
                mentioned[p] = mentioned.get(p, 0) + 1
        must = {p for p, n in mentioned.items() if not (person_answer and p == answer and n < 2)}
        reads.append(len(must))
    return {"supporting": supporting, "answers": answers, "min_hops": min(hops) if hops else 0,
            "max_hops": max(hops) if hops else 0, "min_reads": min(reads) if reads else 0}


def named(title: str, text: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(title) + r"(?![\w-])", text) is not None


def stats(rows: list[dict]) -> dict:
    if not rows:
        return {"questions": 0}
    n = len(rows)
    return {"questions": n,
            "mean_supporting": round(statistics.mean(r["n_supporting"] for r in rows), 3),
            "mean_hops": round(statistics.mean(r["hops"] for r in rows), 3),
            "share_naming_at_most_first": round(sum(r["n_named"] <= 1 for r in rows) / n, 3),
            "share_naming_none": round(sum(r["n_named"] == 0 for r in rows) / n, 3),
            "share_naming_all": round(sum(r["names_all_supporting"] for r in rows) / n, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "phantomwiki"))
    ap.add_argument("--python", default="/tmp/pw-venv/bin/python", help="Python 3.12 with phantom-wiki==1.0.3")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--num-family-trees", type=int, default=20)
    ap.add_argument("--max-family-tree-size", type=int, default=25)
    ap.add_argument("--friendship-k", type=int, default=3)
    ap.add_argument("--question-depth", type=int, default=10,
                    help="grammar depth; 10 allows up to 3 relations after the start (+ derived-relation hops)")
    ap.add_argument("--num-questions-per-type", type=int, default=100)
    ap.add_argument("--max-supporting", type=int, default=5, help="drop questions with more supporting articles")
    ap.add_argument("--max-proofs", type=int, default=2000, help="drop questions with more proofs than this")
    ap.add_argument("--wheel", default=f"/tmp/pwdl/{WHEEL}", help="downloaded wheel, to check its sha256")
    args = ap.parse_args()

    gen = {"seed": args.seed, "friendship_seed": args.seed, "num_family_trees": args.num_family_trees,
           "max_family_tree_size": args.max_family_tree_size, "max_family_tree_depth": 5,
           "max_branching_factor": 5, "stop_prob": 0, "friendship_k": args.friendship_k,
           "question_depth": args.question_depth, "num_questions_per_type": args.num_questions_per_type,
           "num_sampling_attempts": 100, "easy_mode": False}
    data = run_generator(args.python, gen, args.max_proofs)
    if data["version"] != VERSION:
        raise SystemExit(f"expected {PACKAGE}=={VERSION}, the venv has {data['version']}")

    wheel_note = "not checked (wheel not found)"
    if Path(args.wheel).exists():
        digest = hashlib.sha256(Path(args.wheel).read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            raise SystemExit(f"{args.wheel}: sha256 {digest} != recorded {WHEEL_SHA256}")
        wheel_note = f"checked against {args.wheel}"

    out = Path(args.out)
    ids: dict[str, str] = {}
    corpus = []
    for a in data["articles"]:
        did = slug(a["title"])
        if did in ids.values():
            raise SystemExit(f"two people share the id {did}")
        ids[a["title"]] = did
        corpus.append({"_id": did, "title": a["title"], "text": a["article"].strip()})

    kept: list[dict] = []
    dropped = {"aggregation (How many ...)": 0, "single-article (needs < 2 articles)": 0,
               f"more than {args.max_supporting} supporting articles": 0,
               f"more than {args.max_proofs} proofs": 0, "duplicate question text": 0}
    seen: set[str] = set()
    per_type: dict[int, int] = {}
    for q in data["questions"]:
        if q["aggregation"]:
            dropped["aggregation (How many ...)"] += 1
            continue
        if len(q["proofs"]) >= args.max_proofs:
            dropped[f"more than {args.max_proofs} proofs"] += 1
            continue
        a = analyse(q)
        if a["answers"] != set(q["answers"]):
            raise SystemExit(f"proofs disagree with PhantomWiki's answers for: {q['question']}\n"
                             f"{sorted(a['answers'])} != {q['answers']}")
        if a["min_reads"] < 2:
            dropped["single-article (needs < 2 articles)"] += 1
            continue
        if len(a["supporting"]) > args.max_supporting:
            dropped[f"more than {args.max_supporting} supporting articles"] += 1
            continue
        if q["question"] in seen:
            dropped["duplicate question text"] += 1
            continue
        seen.add(q["question"])
        supporting = sorted(a["supporting"])
        n_named = sum(named(t, q["question"]) for t in supporting)
        per_type[q["type"]] = per_type.get(q["type"], 0) + 1
        kept.append({"_id": f"pw{len(kept):04d}", "text": q["question"], "supporting": supporting,
                     "hops": a["min_hops"], "max_hops": a["max_hops"], "template_relations": len(q["query"]),
                     "n_supporting": len(supporting), "n_named": n_named,
                     "names_all_supporting": n_named == len(supporting), "template": q["template"],
                     "template_type": q["type"], "difficulty": q["difficulty"], "prolog": q["query"],
                     "answers": sorted(a["answers"])})

    write_beir(out, corpus, ({"_id": r["_id"], "text": r["text"]} for r in kept),
               ((r["_id"], ids[t]) for r in kept for t in r["supporting"]))
    with open(out / "queries_meta.jsonl", "w", encoding="utf-8") as f:
        for r in kept:
            f.write(json.dumps({"_id": r["_id"], "hops": r["hops"], "max_hops": r["max_hops"],
                                "template_relations": r["template_relations"],
                                "n_supporting": r["n_supporting"], "supporting": [ids[t] for t in r["supporting"]],
                                "n_supporting_named": r["n_named"],
                                "names_all_supporting": r["names_all_supporting"],
                                "template": r["template"], "template_type": r["template_type"],
                                "difficulty": r["difficulty"], "prolog": r["prolog"], "answers": r["answers"]},
                               ensure_ascii=False) + "\n")

    corpus_bytes = (out / "corpus.jsonl").stat().st_size
    s_all, s_even, s_odd = stats(kept), stats(kept[0::2]), stats(kept[1::2])
    hops_hist: dict[int, int] = {}
    for r in kept[1::2]:
        hops_hist[r["hops"]] = hops_hist.get(r["hops"], 0) + 1
    settings = "\n".join(f"- `{k}` = {v}" for k, v in gen.items())
    drops = "\n".join(f"  - {k}: {v}" for k, v in dropped.items())
    table = "\n".join(f"| {name} | {s['questions']} | {s['mean_supporting']} | {s['mean_hops']} | "
                      f"{s['share_naming_at_most_first']} | {s['share_naming_none']} | {s['share_naming_all']} |"
                      for name, s in (("odd (report)", s_odd), ("even (settings)", s_even), ("all", s_all)))
    (out / "SOURCE.md").write_text(f"""# PhantomWiki (generated locally)

- Package: PyPI `{PACKAGE}=={VERSION}` (https://github.com/kilian-group/phantom-wiki), license MIT
  (the wheel's LICENSE: "MIT License, Copyright (c) 2025 PhantomWiki").
- Wheel `{WHEEL}` sha256 `{WHEEL_SHA256}` ({wheel_note}).
- Generated by `benchmarks/datasets/fetch_phantomwiki.py` with SWI-Prolog and Python 3.12
  (`{args.python}`), PYTHONHASHSEED=0; deterministic for the seed and settings below.

## Settings (arguments of `phantom_wiki.generate_dataset.generate_dataset`)

{settings}

Filters of this script: aggregation questions ("How many ...") dropped; questions that every proof
answers from one article dropped; more than {args.max_supporting} supporting articles dropped; proofs capped
at {args.max_proofs}; repeated question texts kept once.

## Counts

- Articles: {len(data['articles'])} (corpus.jsonl {corpus_bytes / 1024:.0f} KiB); title = the person's name,
  text = PhantomWiki's article (family, friends, attributes).
- Questions generated: {len(data['questions'])}; kept: {len(kept)}; qrels rows: {sum(r['n_supporting'] for r in kept)}.
- Dropped:
{drops}
- Kept per template type: {json.dumps(dict(sorted(per_type.items())))}

Settings were chosen looking at the even-numbered queries (file order from 0) only; the numbers to
report are those of the odd-numbered ones. (`question_depth` = 10 was picked from the template list:
it is the smallest depth whose templates chain up to three relations; `num_questions_per_type` = 100
was picked so that the even half holds ~200 questions; the other settings are PhantomWiki's defaults
except `num_family_trees`, set for a corpus of ~500 articles.)

Note: PhantomWiki re-seeds its sampler for every template, so question j of each template starts its
random walk from the same draws; queries of different templates often share people (and articles).

| queries | n | mean supporting articles | mean hops | share naming no supporting title beyond the first | share naming none | share naming all |
| --- | --- | --- | --- | --- | --- | --- |
{table}

Hops (odd queries): {json.dumps(dict(sorted(hops_hist.items())))} -- a hop is one stated relation or attribute
in the shortest proof (a derived relation such as nephew counts as its steps: sibling, then son).

## How relevance was derived

PhantomWiki gives each question its Prolog query and answers. Each query is re-proved in
PhantomWiki's own Prolog database (the one the generator built, with its family/friend rules) by a
meta-interpreter that treats the relations an article states (mother, father, parent, son,
daughter, child, brother, sister, sibling, husband, wife, married, friend) and the attributes (date
of birth, occupation, hobby, gender) as primitive steps and expands every other relation through
PhantomWiki's rule for it. All proofs are enumerated; their answers must equal PhantomWiki's answer
list (checked for every question). The supporting articles (qrels score 1) are the people of all
proofs: the start person (named, or found by an attribute), each intermediate person, including the
people inside a derived relation (e.g. the sibling in "nephew", the spouse in "brother-in-law", the
parent and aunt/uncle in "cousin"), and the answer person(s) when the answer is a person. People
tried but leading to no answer are not included. No string matching is used for relevance.

queries_meta.jsonl per query: `hops` (shortest proof) and `max_hops`, `template_relations` (predicates
in PhantomWiki's query), `n_supporting`, `supporting` (corpus ids), `n_supporting_named` and
`names_all_supporting` (whether the question text contains each supporting title, as a whole
phrase), `template`, `template_type`, PhantomWiki's `difficulty`, the `prolog` query and `answers`.
""", encoding="utf-8")

    print(f"{len(data['articles'])} articles ({corpus_bytes / 1024:.0f} KiB), {len(kept)} queries kept "
          f"of {len(data['questions'])}; dropped {dropped}")
    print("even:", json.dumps(s_even))
    print("odd: ", json.dumps(s_odd))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
