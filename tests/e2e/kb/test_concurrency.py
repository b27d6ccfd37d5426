"""One KnowledgeBase object shared by threads: documents added from code, queries beside a
write (never waiting for it, never seeing half of it), and a query's deadline cancelled by its
caller (a client that went away)."""
from __future__ import annotations

import threading
import time

import pytest
from conftest import write_files
from fault_llm_server import FaultInjectingLLMServer

from ragsift.cancel import Deadline
from ragsift.kb import KnowledgeBase
from ragsift.retrieve import runner

DOCS = [
    {"id": "tea-zh", "title": "绿茶保存", "text": "绿茶应该密封后放入冰箱冷藏保存，温度保持在零到五摄氏度。",
     "metadata": {"lang": "zh", "year": 2024}},
    {"id": "tea-en", "title": "Storing green tea", "text": "Green tea keeps best sealed in a refrigerator at zero "
     "to five degrees.", "metadata": {"lang": "en", "year": 2023}},
    {"id": "hub-en", "text": "Hold the reset button for ten seconds until the ring turns red.", "source": "hub.md"},
]


@pytest.fixture
def kb(tmp_path):
    return KnowledgeBase.open(tmp_path / "kb", embedder="e5-small")


def test_documents_from_code_are_ingested_searched_and_replaced(kb):
    bad = [{"id": "x"}, "not a mapping", {"id": "tea-en", "text": "again"}, {"id": "e", "text": "  "}]
    report = kb.add_documents(DOCS + bad)
    assert sorted(report.added) == ["hub-en", "tea-en", "tea-zh"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons == {"documents[3]": "a document needs '_id' (or 'id') and a string 'text'",
                       "documents[4]": "a document must be an object",
                       "documents[5]": "duplicate _id 'tea-en' in the same batch", "documents[6]": "empty text"}
    res = kb.query("绿茶怎么保存？", filter={"lang": "zh"})
    assert res.passages[0].doc_id == "tea-zh" and res.passages[0].metadata == {"lang": "zh", "year": 2024}
    assert kb.query("how to store green tea", filter={"year": {"lt": 2024}}).passages[0].doc_id == "tea-en"
    assert kb.documents()["hub-en"].source == "hub.md" and kb.documents()["tea-zh"].title == "绿茶保存"
    again = kb.add_documents([DOCS[0], {**DOCS[1], "text": "Green tea is best kept frozen."}])
    assert again.unchanged == ["tea-zh"] and again.updated == ["tea-en"]
    assert "frozen" in kb.query("green tea frozen").passages[0].text


def test_queries_run_beside_an_ingest_and_see_one_generation_at_a_time(kb, tmp_path):
    kb.add_documents(DOCS)
    first_gen = kb.stats()["generation"]
    paragraphs = {f"notes/n{i}.md": f"# 笔记 {i}\n\n" + f"星云智能音箱 S2 的第{i}条使用说明：长按电源键三秒开机。 " * 6
                  + f"\n\nNote {i}: the hub restarts after a firmware update. " * 6 for i in range(40)}
    docs = write_files(tmp_path / "more", paragraphs)
    done = threading.Event()
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            kb.ingest(docs)
        except BaseException as e:  # reported below
            errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=ingest)
    t.start()
    seen: list[int] = []
    answered_during = 0
    while not done.is_set():
        for q in ("绿茶怎么保存？", "How do I reset the hub?"):
            res = kb.query(q)
            assert res.passages and all(c.error is None for c in res.trace.channels)
            seen.append(res.trace.generation)
            answered_during += not done.is_set()
    t.join()
    assert not errors
    assert answered_during >= 3  # queries did not wait for the ingest to end
    assert set(seen) <= {first_gen, first_gen + 1}
    res = kb.query("音箱怎么开机？")
    assert res.trace.generation == first_gen + 1 and res.passages[0].source.startswith("n")
    assert kb.store.check_integrity() == []


def test_cancelling_a_query_stops_its_channels(kb):
    kb.add_documents(DOCS)
    with FaultInjectingLLMServer("hang") as srv:
        deadline = Deadline.never()

        def cancel_once_asked() -> None:  # the caller goes away while the model call hangs
            while not srv.requests:
                time.sleep(0.02)
            time.sleep(0.3)
            deadline.cancel()
        threading.Thread(target=cancel_once_asked, daemon=True).start()
        t = time.monotonic()
        res = kb.query("绿茶怎么保存？", channels=["dense", "hyde"], llm_model="openai:stub", llm_base_url=srv.url,
                       llm_cache=False, channel_timeout_s=60, deadline=deadline)
        took = time.monotonic() - t
        # the model call itself was aborted: its connection closed, its thread ended, while the
        # endpoint still hangs
        t = time.monotonic()
        while (runner.active_channels() or not srv.disconnects) and time.monotonic() - t < 10:
            time.sleep(0.05)
        assert runner.active_channels() == 0 and srv.disconnects == 1
    hyde = {c.name: c for c in res.trace.channels}["hyde"]
    assert hyde.error.startswith("cancelled") and took < 30  # not the 60 s timeout
    assert {c.name: c for c in res.trace.channels}["dense"].error is None  # done before the cancel
