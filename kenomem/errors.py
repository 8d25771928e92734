"""One root for every error kenomem reports to a user.

Each error carries its exit code; the command layer catches `KenomemError` in one place,
prints the message as one line on stderr and exits with that code.
"""

from __future__ import annotations

import errno
import os


class KenomemError(Exception):
    """An error with a message meant for the user, not a traceback."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(KenomemError):
    """A bad option value detected after parsing (same exit code as a parse error)."""

    exit_code = 2


class VaultNotFound(KenomemError):
    pass


class MemoryNotFound(KenomemError):
    pass


class AmbiguousId(KenomemError):
    pass


class InvalidInput(KenomemError):
    """Input that kenomem refuses to store (empty text, bad value)."""


class UnsafePath(InvalidInput):
    """A file kenomem does not follow or write through: it leads out of the vault (a
    symlink, itself or a folder on its way), it is a symlink to be written, it is not a
    regular file, or its owner made it read-only."""


class SecretDetected(KenomemError):
    """The text looks like it holds a credential; nothing was written."""


class ConfigError(KenomemError):
    pass


class FrontmatterError(KenomemError):
    """A memory file whose frontmatter cannot be parsed. Carries path and line."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line
        self.reason = message


class IndexCorrupt(KenomemError):
    """The derived index cannot be read; the caller rebuilds it from the files."""


class LockTimeout(KenomemError):
    pass


class EditorFailed(KenomemError):
    pass


class Refused(KenomemError):
    """A destructive command that was not confirmed."""


class StorageError(KenomemError):
    """The file system refused what kenomem asked of it: full, read-only, not allowed,
    failing. `cause` says which in a few words; `path` is where, when known."""

    def __init__(
        self, message: str, *, hint: str | None = None, cause: str = "", path: str = ""
    ) -> None:
        super().__init__(message, hint=hint)
        self.cause = cause or message
        self.path = path


class DiskFull(StorageError):
    """No space left (or the user's quota is used up)."""


class ReadOnly(StorageError):
    """The file system is mounted read-only."""


class NoPermission(StorageError):
    """The user may not read or change a file or folder kenomem needs."""


def cannot_write(exc: BaseException) -> bool:
    """Whether `exc` is the file system refusing a write: full, read-only, not allowed
    (an error a reading command can live with: it answers from the index as it is)."""
    return isinstance(exc, OSError) and _KINDS.get(exc.errno or 0) in _REFUSED


def is_storage_error(exc: BaseException) -> bool:
    """Whether `exc` is the file system failing in a way `storage_error` names (so not a
    damaged file, and not a bug)."""
    return isinstance(exc, OSError) and (exc.errno or 0) in _KINDS


def storage_error(exc: BaseException, path: object = None) -> StorageError | None:
    """The user's error for an OSError of the file system, naming the cause and what to
    do; None when the error is not one of those (a bug, then, to report as such).

    `path` is where it happened when the error does not say (a write to an open file)."""
    if not isinstance(exc, OSError):
        return None
    kind = _KINDS.get(exc.errno or 0)
    if kind is None:
        return None
    where = str(exc.filename or path or "")
    at = f" {where}" if where else ""
    mount = mount_point(where) if where else ""
    disk = mount or "the vault's disk"
    if kind == "full":
        return DiskFull(
            f"disk full: no space left on {disk} to write{at or ' the file'}",
            hint=f"free some space on {disk} and run the command again",
            cause="disk full",
            path=where,
        )
    if kind == "quota":
        return DiskFull(
            f"disk quota exceeded: no room under your quota on {disk} to write{at}",
            hint=f"free some of your space on {disk} (or ask for a larger quota) and "
            "run the command again",
            cause="disk quota exceeded",
            path=where,
        )
    if kind == "read-only":
        return ReadOnly(
            f"read-only file system: cannot write{at or ' to the vault'}"
            + (f" ({mount} is mounted read-only)" if mount else ""),
            hint=f"remount {disk} read-write, or use a vault on a writable disk; "
            "reading commands (recall --no-touch, list, show) still answer",
            cause="read-only file system",
            path=where,
        )
    if kind == "permission":
        return NoPermission(
            f"permission denied on{at or ' a file of the vault'}",
            hint="kenomem reads and writes the vault's files and its .kenomem folder: "
            "check their owner and mode (ls -ld), or run kenomem as their owner",
            cause="permission denied",
            path=where,
        )
    cause, message, hint = {
        "too big": (
            "file too large",
            f"file too large: writing{at} would pass the file size limit",
            "raise the limit (ulimit -f) and run the command again",
        ),
        "files": (
            "too many open files",
            f"too many open files: the system refused to open{at or ' a file'}",
            "raise the limit (ulimit -n) or close other programs, and run the command again",
        ),
        "io": (
            "input/output error",
            f"input/output error on{at or ' the vault disk'}: the disk or its connection failed",
            "check the disk (dmesg, fsck) and run the command again; the memory files are "
            "the truth, and `kenomem reindex` rebuilds the rest from them",
        ),
    }[kind]
    return StorageError(message, hint=hint, cause=cause, path=where)


# By name: not every system has every one (EDQUOT).
_KINDS = {
    getattr(errno, name): kind
    for name, kind in (
        ("ENOSPC", "full"),
        ("EDQUOT", "quota"),
        ("EROFS", "read-only"),
        ("EACCES", "permission"),
        ("EPERM", "permission"),
        ("EFBIG", "too big"),
        ("EMFILE", "files"),
        ("ENFILE", "files"),
        ("EIO", "io"),
    )
    if hasattr(errno, name)
}
_REFUSED = frozenset({"full", "quota", "read-only", "permission", "too big"})


def mount_point(path: str) -> str:
    """The mount point of the file system that holds `path` (or its nearest existing
    folder); "" when it cannot be told."""
    where = os.path.abspath(path)
    while not os.path.exists(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    where = os.path.realpath(where)
    import re  # only when an error is reported

    octal = re.compile(r"\\([0-7]{3})")
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            # Each line: id parent major:minor root MOUNT-POINT ...; a space is \040.
            mounts = [
                octal.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
                for fields in map(str.split, handle)
                if len(fields) > 4
            ]
    except OSError:
        mounts = []
    inside = [m for m in mounts if where == m or where.startswith(m.rstrip("/") + "/")]
    if inside:
        return max(inside, key=len)
    try:  # no mount table: climb while the device stays the same
        device = os.stat(where).st_dev
        while os.path.dirname(where) != where:
            parent = os.path.dirname(where)
            if os.stat(parent).st_dev != device:
                break
            where = parent
    except OSError:
        return ""
    return where


class SyncError(KenomemError):
    """`kenomem sync` stopped: git is missing, the vault is no repository (or in a state
    it cannot sync from: a detached HEAD, a rebase, a merge left to finish), the remote
    is missing or unreachable, or a merge still conflicts. The message names the cause,
    the hint the fix; the repository is left as git left it."""


class RemoteRefused(SyncError):
    """A remote's commits bring what `kenomem sync` never merges (`.kenomem/`, a hidden
    name, a symlink, a submodule, a file that is not the vault's, changed git rules):
    nothing was merged; the message names each path and the commit that brought it."""
