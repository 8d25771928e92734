"""Where things live: finding the vault, its layout, and paths that cannot escape it.

Every door that reads, writes, moves or removes a file of the vault goes through the one
containment check, `outside` (kept in scan.py, whose scan runs it too): a file or folder
that is a symlink leading out of the vault is never read, written or emptied through.
`open_inside` and `read_inside` read a file only when it stays inside; `check_writable`
and `move_inside` refuse, besides, to write or move through any symlink (a write would
put a regular file in the link's place), and `open_for_update` to rewrite a file its
owner made read-only.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from kenomem.errors import InvalidInput, UnsafePath, VaultNotFound
from kenomem.files.scan import MEMORY_DIRS, MEMORY_TYPES, OUTSIDE, outside
from kenomem.files.textcheck import check_text

# Named in scan.py, which imports nothing of ours.
__all__ = ["MEMORY_DIRS", "MEMORY_TYPES", "OUTSIDE", "outside"]

ENV_VAULT = "KENOMEM_VAULT"
DEFAULT_VAULT = Path("~/kenomem")
ARCHIVE_DIR = "archive"
BUFFER_DIR = "buffer"
STATE_DIR = ".kenomem"
FOUNDATION = "foundation.md"
# The file `init` writes (from vault-template/): a folder that has it is a vault. Commands
# that move or remove files (`reset`, `prune`) act on no other folder.
MARKER = "kenomem.toml"


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
    try:
        derived = os.lstat(root / STATE_DIR)
    except FileNotFoundError:
        return root
    except OSError:
        return root  # unreadable: the command that needs it says so
    if not stat.S_ISDIR(derived.st_mode):
        # A link (perhaps planted in a synced folder) would have kenomem write its lock,
        # state and temporary files wherever it points, and read an index made elsewhere.
        raise UnsafePath(
            f"{root / STATE_DIR} is not a folder of the vault's own (a symlink or a file): "
            "kenomem keeps its derived files in a real folder and will not write through it",
            hint=f"remove it (rm {root / STATE_DIR}): all it holds is rebuilt",
        )
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
    return root / STATE_DIR


def private_dir(folder: Path) -> Path:
    """`folder`, created if missing, its owner's alone (0700) whatever the umask. Every
    place that may create the vault's `.kenomem/` goes through here: the lock, the state,
    the index and the command server's socket live in it. One that exists, is ours and
    is open to others is closed to them; another user's is left as it is (the command
    line then never uses the socket in it: `forkclient.socket_problem`). Its parent is
    not created: a vault that vanished (an unmounted drive) is not recreated."""
    try:
        os.mkdir(folder, 0o700)  # never more than 0700: the umask only takes bits away
    except FileExistsError:
        _close_to_others(folder)
        return folder
    try:
        os.chmod(folder, 0o700)  # the owner's bits an odd umask took away
    except OSError:
        pass  # a file system without modes (FAT, some network shares)
    return folder


def _close_to_others(folder: Path) -> None:
    if os.name != "posix":
        return
    try:  # through a descriptor: a symlink put there meanwhile is not followed
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return  # a symlink, or not ours to open: left to whoever uses it
    try:
        st = os.fstat(fd)
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            os.fchmod(fd, 0o700)
    except OSError:
        pass  # a file system without modes: the socket in it is then not used
    finally:
        os.close(fd)


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
        raise UnsafePath(
            f"{rel}: {OUTSIDE}",
            hint="kenomem reads and writes only files inside the vault; "
            "copy the file in if it is meant to be a memory",
        )


def open_inside(root: Path, rel: str) -> int:
    """A descriptor of the regular file `rel`, opened for reading only if it and its
    folders stay inside the vault (a symlink that stays inside may be read).

    Raises `UnsafePath` (outside, or not a regular file: a pipe would hang the read) or
    the `OSError` of the open (`FileNotFoundError` when it is not there)."""
    check_inside(root, rel)
    # Non-blocking, so that a pipe that took a file's place cannot hang the open.
    fd = os.open(os.path.join(root, rel), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
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


def open_for_update(root: Path, rel: str) -> int:
    """A descriptor, for reading, of a file kenomem is about to rewrite (a temporary file
    renamed over it): refused with `UnsafePath` when its folders leave the vault, when
    it is a symlink (the rename would replace the link, not what it points to), when it
    is not a regular file, and when its owner may not write it (kenomem respects a file
    made read-only)."""
    check_inside(root, rel, follow_last=False)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    full = os.path.join(root, rel)
    try:
        fd = os.open(full, flags)
    except OSError:
        if os.path.islink(full):
            raise _symlink(rel) from None
        raise
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
    return UnsafePath(
        f"{rel} is a symlink; kenomem does not write through one",
        hint="replace the link with the file it points to if kenomem should update it",
    )


def move_inside(root: Path, source: str, dest: str) -> list[Path]:
    """Rename `source` to `dest`, both vault-relative (a symlink is moved as the link):
    refused unless both stay inside the vault; `dest`'s folders are made as needed.
    Returns the folders it made, deepest first (for `atomic.remove_empty` on an undo)."""
    from kenomem.files.atomic import make_folders

    check_inside(root, source, follow_last=False)
    check_writable(root, dest)
    target = root / dest
    made = make_folders(target.parent)
    os.rename(root / source, target)
    return made
