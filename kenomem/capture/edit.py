"""`edit`: open a memory in the user's editor, then index what they saved."""

import os
import shlex
import subprocess
from typing import NamedTuple

from kenomem.errors import EditorFailed
from kenomem.files.paths import check_inside
from kenomem.index.sync import SyncReport
from kenomem.vault.core import CoreVault


class EditResult(NamedTuple):
    id: str
    path: str
    changed: bool
    sync: SyncReport


def editor_command() -> list[str]:
    """`$VISUAL`, else `$EDITOR`, else vi; the variable may carry arguments (`code -w`)."""
    raw = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(raw)


def edit(vault: CoreVault, mem_id: str, command: list[str]) -> EditResult:
    vault.sync()
    found_id, path = vault.resolve_id(mem_id)
    check_inside(vault.root, path)  # the editor follows symlinks: only to files in the vault
    full = vault.root / path
    before = full.stat()
    try:
        completed = subprocess.run([*command, str(full)], check=False)
    except FileNotFoundError:
        raise EditorFailed(
            f"editor not found: {command[0]}", hint="set $EDITOR, for example: export EDITOR=nano"
        ) from None
    if completed.returncode != 0:
        raise EditorFailed(f"the editor exited with status {completed.returncode}")
    report = vault.sync()
    try:
        after = full.stat()
        changed = (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns)
    except FileNotFoundError:
        changed = True
    return EditResult(found_id, path, changed, report)
