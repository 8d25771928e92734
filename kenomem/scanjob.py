"""The change scan, run beside other work when the machine allows it.

Statting every memory file is the one cost of a sync that grows with the vault (about
3 us a file here, 30 ms at 10k files), and it is system time that a second core can
spend while the first imports the search engine and runs the query. On Linux, when the
process has no other threads, `start` forks a child that scans and sends the result
back through a pipe; anywhere else the scan runs inline when its result is asked for.
Either way the result is the same `ScanResult`.

The child already holds the saved stats (it is a copy of the parent), so when nothing
changed, the usual case, it answers with a few bytes instead of the whole listing.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

from kenomem.sync import ScanResult, Stat, scan


class ScanJob:
    """A scan started now; `result()` waits for it (or runs it, when it was not forked)."""

    def __init__(self, root: Path, known: dict[str, Stat]) -> None:
        self.root = root
        self.known = known
        self._pid = 0
        self._fd = -1
        self._result: ScanResult | None = None

    def result(self) -> ScanResult:
        if self._result is None:
            self._result = self._collect() if self._pid else scan(self.root)
        return self._result

    def _collect(self) -> ScanResult:
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            os.waitpid(self._pid, 0)
            self._pid = 0
        try:
            files, problems = marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):
            return scan(self.root)  # the child failed: scan here instead
        return ScanResult(self.known if files is None else files, problems)


def start(root: Path, known: dict[str, Stat]) -> ScanJob:
    """Scan `root` for memory files; `known` is what the state holds (saved stats)."""
    job = ScanJob(root, known)
    if not _can_fork():
        return job
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: scan, send, and leave without running any cleanup
        try:
            os.close(read_fd)
            seen = scan(root)
            data = marshal.dumps((None if seen.files == known else seen.files, seen.problems))
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
