"""Carrying out the sleep cycle's plans, what a run has written but not indexed yet, and
how a run learns that another one applied a day under it.

Each day's memories are written as files, made durable (the files, then their folders,
once each) before the day is marked consolidated. They are indexed once, at the end of
the run (`Pending.flush`): a Whoosh commit costs far more than the few documents it
adds, and one or two commits a day made most of a run's time. Until then `Pending`
stands in for the index where a later day needs what an earlier one wrote: the words
novelty is judged against, the ids already created, the paths of the memories to
reinforce or supersede. A run that stops before its flush leaves files the index does
not know yet; the next command's sync reads them, as it reads any file written behind
its back, and a rerun then finds them there.

Runs may overlap (a cron run and a manual one). A day is applied under the vault lock,
after checking, under that lock, that it is still due; and another run's memories may
not be indexed yet when this one plans. `RunMark` tells, under the lock and without a
scan, whether another run applied a day (or died in the middle of one) since this run
last read the vault; if so, `catch_up` indexes what this run wrote, then syncs, before the
day is planned again.
"""

from __future__ import annotations

import os
from datetime import datetime

from kenomem.files import atomic, buffer, store
from kenomem.files.paths import read_private, write_private
from kenomem.sleep.knowledge import Knowledge
from kenomem.sleep.pending import Pending
from kenomem.sleep.plan import DayPlan, Planned
from kenomem.vault.core import CoreVault

MARK_NAME = "sleep"  # in the state folder: see RunMark


class RunMark:
    """`.kenomem/sleep`: a token, changed by each run of the cycle that applies a day.

    Under the vault lock a run writes `busy <token>` before a day's first memory and a new
    `<token>` once the day is marked. So, under the lock, a mark other than the one this
    run last wrote or read means another run applied a day since (its memories may not be
    indexed: runs index at their end) or was killed in the middle of one (`busy`): this
    run must read the vault again before it plans on. A `busy` mark read outside the lock
    may be a live run's, so it is never taken as read. Derived like all of `.kenomem/`.
    """

    def __init__(self, vault: CoreVault) -> None:
        self.state_dir = vault.state_dir
        self.seen = self._read()
        if self.seen.startswith("busy"):
            self.seen = ""

    def _read(self) -> str:
        try:
            return read_private(self.state_dir, MARK_NAME).decode("utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return ""

    def moved(self) -> bool:
        """Whether another run applied a day since this one last looked."""
        return self._read() != self.seen

    def caught_up(self) -> None:
        """This run has read the vault again, under the lock: the mark is as good as read."""
        self.seen = self._read()

    def begin(self) -> None:
        self._write(f"busy {os.urandom(8).hex()}")

    def end(self) -> None:
        self.seen = self._write(os.urandom(8).hex())

    def _write(self, token: str) -> str:
        write_private(self.state_dir, MARK_NAME, token.encode(), fsync=False, sync_dir=False)
        return token


def catch_up(vault: CoreVault, pending: Pending, knowledge: Knowledge, mark: RunMark) -> None:
    """Under the lock: index what this run wrote, then sync (scanning, whatever a watcher
    says) to index what other runs wrote, so the next plan sees all of it."""
    pending.flush(vault)
    trusted, vault.trust_watcher = vault.trust_watcher, False
    try:
        vault.sync()
    finally:
        vault.trust_watcher = trusted
    knowledge.planned.clear()  # every fact planned before is indexed now
    mark.caught_up()


def apply_day(
    vault: CoreVault, plan: DayPlan, now: datetime, pending: Pending, mark: RunMark
) -> tuple[int, int, int, int]:
    """Carry out a day's plan; (created, reinforced, superseded, proposed) newly done.

    The caller holds the lock and has checked that the day is still to be done."""
    created = reinforced = superseded = proposed = 0
    fsync = vault.settings.write.fsync
    folders: set[str] = set()
    with vault.lock:
        mark.begin()
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
        day = buffer.read_day(vault.root, plan.day)
        if day.consolidated is None or day.done < plan.upto:  # a rerun keeps the mark
            buffer.mark_consolidated(
                vault.root, plan.day, now, plan.upto, fsync=vault.settings.write.fsync
            )
        mark.end()
    return created, reinforced, superseded, proposed


def _reinforce(vault: CoreVault, path: str, action: Planned, now: datetime) -> bool:
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


def _retire(vault: CoreVault, path: str, action: Planned) -> bool:
    old = vault.load(path)
    if old.status == "superseded":
        return False
    updates: dict[str, object] = {"status": "superseded", "superseded_by": action.id}
    if not old.has_id:
        updates["id"] = action.target
    store.update_keys(vault.root, path, updates, fsync=vault.settings.write.fsync, sync_dir=False)
    return True
