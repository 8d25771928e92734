"""Carrying out the sleep cycle's plans, and what a run has written but not indexed yet.

Each day's memories are written as files, made durable (the files, then their folders,
once each) before the day is marked consolidated. They are indexed once, at the end of
the run (`Pending.flush`): a Whoosh commit costs far more than the few documents it
adds, and one or two commits a day made most of a run's time. Until then `Pending`
stands in for the index where a later day needs what an earlier one wrote: the words
novelty is judged against, the ids already created, the paths of the memories to
reinforce or supersede. A run that stops before its flush leaves files the index does
not know yet; the next command's sync reads them, as it reads any file written behind
its back, and a rerun then finds them there.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from kenomem import atomic, buffer, store
from kenomem.memory import Memory
from kenomem.vault import Vault

if TYPE_CHECKING:
    from kenomem.consolidate import DayPlan, Planned


class Pending:
    """Memories this run created or rewrote that the index does not have yet."""

    def __init__(self) -> None:
        self.new: dict[str, tuple[Memory, store.Written]] = {}  # id -> (memory, file)
        self.touched: dict[str, None] = {}  # paths rewritten (reinforced, superseded)
        self.terms: set[str] = set()  # the analysed words of the new memories

    @property
    def paths(self) -> dict[str, str]:
        """id -> path of the memories created."""
        return {mem_id: written.path for mem_id, (_, written) in self.new.items()}

    def add(self, vault: Vault, mem: Memory, written: store.Written) -> None:
        self.new[mem.id] = (mem, written)
        # What the index holds of it: title and body, by the same analyser (in one call:
        # no word runs across the line between them).
        self.terms.update(vault.engine.analyze(f"{mem.title}\n{mem.body}"))

    def flush(self, vault: Vault) -> None:
        """Index everything pending, in two batches: the new files from the memories
        written (not read back), then the files rewritten since, read again."""
        if not self.new and not self.touched:
            return
        with vault.lock:
            vault.index_new_many(
                [(mem, w) for mem, w in self.new.values() if w.path not in self.touched]
            )
            if self.touched:
                vault.refresh(list(self.touched))
        self.new, self.touched, self.terms = {}, {}, set()


def apply_day(
    vault: Vault, plan: DayPlan, now: datetime, pending: Pending
) -> tuple[int, int, int, int]:
    """Carry out a day's plan; (created, reinforced, superseded, proposed) newly done."""
    created = reinforced = superseded = proposed = 0
    fsync = vault.settings.write.fsync
    folders: set[str] = set()
    with vault.lock:
        paths = {**vault.ids(), **pending.paths}
        wanted = [a.id for a in plan.actions if a.memory]
        existing = set(vault.engine.lookup(wanted)) | {i for i in wanted if i in pending.new}
        for action in plan.actions:
            if action.memory is not None and action.id not in existing:
                written = store.create(vault.root, action.memory, fsync=fsync, sync_dir=False)
                pending.add(vault, action.memory, written)
                paths[action.id] = written.path
                folders.add(written.path.rsplit("/", 1)[0])
                created += action.action in ("create", "summarize", "supersede")
                proposed += action.action == "propose"
        for action in plan.actions:
            if action.action == "reinforce":
                path = paths.get(action.id)
                done = path is not None and _reinforce(vault, path, action, now)
                reinforced += done
            elif action.action == "supersede":
                path = paths.get(action.target)
                done = path is not None and _retire(vault, path, action)
                superseded += done
            else:
                continue
            if done:
                assert path is not None
                pending.touched[path] = None
                folders.add(path.rsplit("/", 1)[0])
        if fsync:
            for folder in sorted(folders):  # the new names, durable before the day's mark
                atomic.fsync_dir(vault.root / folder)
        if buffer.read_day(vault, plan.day).consolidated is None:  # a rerun keeps the mark
            buffer.mark_consolidated(vault, plan.day, now)
    return created, reinforced, superseded, proposed


def _reinforce(vault: Vault, path: str, action: Planned, now: datetime) -> bool:
    mem = vault.load(path)
    sources = [str(s) for s in mem.extra.get("sources") or []]
    if action.source in sources:
        return False  # this day's mention was counted before
    store.update_keys(
        vault.root,
        path,
        {
            "reinforced": mem.reinforced + 1,
            "last_accessed": max(now, mem.accessed),
            "sources": [*sources, action.source],
        },
        fsync=vault.settings.write.fsync,
        sync_dir=False,
    )
    return True


def _retire(vault: Vault, path: str, action: Planned) -> bool:
    old = vault.load(path)
    if old.status == "superseded":
        return False
    updates: dict[str, object] = {"status": "superseded", "superseded_by": action.id}
    if not old.has_id:
        updates["id"] = action.target
    store.update_keys(vault.root, path, updates, fsync=vault.settings.write.fsync, sync_dir=False)
    return True
