"""`kenomem token create|list|revoke` through the command line, and the book a running
server checks tokens against."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from kenomem.errors import ConfigError
from kenomem.serve import tokens
from kenomem.serve.tokens import TokenBook, tokens_dir
from tests.conftest import Cli

OTHER_UID = 65534  # nobody


def made(cli: Cli, name: str, scope: str = "write") -> str:
    result = cli("token", "create", name, "--scope", scope, "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc == {"name": name, "scope": scope, "token": doc["token"]}
    return str(doc["token"])


def test_create_prints_the_token_once_and_keeps_only_a_salted_hash(
    cli: Cli, vault_dir: Path, _config_home: Path
) -> None:
    result = cli("token", "create", "laptop", "--scope", "write")
    assert result.code == 0, result.err
    token = result.out.strip()
    assert token.startswith("kenomem_") and len(token) > 40
    assert "shown this once" in result.err
    folder = tokens_dir(vault_dir)
    assert folder.is_relative_to(_config_home)
    stored = (folder / "tokens.json").read_text("utf-8")
    assert token not in stored
    assert token.split("_", 2)[2] not in stored  # nor its secret
    assert hashlib.sha256(token.encode()).hexdigest() not in stored
    record = json.loads(stored)["tokens"][0]
    assert record["name"] == "laptop" and record["scope"] == "write"
    assert len(bytes.fromhex(record["salt"])) == 16
    assert stat.S_IMODE((folder / "tokens.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # Nothing of it in the vault, which git or a sync folder copies elsewhere.
    assert not any("laptop" in p.name for p in vault_dir.rglob("*"))
    # Never shown again.
    listed = cli("token", "list")
    assert "laptop" in listed.out and token not in listed.out


def test_each_token_has_its_own_salt(cli: Cli, vault_dir: Path) -> None:
    made(cli, "a")
    made(cli, "b")
    records = json.loads((tokens_dir(vault_dir) / "tokens.json").read_text("utf-8"))["tokens"]
    assert records[0]["salt"] != records[1]["salt"]


def test_list_shows_names_scopes_and_use_never_hashes(cli: Cli, vault_dir: Path) -> None:
    token = made(cli, "phone", "read")
    made(cli, "laptop", "write")
    result = cli("token", "list", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert [(t["name"], t["scope"], t["last_used"]) for t in doc["tokens"]] == [
        ("laptop", "write", None),
        ("phone", "read", None),
    ]
    assert set(doc["tokens"][0]) == {"name", "scope", "created", "last_used"}
    assert TokenBook(vault_dir).check(token, now=0.0) is not None
    used = json.loads(cli("token", "list", "--json").out)["tokens"]
    assert used[1]["last_used"] is not None and used[0]["last_used"] is None


def test_revoke_drops_the_token(cli: Cli, vault_dir: Path) -> None:
    token = made(cli, "old")
    book = TokenBook(vault_dir)
    assert book.check(token, now=0.0) == ("old", "write")
    result = cli("token", "revoke", "old")
    assert result.code == 0 and "revoked old" in result.out
    assert book.check(token, now=1.0) is None  # a running server sees it at once
    assert json.loads(cli("token", "list", "--json").out) == {"tokens": []}
    again = cli("token", "revoke", "old")
    assert again.code == 1 and "no token named 'old'" in again.err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("bad name",), 1, "invalid token name"),
        (("-x",), 2, ""),
        # An option's value that is not one of its choices is a usage error, as in Typer.
        (("ok", "--scope", "admin"), 2, "invalid --scope 'admin': read or write"),
        (("a" * 65,), 1, "invalid token name"),
        (("caf\u00e9",), 1, "invalid token name"),
    ],
)
def test_create_refuses_bad_names_and_scopes(
    cli: Cli, vault_dir: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    result = cli("token", "create", *args)
    assert result.code == code, result.err
    assert message in result.err
    assert not (tokens_dir(vault_dir) / "tokens.json").exists() or (
        json.loads((tokens_dir(vault_dir) / "tokens.json").read_text())["tokens"] == []
    )


def test_a_name_is_taken_once(cli: Cli) -> None:
    made(cli, "ci")
    result = cli("token", "create", "ci")
    assert result.code == 1 and "exists already" in result.err


def test_the_book_refuses_wrong_malformed_and_foreign_tokens(
    cli: Cli, vault_dir: Path, tmp_path: Path
) -> None:
    token = made(cli, "me")
    book = TokenBook(vault_dir)
    prefix, token_id, secret = token.split("_", 2)
    wrong = f"{prefix}_{token_id}_{'A' * len(secret)}"
    for bad in (wrong, "", "Bearer", token + "x", token[:-1], f"{prefix}_00000000_{secret}"):
        assert book.check(bad, now=0.0) is None
    other = tmp_path / "other-vault"
    other.mkdir()
    assert TokenBook(other).check(token, now=0.0) is None  # tokens are per vault


def test_scrypt_runs_once_per_token_in_a_running_server(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = made(cli, "me")
    calls = []
    real = tokens._hash
    monkeypatch.setattr(tokens, "_hash", lambda t, s: calls.append(1) or real(t, s))
    book = TokenBook(vault_dir)
    for n in range(5):
        assert book.check(token, now=float(n)) is not None
    assert len(calls) == 1


def test_a_damaged_token_file_is_a_clear_error(cli: Cli, vault_dir: Path) -> None:
    made(cli, "me")
    path = tokens_dir(vault_dir) / "tokens.json"
    whole = path.read_text()
    path.write_text('{"tokens": [{"name": 1}]}')
    result = cli("token", "list")
    assert result.code == 1 and "cannot read the tokens" in result.err
    with pytest.raises(ConfigError):
        TokenBook(vault_dir).any()
    # A record of a scope kenomem does not know is damage too, never a token that works.
    doc = json.loads(whole)
    doc["tokens"][0]["scope"] = "admin"
    path.write_text(json.dumps(doc))
    result = cli("token", "list")
    assert result.code == 1 and "cannot read the tokens" in result.err
    assert "bad scope 'admin'" in result.err


def test_tokens_outlive_a_reset_of_the_index(cli: Cli, vault_dir: Path) -> None:
    token = made(cli, "keep")
    assert cli("reindex").code == 0
    assert cli("reset", "--all", "--yes").code == 0, "reset --all"
    assert TokenBook(vault_dir).check(token, now=0.0) is not None


def test_an_unknown_id_costs_the_same_scrypt_and_gets_the_same_answer(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No oracle of which token ids exist: a known id with a wrong secret and an id that
    names no record are both hashed once, and both refused alike."""
    token = made(cli, "me")
    prefix, token_id, secret = token.split("_", 2)
    unknown_id = "0" * 8 if token_id != "0" * 8 else "1" * 8
    calls: list[int] = []
    real = tokens._hash
    monkeypatch.setattr(tokens, "_hash", lambda t, s: calls.append(1) or real(t, s))
    book = TokenBook(vault_dir)
    answers = []
    for bad in (f"{prefix}_{token_id}_{'A' * len(secret)}", f"{prefix}_{unknown_id}_{secret}"):
        calls.clear()
        answers.append(book.check(bad, now=0.0))
        assert len(calls) == 1, bad
    assert answers == [None, None]


def test_a_known_token_never_waits_for_the_scrypt_of_another(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server checks requests on worker threads: while one bad token is being hashed,
    a token accepted before is known at once (scrypt is not run under the book's lock)."""
    good = made(cli, "good")
    book = TokenBook(vault_dir)
    assert book.check(good, now=0.0) == ("good", "write")  # hashed once, then known
    hashing, release = threading.Event(), threading.Event()
    real = tokens._hash

    def slow_hash(token: str, salt: bytes) -> bytes:
        hashing.set()
        release.wait(30)
        return real(token, salt)

    monkeypatch.setattr(tokens, "_hash", slow_hash)
    prefix, token_id, _secret = good.split("_", 2)
    bad = threading.Thread(target=book.check, args=(f"{prefix}_{token_id}_{'B' * 43}", 1.0))
    bad.start()
    try:
        assert hashing.wait(10)
        answers: list[object] = []
        known = threading.Thread(target=lambda: answers.append(book.check(good, now=2.0)))
        known.start()
        known.join(10)
        finished = not known.is_alive()
    finally:
        release.set()
        bad.join(30)
    assert finished, "a known token waited for another token's scrypt"
    assert answers == [("good", "write")]


def modes(folder: Path) -> dict[str, Path]:
    return {
        "file 666": folder / "tokens.json",
        "folder 777": folder,
        "kenomem's folder 777": folder.parent.parent,
    }


@pytest.mark.parametrize("where", ["file 666", "folder 777", "kenomem's folder 777"])
def test_a_token_file_others_may_change_is_refused(cli: Cli, vault_dir: Path, where: str) -> None:
    """Whoever can write the file (or replace it, through its folder) could add a token
    of their own: every command that reads it, and the server, refuses it, naming it."""
    token = made(cli, "me")
    path = modes(tokens_dir(vault_dir))[where]
    path.chmod(0o666 if where.startswith("file") else 0o777)
    fix = "chmod 600" if where.startswith("file") else "chmod 700"
    for args in (("token", "list"), ("token", "create", "other"), ("token", "revoke", "me")):
        result = cli(*args)
        assert result.code != 0, args
        assert str(path) in result.err and fix in result.err, (args, result.err)
    with pytest.raises(ConfigError, match="group or others"):
        TokenBook(vault_dir).check(token, now=0.0)
    path.chmod(0o600 if where.startswith("file") else 0o700)
    assert cli("token", "list").code == 0  # the fix it names is the fix
    assert TokenBook(vault_dir).check(token, now=0.0) == ("me", "write")


def test_a_token_file_that_is_a_link_is_refused(cli: Cli, vault_dir: Path, tmp_path: Path) -> None:
    made(cli, "me")
    path = tokens_dir(vault_dir) / "tokens.json"
    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    result = cli("token", "list")
    assert result.code != 0 and str(path) in result.err and "symlink" in result.err
    with pytest.raises(ConfigError):
        TokenBook(vault_dir).any()


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another user needs root")
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_token_file_another_user_owns_is_refused(cli: Cli, vault_dir: Path, what: str) -> None:
    made(cli, "me")
    folder = tokens_dir(vault_dir)
    path = folder / "tokens.json" if what == "file" else folder
    os.chown(path, OTHER_UID, OTHER_UID)
    result = cli("token", "list")
    assert result.code != 0 and str(path) in result.err and "another user" in result.err
    with pytest.raises(ConfigError, match="another user"):
        TokenBook(vault_dir).any()
