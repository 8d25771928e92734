"""A fixed end-to-end scenario, run through the installed `kenomem` as real processes,
recorded as text: each command, its exit code, stdout and stderr, then every file of the
vault. What changes from run to run (ids, times, dates, the vault's path, durations) is
replaced by stable marks, and the scenario's memories and buffer days are so many days
old whenever it runs, so two runs of the same code give the same transcript.

    python scripts/transcript.py > /tmp/before.txt     # on one commit
    python scripts/transcript.py > /tmp/after.txt      # on another
    diff /tmp/before.txt /tmp/after.txt                # behaviour changed where it differs

Scores depend on the hour too (recency decays by the second): compare runs made within
the same hour or two.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

# The scenario's days, so many days ago: the same ages on any day it runs.
DAYS = {"MADE1": 50, "MADE2": 49, "MADE3": 48, "MADE4": 47, "CHAT": 30, "LOG": 3, "TODAY": 0}


def memories(days: list[str]) -> list[dict[str, object]]:
    """Four memories made `days` ago (dates written YYYY-MM-DD), as `import` reads them."""
    made = [f"{day}T09:00:00Z" for day in days]
    return [
        {
            "id": f"mem_{days[0].replace('-', '')}_090000_a001",
            "type": "semantic",
            "title": "Deploy day",
            "body": "Deploys go out on Tuesdays after the 10:00 stand-up.",
            "tags": ["deploy", "team"],
            "importance": 7,
            "created": made[0],
        },
        {
            "id": f"mem_{days[1].replace('-', '')}_090000_a002",
            "type": "semantic",
            "title": "Database",
            "body": "The production database is Postgres 16 on db-1.",
            "tags": ["infra"],
            "created": made[1],
        },
        {
            "id": f"mem_{days[2].replace('-', '')}_090000_a003",
            "type": "procedural",
            "title": "Answer style",
            "body": "Prefers short answers without pleasantries.",
            "importance": 8,
            "created": made[2],
        },
        {
            "id": f"mem_{days[3].replace('-', '')}_090000_a004",
            "type": "episodic",
            "title": "Launch retro",
            "body": "The launch retro decided to freeze the schema a week before release.",
            "created": made[3],
        },
    ]


def turns(day: str) -> list[dict[str, str]]:
    return [
        {"session": "chat-7", "speaker": "Ana", "text": "We moved the review to Thursdays.",
         "timestamp": f"{day}T10:00:00Z", "id": "t1"},
        {"session": "chat-7", "speaker": "Bo", "text": "Noted, Thursday it is.",
         "timestamp": f"{day}T10:01:00Z", "id": "t2"},
    ]  # fmt: skip


REPLY = """Sure, noted.
<remember type="semantic" tags="pets">Has a golden retriever called Miso</remember>
<working-memory>Task: plan the trip. Next: book the train.</working-memory>
"""


def scenario(day: str, ids: list[str]) -> list[tuple[list[str], str | None]]:
    """(arguments, stdin) of each command, in order: `day` is a past day for the buffer,
    `ids` those of the imported memories."""
    at = f"{day}T14:30:00Z"
    return [
        (["init", "{vault}"], None),
        (["import", "{dir}/memories.json", "--json"], None),
        (["import", "{dir}/turns.jsonl", "--as", "buffer", "--json"], None),
        (["list"], None),
        (["list", "--json", "--type", "semantic"], None),
        (["show", ids[0]], None),
        (["show", ids[1][:12], "--json"], None),
        (["recall", "deploy", "--no-touch"], None),
        (["recall", "when do deploys go out", "--json", "--no-touch"], None),
        (["recall", "database", "--explain", "--no-touch"], None),
        (["recall", "answer style", "--json"], None),
        (["remember", "Likes green tea in the afternoon", "--tag", "food", "--json"], None),
        (["remember", "Likes green tea in the afternoon", "--json"], None),
        (["remember", "-", "--type", "semantic", "--title", "Editor"], "Uses vim, dark theme\n"),
        (["remember", "The token is ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"], None),
        (["remember", "a \x01 b"], None),
        (["remember", "Deploys go out on Wednesdays now", "--supersedes", ids[0],
          "--json"], None),
        (["log", "Talked about the trip to Lisbon", "--who", "Ana", "--session", "chat-9",
          "--at", at], None),
        (["log", "Decided to book the 9:00 train", "--who", "Ana", "--session", "chat-9",
          "--at", f"{day}T15:00:00Z", "--json"], None),
        (["extract", "--session", "chat-9", "--json"], REPLY),
        (["working", "show", "--session", "chat-9"], None),
        (["working", "set", "--session", "chat-9", "Task: pack. Next: passport."], None),
        (["context", "--session", "chat-9", "--budget", "400", "--no-touch"], None),
        (["context", "trip", "--session", "chat-9", "--json", "--no-touch"], None),
        (["patterns", "--json"], None),
        (["consolidate", "--dry-run", "--json"], None),
        (["consolidate"], None),
        (["consolidate", "--json"], None),
        (["forget", ids[1]], None),
        (["recall", "database", "--archive", "--json", "--no-touch"], None),
        (["restore", ids[1], "--json"], None),
        (["prune", "--dry-run", "--json"], None),
        (["stats", "--json"], None),
        (["doctor"], None),
        (["doctor", "--json"], None),
        (["show", "mem_nothing_here"], None),
        (["recall", "--limit", "zero", "x"], None),
        (["list", "--sort", "sideways"], None),
        (["reset", "--memory", "--yes", "--json"], None),
        (["list", "--json"], None),
        (["reset", "--undo", "--yes", "--json"], None),
        (["list"], None),
    ]  # fmt: skip


_ID = re.compile(r"\b(mem|note|wm|buf)_[0-9a-f_]{6,}\b")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
_SECONDS = re.compile(r'("seconds": |in |took )\d+(?:\.\d+)?(s|ms)?')
_LONG_FLOAT = re.compile(r"(\d+\.\d{3})\d+")
_STAMP = re.compile(r"\b\d{8}T\d{6}\b")  # a reset's trash folder
_BYTES = re.compile(r'("index_bytes": )\d+')
_MONTH = re.compile(r"(?<!\d)\d{4}-\d\d(?![\d-])")
_AGES = re.compile(r"\b(?:just now|\d+ (?:second|minute|hour|day)s? ago|today|yesterday)\b")


class Marks:
    """Stable stand-ins for what changes between runs: ids in order of first appearance,
    each day of the scenario by its role, every month and time alike."""

    def __init__(self, vault: Path, folder: Path, days: dict[str, str]) -> None:
        self.replace = [(str(vault), "<VAULT>"), (str(folder), "<DIR>")]
        self.days = days  # "YYYY-MM-DD" -> "<NAME>"
        self.ids: dict[str, str] = {}

    def id_mark(self, m: re.Match[str]) -> str:
        return self.ids.setdefault(m.group(0), f"<{m.group(1).upper()}{len(self.ids) + 1}>")

    def __call__(self, text: str) -> str:
        for old, new in self.replace:
            text = text.replace(old, new)
        text = _ID.sub(self.id_mark, text)
        text = _TIME.sub("<TIME>", text)
        text = _SECONDS.sub(r"\1<SECONDS>", text)
        text = _LONG_FLOAT.sub(r"\1", text)
        text = _STAMP.sub("<STAMP>", text)
        text = _BYTES.sub(r"\1<BYTES>", text)
        text = _AGES.sub("<AGE>", text)
        for day, name in self.days.items():
            text = text.replace(day, name)
            text = re.sub(rf"(?<![\d-]){day[5:]}(?![\d-])", f"{name[:-1]}-MM-DD>", text)
        return _MONTH.sub("<MONTH>", text)


def kenomem_command() -> list[str]:
    found = Path(sys.executable).parent / "kenomem"
    return [str(found)] if found.exists() else [sys.executable, "-m", "kenomem"]


def record() -> str:
    folder = Path(tempfile.mkdtemp(prefix="kenomem-transcript-"))
    vault = folder / "vault"
    now = datetime.now(UTC)
    ago = {name: (now - timedelta(days=n)).strftime("%Y-%m-%d") for name, n in DAYS.items()}
    marks = Marks(vault, folder, {day: f"<{name}>" for name, day in ago.items()})
    made = memories([ago["MADE1"], ago["MADE2"], ago["MADE3"], ago["MADE4"]])
    ids = [str(m["id"]) for m in made]
    (folder / "memories.json").write_text(json.dumps({"memories": made}), encoding="utf-8")
    (folder / "turns.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in turns(ago["CHAT"])), encoding="utf-8"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "KENOMEM_VAULT": str(vault),
        "KENOMEM_NO_SERVE": "1",
        "NO_COLOR": "1",
        "COLUMNS": "100",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    out: list[str] = []
    try:
        for args, stdin in scenario(ago["LOG"], ids):
            argv = [a.format(vault=vault, dir=folder) for a in args]
            done = subprocess.run(
                [*kenomem_command(), *argv],
                input=stdin,
                capture_output=True,
                text=True,
                env=env,
                cwd=folder,
                timeout=120,
                check=False,
            )
            out.append(f"$ kenomem {' '.join(args)}" + (" < stdin" if stdin else ""))
            out.append(f"[exit {done.returncode}]")
            if done.stdout:
                out.append("--- stdout\n" + done.stdout.rstrip("\n"))
            if done.stderr:
                out.append("--- stderr\n" + done.stderr.rstrip("\n"))
            out.append("")
        out.append("=== the vault's files")
        for path in sorted(vault.rglob("*")):
            rel = path.relative_to(vault).as_posix()
            if rel.startswith(".kenomem") or path.is_dir():
                continue
            out.append(f"--- {rel}\n" + path.read_text(encoding="utf-8").rstrip("\n"))
        return marks("\n".join(out)) + "\n"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    sys.stdout.write(record())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
