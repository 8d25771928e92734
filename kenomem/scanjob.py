"""The change scan, run beside other work when the machine allows it.

Statting every memory file is the one cost of a sync that grows with the vault (about
3 us a file here, 30 ms at 10k files), and it is system time that a second core can
spend while the first imports the search engine and runs the query. On Linux, when the
process has no other threads, `start` forks a child that scans and sends the result
back through a pipe; anywhere else the scan runs inline when its result is asked for.
Either way the result is the same `ScanResult`.

The child reads the saved stats and compares, so when nothing changed, the usual case,
it answers with a few bytes, and the command never reads the stats at all.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

from kenomem.state import State
from kenomem.sync import ScanResult, scan


class ScanJob:
    """A scan started now; `outcome()` waits for it (or runs it, when it was not forked)."""

    def __init__(self, root: Path, state: State) -> None:
        self.root = root
        self.state = state
        self._pid = 0
        self._fd = -1

    def outcome(self) -> tuple[ScanResult | None, dict[str, str]]:
        """(the scan, or None when it equals the saved stats; the problems it met)."""
        if self._pid:
            try:
                return self._collect()
            except (EOFError, ValueError, TypeError):
                pass  # the child failed: scan here instead
        seen = scan(self.root)
        return (None if seen.files == self.state.stats else seen), seen.problems

    def _collect(self) -> tuple[ScanResult | None, dict[str, str]]:
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            os.waitpid(self._pid, 0)
            self._pid = 0
        files, problems = marshal.loads(b"".join(chunks))
        return (None if files is None else ScanResult(files, problems)), problems


def start(root: Path, state: State) -> ScanJob:
    """Scan `root` for memory files, to compare with the saved stats of `state`."""
    job = ScanJob(root, state)
    if not _can_fork():
        return job
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: scan, compare, send, and leave without any cleanup
        try:
            os.close(read_fd)
            seen = scan(root)
            try:
                same = seen.files == state.stats  # read here, in the child, not the parent
            except Exception:
                same = False
            data = marshal.dumps((None if same else seen.files, seen.problems))
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    job._pid, job._fd = pid, read_fd
    return job


def _can_fork() -> bool:
    # Forking a threaded process can deadlock the child; outside Linux, fork without
    # exec is not safe with every system library.
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1
