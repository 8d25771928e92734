"""Vaults and checks for the process-level adversarial tests (`test_adv_faults.py`,
`test_adv_storms.py`): real `kenomem` processes on vaults full enough to be interrupted,
and the invariants every run must leave (each memory exactly once, `doctor` clean, no
leftovers of a dead process)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files.paths import MEMORY_DIRS
from kenomem.vault.core import CoreVault

ID_LINE = re.compile(rb"^id: *(\S+)\s*$", re.MULTILINE)
SALIENT = (
    "Important: I live in {city} now, remember this.",
    "The {thing} deploy failed with a timeout error on the build step.",
    "Cleared the {thing} cache and the deploy works now, fixed.",
    "We decided to ship the {thing} release on Friday.",
    "My sister {name} is visiting in May.",
    "ok",
    "thanks",
)
CITIES = ("Lisbon", "Porto", "Vigo", "Braga")
THINGS = ("api", "billing", "search", "mobile", "gateway")
NAMES = ("Ana", "Rui", "Inês", "Tomás")


def env_for(vault: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1", "KENOMEM_NO_SERVE": "1"}
    env.update(extra)
    return env


def kenomem(vault: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        env=env_for(vault),
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def start(vault: Path, *args: str, input_file: Path | None = None) -> subprocess.Popen[str]:
    stdin = open(input_file, "rb") if input_file else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, "-m", "kenomem", *args],
        env=env_for(vault),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


# -- filling a vault ------------------------------------------------------------------------


def hand_made(vault: Path, count: int, folder: str = "semantic", first: int = 0) -> None:
    """`count` memories as a person (or another kenomem) wrote them, each with its id."""
    for n in range(first, first + count):
        (vault / folder).mkdir(exist_ok=True)
        (vault / folder / f"note-{n:04d}.md").write_text(
            f"---\nid: mem_20260101_{n:06d}_{n:04x}\ntitle: Note {n}\ntags: [bulk]\n---\n\n"
            f"Note number {n} about the {THINGS[n % len(THINGS)]} harbour.\n",
            encoding="utf-8",
        )


def buffer_days(vault: Path, days: int, per_day: int, end: datetime | None = None) -> int:
    """Past buffer days of entries the sleep cycle keeps (and some it drops): how many."""
    v = CoreVault.open(vault)
    end = end or datetime.now(UTC).replace(hour=8, minute=0, second=0, microsecond=0)
    made = 0
    for d in range(days, 0, -1):
        day = end - timedelta(days=d)
        for n in range(per_day):
            template = SALIENT[(d + n) % len(SALIENT)]
            text = template.format(
                city=CITIES[(d + n) % len(CITIES)],
                thing=THINGS[(d * 3 + n) % len(THINGS)],
                name=NAMES[n % len(NAMES)],
            )
            log_entry(
                v,
                LogRequest(
                    f"{text} (day {d}, entry {n})",
                    who="Adrian",
                    session="s1",
                    at=day + timedelta(minutes=7 * n),
                ),
            )
            made += 1
    return made


def turns(count: int, prefix: str = "turn") -> str:
    """A JSONL chat of `count` turns."""
    base = 1770000000
    return "".join(
        json.dumps(
            {
                "role": "user" if n % 2 else "assistant",
                "content": f"{prefix} {n}: the {THINGS[n % len(THINGS)]} harbour plan, part {n}",
                "timestamp": base + 60 * n,
                "id": f"{prefix}-{n}",
            }
        )
        + "\n"
        for n in range(count)
    )


# -- what every run must leave -----------------------------------------------------------------


def memory_files(vault: Path) -> dict[str, bytes]:
    """vault-relative path -> bytes of every memory file (the archive included; not what a
    reset's trash holds in the hidden `archive/.reset/`, as the scan passes it over)."""
    found = {}
    for folder in MEMORY_DIRS:
        for path in sorted((vault / folder).rglob("*.md")):
            hidden = any(part.startswith(".") for part in path.relative_to(vault).parts)
            if path.is_file() and not hidden:
                found[path.relative_to(vault).as_posix()] = path.read_bytes()
    return found


def ids_in(files: dict[str, bytes]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for data in files.values():
        m = ID_LINE.search(data.split(b"\n---", 1)[0])
        counts[m.group(1).decode() if m else ""] += 1
    return counts


def each_memory_once(vault: Path) -> Counter[str]:
    """Every memory file has an id, and no id is in two files; the ids."""
    counts = ids_in(memory_files(vault))
    assert counts[""] == 0, "a memory file without an id"
    doubled = {i: n for i, n in counts.items() if n > 1}
    assert not doubled, f"memories in more than one file: {doubled}"
    return counts


def doctor_clean(vault: Path) -> None:
    done = kenomem(vault, "doctor", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert findings == [], findings


# What `doctor` may report after a process was killed: only what the dead process left
# (its lock, its temporary files), which `doctor --fix` clears. Never a damaged vault.
DAMAGE = frozenset({"unreadable", "duplicate-id", "broken-link", "no-id", "outside", "index"})


def doctor_after_a_kill(vault: Path) -> None:
    """Nothing but a dead process's leftovers is reported; `--fix` clears them."""
    done = kenomem(vault, "doctor", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [f for f in findings if f["kind"] in DAMAGE or not f["fixable"]] == [], findings
    fixed = kenomem(vault, "doctor", "--json", "--fix")
    assert fixed.returncode == 0, fixed.stderr
    doctor_clean(vault)


def no_leftovers(vault: Path) -> None:
    """Nothing a dead process left behind: temporary files, half-built indexes."""
    state = vault / ".kenomem"
    left = (
        [p.relative_to(vault).as_posix() for p in (state / "tmp").glob("*")]
        if (state / "tmp").exists()
        else []
    )
    left += [p.relative_to(vault).as_posix() for p in (state / "index").glob("*.new-*")]
    left += [
        p.relative_to(vault).as_posix()
        for folder in (*MEMORY_DIRS, "buffer")
        for p in (vault / folder).rglob(".*.tmp")
    ]
    assert left == [], f"left behind: {left}"


def clean_run(done: subprocess.CompletedProcess[str], what: object = "") -> Any:
    assert done.returncode == 0, (what, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr, done.stderr
    return json.loads(done.stdout) if done.stdout.lstrip().startswith("{") else None
