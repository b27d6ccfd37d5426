"""What the examples share: their command-line arguments, the language model they answer with
(each of its calls bounded by ``--timeout``) and how they fail: one line on stderr, exit 1."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragsift import KnowledgeBase
from ragsift.cancel import Deadline
from ragsift.errors import RagsiftError
from ragsift.models.llm import load_llm


def arguments(description: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--kb", default="ragsift-demo-kb", help="a knowledge base (make demo builds ragsift-demo-kb)")
    ap.add_argument("--llm", default="local:qwen2.5-coder-1.5b", help="local:<model> or openai:<model>")
    ap.add_argument("--max-tokens", type=int, default=200, help="longest answer")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("RAGSIFT_EXAMPLE_TIMEOUT", 300)),
                    help="seconds a model call may take (default $RAGSIFT_EXAMPLE_TIMEOUT or 300)")
    ap.add_argument("question", nargs="?", default="恢复出厂设置要按哪些键？")
    return ap.parse_args()


def open_kb(args: argparse.Namespace) -> KnowledgeBase:
    return KnowledgeBase.open(args.kb, create=False)


class _Bounded:
    """A model client whose calls stop at ``seconds`` (an LLMError: "out of time")."""

    def __init__(self, llm: Any, seconds: float) -> None:
        self._llm, self._seconds = llm, seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def generate(self, messages: Any, **kwargs: Any) -> str:
        kwargs.setdefault("deadline", Deadline(self._seconds))
        return self._llm.generate(messages, **kwargs)


def model(args: argparse.Namespace):
    """ragsift's own client for the model: the packaged Qwen runs in process, offline; each
    call bounded by ``--timeout``."""
    return _Bounded(load_llm(args.llm, timeout_s=args.timeout), args.timeout)


def run(main: Callable[[], None]) -> None:
    """Run an example: a failure (a model out of time, a missing knowledge base) is one line on
    stderr and exit status 1, not a traceback."""
    try:
        main()
    except KeyboardInterrupt:
        print(f"{Path(sys.argv[0]).name}: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:
        text = (str(e).strip().splitlines() or [""])[0]
        what = text if isinstance(e, RagsiftError) and text else f"{type(e).__name__}: {text}".rstrip(": ")
        print(f"{Path(sys.argv[0]).name}: error: {what}", file=sys.stderr)
        sys.exit(1)
