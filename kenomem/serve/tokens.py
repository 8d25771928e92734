"""The tokens that open `kenomem serve` to a client: made, listed, revoked, checked.

A token is `kenomem_<id>_<secret>`: the id (8 hex digits) names its record, the secret
(32 random bytes) proves it. Only a salted scrypt hash of the whole token is kept, with
a salt of its own, beside its name, scope (`read` or `write`), creation and last use; a
token is shown once, when it is made, and never again.

The records of one vault live in `tokens.json` in a folder of the user's configuration,
`$XDG_CONFIG_HOME/kenomem/tokens/<key>/` (else `~/.config/...`), the key a hash of the
vault's path: not in the vault's `.kenomem/`, which `reset` and a fresh index may drop,
and not in the vault itself, which git or a sync folder copies to other machines
(docs/security.md). The folder is the owner's alone (0700), the file 0600; every change
is made under the folder's lock and written atomically. A file, or a folder on its way
from `$XDG_CONFIG_HOME/kenomem/`, that another user owns or that group or others can
write, or that is a link, is refused with an error naming it and the fix: whoever could
change it could add a token of their own.

Checking a token costs one scrypt, whether its id names a record or not (an unknown id is
hashed against a dummy), so that the answer and its time say nothing of which ids exist.
A running server (`TokenBook`) keeps the tokens it accepted (their SHA-256) and knows
them again without scrypt and without waiting for the scrypt of any other request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from kenomem.errors import ConfigError, InvalidInput, UsageError
from kenomem.files.atomic import write_bytes
from kenomem.files.lock import VaultLock
from kenomem.files.userdir import check_private, config_home, own_folder, vault_key

Scope = Literal["read", "write"]
SCOPES: tuple[Scope, ...] = ("read", "write")
PREFIX = "kenomem"
FILE_NAME = "tokens.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TOKEN = re.compile(r"kenomem_([0-9a-f]{8})_([A-Za-z0-9_-]{43})")
# scrypt's interactive cost (16 MiB, some 50 ms): paid once per token by a running
# server, which keeps the tokens it has checked (their SHA-256) in memory.
SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32, "maxmem": 64 * 1024 * 1024}
# A token's last use is written at most this often (seconds): not on every request.
LAST_USED_EVERY = 60.0
# A token file larger than this is refused (a record takes some 300 bytes).
MAX_FILE = 4 * 1024 * 1024


class TokenInfo(NamedTuple):
    """What `token list` shows of a token: never its hash."""

    name: str
    scope: Scope
    created: datetime
    last_used: datetime | None


class CreatedToken(NamedTuple):
    name: str
    scope: Scope
    token: str  # shown once
    created: datetime
    where: Path


class TokenList(NamedTuple):
    tokens: list[TokenInfo]
    where: Path


class Caller(NamedTuple):
    """The holder of a token that was accepted."""

    name: str
    scope: Scope


class Proof(NamedTuple):
    """What a token must hash to: its record's salt and hash, or, for an id that names no
    record, a dummy's (`token_id` empty), so that either costs the same scrypt."""

    token: str
    salt: bytes
    expected: bytes
    token_id: str


def tokens_dir(vault_root: Path) -> Path:
    """The folder of `vault_root`'s tokens (not created here)."""
    return config_home() / "tokens" / vault_key(vault_root)


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise InvalidInput(
            f"invalid token name {name[:70]!r}: 1-64 ASCII letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            hint="it is written into each memory the token's holder makes (source: mcp:NAME)",
        )
    return name


def check_scope(scope: str) -> Scope:
    """The scope a token is made with (`token create --scope`): a usage error (exit 2)
    names the choices."""
    if scope not in SCOPES:
        raise UsageError(
            f"invalid --scope {scope!r}: read or write",
            hint="read: the tools that only read; write: every tool",
        )
    return scope  # type: ignore[return-value]


def create(vault_root: Path, name: str, scope: str, now: datetime | None = None) -> CreatedToken:
    """Make a token for `name`: kept as a salted hash, returned once in full."""
    check_name(name)
    kind = check_scope(scope)
    created = (now or datetime.now(UTC)).replace(microsecond=0)
    with _book(vault_root) as (records, save):
        if any(r["name"] == name for r in records):
            raise InvalidInput(
                f"a token named {name!r} exists already",
                hint=f"revoke it first (kenomem token revoke {name}) or choose another name",
            )
        ids = {r["id"] for r in records}
        token_id = secrets.token_hex(4)
        while token_id in ids:
            token_id = secrets.token_hex(4)
        token = f"{PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
        salt = secrets.token_bytes(16)
        records.append(
            {
                "name": name,
                "id": token_id,
                "scope": kind,
                "salt": salt.hex(),
                "hash": _hash(token, salt).hex(),
                "created": _stamp(created),
                "last_used": None,
            }
        )
        save(records)
    return CreatedToken(name, kind, token, created, tokens_dir(vault_root))


def listed(vault_root: Path) -> TokenList:
    folder = tokens_dir(vault_root)
    records = _read(folder / FILE_NAME)
    return TokenList([_info(r) for r in sorted(records, key=lambda r: r["name"])], folder)


def revoke(vault_root: Path, name: str) -> TokenInfo:
    """Drop the token named `name`: a server that runs refuses it from its next request."""
    with _book(vault_root) as (records, save):
        found = [r for r in records if r["name"] == name]
        if not found:
            raise InvalidInput(
                f"no token named {name[:70]!r}", hint="kenomem token list shows their names"
            )
        save([r for r in records if r["name"] != name])
    return _info(found[0])


class TokenBook:
    """A running server's view of the tokens: read again whenever the file (or a folder
    above it) changes, so that a token made or revoked while it runs counts from the next
    request.

    Checking is in two halves: `known`, quick and under the book's lock, knows the tokens
    accepted before; `prove` runs the scrypt of any other outside that lock, so that
    requests with bad tokens never hold up one whose token is known (`check` does both).
    """

    def __init__(self, vault_root: Path) -> None:
        self.vault_root = vault_root
        self.path = tokens_dir(vault_root) / FILE_NAME
        self._seen: tuple[tuple[int, ...], ...] | None = None
        self._records: dict[str, dict[str, Any]] = {}
        # SHA-256 of each token accepted, with the record it matched: scrypt once per token.
        self._checked: dict[bytes, tuple[str, str]] = {}
        self._used: dict[str, float] = {}
        # What an id that names no record is hashed against: the same cost, never a match.
        self._dummy = (secrets.token_bytes(16), secrets.token_bytes(32))
        self._lock = threading.Lock()  # the server checks requests on worker threads

    def any(self) -> bool:
        with self._lock:
            self._refresh()
            return bool(self._records)

    def check(self, token: str, now: float) -> Caller | None:
        """The caller whose token this is, or None (unknown, revoked, malformed)."""
        found = self.known(token, now)
        return self.prove(found, now) if isinstance(found, Proof) else found

    def known(self, token: str, now: float) -> Caller | Proof | None:
        """The caller of a token accepted before; None for one that cannot be a token;
        otherwise the `Proof` to hash (`prove`). Quick: no scrypt."""
        with self._lock:
            self._refresh()
            match = TOKEN.fullmatch(token)
            if match is None:
                return None
            record = self._records.get(match[1])
            if record is None:
                return Proof(token, *self._dummy, token_id="")
            digest = hashlib.sha256(token.encode("ascii")).digest()
            if self._checked.get(digest) != (record["id"], record["hash"]):
                return Proof(
                    token, bytes.fromhex(record["salt"]), bytes.fromhex(record["hash"]), match[1]
                )
            caller, note = self._accepted(record, now)
        if note:
            self._note_use(record["id"])
        return caller

    def prove(self, proof: Proof, now: float) -> Caller | None:
        """The caller of `proof`'s token if it hashes to its record's hash, else None.
        The scrypt runs outside the book's lock."""
        right = hmac.compare_digest(_hash(proof.token, proof.salt), proof.expected)
        with self._lock:
            self._refresh()
            record = self._records.get(proof.token_id)
            if not right or record is None or record["hash"] != proof.expected.hex():
                return None  # wrong, unknown, or revoked meanwhile
            digest = hashlib.sha256(proof.token.encode("ascii")).digest()
            self._checked[digest] = (record["id"], record["hash"])
            caller, note = self._accepted(record, now)
        if note:
            self._note_use(record["id"])
        return caller

    def _accepted(self, record: dict[str, Any], now: float) -> tuple[Caller, bool]:
        """The caller of an accepted record, and whether to write down its use now."""
        note = now - self._used.get(record["id"], -LAST_USED_EVERY) >= LAST_USED_EVERY
        if note:
            self._used[record["id"]] = now
        return Caller(record["name"], record["scope"]), note

    def _refresh(self) -> None:
        seen = _signature(self.path)
        if seen == self._seen:
            return
        records = _read(self.path) if seen[-1] else []
        self._records = {r["id"]: r for r in records}
        self._seen = seen

    def _note_use(self, token_id: str) -> None:
        stamp = _stamp(datetime.now(UTC).replace(microsecond=0))
        try:
            with _book(self.vault_root) as (records, save):
                for record in records:
                    if record["id"] == token_id:
                        record["last_used"] = stamp
                        save(records)
        except (OSError, ConfigError):
            pass  # only `token list` reads it: a full disk must not refuse a request


@contextmanager
def _book(vault_root: Path) -> Iterator[tuple[list[dict[str, Any]], Any]]:
    """The records, under the folder's lock, and a function that writes them back."""
    folder = own_folder(tokens_dir(vault_root))
    path = folder / FILE_NAME
    with VaultLock(folder, timeout=10.0):
        records = _read(path)

        def save(new: list[dict[str, Any]]) -> None:
            _write(path, new)

        yield records, save


def _folders(path: Path) -> list[Path]:
    """The folders from kenomem's own in the user's configuration down to `path`'s."""
    home = config_home()
    if home not in path.parents:
        return [path.parent]
    return [home, *(p for p in reversed(path.parents) if home in p.parents)]


def _signature(path: Path) -> tuple[tuple[int, ...], ...]:
    """What changes when the file, or a folder it is in, is changed, replaced or opened to
    others; its last item is empty when there is no file."""
    seen: list[tuple[int, ...]] = []
    for part in (*_folders(path), path):
        try:
            st = os.lstat(part)
        except FileNotFoundError:
            seen.append(())
            continue
        seen.append((st.st_ino, st.st_mode, st.st_uid, st.st_mtime_ns, st.st_size))
    return tuple(seen)


def _read(path: Path) -> list[dict[str, Any]]:
    """The records of `path` (none if it is missing), once it and its folders are known to
    be the user's alone (`userdir.check_private`); ConfigError otherwise."""
    try:
        for folder in _folders(path):
            check_private(folder)
        check_private(path, folder=False)  # in folders only the user may change
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(
            f"cannot read the tokens in {path}: {exc.strerror or exc}",
            hint=f"check its owner and mode (ls -l {path}): it should be yours, mode 600",
        ) from exc
    try:
        raw = os.read(fd, MAX_FILE + 1)
    finally:
        os.close(fd)
    try:
        if len(raw) > MAX_FILE:
            raise ValueError(f"larger than {MAX_FILE:,} bytes")
        doc = json.loads(raw)
        records = doc["tokens"]
        for r in records:
            check_name(r["name"])
            if r["scope"] not in SCOPES:
                raise ValueError(f"bad scope {r['scope']!r}")
            if not isinstance(r["id"], str) or not re.fullmatch(r"[0-9a-f]{8}", r["id"]):
                raise ValueError("bad id")
            bytes.fromhex(r["salt"])
            bytes.fromhex(r["hash"])
            _parse_stamp(r["created"])
        return list(records)
    except (ValueError, KeyError, TypeError, InvalidInput) as exc:
        raise ConfigError(
            f"cannot read the tokens in {path}: {type(exc).__name__}: {exc}",
            hint="fix or delete that file (deleting it revokes every token of this vault)",
        ) from exc


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    if not path.exists():
        # Made 0600 first, so that the atomic write (which keeps the file's mode) never
        # leaves it open to others, whatever the umask.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    data = json.dumps({"version": 1, "tokens": records}, indent=2, sort_keys=True) + "\n"
    write_bytes(path, data.encode("utf-8"))
    os.chmod(path, 0o600)


def _hash(token: str, salt: bytes) -> bytes:
    return hashlib.scrypt(token.encode("utf-8"), salt=salt, **SCRYPT)


def _info(record: dict[str, Any]) -> TokenInfo:
    used = record.get("last_used")
    return TokenInfo(
        record["name"],
        record["scope"],
        _parse_stamp(record["created"]),
        _parse_stamp(used) if isinstance(used, str) else None,
    )


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
