"""Which folder is the vault, found as git finds a repository: `--vault`, else
`$KENOMEM_VAULT`, else the folder the command runs in or the nearest folder above it
that holds a vault (its `kenomem.toml`, or a `.kenomem/` folder), else `~/kenomem`.

A folder above is taken only if it is the user's own and the user can read it: another
user's folder holding a `kenomem.toml` (`/tmp/kenomem.toml`, a shared parent) would
otherwise receive what the user remembers and choose the commands its settings run. It is
passed over, and the search goes on above it; a vault of another user's is used only
when named (`--vault`, `$KENOMEM_VAULT`), as git asks for `safe.directory`. The search
stops at the root of the file system.

Imports nothing but `os` and `stat`: the command line's client of the watcher's command
server (`cli/served/client.py`) finds the vault with it before anything else is loaded,
and every command runs it (a few stats, one or two for each folder above).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # not typing's: importing typing costs a few ms
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_VAULT = "KENOMEM_VAULT"
DEFAULT_VAULT = "~/kenomem"
MARKER = "kenomem.toml"  # the file `init` writes: a folder that has it is a vault
STATE_DIR = ".kenomem"

# Why the vault is the one chosen (`choose`).
FLAG = "flag"  # --vault
ENV = "env"  # $KENOMEM_VAULT
HERE = "here"  # the folder the command runs in
ABOVE = "above"  # a folder above it
DEFAULT = "default"  # ~/kenomem


def choose(
    flag: str | None,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    *,
    discover: bool = True,
) -> tuple[str, str]:
    """(the vault's absolute path, why it is the one: FLAG, ENV, HERE, ABOVE or DEFAULT).

    `environ` is a mapping of the environment (`os.environ` when None); `cwd` the folder
    the command runs in (the process's own when None). Without `discover`, no folder is
    searched (`init`: a path or the default names where to make one)."""
    env = os.environ if environ is None else environ
    if flag:
        return absolute(flag, cwd), FLAG
    named = env.get(ENV_VAULT)
    if named:
        return absolute(named, cwd), ENV
    if discover:
        here = _cwd(cwd)
        found = find(here) if here else None
        if found:
            return found, HERE if found == here else ABOVE
    return absolute(DEFAULT_VAULT, cwd), DEFAULT


def absolute(raw: str, cwd: str | None = None) -> str:
    """`raw` with `~` expanded, made absolute against `cwd` (`..` kept, as `Path.absolute`
    keeps it: a folder reached through a link is not the link's parent)."""
    path = os.path.expanduser(raw)
    here = "" if os.path.isabs(path) else _cwd(cwd)
    return os.path.join(here, path) if here else path


def find(start: str, passed: list[str] | None = None) -> str | None:
    """The nearest folder from `start` up that holds a vault and is the user's own and
    readable; None when there is none up to the root. The vaults of other users met on
    the way are appended to `passed`."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    folder = start
    while True:
        if _holds_vault(folder):
            if _own(folder, uid):
                return folder
            if passed is not None:
                passed.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _holds_vault(folder: str) -> bool:
    try:
        if stat.S_ISREG(os.stat(os.path.join(folder, MARKER)).st_mode):
            return True
    except OSError:
        pass
    try:  # the folder itself, never a link to one (kenomem refuses those)
        return stat.S_ISDIR(os.lstat(os.path.join(folder, STATE_DIR)).st_mode)
    except OSError:
        return False


def _own(folder: str, uid: int | None) -> bool:
    try:
        st = os.stat(folder)
    except OSError:
        return False
    if uid is not None and st.st_uid != uid:
        return False
    return os.access(folder, os.R_OK | os.X_OK)


def _cwd(cwd: str | None) -> str:
    if cwd is not None:
        return cwd
    try:
        return os.getcwd()
    except OSError:  # the folder was removed from under the command
        return ""
