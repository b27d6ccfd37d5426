"""``benchmarks/kill_ingest.py``'s results (``kill_ingest.json``) on docs/benchmarks.md: *Long ingests that
survive a kill -9* (``render``)."""
from __future__ import annotations

from .common import load, ran


def render() -> list[str]:
    r = load("kill_ingest.json")
    lines = ["## Long ingests that survive a kill -9", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/kill_ingest.py`._", ""]
    sizes = " and ".join(f"the first {n} of {name}" for name, n in r["datasets"].items())
    lines += [f"- {ran(r)}",
              f"- {r['docs']} documents ({sizes}) as Markdown files, embedder `{r['embedder']}`, a checkpoint every "
              f"{r['every']} documents (`checkpoint_documents`): {r['checkpoints']} checkpoints. The same files ingested "
              f"in one commit (the default) took {r['baseline_s']:.0f} s.",
              "- The checkpointed ingest runs in a child process killed with SIGKILL, then runs again; a kill inside a "
              "commit is made by the child itself at that step (or on a timer started as the commit begins), a random "
              "one from outside. After each kill the knowledge base is opened and checked as "
              "`tests/e2e/kb/test_checkpoints.py` checks it: at the last checkpoint the child reported "
              "(or the one being "
              "committed, if its manifest had been replaced), `check()` and `check_integrity()` clean, every kept "
              "generation read whole, each document's recorded counts equal to its rows, whole checkpoints only, "
              "every document held equal to the uninterrupted ingest's.", "",
              "| kill | moment | generation after | documents held | checks |", "|---|---|---|---|---|"]
    for k in r["kills"]:
        checks = "all hold" if k["checks_ok"] else "**" + "; ".join(k["problems"])[:300] + "**"
        lines.append(f"| {k['run'] + 1} | {k['moment']} | {k['generation_after']} | {k['documents']} | {checks} |")
    res = r["resumed"]
    same = ("the same documents as the uninterrupted ingest (ids, content hashes, parent and child counts, sorted "
            "child texts)" if r["resumed_equal"] else
            f"**not** the same documents as the uninterrupted ingest ({', '.join(r['mismatched'][:5])}; "
            f"{'; '.join(res['problems'])[:300]})")
    lines += ["", f"{r['kills_inside_commit']} of the {len(r['kills'])} kills came inside a checkpoint's commit. The "
              f"last run resumed ({res['unchanged']} documents unchanged, {res['added']} added; generation "
              f"{res['generation']}, {res['seconds']:.0f} s) and ended with {same}. The whole benchmark took "
              f"{r['total_s'] / 60:.1f} minutes.", ""]
    return lines
