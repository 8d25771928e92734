"""What `kenomem hook claude-code EVENT` adds to an agent's every step, at scale: each
event's hook run as Claude Code runs it (a process, the JSON on stdin), with a watcher
serving it and without one.

    python bench/hooks.py                              # 10,000 memories, whoosh
    python bench/hooks.py --sizes 10000 --engines whoosh,tantivy --runs 15

For each size and engine: a working copy indexed with that engine (bench/served.py's,
kept in `--cache-dir`), a home with a Claude Code transcript of a project, then round
after round, each event in turn: `SessionStart` (the project's block), `UserPromptSubmit`
(each of bench/run.py's queries as the prompt), `Stop` with two new turns written to
the transcript since the last call (read, logged, tags looked for) and `Stop` with none.
First with no watcher (each call scans the vault's files, as an agent's hook does on a
machine without one), then with `kenomem watch` running (each call handed to its command
server). Markdown to stdout (median and quartiles per event, against the targets:
median under 100 ms with a watcher, under 300 ms without), progress to stderr, raw
figures to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import QUERIES, Runner, cached_vault, iqr, log, ms, stats, table  # noqa: E402
from served import indexed_copy  # noqa: E402
from watch import Watcher  # noqa: E402

TARGETS = {"watcher": 0.100, "alone": 0.300}  # issue 28: median seconds per hook
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop (2 new turns)", "Stop (nothing new)")
SESSION = "9e1f0c2a-4b7d-4e55-8a13-6c2b0d9f7e41"


class Project:
    """A Claude Code session on a project: its home, folder and growing transcript."""

    def __init__(self, root: Path) -> None:
        if root.exists():
            shutil.rmtree(root)
        self.home = root / "home"
        self.cwd = root / "src" / "harbor"
        (self.cwd / ".git").mkdir(parents=True)
        (self.cwd / ".git" / "config").write_text(
            '[remote "origin"]\n\turl = git@example.org:bench/harbor.git\n'
        )
        folder = self.home / ".claude" / "projects" / "-src-harbor"
        folder.mkdir(parents=True)
        self.transcript = folder / f"{SESSION}.jsonl"
        self.transcript.write_text("")
        self.turns = 0
        self.at = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

    def payload(self, event: str, prompt: str = "") -> bytes:
        doc = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.cwd),
            "hook_event_name": event,
        }
        if prompt:
            doc["prompt"] = prompt
        if event == "SessionStart":
            doc["source"] = "startup"
        return json.dumps(doc).encode()

    def say(self) -> None:
        """Two more turns in the transcript: the person's, the agent's."""
        lines = []
        for speaker in ("user", "assistant"):
            self.turns += 1
            self.at += timedelta(seconds=7)
            text = f"Turn {self.turns}: the harbor deploy retries its health check {self.turns}x."
            content: Any = text if speaker == "user" else [{"type": "text", "text": text}]
            lines.append(
                json.dumps(
                    {
                        "parentUuid": None,
                        "isSidechain": False,
                        "userType": "external",
                        "cwd": str(self.cwd),
                        "sessionId": SESSION,
                        "type": speaker,
                        "message": {"role": speaker, "content": content},
                        "uuid": f"00000000-0000-4000-8000-{self.turns:012d}",
                        "timestamp": self.at.isoformat().replace("+00:00", "Z"),
                    }
                )
            )
        with open(self.transcript, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def hook(runner: Runner, project: Project, vault: Path, payload: bytes, served: bool) -> float:
    env = {
        **runner.env,
        "HOME": str(project.home),
        "KENOMEM_VAULT": str(vault),
        "CLAUDE_PROJECT_DIR": str(project.cwd),
    }
    env.pop("KENOMEM_NO_SERVE", None)
    if not served:
        env["KENOMEM_NO_SERVE"] = "1"
    started = time.perf_counter()
    done = subprocess.run(
        [runner.kenomem, "hook", "claude-code"],
        input=payload,
        capture_output=True,
        env=env,
        cwd=project.cwd,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"hook: {done.returncode} {done.stderr.decode()[-500:]}")
    return seconds


def rounds(
    runner: Runner, project: Project, vault: Path, served: bool, args: argparse.Namespace
) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {event: [] for event in EVENTS}
    for r in range(args.warmup + args.runs):
        row = {
            "SessionStart": [hook(runner, project, vault, project.payload("SessionStart"), served)]
        }
        row["UserPromptSubmit"] = [
            hook(runner, project, vault, project.payload("UserPromptSubmit", q), served)
            for q in QUERIES
        ]
        project.say()
        row["Stop (2 new turns)"] = [hook(runner, project, vault, project.payload("Stop"), served)]
        row["Stop (nothing new)"] = [hook(runner, project, vault, project.payload("Stop"), served)]
        if r >= args.warmup:
            for event, values in row.items():
                found[event] += values
        log(f"  {'watcher' if served else 'alone'}: round {r + 1 - args.warmup}/{args.runs}")
    return found


def measure(runner: Runner, vault: Path, args: argparse.Namespace) -> dict[str, Any]:
    project = Project(args.cache_dir / "hooks-project")
    alone = rounds(runner, project, vault, False, args)
    watcher = Watcher(runner, vault)
    try:
        watcher.wait_started(600)
        watcher.wait_idle(600)
        served = rounds(runner, project, vault, True, args)
    finally:
        watcher.stop()
    return {"alone": alone, "watcher": served, "turns_logged": project.turns}


def render(n: int, engine: str, result: dict[str, Any]) -> str:
    rows = []
    for event in EVENTS:
        cells = [event]
        for way in ("watcher", "alone"):
            s = stats(result[way][event])
            mark = "ok" if s["median"] <= TARGETS[way] else "over"
            cells.append(f"{ms(s['median'])} ({iqr(s)}) {mark}")
        rows.append(cells)
    head = [
        "event",
        f"with a watcher (target {ms(TARGETS['watcher'])})",
        f"without (target {ms(TARGETS['alone'])})",
    ]
    return f"### {n:,} memories, {engine}\n\n" + table(head, rows, "lrr")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--sizes", default="10000", help="vault sizes, comma-separated")
    p.add_argument("--engines", default="whoosh", help="engines, comma-separated")
    p.add_argument("--runs", type=int, default=9, help="measured rounds")
    p.add_argument("--warmup", type=int, default=1, help="rounds not kept")
    p.add_argument("--cache-dir", type=Path, default=Path("/tmp/kenomem-bench"))
    p.add_argument("--python", default=str(here / "python"))
    p.add_argument("--kenomem", default=str(here / "kenomem"))
    stamp = datetime.now().strftime("%Y-%m-%d")
    p.add_argument("--out", type=Path, default=BENCH / "results" / f"{stamp}-hooks.json")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runner = Runner(args.python, args.kenomem, None)
    report: dict[str, Any] = {"load_average_start": os.getloadavg(), "sizes": {}}
    out = []
    for n in (int(x) for x in args.sizes.split(",")):
        log(f"\n== {n:,} memories ==")
        base = cached_vault(n, args.cache_dir, False)
        for engine in args.engines.split(","):
            work = indexed_copy(runner, base, args.cache_dir / f"hooks-{engine}-{n}", engine, n)
            result = measure(runner, work, args)
            report["sizes"].setdefault(str(n), {})[engine] = result
            out.append(render(n, engine, result))
    report["load_average_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print("\n\n".join(out))
    log(f"\nraw figures: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
