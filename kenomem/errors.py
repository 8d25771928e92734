"""One root for every error kenomem reports to a user.

Each error carries its exit code; the command layer catches `KenomemError` in one place,
prints the message as one line on stderr and exits with that code.
"""

from __future__ import annotations


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
