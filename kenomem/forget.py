"""`forget`: move a memory to the archive (kept, found by `recall --archive`), or delete it.

Archiving is a rename into `archive/` followed by `status: archived`; a file in the
archive counts as archived whatever its status says, so a crash between the two steps
leaves a consistent vault.
"""

import os
from typing import NamedTuple

from kenomem import store
from kenomem.errors import KenomemError
from kenomem.paths import ARCHIVE_DIR
from kenomem.vault import Vault


class ForgetResult(NamedTuple):
    id: str
    path: str  # where the memory is now ("" when deleted)
    old_path: str
    action: str  # archived | deleted


def forget(vault: Vault, mem_id: str, *, delete: bool = False) -> ForgetResult:
    vault.sync()
    with vault.lock:
        found_id, path = vault.resolve_id(mem_id)
        if delete:
            os.unlink(vault.root / path)
            vault.refresh([path])
            return ForgetResult(found_id, "", path, "deleted")
        if path.startswith(ARCHIVE_DIR + "/"):
            raise KenomemError(
                f"{found_id} is already in the archive ({path})",
                hint="delete it with: kenomem forget --delete " + found_id,
            )
        memory = vault.load(path)
        target = _free_path(vault, f"{ARCHIVE_DIR}/{path}")
        (vault.root / target).parent.mkdir(parents=True, exist_ok=True)
        os.rename(vault.root / path, vault.root / target)
        if memory.has_frontmatter:
            # Writing the id keeps it when the file has none: its bytes change, so the
            # move could not be recognised by content.
            updates = (
                {"status": "archived"} if memory.has_id else {"id": found_id, "status": "archived"}
            )
            store.update_keys(vault.root, target, updates, fsync=vault.settings.write.fsync)
        vault.refresh([path, target])
        return ForgetResult(found_id, target, path, "archived")


def _free_path(vault: Vault, wanted: str) -> str:
    if not (vault.root / wanted).exists():
        return wanted
    stem = wanted[:-3]
    for n in range(2, 1000):
        candidate = f"{stem}-{n}.md"
        if not (vault.root / candidate).exists():
            return candidate
    raise KenomemError(f"no free name in the archive for {wanted}")
