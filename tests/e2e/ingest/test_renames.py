"""A renamed file is the same document, whatever its format (issue 53): a file with no title of
its own is titled by its name, and that title is not what a sync recognises it by. Real writers
(pandoc, LibreOffice, Pillow, the standard library), Chinese and English names; a sync after
``mv`` renames every file, deletes and adds none, and embeds nothing. (RTF, DOC and the other
LibreOffice-read formats take their titles as DOCX does; one small image, OCR being slow.)"""
from __future__ import annotations

import shutil

import documents as D
import numpy as np
import pytest

from ragsift.kb import KnowledgeBase


def _untitled(lang: str) -> str:
    """The guide without its title: a converted file takes its title from its own name."""
    return D.guide(lang).split("---\n", 2)[2]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Every format the tests can write, in both languages, none with a title of its own."""
    made = tmp_path_factory.mktemp("made")
    docs = tmp_path_factory.mktemp("renames") / "docs"
    docs.mkdir()
    names = {"zh": "员工手册-1p", "en": "handbook-1p"}
    docx, csv = [], []
    for lang, stem in names.items():
        for fmt in ("docx", "odt", "epub", "pptx"):
            out = D.pandoc(_untitled(lang), made / f"{stem}.{fmt}")
            (docx if fmt == "docx" else []).append(out)
        c = made / f"{stem}-表.csv" if lang == "zh" else made / f"{stem}-table.csv"
        c.write_text("name,voltage\nfan,12\n" + ("风扇,5\n" if lang == "zh" else "lamp,5\n"), encoding="utf-8")
        csv.append(c)
        D.mail("", "退货须在三十天内办理。" if lang == "zh" else "Returns are accepted within thirty days.", {},
               made / f"{stem}-mail.eml")  # no subject: titled by its name
        (made / f"{stem}.txt").write_text("固件在夜间自动更新。" if lang == "zh" else "Firmware updates overnight.",
                                          encoding="utf-8")
    (made / "员工手册-1p-扫描.png").write_bytes(D.png_bytes(["长按电源键三秒开机。"], width=500))  # OCR: one, small
    D.soffice_all(docx, "pdf", made)
    D.soffice_all(csv, "xlsx", made, infilter="CSV:44,34,76")
    for f in made.iterdir():
        if f.is_file():
            shutil.copy(f, docs / f.name)
    return docs


def _vectors(kb: KnowledgeBase) -> dict[tuple[str, str], np.ndarray]:
    """Every entry's vector by (its document's source, its place in the document)."""
    sources = {k: d.source for k, d in kb.documents().items()}
    return {(sources[ic.child.doc_id], ic.child.child_id.split("#", 1)[1]): np.asarray(ic.vector)
            for _, _, cs in kb.store.export() for ic in cs}


def test_every_format_renamed_is_moved_not_deleted_and_added(folder, tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    first = kb.sync(folder)
    assert not first.skipped, first.skipped
    formats = {d.format for d in kb.documents().values()}
    assert {"docx", "odt", "epub", "pptx", "pdf", "xlsx", "csv", "image", "eml", "txt"} <= formats, formats
    before = _vectors(kb)
    renamed = {}
    for f in sorted(folder.iterdir()):
        new = f.with_name(f.stem.replace("-1p", "-renamed").replace("员工手册", "员工手册改名") + f.suffix)
        f.rename(new)
        renamed[f.name] = new.name
    done = kb.sync(folder)
    assert (done.added, done.updated, done.deleted, done.children) == ([], [], [], 0), str(done)
    assert {r["from_source"]: r["source"] for r in done.renamed} == renamed
    assert "  renamed handbook-1p.docx -> handbook-renamed.docx" in str(done).splitlines()
    assert "  renamed 员工手册-1p-扫描.png -> 员工手册改名-renamed-扫描.png" in str(done).splitlines()
    docs = kb.documents().values()
    assert sorted(d.source for d in docs) == sorted(renamed.values())
    titled = {d.source: d.title for d in docs}  # a title made from the name follows the name
    assert titled["handbook-renamed-table.csv"] == "handbook-renamed-table"
    assert titled["员工手册改名-renamed-扫描.png"] == "员工手册改名-renamed-扫描" and titled["handbook-renamed-mail.eml"] == \
        "handbook-renamed-mail"
    after = _vectors(kb)
    moved = {(renamed[s], place): v for (s, place), v in before.items()}
    assert moved.keys() == after.keys() and all(np.array_equal(moved[k], after[k]) for k in moved)
    hit = kb.query("恢复出厂设置要按哪些键？", max_passages=1).passages[0]
    assert "改名" in hit.source and "-1p" not in hit.source
