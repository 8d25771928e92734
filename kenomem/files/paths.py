"""Where things live: finding the vault, its layout, and paths that cannot escape it.

Every door that reads, writes, moves or removes a file of the vault goes through the one
containment check, `outside` (kept in scan.py, whose scan runs it too): a file or folder
that is a symlink leading out of the vault is never read, written or emptied through.
The doors that open, move or remove a file do so by descriptor (`beneath`): the folders
on the way are opened one by one, a link among them followed only when it stays inside,
and the file relative to its folder, so a folder swapped for a symlink between a check
and a use cannot send them elsewhere. `open_inside` and `read_inside` read a file only
when it stays inside; `open_for_update`, `move_inside` and `remove_inside` never act
through a symlink (a write would put a regular file in the link's place);
`open_for_update` refuses, besides, to rewrite a file its owner made read-only.
`check_writable` is the same refusal as a check, for writers that work by path.

`.kenomem/` must be a real folder of the user's own (`state_dir`, `private_dir`).
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from kenomem.errors import InvalidInput, UnsafePath, VaultNotFound
from kenomem.files import beneath
from kenomem.files.scan import MEMORY_DIRS, MEMORY_TYPES, OUTSIDE, outside
from kenomem.files.textcheck import check_text
from kenomem.files.vaultfind import ENV_VAULT, MARKER, STATE_DIR, choose

# Named in scan.py and vaultfind.py, which import nothing of ours.
__all__ = ["ENV_VAULT", "MARKER", "MEMORY_DIRS", "MEMORY_TYPES", "OUTSIDE", "STATE_DIR", "outside"]

ARCHIVE_DIR = "archive"
BUFFER_DIR = "buffer"
FOUNDATION = "foundation.md"
# MARKER, `kenomem.toml`, is the file `init` writes (from vault-template/): a folder that
# has it is a vault. Commands that move or remove files (`reset`, `prune`) act on no
# other folder.


def resolve_vault(flag: str | None, *, discover: bool = True) -> Path:
    """The vault from `--vault`, else `$KENOMEM_VAULT`, else the folder the process runs
    in or the nearest above it holding a vault of the user's own, else `~/kenomem`
    (`vaultfind.choose`; without `discover`, no folder is searched)."""
    return Path(choose(flag, discover=discover)[0])


def require_vault(root: Path) -> Path:
    if not root.is_dir():
        raise VaultNotFound(
            f"no vault at {root}",
            hint=f"create one with: kenomem init {root}  (or pass --vault / set ${ENV_VAULT})",
        )
    try:
        # A link, a file or another user's folder in its place: refused (`state_dir`).
        beneath.check_private(root / STATE_DIR)
    except OSError:
        pass  # unreadable: the command that needs it says so
    return root


def require_marker(root: Path, command: str) -> None:
    """Refuse to let `command` move or remove files in a folder that is not a vault."""
    if not (root / MARKER).is_file():
        raise VaultNotFound(
            f"{root} is not a kenomem vault (it has no {MARKER}); `{command}` changes nothing "
            "there",
            hint=f"if it is your vault, `kenomem init {root}` adds {MARKER} and keeps every "
            "file; otherwise pass --vault or set $" + ENV_VAULT,
        )


def state_dir(root: Path) -> Path:
    """The vault's `.kenomem/`, which must be, when it is there, a real folder of the
    user's own: a symlink, a file or another user's folder is `UnsafePath`, naming it
    and what to do (another user could plant what kenomem loads there, or read what it
    writes). Not created here (`private_dir` does)."""
    folder = root / STATE_DIR
    beneath.check_private(folder)
    return folder


def private_dir(folder: Path) -> Path:
    """`folder`, created if missing, its owner's alone (0700) whatever the umask. Every
    place that may create the vault's `.kenomem/` goes through here: the lock, the state,
    the index and the command server's socket live in it. One that exists and is open to
    others is closed to them; one that is a symlink, not a folder, or another user's is
    refused (`UnsafePath`, see `beneath.private`). Its parent is not created: a vault
    that vanished (an unmounted drive) is not recreated. Files in it are opened with
    `beneath.open_private`, never through a link."""
    beneath.private(folder).close()
    return folder


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


def check_tag(tag: str) -> str:
    """A tag: a label of at most 64 characters, without a comma (tags are written and
    given as comma-separated lists); the tag without the blanks around it."""
    check_label(tag, "tag", max_len=64)
    if "," in tag:
        raise InvalidInput(f"invalid tag {tag!r}: a tag cannot hold a comma")
    return tag.strip()


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


def check_inside(root: Path, rel: str, *, follow_last: bool = True) -> None:
    """Raise `UnsafePath` if `rel` leads out of the vault (see `outside`)."""
    if outside(root, rel, follow_last):
        raise beneath.outside_error(rel)


def open_inside(root: Path, rel: str) -> int:
    """A descriptor of the regular file `rel`, opened for reading only if it and its
    folders stay inside the vault (a symlink that stays inside may be read), by
    descriptor from the vault (`beneath.open_file`).

    Raises `UnsafePath` (outside, or not a regular file: a pipe would hang the read) or
    the `OSError` of the open (`FileNotFoundError` when it is not there)."""
    # Non-blocking, so that a pipe that took a file's place cannot hang the open.
    fd = beneath.open_file(root, rel, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePath(f"{rel}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_inside(root: Path, rel: str) -> bytes:
    """The bytes of `rel`, read only if it stays inside the vault (see `open_inside`)."""
    with open(open_inside(root, rel), "rb") as handle:
        return handle.read()


def read_text_inside(root: Path, rel: str) -> str:
    return read_inside(root, rel).decode("utf-8")


def open_for_update(root: Path, rel: str, parent: beneath.Folder | None = None) -> int:
    """A descriptor, for reading, of a file kenomem is about to rewrite (a temporary file
    renamed over it, in `parent`, its folder walked from the vault when the caller holds
    it): refused with `UnsafePath` when its folders leave the vault, when it is a
    symlink (the rename would replace the link, not what it points to), when it is not a
    regular file, and when its owner may not write it (kenomem respects a file made
    read-only)."""
    where, name = beneath.split(rel)
    held = parent or beneath.folder(root, where)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | beneath.NOFOLLOW
    try:
        fd = os.open(name, flags, dir_fd=held.fd)
    except OSError as exc:
        if beneath.is_link(held, name):
            raise _symlink(rel) from None
        raise type(exc)(exc.errno, exc.strerror, os.path.join(root, rel)) from None
    finally:
        if parent is None:
            held.close()
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePath(f"{rel}: not a regular file")
        if not mode & stat.S_IWUSR:
            raise UnsafePath(
                f"{rel} is read-only for its owner; kenomem leaves it as it is",
                hint=f"to let kenomem update it: chmod u+w {rel}",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_writable(root: Path, rel: str) -> None:
    """Refuse (`UnsafePath`) to create, replace, move or remove `rel` through a symlink:
    its folders must stay inside the vault and it must not be a symlink itself."""
    check_inside(root, rel, follow_last=False)
    if os.path.islink(os.path.join(root, rel)):
        raise _symlink(rel)


def _symlink(rel: str) -> UnsafePath:
    return beneath.link_error(rel)


def read_private(state_dir: Path, rel: str) -> bytes:
    """The bytes of the file `rel` under `.kenomem/` (`state_dir`), never read through a
    link (`UnsafePath`); `FileNotFoundError` when it is not there."""
    fd = beneath.open_private(
        state_dir, rel, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0), create=False
    )
    with open(fd, "rb") as handle:
        return handle.read()


def write_private(
    state_dir: Path, rel: str, data: bytes, *, fsync: bool = True, sync_dir: bool = True
) -> None:
    """Atomically write the file `rel` under `.kenomem/` (`state_dir`), in its folder held
    by descriptor (`beneath.private`, made if missing): never through a link."""
    from kenomem.files.atomic import write_bytes

    where, name = beneath.split(rel)
    with beneath.private(state_dir, where) as folder:
        write_bytes(folder.path / name, data, fsync=fsync, sync_dir=sync_dir, folder=folder)


def remove_private(state_dir: Path, rel: str) -> None:
    """Remove the file `rel` under `.kenomem/` (a link as the link), if it is there."""
    where, name = beneath.split(rel)
    try:
        with beneath.private(state_dir, where, create=False) as folder:
            os.unlink(name, dir_fd=folder.fd)
    except FileNotFoundError:
        pass


def move_inside(root: Path, source: str, dest: str) -> list[Path]:
    """Rename `source` to `dest`, both vault-relative (a symlink is moved as the link):
    refused unless both stay inside the vault, and when `dest` is a symlink; `dest`'s
    folders are made as needed. The rename is made between the two folders'
    descriptors (`beneath.folder`). Returns the folders it made, deepest first (for
    `atomic.remove_empty` on an undo)."""
    from_dir, from_name = beneath.split(source)
    to_dir, to_name = beneath.split(dest)
    with beneath.folder(root, from_dir) as src, beneath.folder(root, to_dir, create=True) as dst:
        try:
            if beneath.is_link(dst, to_name):
                raise _symlink(dest)
            try:
                os.rename(from_name, to_name, src_dir_fd=src.fd, dst_dir_fd=dst.fd)
            except OSError as exc:
                raise type(exc)(exc.errno, exc.strerror, str(root / source)) from None
        except BaseException:
            beneath.remove_made(root, dst.made)
            raise
        return [root / rel for rel in dst.made]


def remove_inside(root: Path, rel: str) -> None:
    """Remove the file `rel` (a symlink as the link) from its folder walked from the
    vault: never a file outside through a folder swapped for a link.
    `FileNotFoundError` when it is not there."""
    where, name = beneath.split(rel)
    with beneath.folder(root, where) as parent:
        try:
            os.unlink(name, dir_fd=parent.fd)
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, str(root / rel)) from None
