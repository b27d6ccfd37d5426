import pytest

from ragsift.demo import sample_dir
from ragsift.ingest.loaders import load_file
from ragsift.ingest.splitter import SplitSettings, index_text, sections, split_document
from ragsift.text.tokens import count_tokens
from ragsift.types import Document


def _doc(text, doc_id="d1", title="T"):
    return Document(doc_id, "x.md", title, text, "h", "md", {})


def test_heading_paths_follow_nesting_in_chinese():
    (doc,) = load_file(sample_dir() / "kb" / "ml_textbook_zh.md", "ml_textbook_zh.md").documents
    parents, children = split_document(doc, SplitSettings())
    paths = [" > ".join(p.heading_path) for p in parents]
    assert "第3章 机器学习 > 3.2 监督学习 > 3.2.1 线性回归" in paths
    assert "第3章 机器学习 > 3.3 无监督学习 > 3.3.1 K均值聚类" in paths
    # a heading directly followed by a sub-heading has no body and gives no parent
    assert all(p.text.strip() for p in parents)


def test_children_are_exact_slices_of_their_parent_and_know_it():
    (doc,) = load_file(sample_dir() / "kb" / "smarthub_manual_en.md", "m.md").documents
    parents, children = split_document(doc, SplitSettings(child_tokens=60, child_overlap_tokens=15))
    pmap = {p.parent_id: p for p in parents}
    assert len(children) > len(parents)
    for c in children:
        p = pmap[c.parent_id]
        assert p.text[c.start:c.end] == c.text
        assert c.doc_id == doc.doc_id and c.tokens == count_tokens(c.text)
        assert c.tokens <= 60


def test_children_overlap_by_whole_sentences():
    sent = "这是第{}个句子，用来测试重叠。"
    text = "# 标题\n\n" + "".join(sent.format(i) for i in range(30))
    parents, children = split_document(_doc(text), SplitSettings(child_tokens=50, child_overlap_tokens=20))
    assert len(parents) == 1 and len(children) > 3
    for a, b in zip(children, children[1:]):
        assert b.start < a.end  # overlap
        assert a.end - b.start <= len(sent.format(10)) * 2
        assert b.text.startswith("这是第")  # starts at a sentence boundary
    no_overlap = split_document(_doc(text), SplitSettings(child_tokens=50, child_overlap_tokens=0))[1]
    assert all(b.start >= a.end for a, b in zip(no_overlap, no_overlap[1:]))


def test_large_sections_are_split_under_the_cap():
    text = "# Big\n\n" + " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(400))
    parents, children = split_document(_doc(text), SplitSettings(parent_max_tokens=300, child_tokens=80))
    assert len(parents) > 5
    assert all(p.tokens <= 300 for p in parents)
    assert all(p.heading_path == ("Big",) for p in parents)


def test_no_headings_gives_paragraph_parents_and_merges_tiny_ones():
    text = "问：借书要证件吗？答：需要读者证。\n\n短\n\n问：能续借吗？答：可以在到期前续借一次，续借期为三十天，需要在网上办理。"
    parents, _ = split_document(_doc(text), SplitSettings(child_tokens=40))
    assert len(parents) == 2
    assert parents[0].heading_path == () and "短" in parents[1].text


def test_index_text_carries_heading_path():
    doc = _doc("# A\n\n## B\n\nbody sentence.", title="A")
    parents, children = split_document(doc, SplitSettings())
    assert index_text(doc, parents[0], children[0], True) == "A > B\nbody sentence."
    assert index_text(doc, parents[0], children[0], False) == "body sentence."


def test_sections_ignore_hashes_in_code_fences():
    secs = sections("# Top\n\n```\n# not heading\n```\n\n## Sub\n\ntext")
    assert [s[0] for s in secs] == [("Top",), ("Top", "Sub")]


@pytest.mark.parametrize("text", [
    "问：借书要证件吗？\n\n答：需要读者证。\n\n补充：读者证可在一楼服务台办理，办理时请带身份证。",
    "Q: Do I need a card to borrow books?\n\nA: Yes, a reader's card.\n\nNote: cards are issued at the desk "
    "on the ground floor; bring an identity document.",
])
def test_a_document_without_headings_that_fits_one_child_is_one_entry(text):
    # cut into paragraphs, a short entry (an FAQ answer) would lose what it says as a whole
    doc = Document("d1", "faq.txt", "", text, "h", "txt", {})
    parents, children = split_document(doc, SplitSettings())
    assert len(parents) == 1 and len(children) == 1
    assert parents[0].text == text and children[0].text == text and (children[0].start, children[0].end) == (0, len(text))
    # the same text over the child size is cut into its paragraphs as before
    parents, children = split_document(doc, SplitSettings(child_tokens=count_tokens(text) - 1))
    assert len(parents) > 1 and all(p.text in text for p in parents)
    # headings keep their sections, short or not
    parents, _ = split_document(_doc("# A\n\n" + text.replace("\n\n", "\n\n## B\n\n", 1)), SplitSettings())
    assert [p.heading_path for p in parents] == [("A",), ("A", "B")]
