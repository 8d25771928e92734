"""`reset`: start over, with a way back.

`--memory` removes the buffer days and the episodic, working and procedural memories
(archived ones too) and keeps semantic memory and the foundation; `--all` removes every
memory file and keeps `kenomem.toml`. Nothing is deleted at once: each file is renamed
into `.kenomem/trash/<time>/`, after a manifest of the plan is written there, so a
reset killed half-way is finished by the next one, and `reset --undo` moves the last
reset back. Trash older than `reset.trash_days` is emptied by the next reset or prune.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from kenomem.atomic import write_bytes
from kenomem.errors import KenomemError
from kenomem.paths import ARCHIVE_DIR, BUFFER_DIR, FOUNDATION, MEMORY_DIRS, STATE_DIR
from kenomem.vault import Vault

TRASH = "trash"
MANIFEST = "manifest.txt"
DONE = "done"  # written last: the reset is complete
_MEMORY_KINDS = ("episodic", "working", "procedural")


class ResetResult(NamedTuple):
    action: str  # reset | undo
    scope: str  # memory | all
    files: int
    trash: str  # the trash folder, vault-relative
    conflicts: list[str]  # undo: files in the way, left in the trash
    emptied: int  # old trash folders removed


def targets(vault: Vault, everything: bool) -> list[str]:
    """The vault-relative files a reset removes."""
    folders = (
        [*MEMORY_DIRS, BUFFER_DIR]
        if everything
        else [*_MEMORY_KINDS, BUFFER_DIR, *(f"{ARCHIVE_DIR}/{k}" for k in _MEMORY_KINDS)]
    )
    found = []
    for folder in folders:
        base = vault.root / folder
        for parent, dirs, names in os.walk(base):
            dirs.sort()
            for name in sorted(names):
                if name.startswith("."):
                    continue  # .gitkeep and editors' files stay with the folders
                found.append(Path(parent, name).relative_to(vault.root).as_posix())
    if everything and (vault.root / FOUNDATION).exists():
        found.append(FOUNDATION)
    return found


def _trash_root(vault: Vault) -> Path:
    return vault.state_dir / TRASH


def reset(vault: Vault, *, everything: bool, now: datetime | None = None) -> ResetResult:
    moment = now or datetime.now(UTC)
    scope = "all" if everything else "memory"
    with vault.lock:
        trash = _unfinished(vault)
        if trash is not None:
            begun = _scope(trash)
            if begun != scope:
                raise KenomemError(
                    f"an interrupted `reset --{begun}` is unfinished; it comes first",
                    hint=f"finish it with `kenomem reset --{begun}`, "
                    "or bring back what it moved with `kenomem reset --undo`",
                )
        else:
            trash = _start(vault, moment, scope, targets(vault, everything))
        scope = _scope(trash)
        planned = (trash / MANIFEST).read_text(encoding="utf-8").split("\n")[1:]
        moved = 0
        for rel in filter(None, planned):
            source, dest = vault.root / rel, trash / rel
            if source.exists() and not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, dest)
                moved += 1
        (trash / DONE).write_text(moment.isoformat(), encoding="utf-8")
        emptied = empty_old_trash(vault, keep=trash)
    vault.sync()
    return ResetResult("reset", scope, moved, trash.relative_to(vault.root).as_posix(), [], emptied)


def _start(vault: Vault, moment: datetime, scope: str, files: list[str]) -> Path:
    trash = _trash_root(vault) / moment.strftime("%Y%m%dT%H%M%S")
    n = 1
    while trash.exists():
        n += 1
        trash = trash.with_name(f"{moment:%Y%m%dT%H%M%S}-{n}")
    trash.mkdir(parents=True)
    manifest = "\n".join([f"scope {scope}", *files]) + "\n"
    write_bytes(trash / MANIFEST, manifest.encode("utf-8"), fsync=True)
    return trash


def _scope(trash: Path) -> str:
    head = (trash / MANIFEST).read_text(encoding="utf-8").split("\n", 1)[0]
    return head.removeprefix("scope ").strip()


def _unfinished(vault: Vault) -> Path | None:
    """A reset that was interrupted: it is finished before anything else."""
    for trash in _trashes(vault):
        if (trash / MANIFEST).exists() and not (trash / DONE).exists():
            return trash
    return None


def _trashes(vault: Vault) -> list[Path]:
    root = _trash_root(vault)
    try:
        return sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name)
    except FileNotFoundError:
        return []


def empty_old_trash(vault: Vault, keep: Path | None = None) -> int:
    """Remove the trash of finished resets older than `reset.trash_days`; how many."""
    limit = time.time() - vault.settings.reset.trash_days * 86400
    emptied = 0
    with vault.lock:
        for trash in _trashes(vault):
            done = trash / DONE
            if trash != keep and done.exists() and done.stat().st_mtime < limit:
                shutil.rmtree(trash, ignore_errors=True)
                emptied += 1
    return emptied


def undo(vault: Vault) -> ResetResult:
    """Move the files of the last reset back where they were; never over a file."""
    with vault.lock:
        done = [t for t in _trashes(vault) if (t / MANIFEST).exists()]
        if not done:
            raise KenomemError(
                "there is no reset to undo", hint=f"the trash is {STATE_DIR}/{TRASH}/"
            )
        trash = done[-1]
        scope = _scope(trash)
        planned = (trash / MANIFEST).read_text(encoding="utf-8").split("\n")[1:]
        moved, conflicts = 0, []
        for rel in filter(None, planned):
            source, dest = trash / rel, vault.root / rel
            if not source.exists():
                continue
            if dest.exists():
                conflicts.append(rel)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, dest)
            moved += 1
        if not conflicts:
            shutil.rmtree(trash, ignore_errors=True)
    vault.sync()
    return ResetResult("undo", scope, moved, trash.relative_to(vault.root).as_posix(), conflicts, 0)
