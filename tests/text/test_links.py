"""The title index multi-hop follows: which documents a text names (whole words, any script)."""
from __future__ import annotations

from ragsift.text.links import TitleIndex

TITLES = [("kiss", "Kiss and Tell"), ("kiss2", "Kiss"), ("temple", "Shirley Temple"), ("iowa", "Iowa"),
          ("oceans", "Oceans (film)"), ("oceans-song", "Oceans"), ("art", "Art"), ("empty", ""),
          ("sanxia", "长江三峡"), ("lina", "李娜（网球运动员）"), ("li", "李"), ("zurich", "Zürich"),
          ("tokyo", "東京タワー"), ("seoul", "서울 타워"), ("cpp", "C++"), ("ax", "ＡＸ－Ｈ１"),
          ("more", "More"), ("december", "December"), ("parents", "Parents")]


def _named(text, **kw):
    return [(t, sorted(d)) for t, d in TitleIndex(TITLES).find(text, **kw)]


def test_english_titles_are_found_as_whole_words_longest_first():
    assert _named("Kiss and Tell starred SHIRLEY TEMPLE; a Kiss.") == [
        ("Kiss and Tell", ["kiss"]), ("Shirley Temple", ["temple"]), ("Kiss", ["kiss2"])]
    assert _named("An Iowan farmer from Iowa.") == [("Iowa", ["iowa"])]  # not inside "Iowan"
    assert _named("Art and artists") == []  # too short a word to name a document
    assert _named("C++ code") == []  # no letters to match on


def test_a_one_word_title_is_named_only_with_a_capital_and_never_by_a_common_word():
    assert _named("a kiss, then parents and more kisses") == []  # common words, lower case
    assert _named("Parents (the film) was shown in December. More came later.") == [("Parents", ["parents"])]
    assert _named("The band Kiss played.") == [("Kiss", ["kiss2"])]
    assert _named("shirley temple and kiss and tell") == [("Shirley Temple", ["temple"]),
                                                          ("Kiss and Tell", ["kiss"])]  # several words: any case


def test_a_bracket_only_tells_same_names_apart():
    assert _named("Which came out first, Oceans or Kiss?") == [("Oceans", ["oceans", "oceans-song"]),
                                                               ("Kiss", ["kiss2"])]


def test_chinese_titles_match_inside_running_text():
    assert _named("游览长江三峡的最佳季节；李娜赢得法网。李先生") == [("长江三峡", ["sanxia"]), ("李娜", ["lina"])]


def test_other_scripts_and_width_forms():
    assert _named("Ich fahre nach Zürich und dann zum 東京タワー") == [("Zürich", ["zurich"]),
                                                                ("東京タワー", ["tokyo"])]
    assert _named("서울 타워 전망대") == [("서울 타워", ["seoul"])]
    assert _named("型号 AX-H1 的说明") == [("ＡＸ－Ｈ１", ["ax"])]  # NFKC: full-width letters
    # titles and texts are cut alike: "İ" case-folds to "i" and a combining dot, inside one token
    assert TitleIndex([("ist", "İstanbul")]).find("Flights to İstanbul") == [("İstanbul", ["ist"])]


def test_each_title_once_in_order_with_a_limit_and_exclusions():
    idx = TitleIndex(TITLES)
    assert [t for t, _ in idx.find("Iowa, Kiss, Iowa, Zürich", limit=2)] == ["Iowa", "Kiss"]
    got = idx.documents_named(["Oceans and Iowa", "Iowa and Kiss"], exclude={"oceans", "iowa"})
    assert got == [("Oceans", ["oceans-song"]), ("Kiss", ["kiss2"])]
    assert len(idx) == 16 and TitleIndex([]).find("anything") == []
