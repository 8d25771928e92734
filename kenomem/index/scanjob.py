"""The change scan, run beside other work when the machine allows it.

Statting every memory file is the one cost of a sync that grows with the vault (about
3 us a file here, 30 ms at 10k files), and it is system time that a second core can
spend while the first imports the search engine and runs the query. Where
`os.posix_spawn` exists, `start` runs `kenomem.files.scan` in a fresh interpreter
(`python -I -S`, which starts in about 10 ms and imports nothing but `os`); anywhere
else the scan runs inline when its outcome is asked for.

A fresh process rather than a fork: after a fork, every page of the parent's heap must
be copied on its first write (Python writes reference counts everywhere), which cost
the command more than the scan it saved.

The scanner reads the saved stats and answers with the difference only: when nothing
changed, the usual case, a few bytes, and the command never reads the stats at all.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

from kenomem.files.scan import scan
from kenomem.index.state import STATS_NAME, State
from kenomem.index.sync import plan_sync

_CHILD = (
    "import sys; sys.path[:0] = [{root!r}]; from kenomem.files.scan import child_main; child_main()"
)


class ScanJob:
    """A scan started now; `outcome()` waits for it (or runs it, when it was not started)."""

    def __init__(self, root: Path, state: State) -> None:
        self.root = root
        self.state = state
        self._pid = 0
        self._fd = -1

    def outcome(self) -> tuple[bool, dict[str, str]]:
        """(whether any memory file changed since the state was saved, the problems met)."""
        if self._pid:
            try:
                return self._collect()
            except (EOFError, ValueError, TypeError):
                pass  # the scanner failed: scan here instead
        seen = scan(self.root)
        changed = bool(plan_sync(self.state.stats, seen.files, self.state.unverified))
        return changed, seen.problems

    def _collect(self) -> tuple[bool, dict[str, str]]:
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            os.waitpid(self._pid, 0)
            self._pid = 0
        changed, gone, problems = marshal.loads(b"".join(chunks))
        if changed is None:
            raise ValueError("the scanner could not read the saved stats")
        # What the scanner saw differ from the saved stats may be what this state's journal
        # recorded since (recall's own touches): only the rest is a change.
        newer = self.state.stats_since_save()
        unexplained = [path for path, stat in changed.items() if newer.get(path) != tuple(stat)]
        # A file written since the save and removed since is in neither answer: the
        # scanner compared with the saved stats, which never held it. Look at those here.
        vanished = [
            path
            for path, stat in newer.items()
            if path not in changed and path not in gone and _stat(self.root / path) != stat
        ]
        return bool(unexplained or gone or vanished or self.state.unverified), problems


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def start(root: Path, state: State) -> ScanJob:
    """Scan `root` for memory files, to compare with the saved stats of `state`."""
    job = ScanJob(root, state)
    if not hasattr(os, "posix_spawn") or state.directory is None or not sys.executable:
        return job
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    argv = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _CHILD.format(root=package_root),
        str(root),
        str(state.directory / STATS_NAME),
        str(state.generation),
    ]
    read_fd, write_fd = os.pipe()
    try:
        pid = os.posix_spawn(
            sys.executable,
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_CLOSE, read_fd),
            ],
        )
    except OSError:
        os.close(read_fd)
        return job
    finally:
        os.close(write_fd)
    job._pid, job._fd = pid, read_fd
    return job
