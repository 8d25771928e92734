"""The agent's transcript, read a piece at a time: where one may be, and how far each has
been read.

The path comes from the hook's payload, a stranger's document, so only a transcript in
the folder where the agent keeps them is read: Claude Code's `projects/` folder, in
`$CLAUDE_CONFIG_DIR` when that is set and in `~/.claude` (Codex's sessions are in
`$CODEX_HOME/sessions`, else `~/.codex/sessions`). The path is walked from that folder
one name at a time, by descriptor, no link followed (`files/beneath.py`), and the file
itself is opened with `O_NOFOLLOW` and must be a regular file. Anything else is refused.

What was read is kept per transcript under `.kenomem/hooks/`: one small file named by a
hash of the transcript's path, holding the offset read up to and what the file was
(device, inode, the hash of its first bytes). Only complete lines are consumed: a line
still being written stays for the next call. A transcript that shrank, was replaced or
rewritten is read again from its start; what was logged from it before is recognised
(the buffer's entry key) and not logged twice. The caller holds the vault lock from the
read of the offset to its write, so two hooks at once consume each line once.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import InvalidInput, UnsafePath
from kenomem.files import beneath
from kenomem.files.paths import read_private, write_private

STATE_DIR = "hooks"
MAX_READ = 8 << 20  # bytes of a transcript consumed by one call; the rest by the next
HEAD = 4096  # bytes whose hash tells a rewritten file from the one read before


class Where(NamedTuple):
    root: Path  # the agent's folder of transcripts
    rel: str  # the transcript's path in it


class Offset(NamedTuple):
    offset: int = 0  # bytes consumed
    device: int = 0
    inode: int = 0
    head: str = ""  # sha256 of the first min(offset, HEAD) bytes
    skipping: bool = False  # inside a line too long to read: drop up to its end


class Piece(NamedTuple):
    lines: list[str]  # complete lines, decoded
    offset: Offset  # what to keep once they are logged
    restarted: bool  # the file is not the one read before: read from its start
    skipped: int  # lines too long to read, dropped


def roots(agent: str, environ: Mapping[str, str]) -> list[Path]:
    """The folders `agent` keeps its transcripts in, as this user's environment says."""
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    if agent == "codex":
        base = environ.get("CODEX_HOME", "")
        found = [Path(base) / "sessions"] if base else []
        return [*found, home / ".codex" / "sessions"]
    base = environ.get("CLAUDE_CONFIG_DIR", "")
    found = [Path(base) / "projects"] if base else []
    return [*found, home / ".claude" / "projects"]


def locate(path: str, agent: str, environ: Mapping[str, str]) -> Where:
    """Where the transcript `path` is among `agent`'s folders; InvalidInput when it is in
    none of them (a relative path, `..`, a path elsewhere)."""
    if not path or not os.path.isabs(path) or "\x00" in path:
        raise InvalidInput(f"transcript path {path!r} is not an absolute path: not read")
    given = Path(os.path.normpath(path))
    for root in roots(agent, environ):
        if not root.is_absolute():
            continue
        for base in dict.fromkeys((Path(os.path.normpath(root)), Path(os.path.realpath(root)))):
            try:
                rel = given.relative_to(base)
            except ValueError:
                continue
            if rel.parts and ".." not in rel.parts:
                return Where(base, rel.as_posix())
    raise InvalidInput(
        f"transcript {path} is not in {agent}'s folder of transcripts: not read",
        hint="kenomem reads transcripts only under "
        + ", ".join(str(r) for r in roots(agent, environ)),
    )


def open_transcript(where: Where) -> int:
    """A descriptor of the transcript, read-only: its folders walked from the root
    without following a link, the file opened with O_NOFOLLOW and a regular file."""
    folder, name = beneath.split(where.rel)
    try:
        with beneath.folder(where.root, folder, follow=False) as parent:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | beneath.NOFOLLOW, dir_fd=parent.fd)
    except UnsafePath:
        raise InvalidInput(
            f"transcript {where.root / where.rel}: a link or a file on its way: not read"
        ) from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):  # a link on the way
            raise InvalidInput(f"transcript {where.root / where.rel} is a link: not read") from None
        raise InvalidInput(
            f"cannot read transcript {where.root / where.rel}: {exc.strerror or exc}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput(f"transcript {where.root / where.rel} is not a regular file: not read")
    return fd


def state_name(where: Where) -> str:
    """The file under `.kenomem/` keeping how far the transcript was read."""
    key = hashlib.sha256(str(where.root / where.rel).encode("utf-8", "surrogatepass"))
    return f"{STATE_DIR}/{key.hexdigest()[:32]}.json"


def load_offset(state_dir: Path, where: Where) -> Offset:
    """How far the transcript was read (from its start when unknown or unreadable)."""
    try:
        data = json.loads(read_private(state_dir, state_name(where)))
        kept = Offset(
            int(data["offset"]),
            int(data["device"]),
            int(data["inode"]),
            str(data["head"]),
            bool(data.get("skipping", False)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Offset()
    return kept if kept.offset >= 0 else Offset()


def save_offset(state_dir: Path, where: Where, offset: Offset, *, fsync: bool = True) -> None:
    record = {"path": str(where.root / where.rel), **offset._asdict()}
    data = json.dumps(record, ensure_ascii=True).encode("ascii")
    write_private(state_dir, state_name(where), data, fsync=fsync)


def read_new(fd: int, kept: Offset) -> Piece:
    """The complete lines written since `kept`, and the offset after them. Reads from the
    start instead when the file is another (device, inode), shorter than the offset, or
    rewritten (its first bytes changed)."""
    st = os.fstat(fd)
    start = kept
    restarted = False
    if kept.offset and (
        (kept.device, kept.inode) != (st.st_dev, st.st_ino)
        or st.st_size < kept.offset
        or _head(fd, kept.offset) != kept.head
    ):
        start, restarted = Offset(), True
    data = os.pread(fd, MAX_READ, start.offset)
    end = data.rfind(b"\n") + 1
    skipping = start.skipping
    if not end:  # no complete line: wait, unless one line is longer than we read at once
        if len(data) < MAX_READ:
            return Piece([], _at(fd, st, start.offset, skipping), restarted, 0)
        return Piece([], _at(fd, st, start.offset + len(data), True), restarted, 0)
    lines = data[:end].split(b"\n")[:-1]
    skipped = 0
    if skipping:  # the rest of a line too long to read
        lines, skipped = lines[1:], 1
    decoded = [line.decode("utf-8", "replace") for line in lines]
    return Piece(decoded, _at(fd, st, start.offset + end, False), restarted, skipped)


def _at(fd: int, st: os.stat_result, offset: int, skipping: bool) -> Offset:
    return Offset(offset, st.st_dev, st.st_ino, _head(fd, offset), skipping)


def _head(fd: int, offset: int) -> str:
    return hashlib.sha256(os.pread(fd, min(offset, HEAD), 0)).hexdigest()
