"""`approve` and `reject`: a person decides on a procedural pattern the sleep cycle
proposed. Approved, it becomes active; rejected, it goes to the archive, marked so, and
the cycle does not propose it again (its id is derived from its trigger)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.errors import KenomemError
from kenomem.files import store
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.vault.core import CoreVault


class DecideResult(NamedTuple):
    id: str
    path: str
    status: str  # active | archived
    title: str


def approve(vault: CoreVault, mem_id: str, now: datetime | None = None) -> DecideResult:
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    vault.sync()
    with vault.lock:
        found, path = vault.resolve_id(mem_id)
        mem = vault.load(path)
        _proposed(found, mem.status)
        store.update_keys(
            vault.root,
            path,
            {"status": "active", "approved": moment},
            fsync=vault.settings.write.fsync,
        )
        vault.refresh([path])
    return DecideResult(found, path, "active", mem.title)


def reject(vault: CoreVault, mem_id: str, now: datetime | None = None) -> DecideResult:
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    vault.sync()
    with vault.lock:
        found, path = vault.resolve_id(mem_id)
        mem = vault.load(path)
        _proposed(found, mem.status)
        moved = forget(vault, ForgetRequest(found))
        store.update_keys(
            vault.root, moved.path, {"rejected": moment}, fsync=vault.settings.write.fsync
        )
        vault.refresh([moved.path])
    return DecideResult(found, moved.path, "archived", mem.title)


def _proposed(mem_id: str, status: str) -> None:
    if status != "proposed":
        raise KenomemError(
            f"{mem_id} is not a proposed pattern (its status is {status})",
            hint="kenomem list --status proposed shows what waits for a decision",
        )
