"""What reading born-digital PDFs would cost with a layout model on every page (issue 52): the
pages of ``real_reading.py``'s documents read by ragsift's PDF loader as they are (no model; the
whole file, in this process), and
the same pages rendered at 150 dpi and passed through PP-Structure's layout model (``rapid-layout``
0.4.2, its ``layout_cdla.onnx``, ONNX Runtime on the CPU), side by side in one run, CPU seconds a page
(``time.process_time``: the machine is shared, wall time is not the code's).

    pip install --target /tmp/rlpkg rapid_layout-0.4.2-py3-none-any.whl --no-deps
    PYTHONPATH=/tmp/rlpkg .venv/bin/python benchmarks/layout_model_cost.py --pages 12

The model is not a dependency of ragsift (the loader does not use it): this script measures what
using it would add, so that the rule "the text layer's evidence, no model, for born-digital pages"
rests on a figure. ``--pages`` pages per document, taken evenly.

Writes benchmarks/results/layout_model_cost.json.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT / "benchmarks"))

from harness import evenly, write_result  # noqa: E402
from real_reading import documents, fetch, read_ragsift  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "layout_model_cost.json"


def main() -> None:
    import numpy as np
    import pypdfium2
    from rapid_layout import RapidLayout

    ap = argparse.ArgumentParser()
    ap.add_argument("--work-dir", type=Path, default=ROOT.parent / "data-ext" / "real-reading")
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--dpi", type=int, default=150)
    args = ap.parse_args()
    t = time.process_time()
    model = RapidLayout(model_type="pp_layout_cdla")
    load_seconds = time.process_time() - t
    rows: dict[str, Any] = {}
    for d in documents(fetch(args.work_dir)):
        pdf = pypdfium2.PdfDocument(str(d["pdf"]))
        n = len(pdf)
        pick = evenly(range(n), args.pages)
        render, infer, regions = [], [], []
        for i in pick:
            t = time.process_time()
            img = np.asarray(pdf[i].render(scale=args.dpi / 72).to_pil().convert("RGB"))[:, :, ::-1]
            t1 = time.process_time()
            boxes, _scores, _classes, _ = model(img)
            t2 = time.process_time()
            render.append(t1 - t)
            infer.append(t2 - t1)
            regions.append(0 if boxes is None else len(boxes))
        pdf.close()
        per_page_read = read_ragsift(d["pdf"]).cpu_seconds / n
        render_page, model_page = statistics.fmean(render), statistics.fmean(infer)
        rows[d["name"]] = {"pages": n, "sampled": len(pick), "read_s_per_page": round(per_page_read, 4),
                           "render_cpu_s_per_page": round(render_page, 4),
                           "model_cpu_s_per_page": round(model_page, 4),
                           "regions_per_page": round(statistics.fmean(regions), 1),
                           "pages_per_s_without": round(1 / per_page_read, 2),
                           "pages_per_s_with": round(1 / (per_page_read + render_page + model_page), 2)}
        print(d["name"], rows[d["name"]], flush=True)
    write_result(OUT, {"rows": rows, "model_load_cpu_s": round(load_seconds, 3), "dpi": args.dpi,
                       "model": "rapid-layout 0.4.2 pp_layout_cdla (PP-Structure CDLA, 10 classes)"})


if __name__ == "__main__":
    main()
