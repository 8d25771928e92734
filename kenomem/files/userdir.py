"""The user's own folder for kenomem, outside every vault.

`$XDG_CONFIG_HOME/kenomem/` (else `~/.config/kenomem/`) holds what must not travel with a
vault, since git or a sync folder copies a vault to other machines and other people: the
tokens of `kenomem serve` (`tokens/<key>/`), the settings of a vault this user accepted
(`trusted/<key>.json`, `kenomem trust`), and `secret`, 32 random bytes that seal what
kenomem writes for itself under a vault's `.kenomem/` (`seal`), so that a file it did not
write there (brought by `git clone`, say) is never taken for its own. `<key>` names a
vault by a hash of its real path. The folder is its owner's alone (0700), the secret
0600; neither is ever read from or written to a vault.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import stat
from pathlib import Path

from kenomem.errors import ConfigError

SECRET_NAME = "secret"
_SECRET_BYTES = 32
_secret_cache: dict[tuple[str, int, int], bytes] = {}


def config_home() -> Path:
    """kenomem's folder in the user's configuration (not created here)."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    config = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return config / "kenomem"


def vault_key(vault_root: Path) -> str:
    """A vault's name in the user's folder: a hash of its real path."""
    digest = hashlib.sha256(str(vault_root.resolve()).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def own_folder(folder: Path) -> Path:
    """`folder` (`config_home()` or a folder in it), created 0700 with the folders between
    where missing; each must be a real folder of this user's that others cannot write,
    else ConfigError."""
    home = config_home()
    below = [folder, *folder.parents]
    chain = list(reversed(below[: below.index(home) + 1])) if home in below else [folder]
    try:
        os.makedirs(chain[0].parent, exist_ok=True)
        for part in chain:
            try:
                os.mkdir(part, 0o700)
            except FileExistsError:
                pass
            check_private(part)
    except OSError as exc:
        raise ConfigError(
            f"cannot create {exc.filename or folder}: {exc.strerror}",
            hint="kenomem keeps its tokens, accepted settings and secret there; make the "
            "folder writable, or set XDG_CONFIG_HOME",
        ) from exc
    return folder


def check_private(path: Path, *, folder: bool = True) -> os.stat_result:
    """The stat of `path`, which must be this user's, not a link, and not writable by
    group or others (ConfigError naming the fix otherwise)."""
    st = os.lstat(path)
    what = "folder" if folder else "file"
    fix = f"chmod {'700' if folder else '600'} {path}"
    if stat.S_ISLNK(st.st_mode) or (stat.S_ISDIR(st.st_mode) != folder):
        raise ConfigError(
            f"{path} is not a {what} of its own (a symlink or another kind of file)",
            hint=f"remove it and let kenomem make it again ({path})",
        )
    if os.name == "posix":
        if st.st_uid != os.geteuid():
            raise ConfigError(
                f"{path} belongs to another user (uid {st.st_uid}); kenomem does not use it",
                hint=f"remove it, or take it back (chown) and {fix}",
            )
        if st.st_mode & 0o022:
            raise ConfigError(
                f"{path} can be changed by group or others; kenomem does not use it",
                hint=fix,
            )
    return st


def secret() -> bytes:
    """This user's sealing key, made (32 random bytes, 0600) the first time it is needed."""
    path = config_home() / SECRET_NAME
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    own_folder(path.parent)
    key = os.urandom(_SECRET_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return _read_secret(path)  # another process made it first: theirs is the key
    except OSError as exc:
        raise _unusable(path, exc) from exc
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def _read_secret(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _unusable(path, exc) from exc
    try:
        st = os.fstat(fd)
        cached = _secret_cache.get((str(path), st.st_ino, st.st_mtime_ns))
        if cached is not None:
            return cached
        if os.name == "posix" and (st.st_uid != os.geteuid() or st.st_mode & 0o077):
            raise ConfigError(
                f"{path} is readable or writable by others, or not yours; kenomem does not "
                "use a key others may know",
                hint=f"remove it (rm {path}): a new one is made, and the indexes it sealed "
                "are rebuilt",
            )
        key = os.read(fd, _SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != _SECRET_BYTES:
        # A torn first write (a crash between create and write): only a new key helps.
        os.unlink(path)
        return secret()
    _secret_cache[(str(path), st.st_ino, st.st_mtime_ns)] = key
    return key


def _unusable(path: Path, exc: OSError) -> ConfigError:
    why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
    return ConfigError(
        f"cannot use {path}: {why}",
        hint=f"remove it (rm {path}) and let kenomem make a new one",
    )


def seal(purpose: bytes, data: bytes) -> str:
    """The HMAC-SHA256 of `data` under this user's secret, for `purpose` (hex)."""
    return hmac.new(secret(), purpose + b"\0" + data, hashlib.sha256).hexdigest()


def sealed(purpose: bytes, data: bytes, mark: str) -> bool:
    """Whether `mark` is this user's seal of `data` for `purpose`."""
    return hmac.compare_digest(seal(purpose, data), mark)
