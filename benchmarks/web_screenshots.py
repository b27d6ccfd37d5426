"""The README's pictures of the web page (docs/img/web-1440.png, web-390.png, web-trace.png): the
bundled sample knowledge base served by ``ragsift serve``, a question asked in real headless
Chromium at 1440 px (a desktop) and at 390 px (a phone), screenshots of what a reader sees, and
of the trace opened.

    python benchmarks/web_screenshots.py            # ingests the sample into a temporary folder
    python benchmarks/web_screenshots.py --kb KB    # or serves a knowledge base made before

Needs the server extra, Playwright and Debian's chromium (as tests/e2e/server/test_web.py does)."""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
SHOTS = [(1440, 1000, "How many seconds do I hold the reset button to wipe the hub?"),
         (390, 844, "恢复出厂设置要按哪些键？")]


def serve(kb: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("RAGSIFT_API_KEYS", "RAGSIFT_READ_KEYS")}
    proc = subprocess.Popen([sys.executable, "-m", "ragsift.cli", "--kb", str(kb), "serve", "--no-mcp",
                             "--port", str(port), "--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit("ragsift serve did not become ready")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=Path, help="a knowledge base to serve (default: the sample, ingested anew)")
    args = ap.parse_args()
    tmp = None
    kb = args.kb
    if kb is None:
        from ragsift.demo import sample_dir

        tmp = tempfile.mkdtemp()
        kb = Path(tmp) / "kb"
        subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", str(kb), "ingest", str(sample_dir() / "kb")],
                       check=True)
    proc, url = serve(kb)
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"])
            for width, height, question in SHOTS:
                page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
                page.goto(url + "/")
                expect(page.locator("#status")).to_have_text("ready")
                page.fill("#question", question)
                page.press("#question", "Enter")
                expect(page.locator(".passage mark").first).to_be_visible(timeout=60_000)
                if width > 400:  # the whole page: passages, why each was found, the documents; the trace
                    page.screenshot(path=str(OUT / f"web-{width}.png"), full_page=True)
                    trace = page.locator("details.trace").first
                    trace.locator("summary").first.click()
                    trace.locator("details.channel-hits summary").first.click()
                    trace.screenshot(path=str(OUT / "web-trace.png"))
                    print("wrote", OUT / "web-trace.png")
                else:  # a phone's screen: the question, then the first passage
                    page.locator("#ask-title").evaluate("e => window.scrollTo(0, 0)")
                    page.screenshot(path=str(OUT / f"web-{width}.png"))
                print("wrote", OUT / f"web-{width}.png")
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(30)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
