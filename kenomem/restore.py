"""`restore`: bring an archived memory back to its folder, active again.

A rename out of `archive/` then `status: active`; a file left outside the archive with
an archived status by an interrupted restore is simply made active on the next one.
"""

from datetime import UTC, datetime
from typing import NamedTuple

from kenomem import store
from kenomem.errors import KenomemError
from kenomem.forget import free_path
from kenomem.paths import ARCHIVE_DIR, move_inside
from kenomem.vault import Vault


class RestoreResult(NamedTuple):
    id: str
    path: str
    old_path: str
    title: str


def restore(vault: Vault, mem_id: str, now: datetime | None = None) -> RestoreResult:
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    vault.sync()
    with vault.lock:
        found, path = vault.resolve_id(mem_id)
        mem = vault.load(path)
        if not path.startswith(ARCHIVE_DIR + "/") and mem.status not in ("archived", "superseded"):
            raise KenomemError(f"{found} is not archived ({path})")
        target = path
        if path.startswith(ARCHIVE_DIR + "/"):
            target = free_path(vault, path[len(ARCHIVE_DIR) + 1 :])
            move_inside(vault.root, path, target)  # never into a folder that leads out
        if mem.has_frontmatter:
            # A restore is an access: the next prune must not retire it again at once.
            updates: dict[str, object] = {
                "status": "active",
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
