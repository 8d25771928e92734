"""Two installs of kenomem side by side: the same commands on copies of the same vault,
alternating A and B call by call, so that the machine's noise falls on both alike.

    python bench/ab.py --a .venv/bin/kenomem --b /path/to/old/.venv/bin/kenomem

For a change that must not slow the commands down (compare the old commit's install, e.g.
a `git worktree` with its own venv). Prints one markdown table of medians and the B/A
ratio of each command; the raw timings go to `--out` as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import cached_vault, log, remember_text, working_copy

QUERIES = ("kubernetes deadline marco", "invoice budget", "passport flight hotel")


def call(kenomem: str, vault: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [kenomem, *args, "--vault", str(vault)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"KENOMEM_NO_SERVE": "1", "PATH": "/usr/bin:/bin"},
    )
    return time.perf_counter() - started


def commands(n: int, runs: int) -> list[tuple[str, list[tuple[str, ...]]]]:
    """(label, the calls of each round): a round runs every call once on A and on B."""
    return [
        ("recall --json --no-touch", [("recall", q, "--json", "--no-touch") for q in QUERIES]),
        ("recall --json", [("recall", q, "--json") for q in QUERIES]),
        ("remember (new memory)", [("remember", remember_text(n, 1000 + i)) for i in range(runs)]),
        ("list --json", [("list", "--json")]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="the kenomem command of install A")
    parser.add_argument("--b", required=True, help="the kenomem command of install B")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=9, help="rounds per command")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/kenomem-bench"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    source = cached_vault(args.size, args.cache_dir, fresh=False)
    vaults = {
        side: working_copy(source, args.cache_dir / f"ab-{side}-{args.size}") for side in "ab"
    }
    installs = {"a": args.a, "b": args.b}
    for side in "ab":
        log(f"  indexing the copy of {side} ...")
        call(installs[side], vaults[side], "reindex")
        call(installs[side], vaults[side], "recall", "warm", "--no-touch")
    timings: dict[str, dict[str, list[float]]] = {}
    for label, calls in commands(args.size, args.runs):
        got = timings.setdefault(label, {"a": [], "b": []})
        rounds = args.runs if label != "remember (new memory)" else 1
        for _ in range(rounds):
            for one in calls:
                for side in "ab":
                    got[side].append(call(installs[side], vaults[side], *one))
        log(f"  {label}: done")
    rows = ["| command | A median | B median | B/A |", "| --- | ---: | ---: | ---: |"]
    for label, got in timings.items():
        a, b = statistics.median(got["a"]), statistics.median(got["b"])
        rows.append(f"| {label} | {a * 1000:.1f} ms | {b * 1000:.1f} ms | {b / a:.3f} |")
    print(f"A = {args.a}\nB = {args.b}\n{args.size:,} memories, {args.runs} rounds\n")
    print("\n".join(rows))
    if args.out is not None:
        args.out.write_text(json.dumps({"a": args.a, "b": args.b, "timings": timings}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
