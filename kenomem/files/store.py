"""Memory files on disk: create one, or change some of its keys, safely.

Every write is atomic (temp file + rename). An update first checks that the file is the
one we read (size and mtime), so kenomem never overwrites an edit a human just saved,
and it never writes through a symlink or over a file its owner made read-only
(`paths.open_for_update`). Callers hold the vault lock.

Each write holds the file's folder by descriptor, walked from the vault
(`beneath.folder`), and its temporary file is made in `.kenomem/tmp/`, held the same way
(`beneath.private`): the read, the check and the rename all happen in the folders that
were checked, so a folder swapped for a symlink meanwhile is refused (`UnsafePath`),
never written through.
"""

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from kenomem.errors import FrontmatterError, UnsafePath
from kenomem.files import beneath, fm, fmedit
from kenomem.files.atomic import DirtyFile, create_bytes, write_bytes
from kenomem.files.memory import Memory, render
from kenomem.files.paths import (
    STATE_DIR,
    label_filename,
    open_for_update,
    read_text_inside,
    slugify,
)
from kenomem.files.scan import digest_of


class Written(NamedTuple):
    path: str
    size: int
    mtime_ns: int
    digest: str


TEMP_DIR = "tmp"


def temp_dir(root: Path) -> beneath.Folder:
    """Where a write's temporary file waits for its rename: derived, disposable, in a
    `.kenomem/` that is the user's alone, held by descriptor (made if need be). The
    caller closes it."""
    return beneath.private(root / STATE_DIR, TEMP_DIR)


def update_keys(
    root: Path,
    path: str,
    updates: dict[str, Any],
    *,
    expect: tuple[int, int] | None = None,
    expect_digest: str | None = None,
    fsync: bool = True,
    sync_dir: bool = True,
    before_replace: Callable[[Written], None] | None = None,
) -> Written:
    """Set frontmatter keys of the file at `path`, leaving every other byte as it was.

    With `expect` (size, mtime_ns) or `expect_digest`, a file that no longer matches is
    left alone and `DirtyFile` is raised. `before_replace` learns what is written just
    before it replaces the file.
    """
    return _rewrite(
        root,
        path,
        lambda text: fmedit.set_keys(text, updates, path=path),
        expect,
        fsync,
        sync_dir,
        expect_digest,
        before_replace,
    )


def replace_body(
    root: Path,
    path: str,
    body: str,
    updates: dict[str, Any],
    *,
    expect: tuple[int, int] | None = None,
    fsync: bool = True,
) -> Written:
    """Give a memory file a new body and set some keys; the rest of its frontmatter stays."""

    def transform(text: str) -> str:
        edited = fmedit.set_keys(text, updates, path=path)
        return edited[: fm.split(edited, path).body_start] + "\n" + body

    return _rewrite(root, path, transform, expect, fsync, sync_dir=True)


def _rewrite(
    root: Path,
    path: str,
    transform: Callable[[str], str],
    expect: tuple[int, int] | None,
    fsync: bool,
    sync_dir: bool,
    expect_digest: str | None = None,
    before_replace: Callable[[Written], None] | None = None,
) -> Written:
    with beneath.folder(root, beneath.split(path)[0]) as parent:
        return _rewrite_in(
            root, parent, path, transform, expect, fsync, sync_dir, expect_digest, before_replace
        )


def _rewrite_in(
    root: Path,
    parent: beneath.Folder,
    path: str,
    transform: Callable[[str], str],
    expect: tuple[int, int] | None,
    fsync: bool,
    sync_dir: bool,
    expect_digest: str | None,
    before_replace: Callable[[Written], None] | None,
) -> Written:
    # Never through a symlink, out of the vault, or over a file made read-only.
    with open(open_for_update(root, path, parent), "rb") as handle:
        st = os.fstat(handle.fileno())
        data = handle.read()
    current = (st.st_size, st.st_mtime_ns)
    if (expect is not None and current != expect) or (
        expect_digest is not None and digest_of(data) != expect_digest
    ):
        raise DirtyFile(f"{path} changed since it was indexed; left as it is")
    new_data = transform(data.decode("utf-8")).encode("utf-8")
    digest = digest_of(new_data)

    def announce(st: os.stat_result) -> None:
        if before_replace is not None:
            before_replace(Written(path, st.st_size, st.st_mtime_ns, digest))

    with temp_dir(root) as temp:
        new_st = write_bytes(
            root / path,
            new_data,
            fsync=fsync,
            sync_dir=sync_dir,
            expect_stat=current,
            temp_dir=temp,
            before_replace=announce,
            folder=parent,
        )
    return Written(path, new_st.st_size, new_st.st_mtime_ns, digest)


def read_body(root: Path, path: str) -> str | None:
    """The text after a file's frontmatter, without parsing the YAML; None if unreadable."""
    try:
        text = read_text_inside(root, path)
        return text[fm.split(text, path).body_start :]
    except (OSError, UnicodeDecodeError, FrontmatterError, UnsafePath):
        return None


def folder_for(mem: Memory) -> str:
    if mem.type == "episodic":
        moment = mem.when or mem.created
        return f"episodic/{moment:%Y-%m}"
    return mem.type


def file_name_for(mem: Memory) -> str:
    if mem.type == "working" and mem.session:
        return label_filename(mem.session)
    return slugify(mem.title)


def create(root: Path, mem: Memory, *, fsync: bool = True, sync_dir: bool = True) -> Written:
    """Write a new memory file under a readable, unused name; never overwrite one.

    Without `sync_dir`, the caller fsyncs the folder (`atomic.fsync_dir`) once for many."""
    folder = folder_for(mem)
    stem = file_name_for(mem)
    suffix = mem.id.rsplit("_", 1)[-1]
    data = render(mem).encode("utf-8")
    candidates = [stem, f"{stem}-{suffix}", *(f"{stem}-{suffix}-{n}" for n in range(2, 100))]
    # The folder is walked from the vault (`UnsafePath` if it leads out) and held: the
    # file is made in the folder that was checked, whatever happens to its name meanwhile.
    with beneath.folder(root, folder, create=True) as where:
        try:
            with temp_dir(root) as temp:
                for name in candidates:
                    rel = f"{folder}/{name}.md"
                    try:
                        st = create_bytes(
                            root / rel,
                            data,
                            fsync=fsync,
                            temp_dir=temp,
                            sync_dir=sync_dir,
                            folder=where,
                        )
                    except FileExistsError:
                        continue
                    return Written(rel, st.st_size, st.st_mtime_ns, digest_of(data))
            raise FileExistsError(f"no free file name for {stem!r} in {folder}")
        except BaseException:
            beneath.remove_made(root, where.made)  # a failed create leaves no folder
            raise


def touch_values(now: datetime, access_count: int) -> dict[str, Any]:
    return {"last_accessed": now, "access_count": access_count}
