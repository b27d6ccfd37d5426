"""The ragsift command's arguments, checked in this process (the command line takes seconds to
start): every hostile argument is one line naming it, exit status 2, nothing written; the same
bytes on a real command line; and what a progress line says. The command line run as users run it
(subprocesses, each loading its models) is tests/e2e/cli/test_cli.py."""
import os
import subprocess
import sys

import pytest
from conftest import write_files


# ---------------------------------------------------------------- hostile arguments (issue 51)
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """What the table's arguments name: a folder of documents, a file, a knowledge base (minilm)."""
    from ragsift import KnowledgeBase

    root = tmp_path_factory.mktemp("hostile")
    write_files(root / "docs", {"guide.md": "# 指南 Guide\n\n备份每天凌晨两点运行。Backups run nightly.\n"})
    write_files(root, {"file.txt": "not a folder"})
    KnowledgeBase.open(root / "kb", embedder="minilm").close()  # empty: what is copied or restored does not matter
    return root


def cli_in_process(argv: list[str], capsys) -> tuple[int, str, str]:
    """``ragsift`` run by its ``main`` in this process (the command line takes seconds to start)."""
    from ragsift.cli import main

    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


A300, ZH90 = "a" * 300, "名" * 90  # 300 and 270 bytes: a file name may be 255
# Python keeps argument bytes that are not UTF-8 as lone surrogates: "\udcff" is the byte 0xff
HOSTILE = [
    # the knowledge base's directory
    ("kb-name-too-long", ["--kb", A300, "stats"], "--kb 'aaaa", "a name in it is 300 bytes long; a file or folder name "
                                                              "may be at most 255 bytes"),
    ("kb-chinese-name-too-long", ["--kb", f"{{root}}/{ZH90}", "list"], "--kb ", "a name in it is 270 bytes long"),
    ("kb-path-too-long", ["--kb", "a/" * 2100, "query", "x"], "--kb ", "is 4200 bytes long; a path may be at most 4095"),
    ("kb-dev-null", ["--kb", "/dev/null", "ingest", "{root}/docs"], "--kb '/dev/null' is a device, not a "
                                                                    "knowledge-base directory", ""),
    ("kb-a-file", ["--kb", "{root}/file.txt", "stats"], "--kb ", "file.txt' is a file, not a knowledge-base directory"),
    ("kb-empty", ["--kb", "", "list"], "--kb is empty: give a knowledge-base directory", ""),
    ("kb-not-utf8", ["--kb", "\udcff", "stats"], "--kb b'\\xff' is not valid UTF-8: ragsift takes its arguments in "
                                                 "UTF-8; rename the file or folder", ""),
    ("kb-control-character", ["--kb", "{root}/a\nb", "ingest", "{root}/docs"], "--kb ", "holds a control character"),
    ("kb-in-proc", ["--kb", "/proc/ragsift-kb", "ingest", "{root}/docs", "--embedder", "minilm"],
     "cannot create the knowledge base at /proc/ragsift-kb: ", ""),
    ("kb-under-a-file", ["--kb", "{root}/file.txt/kb", "ingest", "{root}/docs", "--embedder", "minilm"],
     "cannot create the knowledge base at ", "file.txt/kb: Not a directory"),
    ("kb-env-too-long", ["stats"], "$RAGSIFT_KB 'aaaa", "a name in it is 300 bytes long"),
    # what an ingest reads, and what it records
    ("ingest-name-too-long", ["--kb", "{root}/new", "ingest", A300], "path 'aaaa", "a name in it is 300 bytes long"),
    ("ingest-not-utf8", ["--kb", "{root}/new", "ingest", "{root}/docs/\udcff.md"], "path b'", "\\xff.md' is not "
                                                                                               "valid UTF-8"),
    ("ingest-prefix-not-utf8", ["--kb", "{root}/new", "ingest", "{root}/docs", "--prefix", "手册/\udcfe"],
     "--prefix b'\\xe6\\x89\\x8b\\xe5\\x86\\x8c/\\xfe' is not valid UTF-8", ""),
    ("ingest-store-name-not-utf8", ["--kb", "{root}/new", "ingest", "{root}/docs", "--store-name", "\udcff"],
     "--store-name b'\\xff' is not valid UTF-8", ""),
    ("ingest-missing", ["--kb", "{root}/new", "ingest", "{root}/nope.md"], "no such file or directory: ", "nope.md"),
    # document ids, questions, numbers
    ("delete-id-not-utf8", ["--kb", "{root}/kb", "delete", "d-1", "\udcff"], "document id b'\\xff' is not valid UTF-8",
     ""),
    ("show-not-utf8", ["--kb", "{root}/kb", "show", "\udcfe\udcff"], "document b'\\xfe\\xff' is not valid UTF-8", ""),
    ("question-not-utf8", ["--kb", "{root}/kb", "query", "备份\udcff"], "question b'", "' is not valid UTF-8"),
    ("not-a-number", ["query", "x", "--max-chars", "many"], "ragsift query: error: argument --max-chars: invalid "
                                                           "whole number: 'many'; see 'ragsift query --help'", ""),
    ("number-not-utf8", ["query", "x", "--max-chars", "\udcff"], "ragsift query: error: argument --max-chars: "
                                                                 "invalid whole number: b'\\xff'", ""),
    ("huge-negative", ["query", "x", "--format", "context", "--context-tokens=-" + "9" * 20],
     f"ragsift query: error: argument --context-tokens: must be 1 or more, not -{'9' * 20}", ""),
    ("zero-questions", ["--kb", "{root}/kb", "tune", "--generate", "0"], "ragsift tune: error: argument --generate: "
                                                                        "must be 1 or more, not 0", ""),
    ("not-a-choice", ["query", "x", "--fusion", "页"], "ragsift query: error: argument --fusion: invalid choice: '页'",
     ""),
    ("not-a-unit", ["--kb", "{root}/kb", "query", "x", "--unit", "页"], "unknown unit '页'; valid: 'parent'", ""),
    ("not-a-command", ["frobnicate"], "ragsift: error: argument command: invalid choice: 'frobnicate'", ""),
    ("restore-negative", ["--kb", "{root}/kb", "check", "--restore", "-1"], "--restore takes a generation number", ""),
    ("restore-huge", ["--kb", "{root}/kb", "check", "--restore", "9" * 30], "no kept generation can be restored "
                                                                             "(none is kept but generation 0", ""),
    # migrate: onto a file, a knowledge base, a place that cannot be written
    ("migrate-onto-a-file", ["--kb", "{root}/kb", "migrate", "{root}/file.txt"], "destination '",
     "file.txt' is a file, not a directory for the copy"),
    ("migrate-onto-a-device", ["--kb", "{root}/kb", "migrate", "/dev/null"], "destination '/dev/null' is a device, "
                                                                            "not a directory for the copy", ""),
    ("migrate-onto-itself", ["--kb", "{root}/kb", "migrate", "{root}/kb"], "", "kb already holds a knowledge base; "
                                                                             "copy into a new directory"),
    ("migrate-into-proc", ["--kb", "{root}/kb", "migrate", "/proc"], "cannot write to /proc: ", ""),
    ("migrate-under-proc", ["--kb", "{root}/kb", "migrate", "/proc/ragsift/copy"],
     "cannot copy the knowledge base to /proc/ragsift/copy: ", ""),
    ("migrate-name-too-long", ["--kb", "{root}/kb", "migrate", f"{{root}}/{A300}"], "destination '", "a name in it is "
                                                                                                   "300 bytes long"),
    # serve: what it serves, checked before it listens
    ("serve-kb-root-a-file", ["serve", "--kb-root", "{root}/file.txt"], "--kb-root ", "is a file, not a directory"),
    ("serve-kb-in-proc", ["--kb", "/proc/ragsift-kb", "serve", "--port", "1", "--embedder", "minilm"],
     "cannot create the knowledge base at /proc/ragsift-kb: ", ""),
    ("serve-sync-dir-too-long", ["--kb", "{root}/kb", "serve", "--sync-dir", A300], "--sync-dir default= 'aaaa",
     "a name in it is 300 bytes long"),
]


@pytest.mark.parametrize("case,argv,starts,ends", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_arguments_are_one_line_each(hostile, capsys, monkeypatch, case, argv, starts, ends):
    """Every hostile argument of every family (names too long, devices, files where a directory
    goes and under one, /proc, bytes that are not UTF-8, control characters, numbers that are
    not) is one line naming it, exit status 2, nothing written; never a traceback."""
    monkeypatch.delenv("RAGSIFT_KB", raising=False)
    if case == "kb-env-too-long":
        monkeypatch.setenv("RAGSIFT_KB", A300)
    before = sorted(p.name for p in hostile.iterdir())
    code, out, err = cli_in_process([a.replace("{root}", str(hostile)) for a in argv], capsys)
    assert code == 2, (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    message = lines[0] if starts.startswith("ragsift") else lines[0].removeprefix("ragsift: error: ")
    assert lines[0].startswith("ragsift") and message.startswith(starts) and ends in message, lines[0]
    assert sorted(p.name for p in hostile.iterdir()) == before  # nothing made beside what was there


@pytest.mark.parametrize("argv,message", [
    ([b"--kb", b"\xff", b"stats"], "ragsift: error: --kb b'\\xff' is not valid UTF-8"),
    ([b"--kb", b"{root}/kb", b"delete", "文档".encode("gbk")], "ragsift: error: document id b'\\xce\\xc4\\xb5\\xb5' is not "
                                                              "valid UTF-8"),
    ([b"--kb", b"/dev/null", b"ingest", b"{root}/docs"], "ragsift: error: --kb '/dev/null' is a device, not a "
                                                         "knowledge-base directory"),
], ids=["kb", "document-id", "dev-null"])
def test_bytes_that_are_not_utf8_on_a_real_command_line(hostile, argv, message):
    """The command line as a shell gives it: bytes (``$'\\xff'``) that are not UTF-8."""
    root = os.fsencode(hostile)
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", *(a.replace(b"{root}", root) for a in argv)],
                       capture_output=True, timeout=600)
    err = p.stderr.decode("utf-8")
    assert p.returncode == 2 and err.strip() == message or err.startswith(message), err
    assert err.count("\n") == 1 and "Traceback" not in err


# ---------------------------------------------------------------- the progress line
def test_a_progress_line_says_what_is_done_its_rate_and_the_time_left(monkeypatch):
    import io

    from ragsift import console

    now = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    bar = console.PlainProgress(every=3600, file=out)
    bar(13, "reading").update(5)
    now[0] += 10
    assert bar.line() == "ingest 0:10 reading: 5/13 files, 0.5 files/s, about 0:16 left"
    bar.update(8)
    bar(120, "embedding")
    now[0] += 60
    bar.update(40)
    assert bar.line() == "ingest 1:10 read 13 files; embedding: 40/120 entries, 0.667 entries/s, about 2:00 left"
    bar(None, "writing")
    assert bar.line() == "ingest 1:10 read 13 files; embedded 40 entries; writing: 0 commits"
    bar.done()
    assert out.getvalue() == ""  # the timer's interval never passed
