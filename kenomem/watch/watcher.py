"""`watch`: keep the index in step with the files as they are edited, and say so.

A watchdog observer (inotify, FSEvents, ...; polling where none works) puts raw events
on a queue; this loop folds them into what is pending, and when a burst is over applies
the plan `watchplan` decides: a sync of just the changed paths, or a full one. Between
batches it beats the heartbeat, so other commands skip their own scan while the watcher
is alive and idle.

kenomem's own writes (a recall touching `last_accessed`) arrive as events too; they cost
a stat each, because the state already records the stat they left.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kenomem.errors import KenomemError
from kenomem.files.ignore import Matcher, matcher
from kenomem.files.paths import MEMORY_DIRS
from kenomem.files.plural import counted
from kenomem.index import heartbeat
from kenomem.index import state as state_mod
from kenomem.index.sync import SyncReport
from kenomem.vault.core import CoreVault
from kenomem.watch import plan as watchplan
from kenomem.watch.plan import Event

Log = Callable[[str, str], None]  # (level: info | detail | warn, message)

TICK_SECONDS = 0.1
ABSENT_POLL_SECONDS = 1.0
WATCH_EMBED_STEP = 64  # vectors made between two looks at the events


class WatchRequest(NamedTuple):
    polling: bool = False  # poll the files instead of the system's change notifications


class WatchSummary(NamedTuple):
    batches: int
    reindexed: int
    removed: int
    seconds: float


class Stopper:
    """Set by a signal handler; the loop checks it every tick."""

    def __init__(self) -> None:
        self.stopped = False

    def stop(self, *_args: object) -> None:
        self.stopped = True


def run(
    root: Path,
    request: WatchRequest,
    *,
    log: Log,
    stopper: Stopper,
    on_beat: Callable[[], None] | None = None,
) -> WatchSummary:
    """Watch until stopped; `on_beat` is called at every heartbeat (the command line
    checks on its command server there)."""
    polling = request.polling
    started = time.monotonic()
    vault = CoreVault.open(root)
    vault.trust_watcher = False
    vault.index_may_lag = False  # a batch the disk refuses is retried, not passed over
    events: queue.Queue[Event] = queue.Queue()
    batches = reindexed = removed = 0
    known_errors: set[str] = set()
    ignored = [matcher(vault.ignore_rules)]  # a box: the observer's thread reads it too

    def apply(full: bool, paths: tuple[str, ...]) -> None:
        nonlocal batches, reindexed, removed
        if full:
            vault.reread_ignore_rules()  # they may be what changed
            ignored[0] = matcher(vault.ignore_rules)
            report = vault.sync()
        else:
            # An event says the file changed even when its stat says not (a same-size save
            # within one timestamp tick): compare contents.
            report = vault.sync_paths(list(paths), verify=True)
        batches += 1
        reindexed += report.added + report.updated + report.moved
        removed += report.removed
        _log_report(log, report, full)
        for path, why in report.errors.items():
            if path not in known_errors:
                log("warn", f"cannot read {path}: {why}")
        known_errors.clear()
        known_errors.update(report.errors)
        wanting[0] = vault.meaning is not None

    # Vectors of what changed (with an embeddings provider), a few at a time between
    # batches, so that a vault of many new memories does not hold up the watching.
    wanting = [False]

    def embed_some() -> None:
        wanting[0] = vault.embed_wanted(WATCH_EMBED_STEP) > 0
        for warning in vault.warnings:
            log("warn", warning)
        vault.warnings.clear()

    # Watch first, then sync: a file saved meanwhile is then an event, not a miss.
    observer = _start_observer(root, events, polling, log, ignored)
    apply(True, ())
    heartbeat.write(vault.state_dir, max(events.qsize(), int(polling)))
    log("info", f"watching {root}")
    pending: watchplan.Pending | None = None
    next_beat = time.monotonic() + heartbeat.INTERVAL_SECONDS
    try:
        while not stopper.stopped:
            batch = _drain(events, TICK_SECONDS)
            if batch:
                batch = watchplan.without_own_writes(batch, _own_writes(root, vault.state_dir))
            now = time.monotonic()
            if not root.is_dir():
                observer = _wait_for_vault(root, observer, events, polling, log, stopper, ignored)
                if stopper.stopped:
                    break
                pending = watchplan.Pending(frozenset(), True, now, now)
            if watchplan.rewatch(batch):  # a memory folder came or went: watch it (or not)
                _stop_observer(observer)
                observer = _start_observer(root, events, polling, log, ignored)
            was_idle = pending is None
            pending = watchplan.add(pending, batch, now, ignored[0])
            if was_idle and pending is not None:
                heartbeat.write(vault.state_dir, max(1, len(pending.paths)))
            if watchplan.due(pending, now):
                assert pending is not None
                plan = watchplan.plan(pending)
                pending = None
                try:
                    apply(plan.full, plan.paths)
                except (KenomemError, OSError) as exc:
                    why = exc.message if isinstance(exc, KenomemError) else str(exc)
                    log("warn", f"could not index the changes, will retry: {why}")
                    pending = watchplan.Pending(frozenset(plan.paths), plan.full, now, now)
            elif pending is None and wanting[0] and events.empty():
                embed_some()
            if now >= next_beat or (pending is None and not was_idle):
                # Events still queued count as pending: no command may trust the index
                # before they are looked at. A polling observer notices changes only at its
                # next poll, so it never vouches for the index: commands keep scanning.
                waiting = ((len(pending.paths) or 1) if pending else 0) + events.qsize()
                heartbeat.write(vault.state_dir, max(waiting, int(polling)))
                next_beat = now + heartbeat.INTERVAL_SECONDS
                if on_beat is not None:
                    on_beat()
    finally:
        _stop_observer(observer)
        heartbeat.clear(vault.state_dir)
    return WatchSummary(batches, reindexed, removed, round(time.monotonic() - started, 1))


def _own_writes(root: Path, state_dir: Path) -> Callable[[str], bool]:
    """Whether a memory file is exactly as kenomem last recorded writing it: a recall's
    touches journal each rewrite before renaming the file into place, so the record is
    there when the rename's event arrives."""
    written = state_mod.journaled_rewrites(state_dir)

    def own(path: str) -> bool:
        record = written.get(path)
        if record is None:
            return False
        try:
            st = os.stat(root / path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == record

    return own


def _drain(events: queue.Queue[Event], timeout: float) -> list[Event]:
    try:
        batch = [events.get(timeout=timeout)]
    except queue.Empty:
        return []
    while True:
        try:
            batch.append(events.get_nowait())
        except queue.Empty:
            return batch


def _log_report(log: Log, report: SyncReport, full: bool) -> None:
    if report.rebuilt:
        log("info", f"rebuilt the index: {counted(report.indexed, 'memory')}")
    elif report.changed:
        counts = ", ".join(
            f"{n} {what}"
            for n, what in (
                (report.added, "added"),
                (report.updated, "updated"),
                (report.moved, "moved"),
                (report.removed, "removed"),
            )
            if n
        )
        names = sorted(report.paths)
        where = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        if full:
            where += "; after a full scan"
        log("detail", f"reindexed: {counts} ({where})")


# -- the observer: the only part that touches watchdog ------------------------------------


def _start_observer(
    root: Path, events: queue.Queue[Event], polling: bool, log: Log, ignored: list[Matcher]
) -> Any:
    """Watch `root`; put on `events` only the events that can matter (so that a queued
    event always means pending work, and the index's own writes cost nothing)."""
    from watchdog.events import FileSystemEventHandler

    base = str(root)

    def relative(path: str | bytes) -> str | None:
        text = os.fsdecode(path)
        if text == base:
            return ""
        if not text.startswith(base + os.sep):
            return None
        return text[len(base) + 1 :].replace(os.sep, "/")

    class Handler(FileSystemEventHandler):  # type: ignore[misc]
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            path = relative(event.src_path)
            dest = relative(event.dest_path) if getattr(event, "dest_path", "") else None
            change = Event(event.event_type, path or "", event.is_directory, dest)
            if watchplan.matters(change, ignored[0]):
                events.put(change)

    observer = _scheduled(_observer(polling), Handler(), root)
    try:
        observer.start()
    except OSError as exc:
        if polling:
            raise
        log("warn", f"cannot watch with the system's notifications ({exc}); polling instead")
        observer = _scheduled(_observer(True), Handler(), root)
        observer.start()
    return observer


def _scheduled(observer: Any, handler: Any, root: Path) -> Any:
    """The vault's own folder (for its settings and ignore rules, and memory folders coming
    and going), and each memory folder with all below it: not `.kenomem/`, not `.git/`."""
    observer.schedule(handler, str(root), recursive=False)
    for name in MEMORY_DIRS:
        folder = root / name
        if folder.is_dir() and not folder.is_symlink():
            observer.schedule(handler, str(folder), recursive=True)
    return observer


def _observer(polling: bool) -> Any:
    if polling:
        from watchdog.observers.polling import PollingObserver

        return PollingObserver(timeout=0.5)
    from watchdog.observers import Observer

    return Observer()


def _stop_observer(observer: Any) -> None:
    try:
        observer.stop()
        observer.join(timeout=5)
    except RuntimeError:
        pass  # it never started


def _wait_for_vault(
    root: Path,
    observer: Any,
    events: queue.Queue[Event],
    polling: bool,
    log: Log,
    stopper: Stopper,
    ignored: list[Matcher],
) -> Any:
    """The vault folder is gone (an unmounted drive, a checkout): wait, then watch again."""
    log("warn", f"{root} is gone; waiting for it to come back")
    _stop_observer(observer)
    while not root.is_dir():
        if stopper.stopped:
            return observer
        time.sleep(ABSENT_POLL_SECONDS)
    log("info", f"{root} is back; watching again")
    return _start_observer(root, events, polling, log, ignored)
