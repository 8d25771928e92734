"""`restore`: bring an archived memory back to its folder, with the status it had.

A rename out of `archive/`, then the status written when it was archived
(`status_before`): a memory superseded before it was forgotten comes back superseded,
with its links, not active. Without that key (an archive made by hand or by an older
kenomem) a memory with a `superseded_by` link comes back superseded, any other active.
A file left outside the archive with an archived status by an interrupted restore is
finished by the next one.
"""

from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.errors import KenomemError
from kenomem.files import store
from kenomem.files.memory import Memory
from kenomem.files.paths import ARCHIVE_DIR, move_inside
from kenomem.forget.archive import free_path
from kenomem.vault.core import CoreVault


class RestoreResult(NamedTuple):
    id: str
    path: str
    old_path: str
    title: str


def restore(vault: CoreVault, mem_id: str, now: datetime | None = None) -> RestoreResult:
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    vault.sync()
    with vault.lock:
        found, path = vault.resolve_id(mem_id)
        mem = vault.load(path)
        if not path.startswith(ARCHIVE_DIR + "/") and mem.status != "archived":
            raise _not_archived(found, path, mem)
        target = path
        if path.startswith(ARCHIVE_DIR + "/"):
            target = free_path(vault, path[len(ARCHIVE_DIR) + 1 :])
            move_inside(vault.root, path, target)  # never into a folder that leads out
        if mem.has_frontmatter:
            # A restore is an access: the next prune must not retire it again at once.
            updates: dict[str, object] = {
                "status": status_before(mem),
                "restored_at": moment,
                "last_accessed": moment,
            }
            if mem.type == "working":  # its staleness counts from `updated`
                updates["updated"] = moment
            if not mem.has_id:
                updates["id"] = found
            store.update_keys(vault.root, target, updates, fsync=vault.settings.write.fsync)
        vault.refresh([path, target])
    return RestoreResult(found, target, path, mem.title)


def status_before(mem: Memory) -> str:
    """The status an archived memory had before it was archived."""
    before = mem.extra.get("status_before")
    if before in ("active", "superseded", "proposed"):
        return str(before)
    return "superseded" if mem.status == "superseded" or mem.superseded_by else "active"


def _not_archived(found: str, path: str, mem: Memory) -> KenomemError:
    if mem.status == "superseded":
        by = f" by {mem.superseded_by}" if mem.superseded_by else ""
        return KenomemError(
            f"{found} is superseded{by}, not archived ({path})",
            hint="it is kept as history; to make it current again, set its status to "
            f"active: kenomem edit {found}",
        )
    return KenomemError(f"{found} is not archived ({path})")
