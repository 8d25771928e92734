"""Where things live: finding the vault, its layout, and paths that cannot escape it."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from kenomem.errors import InvalidInput, VaultNotFound
from kenomem.scan import MEMORY_DIRS, MEMORY_TYPES
from kenomem.textcheck import check_text

__all__ = ["MEMORY_DIRS", "MEMORY_TYPES"]  # named in scan.py, which imports nothing of ours

ENV_VAULT = "KENOMEM_VAULT"
DEFAULT_VAULT = Path("~/kenomem")
ARCHIVE_DIR = "archive"
BUFFER_DIR = "buffer"
STATE_DIR = ".kenomem"
FOUNDATION = "foundation.md"


def resolve_vault(flag: str | None) -> Path:
    """The vault from `--vault`, else `$KENOMEM_VAULT`, else `~/kenomem`."""
    raw = flag or os.environ.get(ENV_VAULT) or str(DEFAULT_VAULT)
    return Path(raw).expanduser().absolute()


def require_vault(root: Path) -> Path:
    if not root.is_dir():
        raise VaultNotFound(
            f"no vault at {root}",
            hint=f"create one with: kenomem init {root}  (or pass --vault / set ${ENV_VAULT})",
        )
    return root


def state_dir(root: Path) -> Path:
    return root / STATE_DIR


_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slugify(text: str, max_len: int = 60) -> str:
    """A file-name-safe slug: ascii letters, digits and single hyphens, never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug or "memory"


_NAME_SAFE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def check_label(value: str, what: str, max_len: int = 128) -> str:
    """A session id, scope or tag: printable text on one line, of bounded length.

    Short enough, too, that its file name (`label_filename`) fits any file system.
    """
    check_text(value, what)  # a control character, named
    if not value or len(value) > max_len or not value.isprintable():
        raise InvalidInput(
            f"invalid {what} {value!r}: one line of printable text, 1-{max_len} chars"
        )
    if len(label_filename(value)) + len(".md") > MAX_NAME_BYTES:
        raise InvalidInput(
            f"invalid {what} {value[:20]!r}...: too long once made a file name; use a "
            "shorter one (ASCII letters and digits take the least room)"
        )
    return value


# File names are at most 255 bytes; keep room for the temporary-file suffix of atomic writes.
MAX_NAME_BYTES = 200


def label_filename(value: str) -> str:
    """A session id as a file name that can never be a path: unsafe bytes are %-escaped.

    The mapping is one-to-one, so two sessions never share a file; a leading dot is
    escaped too, so the result is never hidden, `.` or `..`.
    """
    out = []
    for i, ch in enumerate(value):
        if ch in _NAME_SAFE_CHARS and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def inside(root: Path, candidate: Path) -> Path:
    """`candidate` resolved, refused unless it stays inside `root` (symlinks followed)."""
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise InvalidInput(f"refusing a path outside the vault: {candidate}")
    return resolved


def relpath(root: Path, path: Path) -> str:
    """The vault-relative path with forward slashes, as stored in the index."""
    return path.relative_to(root).as_posix()


def memory_dir_for(root: Path, mem_type: str, archived: bool = False) -> Path:
    base = root / ARCHIVE_DIR if archived else root
    return base / mem_type
