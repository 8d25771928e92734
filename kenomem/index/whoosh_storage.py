"""Whoosh's files, sealed: an index kenomem did not write is never read.

Whoosh keeps its table of contents (`_MAIN_<generation>.toc`: the schema and the list of
segments) as Python pickles, and loading a pickle runs whatever code it names. The index
lives in the vault's `.kenomem/`, which is private to its owner, but a file can still
arrive there from someone else: a `git clone` of a vault whose remote force-added
`.kenomem/index/whoosh/_MAIN_9.toc`, a `git pull` run by hand, a copied folder.

So each table of contents kenomem writes is sealed: `seal-<name>` beside it holds the
HMAC-SHA256 of its bytes under the user's own secret (`files/userdir.py`, kept outside
every vault). One is read only when its seal matches, from the bytes that were checked;
anything else is `IndexCorrupt`, and the index is rebuilt from the files (it is derived).
The segments it names have random names of the writer's choosing, which no one else knows.
The write lock is never followed through a link either.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.util.filelock import FcntlLock

from kenomem.errors import IndexCorrupt
from kenomem.files.userdir import seal, sealed

_PURPOSE = b"kenomem whoosh toc"
_SEAL_PREFIX = "seal-"
_MAX_TOC = 64 * 1024 * 1024  # far over any table of contents: a bigger file is not ours


def _is_toc(name: str) -> bool:
    return name.startswith("_") and name.endswith(".toc")


def _read_nofollow(path: str, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        chunks = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise IndexCorrupt(f"{path} is larger than any index kenomem writes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _mark(name: str, data: bytes) -> str:
    return seal(_PURPOSE, name.encode() + b"\0" + data)


class SealedStorage(FileStorage):  # type: ignore[misc]  # Whoosh is untyped
    """A Whoosh FileStorage whose tables of contents are sealed when written and checked
    when read."""

    def open_file(self, name: str, **kwargs: Any) -> Any:
        if not _is_toc(name):
            return super().open_file(name, **kwargs)
        path = self._fpath(name)
        data = _read_nofollow(path, _MAX_TOC)
        try:
            mark = _read_nofollow(self._fpath(_SEAL_PREFIX + name), 256).decode("ascii")
        except FileNotFoundError as exc:
            raise IndexCorrupt(
                f"the index's {name} has no seal: kenomem did not write it for this user"
            ) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise IndexCorrupt(f"the seal of the index's {name} cannot be read") from exc
        if not sealed(_PURPOSE, name.encode() + b"\0" + data, mark.strip()):
            raise IndexCorrupt(
                f"the index's {name} does not match its seal: kenomem did not write it "
                "for this user"
            )
        return StructFile(io.BytesIO(data), name=name, **kwargs)

    def rename_file(self, oldname: str, newname: str, safe: bool = False) -> None:
        """Whoosh writes a table of contents to a temporary name, then renames it: the seal
        is written first, so that a reader that sees the new one sees its seal."""
        if _is_toc(newname):
            data = _read_nofollow(self._fpath(oldname), _MAX_TOC)
            self._write_seal(newname, _mark(newname, data))
        super().rename_file(oldname, newname, safe=safe)
        if _is_toc(newname):
            self._drop_old_seals(newname)

    def _write_seal(self, name: str, mark: str) -> None:
        from kenomem.files.atomic import write_bytes

        target = Path(self._fpath(_SEAL_PREFIX + name))
        write_bytes(target, mark.encode("ascii"), fsync=False)

    def _drop_old_seals(self, current: str) -> None:
        """Keep the seals of this generation and the one before (a reader may be opening
        it); Whoosh removes older tables of contents itself."""
        generation = _generation(current)
        for entry in os.listdir(self.folder):
            if not entry.startswith(_SEAL_PREFIX):
                continue
            old = _generation(entry[len(_SEAL_PREFIX) :])
            if old is not None and generation is not None and old < generation - 1:
                try:
                    os.unlink(self._fpath(entry))
                except FileNotFoundError:
                    pass

    def lock(self, name: str) -> Any:
        return _NoFollowLock(self._fpath(name))


def _generation(toc: str) -> int | None:
    number = toc.rsplit("_", 1)[-1].removesuffix(".toc")
    return int(number) if number.isdigit() else None


class _NoFollowLock(FcntlLock):  # type: ignore[misc]
    """Whoosh's write lock, never opened through a link."""

    def acquire(self, blocking: bool = False) -> bool:
        import errno
        import fcntl

        flags = os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            self.fd = os.open(self.filename, flags, 0o600)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise IndexCorrupt(f"the index's write lock {self.filename} is a symlink") from exc
        mode = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(self.fd, mode)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            os.close(self.fd)
            self.fd = None
            return False
        self.locked = True
        return True
