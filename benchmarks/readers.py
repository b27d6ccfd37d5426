#!/usr/bin/env python3
"""Adapters for the "anchor" document readers other RAG tools use, for a side-by-side
reading benchmark (benchmarks/reading.py). Benchmark-only: none of these libraries is a
ragsift dependency. Run with the separate venv described in
benchmarks/requirements-readers.txt:

    /work/venv-readers/bin/python benchmarks/readers.py READER FILE
    /work/venv-readers/bin/python benchmarks/readers.py --check [--samples DIR]

READER FILE prints one JSON object on stdout:

    {"reader": ..., "ok": true/false, "error": "...", "text": "...", "seconds": float}

- text: the reader's output for the whole file: Markdown when the reader gives Markdown
  (markitdown), else the text of its elements/documents joined by blank lines. For
  unstructured, elements are mapped to Markdown: Title -> "#"*(category_depth+1) + text,
  Table -> metadata.text_as_html as a pipe table (else its text), ListItem -> "- " + text.
- seconds: wall time of the reading call only (the library's top-level import is not
  counted; anything it loads lazily during the call is).
- READER: markitdown | unstructured | llamaindex | langchain
    markitdown    MarkItDown().convert(FILE)
    unstructured  unstructured.partition.auto.partition(filename=FILE, strategy="fast")
    llamaindex    SimpleDirectoryReader(input_files=[FILE]).load_data() (suffixes with no
                  default reader are reported as unsupported instead of being decoded as
                  raw bytes)
    langchain     PyPDFLoader (.pdf), Docx2txtLoader (.docx), UnstructuredPowerPointLoader
                  (.pptx), UnstructuredExcelLoader (.xlsx), UnstructuredEPubLoader (.epub),
                  UnstructuredODTLoader (.odt)

Offline by construction: model-hub and telemetry switches are set before any import, NLTK_DATA
points at an empty folder, every socket connection or DNS lookup to a non-loopback host is
refused in-process, and unstructured's run-time download of the spaCy model en_core_web_sm
(from github.com) is replaced by a clear error. Nothing here tries to work around a missing
model or data file.

--check builds small samples (pandoc: Markdown -> docx/odt/epub/pptx; soffice: docx -> pdf,
csv -> xlsx), runs every reader on every sample, each in its own process, and prints which
reader worked on which format plus the first 200 characters of each output.
"""

from __future__ import annotations

import os
import sys
import tempfile

# ---------------------------------------------------------------- offline switches (pre-import)
_EMPTY_NLTK = os.path.join(tempfile.gettempdir(), "readers-empty-nltk-data")
os.makedirs(_EMPTY_NLTK, exist_ok=True)
for _k, _v in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "NLTK_DATA": _EMPTY_NLTK,
    "DO_NOT_TRACK": "true",  # unstructured's telemetry ping
    "UNSTRUCTURED_DISABLE_NOTICE": "1",
    "SCARF_NO_ANALYTICS": "true",
    "UNSTRUCTURED_TELEMETRY_ENABLED": "false",
    "ANONYMIZED_TELEMETRY": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ[_k] = _v  # forced, not setdefault: the benchmark must never reach out

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from html.parser import HTMLParser  # noqa: E402
from pathlib import Path  # noqa: E402

READERS = ("markitdown", "unstructured", "llamaindex", "langchain")
FORMATS = ("docx", "pptx", "xlsx", "odt", "epub", "pdf")


# ---------------------------------------------------------------- network guard
class NetworkBlocked(OSError):
    pass


_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def _is_local(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).strip("[]").lower()
    return host in _LOCAL_NAMES or host.startswith("127.") or host in ("::1", "0.0.0.0", "")


def _install_network_guard() -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def _block(what):
        msg = f"network access blocked by readers.py: {what}"
        print(f"readers.py: {msg}", file=sys.stderr, flush=True)  # visible even if swallowed
        raise NetworkBlocked(msg)

    def _check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            if not _is_local(address[0]):
                _block(f"connect to {address[0]}:{address[1]}")

    def connect(self, address):
        _check(self, address)
        return real_connect(self, address)

    def connect_ex(self, address):
        _check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            _block(f"DNS lookup of {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.getaddrinfo = getaddrinfo


# ---------------------------------------------------------------- HTML table -> Markdown
class _TableParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.header_rows = 0
        self._in_thead = False
        self._row_has_th = False

    def handle_starttag(self, tag, attrs):
        if tag == "thead":
            self._in_thead = True
        elif tag == "tr":
            self._row, self._row_has_th = [], False
        elif tag in ("td", "th"):
            self._cell = []
            if tag == "th":
                self._row_has_th = True
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag):
        if tag == "thead":
            self._in_thead = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if (self._in_thead or self._row_has_th) and len(self.rows) == self.header_rows:
                self.header_rows += 1
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_table_to_markdown(table_html: str) -> str:
    p = _TableParser()
    p.feed(table_html)
    rows = [r for r in p.rows if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    header, body = rows[0], rows[1:]  # first row is the header (HTML or not)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * width) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(out)


# ---------------------------------------------------------------- readers
def _join(parts) -> str:
    return "\n\n".join(p.strip("\n") for p in parts if p and p.strip())


def _unstructured_patch_spacy() -> None:
    """unstructured >= 0.2x classifies text with spaCy's en_core_web_sm and, when the model is
    missing, downloads its wheel from github.com into site-packages at run time. Replace that
    download with a clear error (it cannot work offline, and we do not work around it)."""
    try:
        import unstructured.nlp.tokenize as tok
    except ImportError:
        return

    def _no_download():
        raise RuntimeError(
            "unstructured needs the spaCy model 'en_core_web_sm', which is not installed; "
            "unstructured would download it from github.com at run time, which is unreachable "
            "offline (download disabled by readers.py)"
        )

    tok._install_spacy_model = _no_download


def elements_to_markdown(elements) -> str:
    parts = []
    for el in elements:
        cat = getattr(el, "category", type(el).__name__)
        text = (getattr(el, "text", "") or "").strip()
        md = getattr(el, "metadata", None)
        if cat == "Title":
            depth = getattr(md, "category_depth", None) if md is not None else None
            level = min(6, (depth if isinstance(depth, int) and depth >= 0 else 0) + 1)
            parts.append("#" * level + " " + text if text else "")
        elif cat == "Table":
            table_html = getattr(md, "text_as_html", None) if md is not None else None
            table_md = html_table_to_markdown(table_html) if table_html else ""
            parts.append(table_md or text)
        elif cat == "ListItem":
            parts.append("- " + text if text else "")
        else:
            parts.append(text)
    return _join(parts)


def read_markitdown(path: Path):
    from markitdown import MarkItDown

    md = MarkItDown(enable_plugins=False)

    def run():
        res = md.convert(str(path))
        return getattr(res, "markdown", None) or res.text_content

    return run


def read_unstructured(path: Path):
    from unstructured.partition.auto import partition

    _unstructured_patch_spacy()

    def run():
        try:
            elements = partition(filename=str(path), strategy="fast")
        except ImportError as e:
            if path.suffix.lower() == ".pdf":
                raise ImportError(
                    f"{e} [unstructured's partition_pdf imports unstructured_inference (which "
                    "pulls torch) even for strategy='fast'; it is left out of this venv on purpose]"
                ) from None
            raise
        return elements_to_markdown(elements)

    return run


def read_llamaindex(path: Path):
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.readers.file.base import _try_loading_included_file_formats

    suffix = path.suffix.lower()
    if suffix not in _try_loading_included_file_formats():
        raise Unsupported(
            f"SimpleDirectoryReader has no default reader for {suffix} "
            "(it would decode the raw file bytes as UTF-8 text)"
        )

    def run():
        docs = SimpleDirectoryReader(input_files=[str(path)]).load_data()
        return _join(d.text for d in docs)

    return run


def read_langchain(path: Path):
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        from langchain_community.document_loaders import PyPDFLoader as Loader
    elif suffix == ".docx":
        from langchain_community.document_loaders import Docx2txtLoader as Loader
    elif suffix in (".pptx", ".ppt"):
        from langchain_community.document_loaders import UnstructuredPowerPointLoader as Loader
    elif suffix in (".xlsx", ".xls"):
        from langchain_community.document_loaders import UnstructuredExcelLoader as Loader
    elif suffix == ".epub":
        from langchain_community.document_loaders import UnstructuredEPubLoader as Loader
    elif suffix == ".odt":
        from langchain_community.document_loaders import UnstructuredODTLoader as Loader
    else:
        raise Unsupported(f"no langchain loader chosen for {suffix}")
    if Loader.__name__.startswith("Unstructured"):
        import unstructured.partition.auto  # noqa: F401  (so the patch below applies)

        _unstructured_patch_spacy()

    def run():
        return _join(d.page_content for d in Loader(str(path)).load())

    return run


class Unsupported(Exception):
    pass


SETUP = {
    "markitdown": read_markitdown,
    "unstructured": read_unstructured,
    "llamaindex": read_llamaindex,
    "langchain": read_langchain,
}


def run_reader(reader: str, file: str) -> dict:
    out = {"reader": reader, "ok": False, "error": "", "text": "", "seconds": 0.0}
    path = Path(file)
    if reader not in SETUP:
        out["error"] = f"unknown reader {reader!r}; expected one of {', '.join(READERS)}"
        return out
    if not path.is_file():
        out["error"] = f"no such file: {file}"
        return out
    _install_network_guard()
    try:
        run = SETUP[reader](path)
    except Unsupported as e:
        out["error"] = f"unsupported: {e}"
        return out
    except Exception as e:  # import-time failure (missing dependency, ...)
        out["error"] = f"setup failed: {type(e).__name__}: {e}"
        return out
    t0 = time.perf_counter()
    try:
        text = run()
        out["seconds"] = round(time.perf_counter() - t0, 4)
        out["text"] = text or ""
        out["ok"] = bool(out["text"].strip())
        if not out["ok"]:
            out["error"] = "reader returned no text"
    except Exception as e:
        out["seconds"] = round(time.perf_counter() - t0, 4)
        chain, cur = [], e
        while cur is not None and len(chain) < 4:
            chain.append(f"{type(cur).__name__}: {cur}")
            cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
        out["error"] = " <- ".join(chain)
        if os.environ.get("READERS_DEBUG"):
            traceback.print_exc(file=sys.stderr)
    return out


# ---------------------------------------------------------------- --check
SAMPLE_MD = """\
# Quarterly Report

The quarterly revenue grew by twelve percent compared with the previous quarter.
Most of the growth came from the new subscription plans sold in Europe.

## Highlights

- Revenue reached 4.2 million euros
- Churn dropped to three percent
- Two new regions were opened

| Region | Revenue | Growth |
|--------|---------|--------|
| Europe | 2.1 | 15% |
| Asia | 1.3 | 9% |
| America | 0.8 | 7% |
"""

SAMPLE_CSV = "Region,Revenue,Growth\nEurope,2.1,15%\nAsia,1.3,9%\nAmerica,0.8,7%\n"


def make_samples(d: Path) -> dict[str, Path]:
    d.mkdir(parents=True, exist_ok=True)
    md = d / "sample.md"
    md.write_text(SAMPLE_MD)
    files = {}
    for fmt in ("docx", "odt", "epub", "pptx"):
        out = d / f"sample.{fmt}"
        cmd = ["pandoc", str(md), "-o", str(out)]
        if fmt == "epub":
            cmd += ["--metadata", "title=Quarterly Report"]
        subprocess.run(cmd, check=True, timeout=120)
        files[fmt] = out
    profile = d / "lo-profile"  # private LibreOffice profile: no clash with other soffice runs
    (d / "sample.csv").write_text(SAMPLE_CSV)
    for src, fmt in ((files["docx"], "pdf"), (d / "sample.csv", "xlsx")):
        subprocess.run(
            ["soffice", f"-env:UserInstallation={profile.as_uri()}", "--headless",
             "--convert-to", fmt, "--outdir", str(d), str(src)],
            check=True, timeout=300, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        out = d / f"sample.{fmt}"
        if not out.is_file():
            raise RuntimeError(f"soffice did not produce {out}")
        files[fmt] = out
    return {fmt: files[fmt] for fmt in FORMATS}


def check(samples_dir: str | None) -> int:
    tmp = None
    if samples_dir:
        d = Path(samples_dir)
    else:
        tmp = tempfile.mkdtemp(prefix="readers-check-")
        d = Path(tmp)
    try:
        files = make_samples(d)
        results: dict[tuple[str, str], dict] = {}
        for reader in READERS:
            for fmt, f in files.items():
                try:
                    p = subprocess.run(
                        [sys.executable, os.path.abspath(__file__), reader, str(f)],
                        capture_output=True, text=True, timeout=600,
                    )
                    res = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {
                        "ok": False, "seconds": 0.0, "text": "",
                        "error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
                except subprocess.TimeoutExpired:
                    res = {"ok": False, "seconds": 600.0, "text": "", "error": "timeout (600 s)"}
                results[(reader, fmt)] = res
                print(f"  {reader:12s} {fmt:5s} {'ok' if res['ok'] else 'FAIL'}", file=sys.stderr, flush=True)

        def cell(r):
            if r["ok"]:
                return f"ok {r['seconds']:.2f}s"
            return "unsupported" if r["error"].startswith("unsupported") else "FAIL"

        w = 14
        print(f"samples: {d}" + (" (temporary, removed; keep them with --samples DIR)" if tmp else "") + "\n")
        print("reader".ljust(w) + "".join(fmt.ljust(w) for fmt in FORMATS))
        for reader in READERS:
            print(reader.ljust(w) + "".join(cell(results[(reader, fmt)]).ljust(w) for fmt in FORMATS))
        print()
        for reader in READERS:
            for fmt in FORMATS:
                r = results[(reader, fmt)]
                head = f"[{reader} / {fmt}] "
                if r["ok"]:
                    print(head + "ok " + json.dumps(r["text"][:200], ensure_ascii=False))
                else:
                    print(head + ("unsupported: " if cell(r) == "unsupported" else "FAIL: ")
                          + r["error"].removeprefix("unsupported: ")[:600])
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="run every reader on generated samples")
    ap.add_argument("--samples", help="with --check: folder to write (and keep) the samples in")
    ap.add_argument("reader", nargs="?", choices=READERS)
    ap.add_argument("file", nargs="*", help="one or more files: a JSON line each, in order")
    a = ap.parse_args(argv)
    if a.check:
        return check(a.samples)
    if not a.reader or not a.file:
        ap.error("READER and FILE are required (or use --check)")
    # Libraries may print; keep stdout for the JSON alone (fd level, so C code is covered too).
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    results = []
    try:
        for f in a.file:
            results.append({**run_reader(a.reader, f), "file": f})
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    for res in results:
        sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
