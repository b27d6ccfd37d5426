"""The ``ragsift`` command line: sixteen commands (``COMMANDS``, in the order ``ragsift --help``
lists them; tests/project/test_truthful_lists.py checks this list against it):

- a knowledge base's contents: ingest, query, stats, list, show, delete
- its upkeep: optimize, tune, check, migrate
- serving it: serve (HTTP: the API, the web page, MCP), mcp (MCP over stdio)
- the bundled sample and evaluation: sample, demo, eval, compare

Errors meant for users print as one line (``ragsift: error: ...``) with exit status 2, a
mistaken flag too (``ragsift query: error: argument ...; see 'ragsift query --help'``): every
argument is checked to be UTF-8, and a path to be one the system takes (and not a device or a
file where a directory goes) before anything loads; what the system refuses later (a folder
that cannot be made) is said with its reason and the path. The flags that set a setting take
their type, choices and help from the setting's definition (``ragsift.config``), so the valid
values live in one place.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ragsift import __version__
from ragsift.cli.args import DEFAULT_KB, check_text
from ragsift.cli.contents import (
    _delete_command,
    _ingest_command,
    _list_command,
    _query_command,
    _show_command,
    _stats_command,
)
from ragsift.cli.samples import _compare_command, _demo_command, _eval_command, _sample_command
from ragsift.cli.serving import _mcp_command, _serve_command
from ragsift.cli.upkeep import _check_command, _migrate_command, _optimize_command, _tune_command
from ragsift.errors import RagsiftError, os_reason

__all__ = ["COMMANDS", "build_parser", "main"]

#: each command: its help line (all `ragsift --help` needs) and what adds its arguments, in the order
#: `ragsift --help` lists them
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "ingest": ("ingest files or directories (Markdown, text, HTML, PDF, Word, PowerPoint, "
              "Excel, CSV, EPUB, ODT, mail, images, ZIP, JSONL), or '-' for JSONL "
              "documents on standard input",
              _ingest_command),
    "query": ("ask a question",
              _query_command),
    "stats": ("show counts, generation and settings",
              _stats_command),
    "list": ("list documents",
              _list_command),
    "show": ("how a document was read: its heading tree, sections (pages, tables), chunks",
              _show_command),
    "delete": ("delete documents with all their parents and children",
              _delete_command),
    "optimize": ("compact the store and remove old table versions, keeping the last "
              "keep_generations generations",
              _optimize_command),
    "tune": ("learn the fusion settings of this knowledge base from labeled or "
              "model-written questions and save them as its query defaults",
              _tune_command),
    "check": ("verify the knowledge base (manifest, generations, rows, vectors); exit 1 "
              "on problems",
              _check_command),
    "migrate": ("copy the knowledge base to another store (LanceDB <-> Milvus) "
              "without re-embedding",
              _migrate_command),
    "serve": ("serve the knowledge base(s) over HTTP: API, web page, MCP",
              _serve_command),
    "mcp": ("serve the knowledge base to an MCP client over stdio",
              _mcp_command),
    "sample": ("copy the bundled sample documents (Chinese and English) into a folder, docs/ by default",
               _sample_command),
    "demo": ("ingest the bundled sample knowledge base and answer its questions",
              _demo_command),
    "eval": ("evaluate retrieval configurations on a BEIR-format dataset folder",
              _eval_command),
    "compare": ("compare two configs of an eval --out file query by query",
              _compare_command),
}


class _Commands(argparse._SubParsersAction):
    """Subcommands whose arguments are added when one is chosen: the flags drawn from the
    settings need ``ragsift.config`` (pydantic), which ``ragsift --version`` and ``--help`` do
    not."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unfilled: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def fill(self, name: str) -> None:
        add = self.unfilled.pop(name, None)
        if add is not None:
            add(self.choices[name])

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.fill(values[0])
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """A mistaken argument told in one line, with where help is (not the usage of every flag
    first, which buries it)."""

    def error(self, message: str) -> NoReturn:
        message = re.sub("[\udc80-\udcff]", lambda m: f"\\x{ord(m[0]) - 0xdc00:02x}", _one_line(message))
        near = self._near(message)
        see = f"{near} See" if near else "; see"
        self.exit(2, f"{self.prog}: error: {message}{see} '{self.prog} --help'\n")

    def _near(self, message: str) -> str:
        """The nearest flag to each one not known, the nearest command or value to one not
        among the choices (``ragsift.names``: one helper for every face)."""
        from ragsift.names import did_you_mean

        hints: list[str] = []
        if m := re.match(r"unrecognized arguments: (.*)", message):
            flags = [o for a in self._all_actions() for o in a.option_strings if o.startswith("--")]
            hints = [did_you_mean(w.split("=", 1)[0], flags) for w in m[1].split() if w.startswith("-")]
        elif m := re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)", message):
            hints = [did_you_mean(m[1], re.findall(r"'([^']*)'", m[2]))]
        hints = [h for h in hints if h]
        return f"; {' '.join(hints)}" if hints else ""

    def _all_actions(self) -> list[argparse.Action]:
        """This parser's arguments and those of the commands whose arguments were added (the
        one chosen, with ``main``'s lazy parser)."""
        out = list(self._actions)
        for a in self._actions:
            if isinstance(a, _Commands):
                out += [x for name, p in a.choices.items() if name not in a.unfilled for x in p._actions]
        return out


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The parser; ``lazy``: a command's arguments are added when it is chosen (what ``main`` does)."""
    p = _Parser(prog="ragsift", description="Hybrid parent-child retrieval for RAG.")
    p.add_argument("--version", action="version", version=f"ragsift {__version__}")
    p.add_argument("--kb", help=f"knowledge-base directory (default: $RAGSIFT_KB or ./{DEFAULT_KB})")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log more: -v what each step does, -vv details (warnings such as a failed channel always)")
    sub = p.add_subparsers(dest="command", required=True, action=_Commands)
    assert isinstance(sub, _Commands)
    for name, (text, add) in COMMANDS.items():
        sub.add_parser(name, help=text)
        sub.unfilled[name] = add
        if not lazy:
            sub.fill(name)
    return p


#: how a positional argument is named in a message
POSITIONAL_NAMES = {"paths": "path", "doc_ids": "document id", "doc": "document", "dest": "destination",
                    "results": "results file", "a": "config", "b": "config"}


#: the arguments that name files or folders
PATH_ARGS = {"kb", "paths", "dest", "dataset", "results", "kb_root", "keys_file", "sync_dir", "qrels", "config_file",
             "work_dir", "out", "report_dir"}


def _check_utf8(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every argument is UTF-8 text: bytes that are not (a file name in another encoding, a
    stray byte) are told here, not found by whatever first writes them (a settings file, a store)."""
    sub = next(a for a in parser._actions if isinstance(a, _Commands))
    for action in [*parser._actions, *sub.choices[args.command]._actions]:
        value = getattr(args, action.dest, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str):
                flags = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
                check_text(item, flags[0] if flags else POSITIONAL_NAMES.get(action.dest, action.dest),
                           path=action.dest in PATH_ARGS)


def _one_line(message: str) -> str:
    return " ".join(message.split("\n")).replace("\r", " ")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(lazy=True)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=max(logging.DEBUG, logging.WARNING - 10 * args.verbose), stream=sys.stderr,
                        format="ragsift: %(levelname)s: %(message)s")
    for stream in (sys.stdout, sys.stderr):  # a name that is not UTF-8 is printed escaped, never an error
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        _check_utf8(parser, args)
        return args.func(args)
    except RagsiftError as e:
        print(f"ragsift: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:  # what the system refused (a disk full, a folder not writable), said as such
        print(f"ragsift: error: {_one_line(os_reason(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragsift: interrupted; the knowledge base keeps its last committed state", file=sys.stderr)
        return 130

