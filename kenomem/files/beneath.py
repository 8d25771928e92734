"""Folders held by descriptor, so that what kenomem checked is what it writes.

A path checked and then opened by name can change in between: a folder swapped for a
symlink after the check sends the write elsewhere (time of check, time of use). Here a
path of the vault is walked from the vault's folder, one name at a time: each folder is
opened relative to the one before with `O_NOFOLLOW | O_DIRECTORY`, and the file is then
made, opened, renamed or removed relative to its folder's descriptor (`Folder`), so that
no name on the way is looked up twice. A symlink met on the way is followed only when
its real path stays inside the vault, by walking that real path the same way with no
link allowed: a link that changed meanwhile is refused, never followed elsewhere. One
that leads out is `UnsafePath`, with the message of the containment check (`outside`).

`.kenomem/` is reached the same way, and must also be a real folder of this user's
(`private`): a link, a file or another user's folder there is refused with what to do,
and a folder of ours open to others is closed (0700). Every file kenomem keeps in it is
opened through `private` or `open_private`, never through a link.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from types import TracebackType

from kenomem.errors import UnsafePath
from kenomem.files.scan import OUTSIDE

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW
# What opening a name with O_NOFOLLOW gives when the name is a symlink (Linux answers
# ENOTDIR for a folder wanted, ELOOP for a file; FreeBSD EMLINK).
_LINKED = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)


class Folder:
    """A folder held open by descriptor. `path` names it in messages only; `made` lists
    the folders the walk created, vault-relative and deepest first (see `remove_made`)."""

    __slots__ = ("fd", "made", "path")

    def __init__(self, fd: int, path: Path, made: list[str] | None = None) -> None:
        self.fd = fd
        self.path = path
        self.made = made or []

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def outside_error(rel: str) -> UnsafePath:
    """The containment check's refusal (`paths.check_inside` says the same)."""
    return UnsafePath(
        f"{rel}: {OUTSIDE}",
        hint="kenomem reads and writes only files inside the vault; "
        "copy the file in if it is meant to be a memory",
    )


def swapped_error(rel: str) -> UnsafePath:
    return UnsafePath(
        f"{rel}: a folder on the way changed into a symlink while kenomem used it; "
        "nothing was written through it",
        hint="kenomem reads and writes only files inside the vault; if a program swaps "
        "the vault's folders for links, stop it, then run the command again",
    )


def split(rel: str) -> tuple[str, str]:
    """(folder, name) of a vault-relative path; the folder is "" for the vault itself."""
    folder, _, name = rel.rpartition("/")
    return folder, name


def folder(root: Path, rel: str, *, create: bool = False, follow: bool = True) -> Folder:
    """The vault folder `rel` ("" for the vault itself), walked from `root` (see above);
    with `create`, the folders missing on the way are made; without `follow`, a symlink
    on the way is refused even when it stays inside. Raises `UnsafePath` for a way out
    of the vault or a name on the way that is not a folder, and `FileNotFoundError` for
    a folder that is not there."""
    parts = _parts(rel)
    made: list[str] = []
    top = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        fd = _walk(top, root, parts, create, made, follow=follow, rel=rel)
    finally:
        os.close(top)
    return Folder(fd, root / rel if rel else root, made[::-1])


def open_file(root: Path, rel: str, flags: int, mode: int = 0o644) -> int:
    """A descriptor of the file `rel` of the vault, opened with `flags` in its folder
    (`folder`). The file itself is opened with O_NOFOLLOW: a symlink is followed only
    for reading (`flags` without O_WRONLY or O_RDWR), and only to a file inside the vault,
    by its real path; otherwise `UnsafePath`."""
    where, name = split(rel)
    with folder(root, where) as parent:
        try:
            return os.open(name, flags | NOFOLLOW, mode, dir_fd=parent.fd)
        except OSError as exc:
            if exc.errno not in _LINKED or not is_link(parent, name):
                raise _named(exc, root / rel) from None
            if flags & (os.O_WRONLY | os.O_RDWR):
                raise link_error(rel) from None
    where, name = split(_real_inside(root, rel))
    with folder(root, where, follow=False) as parent:
        try:
            return os.open(name, flags | NOFOLLOW, mode, dir_fd=parent.fd)
        except OSError as exc:
            if exc.errno in _LINKED and is_link(parent, name):
                raise swapped_error(rel) from None
            raise _named(exc, root / rel) from None


def link_error(rel: str) -> UnsafePath:
    return UnsafePath(
        f"{rel} is a symlink; kenomem does not write through one",
        hint="replace the link with the file it points to if kenomem should update it",
    )


def is_link(parent: Folder, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent.fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def lstat_in(parent: Folder, name: str) -> os.stat_result:
    """The stat of `name` in `parent`, not following a symlink (`FileNotFoundError` when
    it is not there, named by its whole path)."""
    try:
        return os.stat(name, dir_fd=parent.fd, follow_symlinks=False)
    except OSError as exc:
        raise _named(exc, parent.path / name) from None


def remove_made(root: Path, made: list[str]) -> None:
    """Remove the folders a walk made (deepest first) where they are still empty."""
    for rel in made:
        where, name = split(rel)
        try:
            with folder(root, where) as parent:
                os.rmdir(name, dir_fd=parent.fd)
        except (OSError, UnsafePath):
            return


def _parts(rel: str) -> list[str]:
    if not rel:
        return []
    parts = rel.split("/")
    if "" in parts or ".." in parts or os.path.isabs(rel):
        raise outside_error(rel)
    return parts


def _walk(
    top: int,
    root: Path,
    parts: list[str],
    create: bool,
    made: list[str],
    *,
    follow: bool,
    rel: str,
) -> int:
    """A descriptor of the folder `parts` below the descriptor `top` (of `root`)."""
    fd = os.dup(top)
    try:
        for i, part in enumerate(parts):
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError as exc:
                if not create:
                    raise _named(exc, root.joinpath(*parts[: i + 1])) from None
                child = _make(fd, part, root, parts[: i + 1], made)
            except OSError as exc:
                if exc.errno not in _LINKED:
                    raise _named(exc, root.joinpath(*parts[: i + 1])) from None
                try:
                    mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                except OSError:
                    raise swapped_error(rel) from None
                if stat.S_ISDIR(mode):  # a link a moment ago: it is changing under us
                    raise swapped_error(rel) from None
                if not stat.S_ISLNK(mode):
                    raise UnsafePath(
                        f"{root.joinpath(*parts[: i + 1])} is not a folder",
                        hint="move that file away: kenomem keeps files in a folder there",
                    ) from None
                if not follow:
                    raise swapped_error(rel) from None
                real = _real_inside(root, "/".join(parts[: i + 1]), rel)
                child = _walk(top, root, _parts(real), create, made, follow=False, rel=rel)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _make(fd: int, part: str, root: Path, parts: list[str], made: list[str]) -> int:
    try:
        os.mkdir(part, 0o777, dir_fd=fd)
        made.append("/".join(parts))
    except FileExistsError:
        pass  # made meanwhile by another process
    except OSError as exc:
        raise _named(exc, root.joinpath(*parts)) from None
    try:
        return os.open(part, _DIR, dir_fd=fd)
    except OSError as exc:
        if exc.errno in _LINKED:  # replaced by a link as soon as made
            raise swapped_error("/".join(parts)) from None
        raise _named(exc, root.joinpath(*parts)) from None


def _real_inside(root: Path, rel: str, whole: str = "") -> str:
    """The vault-relative real path of `rel` (which is, or goes through, a symlink), or
    `UnsafePath` when it leads out of the vault."""
    try:
        real_root = os.path.realpath(root)
        real = os.path.realpath(os.path.join(root, rel))
    except OSError:  # a link on the way became something else while it was read
        raise swapped_error(whole or rel) from None
    if real == real_root:
        return ""
    if not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise outside_error(whole or rel)
    return real[len(real_root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")


def _named(exc: OSError, path: Path) -> OSError:
    """`exc` naming the whole path (an error relative to a descriptor names only the
    last name, which means nothing to a person)."""
    return type(exc)(exc.errno, exc.strerror, str(path))


# -- the vault's own folder, .kenomem/ --------------------------------------------------------


def private(state_dir: Path, rel: str = "", *, create: bool = True) -> Folder:
    """`.kenomem/` (`state_dir`) or the folder `rel` in it, each opened without following
    a link and each a real folder of this user's, closed to others (0700; made so when
    missing and `create`). A link, a file or another user's folder there is `UnsafePath`,
    naming the path and what to do. Without `create`, `FileNotFoundError` when missing."""
    # Its parent is never made: a vault that vanished stays so.
    fd = _private_child(state_dir, None, state_dir, create)
    try:
        where = ""
        for part in _parts(rel):
            where = f"{where}/{part}" if where else part
            child = _private_child(state_dir / where, fd, part, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return Folder(fd, state_dir / rel if rel else state_dir)


def _private_child(path: Path, dir_fd: int | None, name: str | Path, create: bool) -> int:
    """The private folder `name` (in `dir_fd`), made 0700 first when missing and `create`."""
    try:
        return _open_private(path, dir_fd, name, made=False)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o700, dir_fd=dir_fd)
        made = True
    except FileExistsError:
        made = False  # made meanwhile by another process
    except OSError as exc:
        raise _named(exc, path) from None
    return _open_private(path, dir_fd, name, made=made)


def open_private(
    state_dir: Path, rel: str, flags: int, mode: int = 0o600, *, create: bool = True
) -> int:
    """A descriptor of the file `rel` under `.kenomem/` (`state_dir`), opened with `flags`
    and never through a symlink: one there is `UnsafePath`, naming it and what to do.
    The folders on the way are `private` ones (made only with `create`)."""
    where, name = split(rel)
    with private(state_dir, where, create=create) as parent:
        return open_in(parent, name, flags, mode)


def open_in(parent: Folder, name: str, flags: int, mode: int = 0o600) -> int:
    """A descriptor of the file `name` in the folder `parent` holds (one of `private`),
    opened with `flags` and never through a symlink: one there is `UnsafePath`, naming
    it and what to do; any other error names the whole path."""
    try:
        return os.open(name, flags | NOFOLLOW, mode, dir_fd=parent.fd)
    except OSError as exc:
        if exc.errno in _LINKED and is_link(parent, name):
            raise private_link_error(parent.path / name) from None
        raise _named(exc, parent.path / name) from None


def private_link_error(path: Path) -> UnsafePath:
    return UnsafePath(
        f"{path} is a symlink; kenomem keeps its own files in .kenomem/ and never opens "
        "one through a link",
        hint=f"remove it (rm {path}): kenomem makes it again",
    )


def remove_in(parent: Folder, name: str) -> None:
    """Remove `name` from the folder `parent` holds, if it is there, never through a
    symlink: a link or a file is unlinked, a folder removed with all it holds (each
    link in it as the link; `shutil.rmtree` by descriptor)."""
    try:
        st = os.stat(name, dir_fd=parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        _remove_tree(parent.fd, name)
    else:
        os.unlink(name, dir_fd=parent.fd)


def _remove_tree(parent_fd: int, name: str) -> None:
    """The folder `name` in `parent_fd` and all it holds, each name removed relative to
    its folder's descriptor, a link as the link (what `shutil.rmtree(dir_fd=)` does, but
    without its refusal where `os` functions are wrapped)."""
    fd = os.open(name, _DIR, dir_fd=parent_fd)
    try:
        with os.scandir(fd) as entries:
            for entry in list(entries):
                if entry.is_dir(follow_symlinks=False):
                    _remove_tree(fd, entry.name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def check_private(state_dir: Path) -> None:
    """Refuse (`UnsafePath`) a `.kenomem` that is there but is a link, not a folder, or
    another user's; nothing is made or changed."""
    try:
        st = os.lstat(state_dir)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode) and (os.name != "posix" or st.st_uid == os.geteuid()):
        return  # the usual case, quickly
    _judge(state_dir, st)


def _open_private(path: Path, dir_fd: int | None, name: str | Path, made: bool) -> int:
    try:
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in _LINKED:
            raise _named(exc, path) from None
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            raise _named(exc, path) from None
        _judge(path, st)
        raise _named(exc, path) from None
    try:
        st = os.fstat(fd)
        _judge(path, st)
    except BaseException:
        os.close(fd)
        raise
    # Closed to others; one just made gets the owner's bits an odd umask took away.
    if os.name == "posix" and (st.st_mode & 0o077 or (made and st.st_mode & 0o700 != 0o700)):
        try:
            os.fchmod(fd, 0o700)
        except OSError:
            pass  # a file system without modes (FAT, some network shares)
    return fd


def _judge(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        # A link (perhaps planted in a synced folder) would have kenomem write its lock,
        # state and temporary files wherever it points, and read an index made elsewhere.
        raise UnsafePath(
            f"{path} is not a folder of the vault's own (a symlink or a file): kenomem "
            "keeps its derived files in a real folder and will not write through it",
            hint=f"remove it (rm {path}): all it holds is rebuilt",
        )
    if os.name == "posix" and st.st_uid != os.geteuid():
        # Another user's: they could change what kenomem reads there (an index it loads,
        # its lock) and read what it writes.
        raise UnsafePath(
            f"{path} belongs to another user (uid {st.st_uid}); kenomem keeps its derived "
            "files only in a folder of its user's own",
            hint=f"remove it (rm -r {path}): all it holds is rebuilt; or, if it is yours, "
            f"take it back: chown -R {os.geteuid()} {path}",
        )
