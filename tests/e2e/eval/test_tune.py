"""ragsift tune: the fusion settings of one knowledge base learned from labeled questions. The
replayed fusion is checked against the full query pipeline (kb.rank_documents) run with the same
settings, so what tune measures is what a query would get."""
import json
import statistics

import pytest

from ragsift.cli import main
from ragsift.demo import sample_dir
from ragsift.errors import ConfigError
from ragsift.eval.metrics import ndcg_at_k
from ragsift.eval.tune import Question, grid, labeled_questions, tune
from ragsift.kb import KnowledgeBase

# the sample's textbook and FAQ exist in both languages: either version answers
COUNTERPART = {"ml_textbook_zh.md": "ml_textbook_en.md", "ml_textbook_en.md": "ml_textbook_zh.md",
               "faq_en.html": "faq_zh.txt", "faq_zh.txt": "faq_en.html"}


def _beir(root, questions, doc_of, both_languages=False):
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("", encoding="utf-8")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({"_id": q["id"], "text": q["question"]}, ensure_ascii=False) + "\n")
    rows = []
    for q in questions:
        src = q["expected_source"]
        rows += [f"{q['id']}\t{doc_of[s]}\t1\n" for s in [src] + ([COUNTERPART[src]] if both_languages and
                                                                  src in COUNTERPART else [])]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(rows), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def kb_and_questions(tmp_path_factory, questions):
    root = tmp_path_factory.mktemp("tune")
    kb = KnowledgeBase.open(root / "kb", embedder="minilm")
    kb.ingest(sample_dir() / "kb")
    doc_of = {d.source.rsplit("/", 1)[-1]: i for i, d in kb.documents().items()}
    return kb, _beir(root / "beir", questions, doc_of), _beir(root / "beir2", questions, doc_of, True)


def _pipeline_ndcg(kb, qs, setting):
    """nDCG@10 from the full query pipeline with these settings as overrides."""
    return [ndcg_at_k([d for d, _ in kb.rank_documents(q.text, **setting)], q.rels, 10) for q in qs]


def test_tune_replays_fusion_as_the_pipeline_ranks_and_saves_only_what_holds_out(kb_and_questions):
    kb, beir, _ = kb_and_questions
    qs = labeled_questions(kb, str(beir))
    assert len(qs) == 16 and all(len(q.rels) == 1 for q in qs)
    report = tune(kb, qs, source="labels", apply=False)
    assert report.questions == 16 and not report.applied
    even, odd = qs[0::2], qs[1::2]
    for name, setting in (("current", report.current), ("chosen", report.chosen)):
        assert report.train[name] == pytest.approx(statistics.fmean(_pipeline_ndcg(kb, even, setting)), abs=1e-9)
        assert report.validation[name] == pytest.approx(statistics.fmean(_pipeline_ndcg(kb, odd, setting)), abs=1e-9)
    assert report.train["chosen"] >= report.train["current"]
    assert report.chosen == report.current or report.chosen in grid(list(kb.settings.query.channels), True)


def test_tune_saves_the_chosen_defaults_and_the_trace_says_so(kb_and_questions, tmp_path):
    kb, _, beir = kb_and_questions
    qs = labeled_questions(kb, str(beir))  # the textbook and FAQ questions have two answers, one per language
    assert sum(len(q.rels) == 2 for q in qs) >= 6
    # make the current settings poor (the top entry of dense alone finds one of two answers) so that
    # tuning has something to win, then tune
    kb.set_defaults(fusion="weighted", weights={"dense": 1.0, "bm25": 0.0}, channel_depth=1)
    report = tune(kb, qs, source="labels")
    assert report.validation["current"] < 1.0 and report.applied
    assert report.applied == (report.chosen is not report.current
                              and report.validation["chosen"] >= report.validation["current"])
    if report.applied:  # (always, as asserted above)
        again = KnowledgeBase.open(kb.path)  # saved in ragsift.toml
        q = again.settings.query
        assert q.fusion.value == report.chosen["fusion"] and q.channel_depth == report.chosen["channel_depth"]
        assert q.tuned_by.startswith("ragsift tune on 16 labeled questions")
        assert again.query("reset the hub").trace.fusion["tuned_by"] == q.tuned_by
        again.close()
    with pytest.raises(ConfigError, match="fixed"):
        kb.set_defaults(embedder="e5-small")
    with pytest.raises(Exception, match="at least 10 questions"):
        tune(kb, qs[:5], source="labels")


def test_tune_from_the_command_line(kb_and_questions, capsys):
    kb, beir, _ = kb_and_questions
    assert main(["--kb", str(kb.path), "tune", "--qrels", str(beir), "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "labels" and out["questions"] == 16 and out["applied"] is False
    assert set(out["validation"]) == {"current", "chosen"}


def test_questions_whose_documents_are_not_in_the_knowledge_base_are_left_out(kb_and_questions, tmp_path):
    kb = kb_and_questions[0]
    other = tmp_path / "beir"
    (other / "qrels").mkdir(parents=True)
    (other / "corpus.jsonl").write_text("", encoding="utf-8")
    (other / "queries.jsonl").write_text('{"_id": "x", "text": "anything"}\n', encoding="utf-8")
    (other / "qrels" / "test.tsv").write_text("x\tnot-a-doc\t1\n", encoding="utf-8")
    assert labeled_questions(kb, str(other)) == []
    assert Question("a", "b", {"c": 1}).rels == {"c": 1}
