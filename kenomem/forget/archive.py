"""`forget`: move a memory to the archive (kept, found by `recall --archive`), or delete it.

Archiving is a rename into `archive/` followed by `status: archived` and, unless it was
plain active, `status_before` (what `restore` brings back: a superseded memory stays
superseded, a proposed pattern proposed). A file in the archive counts as archived
whatever its status says, so a crash between the two steps leaves a consistent vault; a
status that cannot be written (a full disk) moves the file back, and the command fails
having changed nothing. `archive_file` and `delete_file` do one file without syncing or
indexing, for callers that move many (prune) and index once.
"""

import os
from typing import Any, NamedTuple

from kenomem.errors import KenomemError, UnsafePath
from kenomem.files import store
from kenomem.files.atomic import fsync_dir, remove_empty
from kenomem.files.memory import Memory
from kenomem.files.paths import ARCHIVE_DIR, check_inside, move_inside, remove_inside
from kenomem.vault.core import CoreVault


class ForgetRequest(NamedTuple):
    id: str  # a memory id, or any unique start of one
    delete: bool = False  # delete the file instead of archiving it


class ForgetResult(NamedTuple):
    id: str
    path: str  # where the memory is now ("" when deleted)
    old_path: str
    action: str  # archived | deleted


def forget(vault: CoreVault, request: ForgetRequest) -> ForgetResult:
    vault.sync()
    with vault.lock:
        found_id, path = vault.resolve_id(request.id)
        if request.delete:
            delete_file(vault, path)
            vault.refresh([path])
            return ForgetResult(found_id, "", path, "deleted")
        if path.startswith(ARCHIVE_DIR + "/"):
            raise KenomemError(
                f"{found_id} is already in the archive ({path})",
                hint="delete it with: kenomem forget --delete " + found_id,
            )
        target = archive_file(vault, found_id, path)
        if vault.settings.write.fsync:
            fsync_dir((vault.root / target).parent)
        vault.refresh([path, target])
        return ForgetResult(found_id, target, path, "archived")


def archive_file(
    vault: CoreVault, mem_id: str, path: str, note: dict[str, Any] | None = None
) -> str:
    """Move one memory file into the archive; its new path. The caller holds the lock."""
    memory = vault.load(path)  # refused if it leads out of the vault
    target = free_path(vault, f"{ARCHIVE_DIR}/{path}")
    made = move_inside(vault.root, path, target)  # not into an `archive/` that leads out
    try:
        _mark(vault, memory, mem_id, target, note)
    except OSError:
        # Its keys could not be written (a full disk): the move is undone, so that the
        # command that fails has changed nothing, and running it again does it all.
        move_inside(vault.root, target, path)
        remove_empty(made)
        raise
    return target


def finish_archiving(
    vault: CoreVault, mem_id: str, path: str, note: dict[str, Any] | None = None
) -> bool:
    """Give a file already in the archive the keys a move interrupted before they were
    written (`note`, with its `archived_at`); whether it needed them."""
    memory = vault.load(path)  # its status reads `archived` in the archive, written or not
    if not memory.has_frontmatter or "archived_at" in memory.extra:
        return False
    _mark(vault, memory, mem_id, path, note)
    return True


def _mark(
    vault: CoreVault, memory: Memory, mem_id: str, path: str, note: dict[str, Any] | None
) -> None:
    if not memory.has_frontmatter:
        return
    updates: dict[str, Any] = {"status": "archived", **(note or {})}
    if _status_to_keep(memory):
        updates["status_before"] = memory.status
    if not memory.has_id:
        # Its bytes change, so the move could not be recognised by content: write the id.
        updates["id"] = mem_id
    # The rename need not be durable at once: lost to a power cut, it leaves the file
    # where it was, whole. Callers moving many files sync the folders once at the end.
    try:
        store.update_keys(
            vault.root, path, updates, fsync=vault.settings.write.fsync, sync_dir=False
        )
    except UnsafePath:
        pass  # a symlink, or read-only: left as it is; in the archive it counts as archived


def _status_to_keep(memory: Memory) -> bool:
    """Whether `status_before` must be written for `restore` to bring the status back.

    `restore` takes a memory without it for active (superseded with a `superseded_by`
    link), so a plain active memory's file gets no new key; an older value is replaced.
    An `archived` status outside the archive (an interrupted restore) is no status to keep.
    """
    if memory.status == "archived":
        return False
    return (
        memory.status != "active" or bool(memory.superseded_by) or "status_before" in memory.extra
    )


def delete_file(vault: CoreVault, path: str) -> None:
    """Remove one memory file. The caller holds the lock and confirmed the deletion."""
    # A symlink is removed, not followed; and in its folder held by descriptor, so that
    # a folder swapped for a link meanwhile cannot make it remove a file elsewhere.
    check_inside(vault.root, path, follow_last=False)
    try:
        remove_inside(vault.root, path)
    except FileNotFoundError:
        pass


def free_path(vault: CoreVault, wanted: str) -> str:
    """`wanted`, or `wanted` with -2, -3... before `.md` if a file is in the way."""
    if not os.path.lexists(vault.root / wanted):  # a dangling symlink is in the way too
        return wanted
    stem = wanted[:-3]
    for n in range(2, 10000):
        candidate = f"{stem}-{n}.md"
        if not os.path.lexists(vault.root / candidate):
            return candidate
    raise KenomemError(f"no free name for {wanted}")
