"""The ragsift command, run as users run it: a real subprocess."""
import json
import os
import subprocess
import sys

import pytest
from conftest import write_files


def ragsift(*args, cwd=None, check=True):
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", *args], capture_output=True, text=True,
                       timeout=600, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"ragsift {args} failed ({p.returncode}): {p.stderr}")
    return p


@pytest.fixture(scope="module")
def cli_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    docs = write_files(root / "docs", {
        "guide.md": "---\nteam: infra\n---\n# Guide\n\n## Backups\n\nNightly backups run at 02:00 UTC and are kept for 30 days.\n\n"
                    "## 监控\n\n告警阈值设置为百分之九十，超过后会发送短信通知值班人员。\n",
        "bad.md": b"\x00\x01\x02binary",
    })
    return root / "kb", docs


def test_ingest_query_stats_list_delete(cli_kb):
    kb, docs = cli_kb
    out = ragsift("--kb", str(kb), "ingest", str(docs), "--json", "--no-progress").stdout
    report = json.loads(out)
    assert len(report["added"]) == 1 and report["generation"] == 1
    assert report["skipped"] == [{"path": "bad.md", "reason": "binary content (NUL bytes) in a text file"}]

    res = json.loads(ragsift("--kb", str(kb), "query", "告警阈值是多少？", "--json", "--trace").stdout)
    top = res["passages"][0]
    assert top["heading_path"] == ["Guide", "监控"] and "百分之九十" in top["text"]
    assert {c["name"] for c in res["trace"]["channels"]} == {"dense", "bm25"}
    fusion = res["trace"]["fusion"]  # the default: adaptive min-max from dense 0.5 and BM25 0.5
    assert (fusion["mode"], fusion["weights"], fusion["normalization"]) == ("adaptive", {"dense": 0.5, "bm25": 0.5},
                                                                             "minmax")
    assert set(fusion["adapted_weights"]) == {"dense", "bm25"}

    text = ragsift("--kb", str(kb), "query", "How long are backups kept?", "--trace").stdout
    assert "[1] guide.md › Guide > Backups" in text and "channel bm25" in text

    res = json.loads(ragsift("--kb", str(kb), "query", "backups", "--json", "--trace", "--fusion", "weighted",
                             "--weights", "dense=0.2,bm25=0.8", "--filter", '{"team": "infra"}').stdout)
    assert res["trace"]["fusion"]["weights"] == {"dense": 0.2, "bm25": 0.8}
    assert res["passages"]
    routed = json.loads(ragsift("--kb", str(kb), "query", "How long are backups kept?", "--json", "--trace",
                                "--strategy", "auto").stdout)
    assert routed["trace"]["strategy"]["chosen"] == "hybrid" and routed["passages"][0]["source"] == "guide.md"

    lean = json.loads(ragsift("--kb", str(kb), "query", "How long are backups kept?", "--format", "json").stdout)
    assert "trace" not in lean and lean["trace_id"] and lean["passages"][0]["source"] == "guide.md"
    context = ragsift("--kb", str(kb), "query", "告警阈值是多少？", "--format", "context").stdout
    assert context.startswith("[1] guide.md › Guide > 监控\n") and "百分之九十" in context
    short = ragsift("--kb", str(kb), "query", "告警阈值是多少？", "--format", "context", "--context-tokens", "12").stdout
    assert short.startswith("[1] guide.md") and short.rstrip().endswith("…") and len(short) < len(context)

    stats = json.loads(ragsift("--kb", str(kb), "stats", "--json").stdout)
    assert stats["documents"] == 1 and stats["fields"]["team"] == "string"

    listing = ragsift("--kb", str(kb), "list").stdout
    doc_id = listing.split("\t")[0]
    assert "guide.md" in listing
    assert "deleted 1 document" in ragsift("--kb", str(kb), "delete", doc_id).stdout
    assert json.loads(ragsift("--kb", str(kb), "stats", "--json").stdout)["documents"] == 0


@pytest.mark.parametrize("args,message", [
    (["query", "x", "--filter", "{bad json"], "--filter is not valid JSON"),
    (["query", "x", "--filter", '{"colour": "red"}'], "unknown filter field 'colour'"),
    (["query", "   "], "the query is empty"),
    (["query", "x", "--weights", "dense"], "--weights takes name=number pairs"),
    (["delete", "no-such-doc"], "unknown document id"),
])
def test_user_errors_are_one_line(cli_kb, args, message):
    kb, docs = cli_kb
    ragsift("--kb", str(kb), "ingest", str(docs), "--no-progress")
    p = ragsift("--kb", str(kb), *args, check=False)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and message in p.stderr and "Traceback" not in p.stderr


def test_a_missing_path_or_nothing_ingested_exits_non_zero(tmp_path):
    kb = tmp_path / "kb"
    p = ragsift("--kb", str(kb), "ingest", str(tmp_path / "nope.md"), check=False)
    assert p.returncode == 2 and "no such file or directory" in p.stderr and "nope.md" in p.stderr
    assert not kb.exists()  # found before anything was created
    docs = write_files(tmp_path / "docs", {"坏.md": b"\x00\x01binary", "bad.md": b"\x00\x02binary"})
    p = ragsift("--kb", str(kb), "ingest", str(docs), "--no-progress", check=False)
    assert p.returncode == 1 and "every input was skipped" in p.stderr and "坏.md" in p.stdout
    p = ragsift("--kb", str(kb), "query", "x", "--filter", "{bad", check=False)  # told before the models load
    assert p.returncode == 2 and "--filter is not valid JSON" in p.stderr


def test_missing_knowledge_base(tmp_path):
    p = ragsift("--kb", str(tmp_path / "none"), "query", "hello", check=False)
    assert p.returncode == 2 and "no knowledge base" in p.stderr


def test_query_with_hyde_rewrite_and_judge_from_the_command_line(cli_kb, tmp_path):
    from fault_llm_server import FaultInjectingLLMServer

    kb, docs = cli_kb
    ragsift("--kb", str(kb), "ingest", str(docs), "--no-progress")
    with FaultInjectingLLMServer("ok", answer="Backups run nightly at 02:00 UTC and are kept 30 days.",
                                 yes_if="02:00") as srv:
        env_args = ("--llm", "openai:stub", "--llm-base-url", srv.url)
        out = ragsift("--kb", str(kb), "query", "When do backups run?", "--hyde", "--rewrite",
                      "--rerank", "llm-judge", *env_args).stdout
        assert "HyDE hypothesis 1 (hypothesis): Backups run nightly" in out
        assert "rewrite: 'Backups run nightly" in out and "rerank llm-judge:openai:stub" in out
        res = json.loads(ragsift("--kb", str(kb), "query", "备份什么时候运行？", "--hyde", "--json", "--trace",
                                 "--hyde-mode", "mean", "--hyde-samples", "2", *env_args).stdout)
        assert [c["name"] for c in res["trace"]["channels"]] == ["dense", "bm25", "hyde", "hyde_bm25"]
        assert res["trace"]["transforms"]["hyde"]["mode"] == "mean"
        assert len(res["trace"]["transforms"]["hyde"]["hypotheses"]) == 2
    p = ragsift("--kb", str(kb), "query", "When do backups run?", "--hyde", check=False)
    assert p.returncode == 2 and "needs a language model" in p.stderr


def test_small_index_and_units_from_the_command_line(tmp_path):
    docs = write_files(tmp_path / "docs", {"guide.md": "# Guide\n\n## Backups\n\nBackups run nightly. They start at "
                                                      "two in the morning. Each is kept for a month. Restores take an hour.\n"})
    kb = str(tmp_path / "kb")
    ragsift("--kb", kb, "ingest", str(docs), "--small-index", "chunks,sentences,entities", "--embedder", "minilm",
            "--no-progress")
    res = json.loads(ragsift("--kb", kb, "query", "When do the backups start in the morning?", "--json", "--unit", "window",
                             "--index-kinds", "sentence", "--window", "0").stdout)
    assert res["passages"][0]["unit"] == "window" and res["passages"][0]["text"].strip() == "They start at two in the morning."
    again = ragsift("--kb", kb, "ingest", str(docs), "--small-index", "chunks,sentences,entities", "--no-progress")
    assert "1 unchanged" in again.stdout
    bad = ragsift("--kb", kb, "query", "x", "--unit", "auto", "--index-kinds", "sentence", check=False)
    assert bad.returncode == 2 and "auto-merging" in bad.stderr


def test_version_and_logging(cli_kb):
    from server_process import free_port

    kb, docs = cli_kb
    from ragsift import __version__
    assert ragsift("--version").stdout.strip() == f"ragsift {__version__}"
    ragsift("--kb", str(kb), "ingest", str(docs), "--no-progress")
    quiet = ragsift("--kb", str(kb), "query", "告警阈值是多少？")
    assert quiet.stderr == ""
    loud = ragsift("-v", "--kb", str(kb), "query", "告警阈值是多少？")
    assert "ragsift: INFO: query " in loud.stderr and "passages in" in loud.stderr
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    failed = ragsift("--kb", str(kb), "query", "When do backups run?", "--hyde", "--llm", "openai:none",
                     "--llm-base-url", dead, "--timeout", "5")
    assert failed.returncode == 0 and "[1] guide.md" in failed.stdout  # the other channels answer
    assert "ragsift: WARNING: channel hyde failed" in failed.stderr and "Traceback" not in failed.stderr


def test_jsonl_documents_on_standard_input(tmp_path):
    kb = str(tmp_path / "kb")
    rows = [{"id": "faq-zh", "title": "退货", "text": "商品签收后七天内可以无理由退货，运费由买家承担。", "metadata": {"lang": "zh"}},
            {"id": "faq-en", "title": "Returns", "text": "Items can be returned within seven days of delivery.",
             "metadata": {"lang": "en"}}]
    stdin = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n{not json\n"
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", kb, "ingest", "-", "--json", "--no-progress",
                        "--embedder", "e5-small"], input=stdin, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert sorted(report["added"]) == ["faq-en", "faq-zh"]
    assert report["skipped"] == [{"path": "stdin:3", "reason": "malformed JSON: Expecting property name enclosed "
                                                               "in double quotes at column 2"}]
    res = json.loads(ragsift("--kb", kb, "query", "多少天内可以退货？", "--json", "--filter", '{"lang": "zh"}').stdout)
    assert res["passages"][0]["doc_id"] == "faq-zh" and res["passages"][0]["source"] == "stdin"
    changed = json.dumps({**rows[1], "text": "Items can be returned within thirty days of delivery."})
    p = subprocess.run([sys.executable, "-m", "ragsift.cli", "--kb", kb, "ingest", "-", "--json", "--no-progress"],
                       input=changed + "\n", capture_output=True, text=True, timeout=600)
    assert json.loads(p.stdout)["updated"] == ["faq-en"]
    assert "thirty" in json.loads(ragsift("--kb", kb, "query", "How long to return items?", "--json").stdout)[
        "passages"][0]["text"]
    assert "deleted 1 document(s): stdin (faq-en)" in ragsift("--kb", kb, "delete", "faq-en").stdout
    left = json.loads(ragsift("--kb", kb, "query", "How long to return items?", "--json").stdout)["passages"]
    assert [p["doc_id"] for p in left] == ["faq-zh"]
    bad = ragsift("--kb", kb, "ingest", "-", str(tmp_path), check=False)
    assert bad.returncode == 2 and "cannot be mixed" in bad.stderr


# ---------------------------------------------------------------- starting fast (issue 29)
def imported(*args: str) -> set[str]:
    """The modules a ``ragsift`` command imports (``python -X importtime``)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "ragsift.cli", *args], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}


def test_version_and_help_load_nothing_of_the_engine():
    from ragsift import __version__

    for args in (["--version"], ["--help"]):
        mods = imported(*args)
        assert "ragsift" in mods
        heavy = {"numpy", "pydantic", "lancedb", "pyarrow", "jieba", "ragsift.config", "ragsift.kb"} & mods
        assert not heavy, f"ragsift {args[0]} imported {heavy}"
    p = ragsift("--version")
    assert p.stdout.strip() == f"ragsift {__version__}"
    # a command's flags still come from the settings once the command is chosen
    assert "--unit {parent,child,document,window,auto,...}" in ragsift("query", "--help").stdout


def test_stats_and_list_load_no_model_and_no_search_index(cli_kb):
    kb, docs = cli_kb
    ragsift("--kb", str(kb), "ingest", str(docs), "--no-progress")
    for cmd in ("stats", "list"):
        mods = imported("--kb", str(kb), cmd)
        # a committed generation is read through LanceDB's native core: no ``lancedb`` package
        loaded = {"jieba", "onnxruntime", "tokenizers", "usearch", "scipy", "lancedb"} & mods
        assert not loaded, f"ragsift {cmd} imported {loaded}"
    # stats reads the counts the manifest records at each commit: not even the store is imported
    assert not {"lancedb", "pyarrow"} & imported("--kb", str(kb), "stats")


def test_a_query_in_english_does_not_load_the_chinese_segmenter(tmp_path):
    docs = write_files(tmp_path / "docs", {"guide.md": "# Guide\n\n## Backups\n\nBackups are kept for 30 days.\n"})
    kb = str(tmp_path / "kb")
    ragsift("--kb", kb, "ingest", str(docs), "--no-progress", "--embedder", "minilm")
    english = imported("--kb", kb, "query", "How long are backups kept?")
    assert "jieba" not in english and "lancedb" not in english  # the store read without the package
    chinese = imported("--kb", kb, "query", "备份保留多久？")
    assert "jieba" in chinese
    # the router's entity signal (jieba's part-of-speech tagger) only with a trace shown; jieba
    # imported without pkg_resources (its scan of every installed distribution)
    assert "jieba.posseg" not in chinese and not any(m.startswith(("pkg_resources.", "jaraco")) for m in chinese)
    assert "jieba.posseg" in imported("--kb", kb, "query", "备份保留多久？", "--trace")


def test_bad_arguments_are_told_before_anything_loads(tmp_path):
    kb = tmp_path / "kb"
    for args, message in ((["ingest", "-", str(tmp_path)], "cannot be mixed"),
                          (["ingest", str(tmp_path), str(tmp_path), "--sync"], "exactly one path"),
                          (["ingest", str(tmp_path), "--dry-run"], "--dry-run goes with --sync"),
                          (["query", "x", "--weights", "dense"], "--weights takes name=number pairs"),
                          (["query", "x", "--whole-weights", "bm25"], "--whole-weights takes name=number pairs"),
                          (["query", "x", "--filter", "{bad"], "--filter is not valid JSON")):
        p = ragsift("--kb", str(kb), *args, check=False)
        assert p.returncode == 2 and message in p.stderr and p.stderr.count("\n") == 1
        assert not kb.exists()  # nothing created, no model loaded to find it out


def test_the_segmenter_dictionary_is_cached_and_reused(tmp_path):
    import jieba

    from ragsift.text.segmenter import LazyFreq, open_dictionary

    text = "星云智能音箱恢复出厂设置：同时按住音量加和静音键五秒。机器学习里的监督学习需要标注数据，骁龙芯片。"
    reference = jieba.Tokenizer()
    assert open_dictionary(reference, jieba.__version__, tmp_path / "cache") == "built"
    files = sorted(f.suffix for f in (tmp_path / "cache").iterdir())
    assert files == [".marshal", ".sqlite"]  # written whole: no temporary file left behind
    again = jieba.Tokenizer()
    assert open_dictionary(again, jieba.__version__, tmp_path / "cache") == "cache"
    assert isinstance(again.FREQ, LazyFreq)
    assert list(again.cut_for_search(text)) == list(reference.cut_for_search(text))  # word for word
    assert list(again.cut(text, HMM=False)) == list(reference.cut(text, HMM=False))
    assert again.FREQ.lookups < 500  # a sentence reads a few words of the dictionary, not all of it


def test_the_segmenter_works_without_a_usable_cache(tmp_path):
    import jieba

    from ragsift.text.segmenter import cache_stem, dictionary_file, open_dictionary

    text = "监督学习需要标注数据"
    expected = list(jieba.Tokenizer().cut_for_search(text))
    (tmp_path / "a-file").write_text("not a folder")
    t = jieba.Tokenizer()
    assert open_dictionary(t, jieba.__version__, tmp_path / "a-file" / "cache") == "memory"  # cannot be made
    assert list(t.cut_for_search(text)) == expected
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    stem = cache_stem(dictionary_file(t), jieba.__version__)
    (damaged / f"{stem}.sqlite").write_bytes(b"not a database")
    t = jieba.Tokenizer()
    assert open_dictionary(t, jieba.__version__, damaged) == "built"  # rebuilt over the damaged file
    assert list(t.cut_for_search(text)) == expected
    assert open_dictionary(jieba.Tokenizer(), jieba.__version__, damaged) == "cache"


def test_processes_building_the_segmenter_cache_at_once(tmp_path):
    probe = ("import jieba, sys; from ragsift.text.segmenter import open_dictionary; t = jieba.Tokenizer(); "
             "how = open_dictionary(t, jieba.__version__); print(how, '/'.join(t.cut_for_search('监督学习')))")
    env = {**os.environ, "RAGSIFT_CACHE_DIR": str(tmp_path / "cache")}
    procs = [subprocess.Popen([sys.executable, "-c", probe], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    import jieba

    words = "/".join(jieba.Tokenizer().cut_for_search("监督学习"))  # jieba's own dictionary, in memory
    assert {o[1] for o in outs} == {words} and {o[0] for o in outs} <= {"built", "cache"}
    after = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=600)
    assert after.stdout.split() == ["cache", words]
    assert not [f for f in (tmp_path / "cache").iterdir() if f.suffix == ".tmp"]


def test_one_progress_line_for_every_phase_of_an_ingest(tmp_path):
    from ragsift import KnowledgeBase
    from ragsift.console import PhaseProgress

    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\n告警阈值设置为百分之九十。\n",
                                           "b.md": "# B\n\nBackups are kept for 30 days.\n"})
    seen: list[tuple[str, int | None]] = []
    counted: dict[str, int] = {}

    class Recorder(PhaseProgress):
        def __call__(self, total, desc):
            seen.append((desc, total))
            self.phase = desc
            return self

        def update(self, n):
            counted[self.phase] = counted.get(self.phase, 0) + n

    kb = KnowledgeBase.open(tmp_path / "kb", embedder="minilm")
    report = kb.ingest(docs, progress=Recorder())
    assert [d for d, _ in seen] == ["reading", "splitting", "embedding", "writing"]
    assert dict(seen)["reading"] == 2 and counted["reading"] == 2 and counted["splitting"] == 2
    assert counted["embedding"] == dict(seen)["embedding"] == report.children
    # the command line: the one line on stderr goes through the phases (forced on: stderr is a pipe here)
    p = ragsift("--kb", str(tmp_path / "kb2"), "ingest", str(docs), "--embedder", "minilm", "--progress")
    phases = [part.split(":")[0].strip() for part in p.stderr.replace("\r", "\n").splitlines() if ":" in part]
    assert list(dict.fromkeys(phases)) == ["reading", "splitting", "embedding", "writing"]
    quiet = ragsift("--kb", str(tmp_path / "kb3"), "ingest", str(docs), "--embedder", "minilm")
    assert quiet.stderr == ""  # not a terminal: no progress


def test_serve_on_a_busy_port_fails_at_once_before_anything_loads(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        kb = tmp_path / "知识库 kb"
        p = ragsift("--kb", str(kb), "serve", "--port", str(port), check=False)
    assert p.returncode == 2
    assert p.stderr == (f"ragsift: error: port {port} on 127.0.0.1 is busy (another program is listening on it): "
                        "stop it, or serve on another port with --port\n")
    assert not kb.exists()  # told before the knowledge base was opened (or made) and its models loaded


def test_an_ingest_off_a_terminal_prints_a_progress_line_every_few_seconds(tmp_path):
    """stderr a pipe (CI, a service): one line every --progress-every seconds with the phase, its
    count of its total, rate and time left; files named in Chinese and English."""
    import re

    docs = write_files(tmp_path / "docs", {
        **{f"手册{i}.md": f"# 手册 {i}\n\n## 安装\n\n第{i}步：打开包装，连接电源，等待指示灯变绿。\n" for i in range(12)},
        **{f"guide {i}.md": f"# Guide {i}\n\n## Setup\n\nStep {i}: unpack the hub, plug it in, wait for the green light.\n"
           for i in range(12)}})
    # a line every 0.05 s: on a fast machine these phases take a fraction of a second (at 0.25 s a
    # run once printed none)
    p = ragsift("--kb", str(tmp_path / "kb"), "ingest", str(docs), "--embedder", "minilm", "--progress-every", "0.05")
    lines = p.stderr.splitlines()
    shape = re.compile(r"ingest \d+:\d\d (?:(?:read|split|embedded) \d+ \w+; )*(reading|splitting|embedding|writing): "
                       r"\d+(/\d+)? \w+(, [\d.e+]+ \w+/s(, about \d+:\d\d left)?)?$")
    progress = [ln for ln in lines if ln.startswith("ingest ")]
    assert progress and all(shape.match(ln) for ln in progress), lines
    assert "\r" not in p.stderr and "\x1b" not in p.stderr  # lines for a log: no bar redrawn in place
    assert any("embedding: " in ln and "/" in ln.split("embedding: ")[1] for ln in progress), progress
    assert "24 added" in p.stdout
    # quiet when asked
    assert ragsift("--kb", str(tmp_path / "kb2"), "ingest", str(docs), "--embedder", "minilm", "--no-progress",
                   "--progress-every", "0.25").stderr == ""
