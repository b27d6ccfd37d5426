"""Chains that go on: a question of three relations walked past the second document, in English
and Chinese, on a small real knowledge base (real store and embedder); the router chooses the
depth from the question's structure, and the link a passage gives is the one its sentence about the
relation names (not the first name in the passage)."""
from __future__ import annotations

import pytest
from conftest import write_files

from ragsift.kb import KnowledgeBase
from ragsift.text.chains import mentions, relations, rounds

QUESTION = "What is the hobby of the brother of the friend of Alice Smith?"
WHO = "Who is the brother of the friend of Alice Smith?"
ZH_QUESTION = "李明的朋友的哥哥的爱好是什么？"
ZH_WHO = "李明的朋友的哥哥是谁？"
DOCS = {
    # each passage names another person first: following the first name would leave the chain
    "alice.md": "# Alice Smith\n\nThe mother of Alice Smith is Carol Jones. The friend of Alice Smith is "
                "Bob Green.\n",
    "bob.md": "# Bob Green\n\nThe sister of Bob Green is Dana Green. The brother of Bob Green is Evan Green.\n",
    "evan.md": "# Evan Green\n\nThe hobby of Evan Green is sailing. He lives by the sea. The sons of Evan Green "
               "are Hal Green, Ian Green.\n",
    "hal.md": "# Hal Green\n\nHal Green plays the violin.\n",
    "ian.md": "# Ian Green\n\nIan Green builds boats.\n",
    "carol.md": "# Carol Jones\n\nThe brother of Carol Jones is Gary Jones. The hobby of Carol Jones is chess.\n",
    "dana.md": "# Dana Green\n\nThe hobby of Dana Green is rowing.\n",
    "gary.md": "# Gary Jones\n\nThe hobby of Gary Jones is fishing.\n",
    "liming.md": "# 李明\n\n李明的母亲是王芳。李明的朋友是张伟。\n",
    "zhangwei.md": "# 张伟\n\n张伟的姐姐是张丽。张伟的哥哥是张强。\n",
    "zhangqiang.md": "# 张强\n\n张强的爱好是下棋。他住在海边。张强的儿子是张磊。\n",
    "zhanglei.md": "# 张磊\n\n张磊的爱好是画画。\n",
    "wangfang.md": "# 王芳\n\n王芳的哥哥是王刚。王芳的爱好是唱歌。\n",
    "zhangli.md": "# 张丽\n\n张丽的爱好是游泳。\n",
    "wanggang.md": "# 王刚\n\n王刚的爱好是钓鱼。\n",
}
CHAIN = {"en": ["alice.md", "bob.md", "evan.md"], "zh": ["liming.md", "zhangwei.md", "zhangqiang.md"]}


def _base(tmp_path_factory, name: str, docs: dict[str, str]) -> KnowledgeBase:
    root = tmp_path_factory.mktemp(name)
    kb = KnowledgeBase.open(root / "kb")
    kb.ingest(write_files(root / "docs", docs))
    return kb


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    return _base(tmp_path_factory, "chains", DOCS)


def test_the_chain_of_relations_read_from_the_question():
    assert relations(QUESTION) == ["friend", "brother", "hobby"]
    assert relations("Who is Alice Smith's friend's brother?") == ["friend", "brother"]
    # a kinship word that passages rarely state is walked through stated ones: a sibling's son
    assert relations("Who is the nephew of Alice Smith's friend?") == ["friend", "sibling", "son"]
    assert relations("Who is the sister-in-law of Bob?") == ["spouse-or-sibling", "sister-or-wife"]
    assert relations("Who are the grandchildren of Bob?") == ["child", "child"]
    assert relations("张伟的侄子的爱好是什么？") == ["兄弟", "儿子", "爱好"]
    # a side of the family, and step-relations (2WikiMultiHopQA asks these), either way round
    assert relations("Who is the paternal grandfather of Bob?") == ["father", "father"]
    assert relations("Who is Bob's maternal grandmother?") == ["mother", "mother"]
    assert relations("Who is the stepmother of Bob's friend?") == ["friend", "father", "wife"]
    assert relations("李明的继母是谁？") == ["父亲", "妻子"]
    assert rounds("Who is the nephew of Alice Smith's friend?") == 4
    # a name with "of" in it, a description and a part are no relations
    assert relations("What did the Chief of Protocol say?") == []
    assert relations("Who is the sister of the person whose date of birth is 0289-07-10?") == ["sister"]
    assert relations("What is the name of the director of Kiss and Tell?") == ["director"]
    assert relations(ZH_QUESTION) == ["朋友", "哥哥", "爱好"]
    # one relation whose answer the passage found states: no round beyond the question's own
    assert relations("这次旅行的目的是什么？") == ["目的"] and rounds("这次旅行的目的是什么？") == 1
    # rounds: the question's own and one per relation; a thing asked is read off the last passage
    assert (rounds(QUESTION), rounds(WHO), rounds(ZH_QUESTION), rounds(ZH_WHO)) == (3, 3, 3, 3)
    assert rounds("What is the date of birth of the son of Shanta Embry?") == 2
    assert rounds("Which government position was held by the woman who played Corliss Archer?") == 1
    assert mentions("The sisters of Bob Green are Dana Green.", "sister")
    assert mentions("The sisters of Bob Green are Dana Green.", "sibling")  # a group's member
    assert not mentions("The mother of Alice Smith is Carol Jones.", "friend")
    assert mentions("张伟的哥哥是张强。", "兄弟姐妹") and not mentions("李明的母亲是王芳。", "朋友")


@pytest.mark.parametrize("question, lang, names", [
    (QUESTION, "en", [["Bob Green"], ["Evan Green"]]),
    (WHO, "en", [["Bob Green"], ["Evan Green"]]),
    (ZH_QUESTION, "zh", [["张伟"], ["张强"]]),
    (ZH_WHO, "zh", [["张伟"], ["张强"]]),
])
def test_the_defaults_follow_a_three_document_chain(kb, question, lang, names):
    # hop_top=1: only a search's best passage counts as found, so every step must be walked
    res = kb.query(question, hop_top=1, max_passages=3)
    st, mh = res.trace.strategy, res.trace.multihop
    assert st["chosen"] == "multihop" and st["signals"]["rounds"] == 3
    assert [h["names"] for h in mh["hops"][1:]] == names
    assert all(h["kinds"] == ["link"] for h in mh["hops"][1:]) and mh["stop"] == "depth"
    assert [p.source for p in res.passages] == CHAIN[lang]  # the chain, in its order


def test_every_name_of_the_sentence_that_states_the_relation_is_followed(kb):
    # a fourth round for the third relation: "The sons of Evan Green are Hal Green, Ian Green" gives both
    res = kb.query("Who are the sons of the brother of the friend of Alice Smith?", hop_top=1, max_passages=5)
    assert res.trace.strategy["signals"]["rounds"] == 4
    assert [h["names"] for h in res.trace.multihop["hops"][1:]] == [["Bob Green"], ["Evan Green"],
                                                                      ["Hal Green", "Ian Green"]]
    assert [p.source for p in res.passages] == [*CHAIN["en"], "hal.md", "ian.md"]


@pytest.mark.parametrize("question, names, chain", [
    # a sibling is a brother or a sister: both are walked (Dana Green has no son)
    ("Who is the nephew of Bob Green?", [["Dana Green", "Evan Green"], ["Hal Green", "Ian Green"]],
     ["bob.md", "dana.md", "evan.md", "hal.md", "ian.md"]),
    ("张伟的侄子是谁？", [["张强"], ["张磊"]], ["zhangwei.md", "zhangqiang.md", "zhanglei.md"]),
    # a maternal uncle: the mother's sentence, then her brother's (舅舅 alike)
    ("Who is Alice Smith's maternal uncle?", [["Carol Jones"], ["Gary Jones"]], ["alice.md", "carol.md", "gary.md"]),
    ("李明的舅舅是谁？", [["王芳"], ["王刚"]], ["liming.md", "wangfang.md", "wanggang.md"]),
])
def test_a_nephew_is_walked_through_the_sibling_no_passage_calls_him_one(kb, question, names, chain):
    # no passage says "nephew" (侄子): the walk takes the sibling's sentence, then the son's
    res = kb.query(question, hop_top=1, max_passages=len(chain))
    assert res.trace.strategy["signals"]["rounds"] == 3
    assert [h["names"] for h in res.trace.multihop["hops"][1:]] == names
    assert sorted(p.source for p in res.passages) == sorted(chain)


def test_two_rounds_stop_after_the_second_document(kb):
    # what the defaults did before: two rounds, the chain's third document is not reached
    res = kb.query(QUESTION, strategy="multihop", hops_max=2, hop_top=1, max_passages=3)
    assert [h["names"] for h in res.trace.multihop["hops"][1:]] == [["Bob Green"]]
    assert "evan.md" not in [p.source for p in res.passages[:2]]


def test_a_chain_stops_when_a_round_adds_nothing(kb):
    # more rounds than the chain has: the walk ends when no passage names a document not found yet
    res = kb.query(WHO, strategy="multihop", hops_max=8, hop_top=1)
    mh = res.trace.multihop
    assert mh["stop"] in ("nothing_new", "no_follow_up", "repeated_query") and len(mh["hops"]) < 8
    assert [p.source for p in res.passages[:3]] == CHAIN["en"]


FAMILY = {
    # the question's own search finds the sister and the brother: the chain goes on through them
    # (no search) to the friend it has not found; a friend's brother (Pete's) is not on the chain
    "nora.md": "# Nora Decker\n\nThe sister of Nora Decker is Olive Decker. The friend of Nora Decker is Pete Lamb.\n",
    "olive.md": "# Olive Decker\n\nThe brother of Olive Decker is Quinn Decker. The sister of Olive Decker is "
                "Nora Decker.\n",
    "quinn.md": "# Quinn Decker\n\nThe sister of Quinn Decker is Olive Decker. The friend of Quinn Decker is Ross Vale.\n",
    "ross.md": "# Ross Vale\n\nRoss Vale repairs old clocks in a workshop by the harbour.\n",
    "pete.md": "# Pete Lamb\n\nThe brother of Pete Lamb is Sam Lamb. Pete Lamb sells bicycles.\n",
    "sam.md": "# Sam Lamb\n\nThe friend of Sam Lamb is Tess Moor.\n",
    # found by the question's search, states no sister: while another passage read does, it gives
    # no name to follow (its teacher is off the chain)
    "school.md": "# Nora Decker at school\n\nThe teacher of Nora Decker was Wade Hill. Nora Decker and her sister "
                 "walked to school.\n",
    "wade.md": "# Wade Hill\n\nThe friend of Wade Hill is Xena Park.\n",
    "zhouli.md": "# 周丽\n\n周丽的妹妹是周娜。周丽的朋友是郑伟。\n",
    "zhouna.md": "# 周娜\n\n周娜的哥哥是周强。周娜的姐姐是周丽。\n",
    "zhouqiang.md": "# 周强\n\n周强的妹妹是周娜。周强的朋友是吴昊。\n",
    "wuhao.md": "# 吴昊\n\n吴昊在海边的作坊里修理旧钟表。\n",
    "zhengwei.md": "# 郑伟\n\n郑伟的哥哥是郑军。郑伟卖自行车。\n",
    "zhengjun.md": "# 郑军\n\n郑军的朋友是孙琳。\n",
    "xuexiao.md": "# 周丽的学校\n\n周丽的老师是冯敏。周丽和妹妹一起走路上学。\n",
    "fengmin.md": "# 冯敏\n\n冯敏的朋友是何静。\n",
}


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    return _base(tmp_path_factory, "family", FAMILY)


@pytest.mark.parametrize("question, walked, friend", [
    ("Who is the friend of the brother of the sister of Nora Decker?", "olive.md", ["Ross Vale"]),
    ("周丽的妹妹的哥哥的朋友是谁？", "zhouna.md", ["吴昊"]),
])
def test_a_chain_goes_on_through_documents_it_has_found_already(family, question, walked, friend):
    res = family.query(question, max_passages=5)
    mh = res.trace.multihop
    assert res.trace.strategy["chosen"] == "multihop" and res.trace.strategy["signals"]["rounds"] == 4
    docs = {i: d.source.rsplit("/", 1)[-1] for i, d in family.documents().items()}
    hops = mh["hops"][1:]
    # the sister (and then the brother) was found by the question's search: no search for them, the
    # next hop reads their passages; the friend is the one name asked about
    assert walked in {docs[d] for d in hops[0]["walked"]}
    assert [h.get("names", []) for h in hops if h.get("names")] == [friend]
    sources = [p.source.rsplit("/", 1)[-1] for p in res.passages]
    end = "ross.md" if "ross.md" in docs.values() and friend == ["Ross Vale"] else "wuhao.md"
    decoy = "sam.md" if end == "ross.md" else "zhengjun.md"  # the friend's brother's friend: off the chain
    assert end in sources and (decoy not in sources or sources.index(end) < sources.index(decoy))
