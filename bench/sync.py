"""`kenomem sync` at 1,000 changed memories: one clone pushes, the other pulls and merges.

    python bench/sync.py                 # 1,000 memories, 3 runs
    python bench/sync.py --memories 200 --runs 2

A generated vault (`gen_vault.py`) is pushed to a bare remote and cloned; each run then
touches every memory on both clones (a recall's `last_accessed` and `access_count`, so
every file differs on both sides and git runs kenomem's merge driver on each), and
times `kenomem sync` on the first clone (commit and push) and on the second (commit,
fetch, merge through the driver, push). Prints the medians as a markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from gen_vault import generate  # noqa: E402

from kenomem.files import fm, fmedit  # noqa: E402


def kenomem_command() -> list[str]:
    found = shutil.which("kenomem", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "kenomem"]


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
    )  # fmt: skip
    env.pop("KENOMEM_VAULT", None)
    return env


def run(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return seconds


def touch_all(root: Path, when: datetime, times: int) -> int:
    """What a recall's touch writes, on every memory file; how many files."""
    n = 0
    for path in sorted(root.glob("*/**/*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", ".kenomem/", "buffer/")):
            continue
        text = path.read_text(encoding="utf-8")
        meta = fm.parse(fm.split(text).fm_text)
        count = int(str(meta.get("access_count") or 0)) + times
        path.write_text(
            fmedit.set_keys(text, {"last_accessed": when, "access_count": count}),
            encoding="utf-8",
        )
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    k = kenomem_command()
    with tempfile.TemporaryDirectory(
        prefix="kenomem-sync-bench-", ignore_cleanup_errors=True
    ) as tmp:
        top = Path(tmp)
        env = environment(top)
        remote, a, b = top / "remote.git", top / "a", top / "b"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        generate(args.memories, a)
        run([*k, "init", str(a), "--git"], top, env)
        for step in (["checkout", "-q", "-b", "main"], ["remote", "add", "origin", str(remote)]):
            run(["git", *step], a, env)
        run([*k, "sync", "--vault", str(a)], top, env)
        run(["git", "clone", "-q", str(remote), str(b)], top, env)
        run([*k, "sync", "--setup", "--vault", str(b)], top, env)
        push, merge = [], []
        when = datetime(2030, 1, 1, tzinfo=UTC)
        for i in range(args.runs):
            files = touch_all(a, when + timedelta(hours=i), 1)
            touch_all(b, when + timedelta(hours=i, minutes=30), 2)
            push.append(run([*k, "sync", "--vault", str(a)], top, env))
            merge.append(run([*k, "sync", "--vault", str(b)], top, env))
            run([*k, "sync", "--vault", str(a)], top, env)  # a takes b's merge
            print(f"run {i + 1}: push {push[-1]:.2f}s, merge {merge[-1]:.2f}s", file=sys.stderr)
        print(f"| {files} memories changed on both clones | median of {args.runs} runs |")
        print("| --- | --- |")
        print(f"| `kenomem sync` on the first (commit, push) | {statistics.median(push):.2f} s |")
        print(
            "| `kenomem sync` on the second (commit, fetch, merge through the driver, push) "
            f"| {statistics.median(merge):.2f} s |"
        )
        print(f"| per merged file | {statistics.median(merge) / files * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
