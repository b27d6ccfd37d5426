"""EPUB books, read with the standard library (zipfile) and defusedxml (no entity expansion, no
external entities): the package document (OPF) gives the title and the spine (the reading order);
each chapter's XHTML is read as HTML (its ``<h1>``..``<h6>`` as headings); a chapter without a
heading of its own gets its entry in the table of contents (EPUB 3 ``nav``, or EPUB 2 ``toc.ncx``)
as its heading. At most ``MAX_CHAPTERS`` chapters, each within the file's limits."""
from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any

from ragsift.ingest.loaders.base import (
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    OverLimit,
    first_heading,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.sniff import Zip
from ragsift.ingest.loaders.text import html_to_text

MAX_CHAPTERS = 5000
NS = {"c": "urn:oasis:names:tc:opendocument:xmlns:container", "opf": "http://www.idpf.org/2007/opf",
      "dc": "http://purl.org/dc/elements/1.1/", "ncx": "http://www.daisy.org/z3986/2005/ncx/",
      "x": "http://www.w3.org/1999/xhtml", "epub": "http://www.idpf.org/2007/ops"}


def xml(data: bytes) -> Any:
    from defusedxml import ElementTree

    return ElementTree.fromstring(data, forbid_dtd=True)


@register(".epub", signature=Zip("EPUB book", "META-INF/container.xml"))
def load_epub(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    z = zipfile.ZipFile(io.BytesIO(data))
    container = xml(_read(z, "META-INF/container.xml", budget))
    rootfile = container.find(".//c:rootfile", NS)
    if rootfile is None:
        return skipped(source, "damaged EPUB: META-INF/container.xml names no package document")
    opf_path = rootfile.get("full-path") or ""
    opf = xml(_read(z, opf_path, budget))
    base = posixpath.dirname(opf_path)
    title = (opf.findtext(".//dc:title", default="", namespaces=NS) or "").strip()
    items = {it.get("id"): it for it in opf.findall(".//opf:manifest/opf:item", NS)}
    spine = [items[r.get("idref")] for r in opf.findall(".//opf:spine/opf:itemref", NS) if r.get("idref") in items]
    if len(spine) > MAX_CHAPTERS:
        raise OverLimit(f"more than {MAX_CHAPTERS} chapters")
    toc = _toc(z, items, base, opf, budget)
    md = Markdown()
    for it in spine:
        budget.page()
        href = posixpath.normpath(posixpath.join(base, it.get("href") or ""))
        if "html" not in (it.get("media-type") or "") or href not in z.namelist():
            continue
        head, text = html_to_text(_read(z, href, budget).decode("utf-8", errors="replace"))
        budget.text(len(text))
        if not first_heading(text) and toc.get(href):
            md.heading(1, toc[href])
        md.markdown(text)
    return structured(source, title, md, data, "epub")


def _read(z: zipfile.ZipFile, name: str, budget: Budget) -> bytes:
    try:
        info = z.getinfo(name)
    except KeyError:
        raise OverLimit(f"damaged EPUB: {name} is missing") from None
    budget.text(info.file_size // 4)  # what it unpacks to, counted before it is unpacked
    return z.read(info)


def _toc(z: zipfile.ZipFile, items: dict[str, Any], base: str, opf: Any, budget: Budget) -> dict[str, str]:
    """Chapter file -> its entry in the table of contents (the first one that points at it)."""
    out: dict[str, str] = {}
    for it in items.values():
        href = posixpath.normpath(posixpath.join(base, it.get("href") or ""))
        props = it.get("properties") or ""
        try:
            if "nav" in props.split():
                doc = xml(_read(z, href, budget))
                for a in doc.iter("{http://www.w3.org/1999/xhtml}a"):
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(href),
                                                               (a.get("href") or "").split("#")[0]))
                    out.setdefault(target, " ".join("".join(a.itertext()).split()))
            elif (it.get("media-type") or "") == "application/x-dtbncx+xml":
                doc = xml(_read(z, href, budget))
                for point in doc.iter("{http://www.daisy.org/z3986/2005/ncx/}navPoint"):
                    label = point.findtext(".//ncx:text", default="", namespaces=NS).strip()
                    content = point.find("ncx:content", NS)
                    if content is not None and label:
                        target = posixpath.normpath(posixpath.join(posixpath.dirname(href),
                                                                   (content.get("src") or "").split("#")[0]))
                        out.setdefault(target, label)
        except OverLimit:
            raise
        except Exception:  # a damaged table of contents: the chapters keep their own headings
            continue
    return out
