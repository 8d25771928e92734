"""What the watcher decides, as pure functions: which events matter, when a burst of them
is over, and what to reindex. `watch.py` only feeds events in and applies the plans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kenomem.files.ignore import GITIGNORE, Matcher
from kenomem.files.paths import MEMORY_DIRS, STATE_DIR

CONFIG_FILES = (GITIGNORE, "kenomem.toml")
# Editors' companions of a file being saved: swap, backup, lock and probe files.
_SWAP_SUFFIXES = (".swp", ".swo", ".swx", ".swn", "~", ".tmp", ".part", ".bak", ".orig")
_PROBES = ("4913", "5036")  # vim writes these to test that a folder is writable

# A burst is over after this long without events; a steady stream is applied anyway
# after the longer wait, so that a file saved every 100 ms is still indexed.
QUIET_SECONDS = 0.25
MAX_WAIT_SECONDS = 1.0
# Past this many paths, one full sync (a stat of every file) is cheaper and surer.
MAX_PATHS = 500


class Event(NamedTuple):
    """A file system event, with vault-relative paths ("" for the vault itself)."""

    kind: str  # created | modified | deleted | moved | closed
    path: str
    is_dir: bool = False
    dest: str | None = None  # for moves


def relevant(path: str, is_dir: bool, ignored: Matcher) -> bool:
    """Whether a change at `path` can change what the vault's memories are."""
    if path in CONFIG_FILES:
        return True
    parts = path.split("/")
    if not path or parts[0] in (STATE_DIR, ".git") or parts[0] not in MEMORY_DIRS:
        return False
    name = parts[-1]
    if any(part.startswith(".") for part in parts) or name.startswith("#"):
        return False  # hidden (the trash of `reset` too); emacs's .#lock and #autosave#
    if name.endswith(_SWAP_SUFFIXES) or name in _PROBES:
        return False
    if is_dir:
        return True
    return name.endswith(".md") and not ignored(path)


def without_own_writes(batch: list[Event], own: Callable[[str], bool]) -> list[Event]:
    """The events but those that only report kenomem's own rewrite of a memory file
    (`own(path)`: the file is exactly as kenomem recorded writing it, e.g. a recall's
    touch). They need no indexing, and counting them as pending would make every command
    in the next second scan the whole vault. A deletion is never one of them."""
    kept = []
    for event in batch:
        target = event.dest if event.kind == "moved" else event.path
        if event.is_dir or event.kind == "deleted" or not target or not own(target):
            kept.append(event)
    return kept


def matters(event: Event, ignored: Matcher) -> bool:
    """Whether an event can change anything (the observer drops the rest at once)."""
    if event.is_dir and event.kind in ("modified", "closed"):
        return False  # a folder "changes" whenever a file in it does: the file's event says it
    return any(
        path is not None and relevant(path, event.is_dir, ignored)
        for path in (event.path, event.dest)
    )


class Pending(NamedTuple):
    """Changes seen and not yet applied."""

    paths: frozenset[str]
    full: bool  # something only a full sync can settle (a folder moved, the rules changed)
    first: float  # when the first of them arrived
    last: float  # when the latest arrived


def add(
    pending: Pending | None, events: list[Event], now: float, ignored: Matcher
) -> Pending | None:
    """Fold new events into what is pending; None while nothing relevant happened."""
    paths = set(pending.paths) if pending else set()
    full = pending.full if pending else False
    seen = False  # only a relevant event restarts the quiet period
    for event in events:
        if not matters(event, ignored):
            continue
        seen = True
        for path in (event.path, event.dest):
            if path is None or not relevant(path, event.is_dir, ignored):
                continue
            if event.is_dir or path in CONFIG_FILES:
                full = True
            else:
                paths.add(path)
    if not seen:
        return pending
    first = pending.first if pending else now
    return Pending(frozenset(paths), full, first, now)


def due(pending: Pending | None, now: float) -> bool:
    """Whether the burst is over (or has gone on long enough) to be applied."""
    if pending is None:
        return False
    return now - pending.last >= QUIET_SECONDS or now - pending.first >= MAX_WAIT_SECONDS


def rewatch(events: list[Event]) -> bool:
    """Whether a memory folder itself was created, removed or moved (to watch it anew)."""
    return any(
        event.is_dir and (event.path in MEMORY_DIRS or event.dest in MEMORY_DIRS)
        for event in events
    )


class Plan(NamedTuple):
    full: bool  # sync the whole vault
    paths: tuple[str, ...]  # else just these


def plan(pending: Pending) -> Plan:
    if pending.full or len(pending.paths) > MAX_PATHS:
        return Plan(True, ())
    return Plan(False, tuple(sorted(pending.paths)))
