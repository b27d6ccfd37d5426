"""What the command line's commands share: the knowledge base's path and the checks of path and
text arguments (before anything loads), progress, and the flags drawn from the settings'
definitions (``_setting``: type, choices and help from ``ragsift.config``, loaded only when a
command is chosen)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragsift.errors import InputError

DEFAULT_KB = "ragsift-kb"
NAME_MAX, PATH_MAX = 255, 4095  # bytes of one name in a path, and of a whole path (Linux)


def _kb_path(args: argparse.Namespace) -> Path:
    """The knowledge base's directory: ``--kb``, else $RAGSIFT_KB, else ./ragsift-kb; checked to
    be a path the system takes and, when it exists, a directory."""
    if args.kb is not None:
        return check_path(args.kb, "--kb", "dir", "knowledge-base directory", store=True)
    env = os.environ.get("RAGSIFT_KB")
    return check_path(env or DEFAULT_KB, "$RAGSIFT_KB" if env else "the default knowledge base", "dir",
                      "knowledge-base directory", store=True)


def _shown(text: str, limit: int = 60) -> str:
    """A user's text in a message: quoted, control characters and bytes that are not UTF-8
    escaped, cut at ``limit`` characters."""
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text.encode("utf-8", "surrogateescape")) if _undecodable(text) else repr(text)


def _undecodable(text: str) -> bool:
    """Text holding bytes that were not UTF-8 (Python keeps them as lone surrogates)."""
    return any("\ud800" <= c <= "\udfff" for c in text)


def check_text(text: str, what: str, path: bool = False) -> str:
    """An argument that must be UTF-8 text (``path``: a file or folder's name)."""
    if _undecodable(text):
        raise InputError(f"{what} {_shown(text)} is not valid UTF-8: ragsift takes its arguments in UTF-8"
                         + ("; rename the file or folder" if path else ""))
    return text


def check_path(text: str, what: str, want: str = "", noun: str = "", store: bool = False) -> Path:
    """A path argument the system can take: UTF-8, not empty, its names and itself within the
    length limits. ``want`` ("dir" or "file"): when something is there, it is that (``noun`` names
    what the path is for in the message, "knowledge-base directory"). ``store``: a directory
    knowledge bases are kept in, whose path LanceDB takes without control characters."""
    check_text(text, what, path=True)
    noun = noun or {"dir": "directory", "file": "file"}.get(want, "path")
    if not text:
        raise InputError(f"{what} is empty: give a {noun}")
    raw = os.fsencode(text)
    if len(raw) > PATH_MAX:
        raise InputError(f"{what} {_shown(text)} is {len(raw)} bytes long; a path may be at most {PATH_MAX}")
    long = next((n for n in raw.split(b"/") if len(n) > NAME_MAX), None)
    if long is not None:
        raise InputError(f"{what} {_shown(text)}: a name in it is {len(long)} bytes long; a file or folder name "
                         f"may be at most {NAME_MAX} bytes")
    if store and any(c < " " or c == "\x7f" for c in text):  # LanceDB refuses them in its folder's path
        raise InputError(f"{what} {_shown(text)} holds a control character; a knowledge base's directory cannot")
    path = Path(text)
    actual = _kind_of(path) if want else None
    if actual is not None and actual != {"dir": "a directory", "file": "a file"}[want]:
        raise InputError(f"{what} {_shown(text, 200)} is {actual}, not a {noun}")
    return path


def _kind_of(path: Path) -> str | None:
    """What is at ``path``: "a directory", "a file", "a device"... (None: nothing, or it cannot be told)."""
    import stat

    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    return ("a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a named pipe" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "neither a file nor a directory")


def _open(args: argparse.Namespace, create: bool = False, **overrides: Any):
    from ragsift.kb import KnowledgeBase

    return KnowledgeBase.open(_kb_path(args), create=create, **overrides)


def _progress(args: argparse.Namespace, what: str = "ingest"):
    """One progress line for every phase of an ingest or a copy, on a terminal (or asked for), a
    line every ``--progress-every`` seconds off one: a context manager ending it after its block."""
    from ragsift.console import ingest_progress

    if args.progress is None:  # by default: a bar on a terminal, a line every few seconds for a log
        return ingest_progress(True if sys.stderr.isatty() else None, args.progress_every, what)
    return ingest_progress(args.progress)


def _whole(low: int) -> Callable[[str], int]:
    """An argument type: a whole number of at least ``low``."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid whole number: {_shown(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
        return value

    return whole


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _weights(text: str, flag: str = "--weights") -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(str.strip, text.split(",")):  # "" names none
        name, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"{flag} takes name=number pairs like dense=0.6,bm25=0.4; got {part!r}") from None
    return out


def _help(flat: str) -> str:
    """A setting's description, its valid values when they are a list of choices, and its default."""
    from enum import Enum
    from typing import get_args, get_origin

    from ragsift.config import Settings

    info = Settings.field_info(flat)
    text = " ".join((info.description or "").split())
    inner = get_args(info.annotation)
    if get_origin(info.annotation) is tuple and inner and isinstance(inner[0], type) and issubclass(inner[0], Enum):
        text += f" Comma-separated; valid: {', '.join(m.value for m in inner[0])}."
    default = info.get_default(call_default_factory=True)
    if isinstance(default, tuple):
        default = ",".join(str(v) for v in default)
    elif isinstance(default, dict):
        default = ",".join(f"{k}={v}" for k, v in default.items())
    return text + (f" (default: {default})" if default not in ("", None) else "")


def _setting(parser: argparse._ActionsContainer, flat: str, *flags: str, note: str = "") -> None:
    """A flag for a setting (``dest`` is its flat name): type, choices and help from its
    definition; ``note`` is added to the help."""
    from enum import Enum
    from types import UnionType
    from typing import Union, get_args, get_origin

    from ragsift.config import Settings

    info = Settings.field_info(flat)
    ann = info.annotation
    opts: dict[str, Any] = {"dest": flat, "help": _help(flat) + (f"; {note}" if note else "")}
    flags = tuple(f for f in flags if f) or ("--" + flat.replace("_", "-"),)
    if isinstance(ann, type) and issubclass(ann, Enum):
        opts["choices"] = [m.value for m in ann]
    elif get_origin(ann) in (Union, UnionType) and isinstance(first := get_args(ann)[0], type) and issubclass(
            first, Enum):  # an open set (a unit): the built-in names shown, any name taken (its registry checks it)
        opts["metavar"] = "{" + ",".join([m.value for m in first] + ["..."]) + "}"
    elif ann is bool:
        opts["action"] = "store_const"
        opts["const"] = True
    elif ann is int or ann is float:
        opts["type"] = ann
    elif get_origin(ann) is tuple:
        opts["type"] = _csv
    parser.add_argument(*flags, **opts)


def _given(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """The settings among ``names`` that a flag set (a mapping given as name=number pairs)."""
    from typing import get_origin

    from ragsift.config import Settings

    out = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    for n, v in out.items():
        if get_origin(Settings.field_info(n).annotation) is dict:
            out[n] = _weights(v, "--" + n.replace("_", "-"))
    return out


STORE_SETTINGS = ["store_kind", "store_uri", "store_name", "store_index"]
INDEX_FLAGS = ["embedder", "small_index", "extra_embedders", "sparse_encoder"]
INGEST_FLAGS = ["checkpoint_documents", "checkpoint_seconds"]
FOLDER_FLAGS = ["follow_outside_links"]
RETRIEVAL_FLAGS = ["channels", "fusion", "adaptive_power", "rrf_k", "weights", "normalization", "strategy", "unit",
                   "index_kinds", "whole_weights", "window_sentences", "merge_threshold", "max_passages",
                   "token_budget", "channel_timeout_s", "min_similarity", "min_term_match", "min_standout"]


LLM_FLAGS = ["llm_model", "llm_base_url", "hyde_mode", "hyde_samples", "rewrite", "reranker", "rerank_top_n",
             "multihop_mode", "hops_max", "hop_min_gain"]


QUERY_FLAGS = RETRIEVAL_FLAGS + LLM_FLAGS
SHORT_FLAGS = {"window_sentences": ("--window",), "token_budget": ("--budget",), "channel_timeout_s": ("--timeout",),
               "llm_model": ("--llm",), "reranker": ("--rerank",), "multihop_mode": ("--multihop",),
               "store_kind": ("--store",),
               "max_passages": ("--max-passages", "--max-parents")}  # --max-parents: the earlier spelling


def _store_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out = _given(args, STORE_SETTINGS)
    if out.get("store_uri") and "store_kind" not in out:
        out["store_kind"] = "milvus"
    return out


def _quoted(argv: list[str]) -> list[str]:
    import shlex

    return [shlex.quote(a) for a in argv]


def _add_progress_flags(parser: argparse.ArgumentParser, lines: bool = True) -> None:
    """--progress / --no-progress; by default a progress bar is shown on a terminal only, and
    (``lines``) a progress line every --progress-every seconds off one."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None)
    g.add_argument("--no-progress", dest="progress", action="store_false")
    if lines:
        parser.add_argument("--progress-every", type=_seconds, default=10.0, metavar="SECONDS",
                            help="off a terminal (a pipe, CI, a service): a progress line every SECONDS "
                                 "(default 10)")


def _seconds(text: str) -> float:
    """An argument type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {_shown(text)}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {_shown(text)}")
    return value


def _add_store_flags(parser: argparse.ArgumentParser, what: str) -> None:
    g = parser.add_argument_group(f"store ({what})")
    for flat in STORE_SETTINGS:
        _setting(g, flat, *SHORT_FLAGS.get(flat, ()),
                 note="implies --store milvus; credentials from $RAGSIFT_MILVUS_TOKEN or $MILVUS_TOKEN"
                 if flat == "store_uri" else "")

