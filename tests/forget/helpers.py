"""What the forgetting tests share: memories of a given age, the ids on disk, the state
folder kept apart.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from tests.conftest import write

# -- from test_prune.py

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def put(
    vault_dir: Path,
    rel: str,
    mem_id: str,
    *,
    age: float,
    now: datetime = NOW,
    accessed: float | None = None,
    importance: int = 5,
    tags: tuple[str, ...] = (),
    pinned: bool = False,
    reinforced: int = 0,
    access_count: int = 0,
    status: str = "active",
    extra: str = "",
    title: str | None = None,
) -> Path:
    """A memory file as kenomem writes it, `age` days old at `now` (type from its folder)."""
    kind = rel.split("/")[1] if rel.startswith("archive/") else rel.split("/")[0]
    made = now - timedelta(days=age)
    seen = now - timedelta(days=age if accessed is None else accessed)
    title = title or f"Note {mem_id[-4:]}"
    when = f"when: {stamp(made)}\n" if kind == "episodic" else ""
    text = (
        f"---\nid: {mem_id}\ntype: {kind}\ntitle: {title}\ntags: [{', '.join(tags)}]\n"
        f"scope: global\ncreated: {stamp(made)}\nlast_accessed: {stamp(seen)}\n"
        f"access_count: {access_count}\nreinforced: {reinforced}\nimportance: {importance}\n"
        f"pinned: {'true' if pinned else 'false'}\nsource: cli\nstatus: {status}\n"
        f"supersedes: null\n{when}{extra}---\n\n{title}: what happened that day.\n"
    )
    return write(vault_dir, rel, text)


def settings_file(vault_dir: Path, text: str) -> None:
    """Replace the template's kenomem.toml (its headers are all there, commented out)."""
    (vault_dir / "kenomem.toml").write_text(text, encoding="utf-8")


def file_ids(root: Path) -> list[str]:
    """The id of every markdown file under `root` (each id once per file holding it), but
    the vault's README (its example memory has an id)."""
    found = []
    for path in sorted(root.rglob("*.md")):
        if path == root / "README.md":
            continue
        m = re.search(r"^id: (\S+)\r?$", path.read_text(encoding="utf-8"), re.MULTILINE)
        if m:
            found.append(m.group(1))
    return found


# -- from test_prune_cli.py

KENOMEM = str(Path(sys.executable).with_name("kenomem"))


def on_terminal(vault: Path, args: list[str], answer: str) -> tuple[int, str, str]:
    """Run kenomem with stdin and stderr on a pseudo-terminal; answer its question.

    (exit code, stdout, what the terminal showed)."""
    master, slave = os.openpty()
    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [KENOMEM, *args], env=env, stdin=slave, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    shown = bytearray()
    asked = threading.Event()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown.extend(chunk)
            if b"[y/N]" in shown:
                asked.set()
        asked.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    asked.wait(120)
    if b"[y/N]" in shown:
        os.write(master, answer.encode() + b"\n")
    out, _ = process.communicate(timeout=120)
    reader.join(10)
    os.close(master)
    return process.returncode, out.decode(), shown.decode(errors="replace")


# -- from test_prune_vault.py


def meta_of(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text("utf-8").split("---\n")[1])


def recalled(vault: CoreVault, query: str, archive: bool = False) -> list[str]:
    request = RecallRequest(query, touch=False, now=NOW, archive=archive, limit=50)
    return [item.id for item in recall(vault, request).results]


TRASH = ("archive", ".reset")  # the trash of `reset`, in the vault


def outside_state(root: Path) -> dict[str, bytes]:
    """The vault's files by path, but those of `.kenomem/` and the trash of `reset`."""
    return {
        rel.as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and ".kenomem" not in (rel := p.relative_to(root)).parts
        and rel.parts[:2] != TRASH
    }


# -- from test_prune_crash.py

SUMMARIES = 2


def crowded(root: Path, now: datetime = NOW) -> dict[str, str]:
    """Two groups to summarise, faded episodes, stale sessions, and memories to keep.

    Returns id -> path of every memory."""
    made: dict[str, str] = {}

    def add(rel: str, mem_id: str, **fields: Any) -> None:
        put(root, rel, mem_id, now=now, **fields)
        made[mem_id] = rel

    # On the 10th of a month at least 40 days back: a group never straddles two months.
    back = now - timedelta(days=40)
    if back.day < 10:
        back = back.replace(day=1) - timedelta(days=1)
    tenth = (now - back.replace(day=10, hour=1)).total_seconds() / 86400
    for topic in ("ferry", "kites"):
        for n in range(3):
            add(
                f"episodic/{topic}-{n}.md",
                f"mem_{topic}_000{n}",
                age=tenth - n / 10,
                tags=(topic,),
                title=f"{topic.title()} outing {n}",
            )
    for n in range(3):
        add(f"episodic/faded-{n}.md", f"mem_faded_000{n}", age=150 + 40 * n, importance=1)
    for n in range(2):
        add(f"working/s{n}.md", f"mem_work_000{n}", age=8 + n, extra=f"session: s{n}\n")
    add("semantic/fact.md", "mem_fact_0001", age=900, importance=1)
    add("episodic/vip.md", "mem_vip_0001", age=300, importance=9)
    add("episodic/new.md", "mem_new_0001", age=1)
    return made


def check_nothing_lost(root: Path, made: dict[str, str]) -> None:
    """Each memory once, at its path or at the same path in the archive."""
    counts = collections.Counter(file_ids(root))
    for mem_id, rel in made.items():
        assert counts[mem_id] == 1, (mem_id, counts[mem_id])
        here, archived = (root / rel).exists(), (root / "archive" / rel).exists()
        assert here != archived, (rel, here, archived)
    extra = set(counts) - set(made)
    assert len(extra) <= SUMMARIES and all(counts[i] == 1 for i in extra)
