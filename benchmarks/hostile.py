"""Hostile files and long documents (issue 51): what a file can cost the server that reads it.

    .venv/bin/python benchmarks/hostile.py --datasets ../shared/datasets --long ../data-ext \
        --work-dir /tmp/ragsift-hostile [--parts hostile,cost,long] [--ingest-long]

1. **Hostile files, with the server answering queries.** A real ``ragsift serve`` on the bundled
   sample knowledge base; its idle query latency (Chinese and English sample questions, one
   client, one after another) measured first; then each hostile file the outside testers sent,
   built here (a DOCX whose paragraph style is based on itself through a second style, a 421-byte
   ODT repeating a space a billion times, a DOCX table cell spanning a billion columns, an empty
   5,000 x 200 DOCX table, an XLSX of 1,048,576 rows, an XLSX of 3 million shared strings, an image
   just under the 60-megapixel limit with text to read, a 200 KB JSON document of long runs),
   uploaded with a write key while the same client keeps asking: the job's time and outcome, the
   reading process's peak memory (polled from /proc), the server's own memory, and query p50 /
   p95 during the job against idle.
2. **What isolation costs an ordinary file.** A mixed folder of 100 files written by pandoc,
   LibreOffice and openpyxl from real documents (L-Eval's Qasper papers and Natural Questions
   pages, CMRC 2018's Chinese articles; ``reading.py``'s sources): each read in this process
   (``load_file``) and in a reading process (``read_file``, the path every ingest takes),
   alternating, best of three: per-file p50 and the total, and the worker's start.
3. **Long documents with default settings.** War and Peace in English printed to a PDF by
   LibreOffice (1,030 pages), a sheet of 100,000 rows (sentences of SciFact, HotpotQA, CMRC
   2018 and L-Eval, one a row), War and Peace (3.2 MB) and 红楼梦 (2.6 MB) as text: read with the default
   limits in a reading process: time, CPU, pages or rows a second, peak memory. With
   ``--ingest-long``, each is then ingested whole with the default settings (e5-small).

Writes benchmarks/results/hostile.json (with the command and the commit measured).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

from harness import DATASETS as SHARED_DATASETS
from harness import git_state, percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

OUT = ROOT / "benchmarks" / "results" / "hostile.json"


# ------------------------------------------------------------------ hostile files
def docx_bytes(body_xml: str = "", styles: bool = False) -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from lxml import etree

    d = docx.Document()
    d.add_heading("重置指南 Reset guide", 1)
    p = d.add_paragraph("按住复位键十秒。Hold the reset button for ten seconds.")
    if styles:
        a = d.styles.add_style("LoopA", WD_STYLE_TYPE.PARAGRAPH)
        b = d.styles.add_style("LoopB", WD_STYLE_TYPE.PARAGRAPH)
        a.base_style, b.base_style = b, a
        p.style = a
    if body_xml:
        ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        d.element.body.insert(len(d.element.body) - 1, etree.fromstring(f"<w:tbl {ns}>{body_xml}</w:tbl>"))
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def odt_bytes() -> bytes:
    content = ('<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
               '<text:p>a<text:s text:c="1000000000"/>b</text:p></office:text></office:body>'
               '</office:document-content>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
    return buf.getvalue()


def xlsx_bytes(sheet_data: str, ref: str, shared: list[str] | None = None) -> bytes:
    """A workbook of one sheet, its parts written here (the hostile part is the sheet's data or
    its shared strings)."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006"
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    parts = {
        "[Content_Types].xml": f'<Types xmlns="{pkg}/content-types"><Default Extension="rels" '
        f'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        f'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="{ct}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{ct}.worksheet+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{ct}.sharedStrings+xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{pkg}/relationships"><Relationship Id="rId1" '
        f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets><sheet name="数据 data" sheetId="1" '
        'r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{pkg}/relationships"><Relationship Id="rId1" '
        f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{rel}/sharedStrings" '
        'Target="sharedStrings.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{main}"><dimension ref="{ref}"/><sheetData>{sheet_data}'
        "</sheetData></worksheet>",
        "xl/sharedStrings.xml": f'<sst xmlns="{main}" count="{len(shared or [])}" uniqueCount="{len(shared or [])}">'
        + "".join(f"<si><t>{t}</t></si>" for t in (shared or [])) + "</sst>",
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + text)
    return buf.getvalue()


def hostile_files(work: Path) -> dict[str, Path]:
    from PIL import Image, ImageDraw, ImageFont

    work.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    files["style-loop.docx"] = docx_bytes(styles=True)
    files["billion-spaces.odt"] = odt_bytes()
    files["gridspan.docx"] = docx_bytes('<w:tr><w:tc><w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr><w:p><w:r>'
                                        "<w:t>merged</w:t></w:r></w:p></w:tc></w:tr>"
                                        + ("<w:tr>" + "<w:tc><w:p/></w:tc>" * 8 + "</w:tr>") * 300)
    files["empty-table-5000x200.docx"] = docx_bytes(("<w:tr>" + "<w:tc><w:p/></w:tc>" * 200 + "</w:tr>") * 5000)
    files["rows-1048576.xlsx"] = xlsx_bytes('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'
                                            + "".join(f'<row r="{i}"/>' for i in range(2, 1_048_577)),
                                            "A1:XFD1048576", ["重置 reset"])
    files["shared-strings-3M.xlsx"] = xlsx_bytes('<row r="1"><c r="A1" t="s"><v>0</v></c></row>', "A1:A1",
                                                 [f"s{i}" for i in range(3_000_000)])
    side = 7745  # 59,985,025 pixels: just under the 60-megapixel limit
    img = Image.new("L", (side, side), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 48)
    for i in range(120):
        draw.text((150, 100 + i * 62), f"{i}: hold the reset button for ten seconds 按住复位键十秒恢复出厂设置", fill=0,
                  font=font)
    out = io.BytesIO()
    img.save(out, "PNG")
    files["near-pixel-limit.png"] = out.getvalue()
    paths = {}
    for name, data in files.items():
        (work / name).write_bytes(data)
        paths[name] = work / name
    return paths


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Asker(threading.Thread):
    """Asks the sample questions one after another, recording each latency, until stopped."""

    def __init__(self, url: str, key: str, questions: list[str]) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.questions = url, key, questions
        self.latencies: list[float] = []
        self.errors = 0
        self.stop = threading.Event()

    def run(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=60) as c:
            i = 0
            while not self.stop.is_set():
                q = self.questions[i % len(self.questions)]
                t = time.perf_counter()
                try:
                    ok = c.post("/v1/query", json={"question": q, "max_passages": 3}).status_code == 200
                except httpx.HTTPError:
                    ok = False
                self.latencies.append(time.perf_counter() - t)
                self.errors += not ok
                i += 1


def part_hostile(work: Path) -> dict[str, Any]:
    import shutil

    import httpx
    from server_process import READ_KEY, WRITE_KEY, ServerProcess

    from ragsift.demo import sample_dir, sample_questions
    from ragsift.kb import KnowledgeBase

    files = hostile_files(work / "files")
    kb_dir = work / "kb"
    shutil.rmtree(kb_dir, ignore_errors=True)
    KnowledgeBase.open(kb_dir).ingest(sample_dir() / "kb")
    questions = [q["question"] for q in sample_questions()]
    rows = []
    with ServerProcess(["--kb", str(kb_dir), "serve", "--no-mcp"]) as srv:
        assert srv.proc is not None
        server_pid = srv.proc.pid
        idle = Asker(srv.url, READ_KEY, questions)
        idle.start()
        time.sleep(20)
        idle.stop.set()
        idle.join()
        base = {"queries": len(idle.latencies), "p50_ms": 1000 * percentile(idle.latencies, 50, method="nearest"),
                "p95_ms": 1000 * percentile(idle.latencies, 95, method="nearest"), "server_rss_mb": _rss_mb(server_pid)}
        print("idle", base, flush=True)
        cases: list[tuple[str, Any]] = [(name, path) for name, path in files.items()]
        runs = (" " * 70_000 + "x " + "." * 70_000 + " " + "设" * 60_000)
        cases.append(("json-200KB-runs", {"documents": [{"id": "runs", "title": "长串 runs",
                                                          "text": "重置说明 reset notes " + runs + " 按住复位键十秒"}]}))
        with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {WRITE_KEY}"}, timeout=120) as c:
            for name, what in cases:
                asker = Asker(srv.url, READ_KEY, questions)
                asker.start()
                t = time.perf_counter()
                if isinstance(what, Path):
                    r = c.post("/v1/files", files=[("files", (what.name, what.read_bytes(), "application/octet-stream"))])
                else:
                    r = c.post("/v1/documents", json=what)
                job = r.json()
                reader_peak, server_peak = 0.0, 0.0
                while job["state"] in ("queued", "running"):
                    time.sleep(0.2)
                    for pid in _children(server_pid):
                        reader_peak = max(reader_peak, _rss_mb(pid, "VmHWM"))
                    server_peak = max(server_peak, _rss_mb(server_pid))
                    job = c.get(f"/v1/kbs/{job['kb']}/jobs/{job['id']}").json()
                took = time.perf_counter() - t
                asker.stop.set()
                asker.join()
                report = job.get("report") or {}
                row = {"file": name, "bytes": what.stat().st_size if isinstance(what, Path) else len(json.dumps(what)),
                       "seconds": round(took, 1), "state": job["state"],
                       "outcome": ("skipped: " + report["skipped"][0]["reason"]) if report.get("skipped") else
                       f"read: {len(report.get('added', []))} document(s), {report.get('children', 0)} chunks",
                       "reader_peak_mb": round(reader_peak), "server_rss_mb": round(server_peak),
                       "queries": len(asker.latencies), "errors": asker.errors,
                       "p50_ms": round(1000 * percentile(asker.latencies, 50, method="nearest"), 1),
                       "p95_ms": round(1000 * percentile(asker.latencies, 95, method="nearest"), 1),
                       "p95_vs_idle": round(percentile(asker.latencies, 95, method="nearest") * 1000 / base["p95_ms"], 2)}
                rows.append(row)
                print(row, flush=True)
    return {"idle": base, "files": rows}


# ------------------------------------------------------------------ isolation's cost
def mixed_folder(datasets: Path, work: Path, n: int = 100) -> list[Path]:
    import reading as R

    docs = R.qasper_docs(datasets / "leval-longdoc-en", 12) + R.nq_docs(datasets / "leval-longdoc-en", 8) \
        + R.cmrc_docs(datasets / "cmrc2018-dev", 14)
    files = R.write_all(docs, work, ["docx", "odt", "epub", "pptx", "pdf", "xlsx"])
    out = [p for got in files.values() for p in got.values()]
    return sorted(out)[:n]


def part_cost(datasets: Path, work: Path) -> dict[str, Any]:
    from ragsift.ingest.loaders import LoadLimits, load_file, read_file
    from ragsift.ingest.loaders.isolation import READERS

    files = mixed_folder(datasets, work / "mixed")
    limits = LoadLimits()
    READERS.close()
    t = time.perf_counter()
    read_file(files[0], files[0].name, limits)  # the worker starts here
    start = time.perf_counter() - t
    here: list[float] = []
    isolated: list[float] = []
    for path in files:
        best_here = best_iso = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            a = load_file(path, path.name, limits)
            best_here = min(best_here, time.perf_counter() - t)
            t = time.perf_counter()
            b = read_file(path, path.name, limits)
            best_iso = min(best_iso, time.perf_counter() - t)
            assert [d.text for d in a.documents] == [d.text for d in b.documents], path
        here.append(best_here)
        isolated.append(best_iso)
    extra = [b - a for a, b in zip(here, isolated)]
    kinds: dict[str, int] = {}
    for p in files:
        kinds[p.suffix] = kinds.get(p.suffix, 0) + 1
    return {"files": len(files), "formats": kinds, "worker_start_s": round(start, 3),
            "in_process": {"p50_ms": round(1000 * percentile(here, 50, method="nearest"), 1), "total_s": round(sum(here), 2)},
            "isolated": {"p50_ms": round(1000 * percentile(isolated, 50, method="nearest"), 1), "total_s": round(sum(isolated), 2)},
            "extra_per_file_ms": {"p50": round(1000 * percentile(extra, 50, method="nearest"), 2), "p95": round(1000 * percentile(extra, 95, method="nearest"), 2)},
            "total_ratio": round(sum(isolated) / sum(here), 3)}


# ------------------------------------------------------------------ long documents
def long_files(datasets: Path, long: Path, work: Path) -> dict[str, Path]:
    import openpyxl

    from ragsift.text.sentences import sentence_spans

    work.mkdir(parents=True, exist_ok=True)
    out = {"pdf-1030-pages": long / "war_and_peace_en.pdf", "novel-en-3.2MB": long / "war_and_peace_en.txt",
           "novel-zh-2.6MB": long / "hongloumeng.txt"}
    sheet = work / "sentences-100000.xlsx"
    if not sheet.exists():
        wb = openpyxl.Workbook(write_only=True)
        ws = wb.create_sheet("句子 sentences")
        ws.append(["id", "title", "n", "sentence", "set"])
        rows = 0
        for name in ("scifact", "hotpotqa-ircot-dev500", "cmrc2018-dev", "leval-longdoc-en"):
            for line in (datasets / name / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                for i, (s, e) in enumerate(sentence_spans(r.get("text") or "")):
                    if rows >= 100_000:
                        break
                    ws.append([r["_id"], r.get("title") or "", i, r["text"][s:e], name])
                    rows += 1
        assert rows == 100_000, rows
        wb.save(sheet)
    out["sheet-100000-rows"] = sheet
    return out


def part_long(datasets: Path, long: Path, work: Path, ingest: bool) -> list[dict[str, Any]]:
    from ragsift.config import Settings
    from ragsift.ingest.loaders import read_file
    from ragsift.ingest.pipeline import load_limits
    from ragsift.kb import KnowledgeBase

    limits = load_limits(Settings())
    rows = []
    for name, path in long_files(datasets, long, work / "long").items():
        t = time.perf_counter()
        res = read_file(path, path.name, limits)
        took = time.perf_counter() - t
        assert not res.skipped, res.skipped
        doc = res.documents[0]
        units = doc.metadata.get("page_count") or (100_000 if "rows" in name else None)
        row: dict[str, Any] = {"file": name, "bytes": path.stat().st_size, "chars": len(doc.text),
                               "read_s": round(took, 1), "cpu_s": round(res.stats["cpu_seconds"], 1),
                               "peak_mb": round(res.stats["peak_mb"])}
        if units:
            row["per_second"] = round(units / took, 1)
            row["unit"] = "pages" if doc.metadata.get("page_count") else "rows"
        if ingest:
            kb_dir = work / f"kb-{name}"
            import shutil

            shutil.rmtree(kb_dir, ignore_errors=True)
            kb = KnowledgeBase.open(kb_dir)
            t = time.perf_counter()
            report = kb.ingest(path)
            row.update(ingest_s=round(time.perf_counter() - t, 1), chunks=report.children,
                       skipped=[s.reason for s in report.skipped])
            kb.close()
        rows.append(row)
        print(row, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=Path, default=SHARED_DATASETS)
    ap.add_argument("--long", type=Path, default=ROOT.parent / "data-ext")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ragsift-hostile"))
    ap.add_argument("--parts", default="hostile,cost,long")
    ap.add_argument("--ingest-long", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result: dict[str, Any] = json.loads(OUT.read_text()) if OUT.exists() else {}
    parts = args.parts.split(",")
    for part in parts:
        if part == "hostile":
            result["hostile"] = part_hostile(args.work_dir / "hostile")
        elif part == "cost":
            result["cost"] = part_cost(args.datasets, args.work_dir)
        elif part == "long":
            result["long"] = part_long(args.datasets, args.long, args.work_dir, args.ingest_long)
        result.setdefault("runs", {})[part] = {"commit": git_state()["commit"], "date": time.strftime("%Y-%m-%d"),
                                               "command": "python benchmarks/hostile.py " + " ".join(sys.argv[1:])}
    write_result(OUT, result)
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
