"""Nothing escapes the vault (SPEC 7, docs/security.md): a symlink that leaves it, however it
is placed (a memory file, a sub-folder, a memory folder itself, a working memory, a buffer
day, the buffer folder, `foundation.md`), is never read, served, touched or followed, with
or without a watcher; a write never goes through a link; `reset` and `prune` move and
delete only memory files of a folder that is a vault, and only trash kenomem filled.

The canary word lives only in files outside the vault: it must never appear in what a
command prints, nor anywhere in the vault (files, index, state), and the files outside
must end as they began.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenomem.files.paths import state_dir
from kenomem.index import heartbeat
from tests.adversarial.hostile import clean_exit, fresh_vault, secret_found, tree
from tests.conftest import TEMPLATE, Cli

CANARY = "quokkaflux"  # only in files outside the vault, never in a query
WORD = "numbat"  # beside it in those files: what the queries look for
YESTERDAY = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
SECRET = f"---\nid: mem_canary\ntitle: Canary\ntags: [canary]\n---\n\n{CANARY} {WORD} lives here\n"
DAY = (
    f"---\ndate: {YESTERDAY}\nconsolidated: null\n---\n\n"
    f"## 09:00:00 Eve @s1\nImportant: remember this, {CANARY} is the {WORD} key.\n\n"
    f"## 09:05:00 Eve @s1\nThe {CANARY} {WORD} deploy failed with an error, then we fixed it.\n"
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks")


def outside_world(base: Path) -> Path:
    """Files outside the vault a link may point at."""
    out = base / "outside"
    (out / "dir" / "deeper").mkdir(parents=True)
    (out / "secret.md").write_text(SECRET)
    (out / "day.md").write_text(DAY)
    (out / "dir" / "note.md").write_text(SECRET.replace("mem_canary", "mem_canary_dir"))
    (out / "dir" / f"{YESTERDAY}.md").write_text(DAY)
    (out / "dir" / "deeper" / "plain.md").write_text(
        f"# Plain\n\n{CANARY} {WORD} in a plain note\n"
    )
    (out / "dir" / "s1.md").write_text(SECRET.replace("mem_canary", "mem_canary_s1"))
    (out / "dir" / "thesis.docx").write_bytes(b"PK\x03\x04 not a memory")
    return out


def replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target, target_is_directory=target.is_dir())


LINKS = {
    "memory file": ("semantic/leak.md", "secret.md"),
    "sub-folder": ("episodic/linked", "dir"),
    "memory folder": ("semantic", "dir"),
    "archive folder": ("archive", "dir"),
    "working memory": ("working/s1.md", "secret.md"),
    "working folder": ("working", "dir"),
    "buffer day": (f"buffer/{YESTERDAY}.md", "day.md"),
    "buffer folder": ("buffer", "dir"),
    "foundation": ("foundation.md", "secret.md"),
}

READERS: list[tuple[str, ...]] = [
    ("recall", "--json", "--limit", "50", WORD),
    ("recall", "--json", "--archive", "--limit", "50", WORD),
    ("context", "--session", "s1", WORD),
    ("context", "--json", "--session", "s1", WORD),
    ("list", "--json", "--archive", "--limit", "500"),
    ("show", "--json", "mem_canary"),
    ("show", "--json", "mem_canary_dir"),
    ("working", "show", "--session", "s1", "--json"),
    ("patterns", "--json"),
    ("stats", "--json"),
    ("doctor", "--json"),
    ("reindex",),
    ("consolidate", "--json"),
    ("edit", "mem_canary"),
    ("recall", "--json", WORD),
]


def editor(base: Path) -> str:
    """An editor that copies what it is given next to the test (to see what it was shown)."""
    script = base / "editor.sh"
    script.write_text(f'#!/bin/sh\ncat "$1" >> {base / "edited.txt"}\n')
    script.chmod(0o755)
    return str(script)


def check_nothing_escaped(vault: Path, outside: Path, before: dict[str, object], out: str) -> None:
    assert CANARY not in out, "a command showed what lies outside the vault"
    assert tree(outside) == before, "a file outside the vault was changed, moved or removed"
    assert secret_found(vault, [CANARY]) == [], "outside content was copied into the vault"
    edited = outside.parent / "edited.txt"
    assert not edited.exists() or CANARY not in edited.read_text()


@pytest.mark.parametrize("kind", LINKS)
def test_a_link_out_of_the_vault_is_never_followed(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    outside = outside_world(tmp_path)
    rel, target = LINKS[kind]
    replace_with_link(vault / rel, outside / target)
    before = tree(outside)
    monkeypatch.setenv("VISUAL", editor(tmp_path))
    printed = ""
    for args in READERS:
        done = cli(*args, "--vault", str(vault))
        clean_exit(done.code, done.out, done.err, args)
        printed += done.out + done.err
    assert (vault / rel).is_symlink()
    check_nothing_escaped(vault, outside, before, printed)


@pytest.mark.parametrize("kind", ["foundation", "working memory", "memory file"])
def test_mcp_resources_never_follow_a_link_out(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("mcp")
    import anyio

    from kenomem.api import Vault
    from kenomem.mcp_server import build_server

    vault = fresh_vault(tmp_path / "vaults")
    outside = outside_world(tmp_path)
    rel, target = LINKS[kind]
    replace_with_link(vault / rel, outside / target)
    server = build_server(Vault(vault, source="mcp"))
    shown = []

    async def main() -> None:
        for uri in ("kenomem://foundation", "kenomem://working/s1", "kenomem://memory/mem_canary"):
            try:
                shown.append(str([c.content for c in await server.read_resource(uri)]))
            except Exception as exc:  # a resource error the client reads
                shown.append(str(exc))
        for tool, args in (
            ("context", {"query": WORD, "session": "s1"}),
            ("recall", {"query": WORD}),
        ):
            try:
                shown.append(str(await server.call_tool(tool, args)))
            except Exception as exc:
                shown.append(str(exc))

    before = tree(outside)
    anyio.run(main)
    check_nothing_escaped(vault, outside, before, "\n".join(shown))


# -- with a watcher running --------------------------------------------------------------------


def kenomem(vault: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1", **env}
    environ.pop("KENOMEM_NO_SERVE", None)
    return subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def wait_for(condition: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def short_base() -> Iterator[Path]:
    """A folder whose vault's socket path fits a Unix socket address."""
    base = Path(tempfile.mkdtemp(prefix="kma", dir="/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher's server")
@pytest.mark.parametrize("kind", ["memory file", "sub-folder", "working memory", "buffer day"])
def test_a_watched_vault_never_follows_a_link_out(short_base: Path, kind: str) -> None:
    vault = short_base / "v"
    shutil.copytree(TEMPLATE, vault)
    outside = outside_world(short_base)
    log = (short_base / "watch.log").open("w")
    watcher = subprocess.Popen(
        [sys.executable, "-m", "kenomem", "watch", "--vault", str(vault)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "KENOMEM_NO_SERVE"},
    )
    try:

        def idle() -> bool:
            assert watcher.poll() is None, (short_base / "watch.log").read_text()
            beat = heartbeat.read(state_dir(vault))
            return beat is not None and beat.pid == watcher.pid and beat.pending == 0

        wait_for(idle, "the watcher's heartbeat")
        rel, target = LINKS[kind]
        replace_with_link(vault / rel, outside / target)
        # A memory written after the link: once the watcher has it, it has seen the link.
        (vault / "procedural" / "marker.md").write_text("# Marker\n\nthe marker wombat\n")

        def seen_marker() -> bool:
            done = kenomem(vault, "recall", "--json", "--no-touch", "wombat")
            return done.returncode == 0 and bool(json.loads(done.stdout)["results"])

        wait_for(seen_marker, "the watcher to index the marker")
        wait_for(idle, "the watcher to settle")
        before = tree(outside)
        printed = ""
        for args in READERS:
            if args[0] in ("reindex", "consolidate", "edit"):
                continue  # the writers are checked unwatched; here: what the watcher indexed
            done = kenomem(vault, *args)
            clean_exit(done.returncode, done.stdout, done.stderr, args)
            printed += done.stdout + done.stderr
        assert (vault / rel).is_symlink()
        check_nothing_escaped(vault, outside, before, printed)
    finally:
        watcher.terminate()
        watcher.wait(30)
        log.close()


# -- writes never go through a link, even one that stays inside --------------------------------


def test_a_touch_never_replaces_a_link_inside_the_vault(cli: Cli, tmp_path: Path) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    real = vault / "notes" / "real.md"
    real.parent.mkdir()
    real.write_text("---\nid: mem_20260101_000000_a1a1\ntitle: Wombat\n---\n\nthe wombat digs\n")
    link = vault / "semantic" / "wombat.md"
    link.symlink_to("../notes/real.md")
    before = real.read_bytes()
    for args in (("recall", "--json", "wombat"), ("context", "wombat"), ("recall", "wombat")):
        done = cli(*args, "--vault", str(vault))
        clean_exit(done.code, done.out, done.err, args)
    assert link.is_symlink(), "a touch replaced the link with a copy"
    assert real.read_bytes() == before or b"access_count" in real.read_bytes()


# -- reset and prune -------------------------------------------------------------------------


def settings(vault: Path, text: str) -> None:
    (vault / "kenomem.toml").write_text(text + "\n")  # the vault's marker stays


def test_reset_never_moves_what_is_outside_or_not_a_memory(cli: Cli, tmp_path: Path) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    settings(vault, "[reset]\ntrash_days = 0.0")
    outside = outside_world(tmp_path)
    replace_with_link(vault / "working", outside / "dir")
    keep = {
        "semantic/diagram.png": b"\x89PNG not a memory",
        "archive/taxes/2024.pdf": b"%PDF-1.7 not a memory",
        "episodic/drafts/draft.md": b"# Draft\n\ngit-ignored by the person\n",
    }
    for rel, data in keep.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
    ignore = vault / ".gitignore"
    ignore.write_text(ignore.read_text() + "episodic/drafts/\n")
    (vault / "episodic" / "ferry.md").write_text("# Ferry\n\nthe ferry leaves at nine\n")
    before = tree(outside)
    for args in (("reset", "--all", "--yes"), ("prune",), ("reset", "--memory", "--yes")):
        done = cli(*args, "--vault", str(vault))
        clean_exit(done.code, done.out, done.err, args)
        assert done.code == 0, (args, done.err)
        assert tree(outside) == before, args
    for rel, data in keep.items():
        assert (vault / rel).read_bytes() == data, f"reset moved {rel}, which is not a memory"
    assert not (vault / "episodic" / "ferry.md").exists()  # the memory itself did go


def test_reset_refuses_a_folder_that_is_not_a_vault(cli: Cli, tmp_path: Path) -> None:
    home = tmp_path / "someone"
    for rel in ("archive/2019/invoice.pdf", "semantic/notes.md", "buffer/list.md", "foundation.md"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{rel}: a person's file\n")
    before = tree(home)
    done = cli("reset", "--all", "--yes", "--vault", str(home))
    clean_exit(done.code, done.out, done.err)
    assert done.code != 0, "reset acted on a folder that is not a vault"
    assert tree(home) == before


def test_old_trash_is_emptied_only_of_what_kenomem_put_there(cli: Cli, tmp_path: Path) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    settings(vault, "[reset]\ntrash_days = 0.0")
    outside = outside_world(tmp_path)
    trash = vault / "archive" / ".reset"  # the trash of `reset`, in the vault
    ours = trash / "20200101T000000"  # as a reset leaves it, with a file of a person's added
    (ours / "episodic").mkdir(parents=True)
    (ours / "manifest.txt").write_text("scope memory\nepisodic/old.md\n")
    (ours / "episodic" / "old.md").write_text("# Old\n")
    (ours / "keep.txt").write_text("not in the manifest")
    (ours / "link").symlink_to(outside / "dir", target_is_directory=True)
    (ours / "done").write_text("2020-01-01")
    theirs = trash / "photos"  # not made by a reset: no manifest
    theirs.mkdir()
    (theirs / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    (theirs / "done").write_text("x")
    old = time.time() - 400 * 86400
    for path in (ours / "done", theirs / "done"):
        os.utime(path, (old, old))
    before = tree(outside)
    for args in (("prune",), ("reset", "--memory", "--yes")):
        done = cli(*args, "--vault", str(vault))
        clean_exit(done.code, done.out, done.err, args)
        assert done.code == 0, (args, done.err)
    assert tree(outside) == before
    assert (theirs / "cat.jpg").read_bytes() == b"\xff\xd8 a cat"
    assert (ours / "keep.txt").exists() and not (ours / "episodic" / "old.md").exists()
