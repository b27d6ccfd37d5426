"""What the examples share: their command-line arguments and the language model they answer with."""
from __future__ import annotations

import argparse

from ragsift import KnowledgeBase
from ragsift.models.llm import load_llm


def arguments(description: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--kb", default="ragsift-demo-kb", help="a knowledge base (make demo builds ragsift-demo-kb)")
    ap.add_argument("--llm", default="local:qwen2.5-coder-1.5b", help="local:<model> or openai:<model>")
    ap.add_argument("--max-tokens", type=int, default=200, help="longest answer")
    ap.add_argument("question", nargs="?", default="恢复出厂设置要按哪些键？")
    return ap.parse_args()


def open_kb(args: argparse.Namespace) -> KnowledgeBase:
    return KnowledgeBase.open(args.kb, create=False)


def model(args: argparse.Namespace):
    """ragsift's own client for the model: the packaged Qwen runs in process, offline."""
    return load_llm(args.llm)
