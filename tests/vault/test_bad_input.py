"""Invalid input never loses data (issue 3, SPEC 7): a file kenomem cannot read is reported
with its path, skipped and never rewritten, whatever commands run, and the rest of the vault
stays searchable. End to end through the command line and the core."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from kenomem.files.scan import scan
from kenomem.vault.core import CoreVault
from kenomem.vault.doctor import DoctorRequest, doctor
from tests.conftest import Cli, CliResult, write

KETTLE_ID = "mem_20260101_090000_4e77"
KETTLE = f"---\nid: {KETTLE_ID}\ntitle: Kettle\n---\n\nThe kettle is descaled monthly.\n"
BAD_ID = "mem_20260102_090000_bad0"
COMPLETE = f"""---
id: {BAD_ID}
title: Zeppelin café
tags: [air, travel]
---

The zeppelin lands at the café by the hangar.
"""
BIG = 50 * 1024 * 1024
# Seconds before a command that takes well under one is called hung (a process of its own
# gets longer: it starts an interpreter).
WAIT = 5.0
WAIT_PROCESS = 10.0


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def doctor_json(result: CliResult) -> Any:
    """`doctor --json`'s document, for a vault with an unreadable file: a problem, exit 1."""
    assert result.code == 1, result.err
    return json.loads(result.out)


def recalled(cli: Cli, query: str, *args: str) -> tuple[list[str], str]:
    """(paths recall returns, its stderr). Recall touches what it returns unless told."""
    result = cli("recall", "--json", "--limit", "50", *args, query)
    return [r["path"] for r in one_json(result)["results"]], result.err


class Bad(NamedTuple):
    rel: str  # the entry in the vault, as reported
    reason: str | None  # a word of the reason it is skipped, when it is the same everywhere
    outside: Path | None = None  # what a symlink points at


def fingerprint(vault_dir: Path, bad: Bad) -> tuple[object, ...]:
    """Everything about the entry that a rewrite would change."""
    path = vault_dir / bad.rel
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        target = bad.outside
        assert target is not None
        inside = sorted(
            (p.relative_to(target).as_posix(), p.read_bytes())
            for p in ([target] if target.is_file() else target.rglob("*"))
            if p.is_file()
        )
        return ("link", os.readlink(path), st.st_ino, inside)
    if stat.S_ISREG(st.st_mode):
        try:
            with open(path, "rb") as handle:
                head = handle.read(1 << 16)  # enough: a rewrite changes size, mtime or inode
        except PermissionError:
            head = None
        return ("file", st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, head)
    return ("other", stat.S_IFMT(st.st_mode), st.st_ino, st.st_mtime_ns)


# -- the bad files -------------------------------------------------------------------------


def half_written(vault_dir: Path, tmp_path: Path) -> Bad:
    # The editor had written the frontmatter's first lines when we looked.
    data = COMPLETE.encode()[: COMPLETE.encode().index(b"travel")]
    (vault_dir / "semantic/zeppelin.md").write_bytes(data)
    return Bad("semantic/zeppelin.md", "never closed")


def cut_in_a_character(vault_dir: Path, tmp_path: Path) -> Bad:
    data = COMPLETE.encode()
    cut = data.rindex("é".encode()) + 1  # the first of the two bytes of é
    (vault_dir / "semantic/zeppelin.md").write_bytes(data[:cut])
    return Bad("semantic/zeppelin.md", "UTF-8")


def binary(vault_dir: Path, tmp_path: Path) -> Bad:
    (vault_dir / "semantic/zeppelin.md").write_bytes(b"# Zeppelin\n\x00\x01\x02zeppelin\xff\n")
    return Bad("semantic/zeppelin.md", "binary")


def latin1(vault_dir: Path, tmp_path: Path) -> Bad:
    (vault_dir / "semantic/zeppelin.md").write_bytes(COMPLETE.encode("latin-1"))
    return Bad("semantic/zeppelin.md", "UTF-8")


def huge(vault_dir: Path, tmp_path: Path) -> Bad:
    with open(vault_dir / "semantic/zeppelin.md", "wb") as handle:
        handle.write(COMPLETE.encode())
        handle.truncate(BIG)  # sparse: costs no disk
    return Bad("semantic/zeppelin.md", "large")


def symlink_to_file(vault_dir: Path, tmp_path: Path) -> Bad:
    target = tmp_path / "elsewhere" / "zeppelin.md"
    target.parent.mkdir()
    target.write_text(COMPLETE.replace(f"id: {BAD_ID}\n", ""), encoding="utf-8")
    (vault_dir / "semantic/zeppelin.md").symlink_to(target)
    return Bad("semantic/zeppelin.md", "outside", target)


def symlink_to_folder(vault_dir: Path, tmp_path: Path) -> Bad:
    target = tmp_path / "elsewhere"
    (target / "deeper").mkdir(parents=True)
    (target / "zeppelin.md").write_text(COMPLETE, encoding="utf-8")
    (target / "deeper" / "plain.md").write_text("# Zeppelin\n\nzeppelin\n", encoding="utf-8")
    (vault_dir / "episodic/linked").symlink_to(target, target_is_directory=True)
    return Bad("episodic/linked", "outside", target)


def no_permission(vault_dir: Path, tmp_path: Path) -> Bad:
    if os.geteuid() == 0:
        pytest.skip("root can read every file")
    path = vault_dir / "semantic/zeppelin.md"
    path.write_text(COMPLETE, encoding="utf-8")
    path.chmod(0)
    return Bad("semantic/zeppelin.md", "cannot read")


def alias_bomb(vault_dir: Path, tmp_path: Path) -> Bad:
    # Nested YAML aliases: small here (9**4 items), but a few more levels in a few hundred
    # bytes make gigabytes for whatever walks the value (`show --json`, the index).
    lines = ["a: &a [" + ",".join(["lol"] * 9) + "]"]
    for before, name in zip("abc", "bcd", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]")
    text = COMPLETE.replace("tags: [air, travel]\n", "\n".join(lines) + "\n")
    (vault_dir / "semantic/zeppelin.md").write_text(text, encoding="utf-8")
    return Bad("semantic/zeppelin.md", "aliases")


MAKERS = [
    half_written,
    alias_bomb,
    cut_in_a_character,
    binary,
    latin1,
    huge,
    symlink_to_file,
    symlink_to_folder,
    pytest.param(
        no_permission,
        marks=pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions"),
    ),
]


@pytest.fixture
def kettle(vault_dir: Path) -> Path:
    return write(vault_dir, "semantic/kettle.md", KETTLE)


# -- each bad file, through every command ------------------------------------------------------


@pytest.mark.parametrize("make", MAKERS, ids=lambda make: make.__name__)
def test_bad_file_is_reported_skipped_and_never_rewritten(
    cli: Cli, vault_dir: Path, tmp_path: Path, kettle: Path, make: Callable[..., Bad]
) -> None:
    bad = make(vault_dir, tmp_path)
    before = fingerprint(vault_dir, bad)

    paths, err = recalled(cli, "kettle")  # the first command indexes the vault
    assert paths == ["semantic/kettle.md"]
    assert bad.rel in err
    if bad.reason:
        assert bad.reason in err
    assert fingerprint(vault_dir, bad) == before

    commands: list[tuple[str, ...]] = [
        ("recall", "--json", "zeppelin hangar"),
        ("recall", "--json", "kettle"),
        ("list", "--json"),
        ("stats", "--json"),
        ("show", "--json", KETTLE_ID),
        ("remember", "--json", "--type", "semantic", "The teapot on the shelf is blue"),
        ("reindex",),
        ("doctor", "--json"),
        ("doctor", "--json", "--fix"),
        ("recall", "--json", "kettle teapot"),
    ]
    teapot = ""
    for args in commands:
        result = cli(*args)
        assert result.code == (1 if args[0] == "doctor" else 0), (args, result.err)
        assert fingerprint(vault_dir, bad) == before, args
        if args[0] == "remember":
            teapot = json.loads(result.out)["path"]

    paths, err = recalled(cli, "zeppelin hangar")
    assert paths == []
    assert bad.rel in err
    assert sorted(recalled(cli, "kettle teapot")[0]) == sorted(["semantic/kettle.md", teapot])
    findings = doctor_json(cli("doctor", "--json"))["findings"]
    assert [f["kind"] for f in findings if f["path"] == bad.rel] == ["unreadable"]
    assert fingerprint(vault_dir, bad) == before


@pytest.mark.parametrize("make", MAKERS, ids=lambda make: make.__name__)
def test_stats_lists_every_file_the_warnings_name(
    cli: Cli, vault_dir: Path, tmp_path: Path, kettle: Path, make: Callable[..., Bad]
) -> None:
    # When there are too many to print, the warnings send the reader to `stats --json`.
    bad = make(vault_dir, tmp_path)
    assert bad.rel in recalled(cli, "kettle")[1]
    result = cli("stats", "--json")
    assert bad.rel in result.err
    assert bad.rel in one_json(result)["unreadable"]


@pytest.mark.parametrize("make", MAKERS, ids=lambda make: make.__name__)
def test_core_sync_and_doctor_skip_the_bad_file(
    vault_dir: Path, tmp_path: Path, kettle: Path, make: Callable[..., Bad]
) -> None:
    bad = make(vault_dir, tmp_path)
    before = fingerprint(vault_dir, bad)
    vault = CoreVault.open(vault_dir)
    report = vault.sync()
    assert bad.rel in report.errors
    assert set(vault.ids()) == {KETTLE_ID}
    result = doctor(vault, DoctorRequest(fix=True))
    assert [f.kind for f in result.findings if f.path == bad.rel] == ["unreadable"]
    assert bad.rel in vault.rebuild().errors
    assert set(vault.ids()) == {KETTLE_ID}
    assert fingerprint(vault_dir, bad) == before


# -- a memory caught half-written, then finished ---------------------------------------------


@pytest.mark.parametrize("cut", [half_written, cut_in_a_character], ids=lambda f: f.__name__)
def test_memory_caught_half_written_comes_back_when_finished(
    cli: Cli, vault_dir: Path, tmp_path: Path, kettle: Path, cut: Callable[..., Bad]
) -> None:
    path = vault_dir / "semantic/zeppelin.md"
    path.write_text(COMPLETE, encoding="utf-8")
    assert recalled(cli, "zeppelin", "--no-touch")[0] == ["semantic/zeppelin.md"]

    bad = cut(vault_dir, tmp_path)  # the editor is saving it again
    partial = path.read_bytes()
    paths, err = recalled(cli, "kettle")
    assert paths == ["semantic/kettle.md"]
    assert "semantic/zeppelin.md" in err
    findings = doctor_json(cli("doctor", "--json", "--fix"))["findings"]
    assert bad.rel in {f["path"] for f in findings if f["kind"] == "unreadable"}
    assert path.read_bytes() == partial

    path.write_text(COMPLETE, encoding="utf-8")  # the save is finished
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    result = cli("recall", "--json", "--no-touch", "zeppelin")
    (item,) = one_json(result)["results"]
    assert (item["id"], item["path"]) == (BAD_ID, "semantic/zeppelin.md")
    assert "zeppelin" not in result.err
    assert path.read_text(encoding="utf-8") == COMPLETE


# -- a 50 MB file ------------------------------------------------------------------------------


def test_a_50_mb_file_is_never_read_whole(cli: Cli, vault_dir: Path, kettle: Path) -> None:
    assert recalled(cli, "kettle")[0] == ["semantic/kettle.md"]  # imports done, index built
    path = vault_dir / "episodic/dump.md"
    with open(path, "wb") as handle:
        handle.write(b"# Zeppelin\n\n" + b"zeppelin hangar " * 1024 + b"\n")
        handle.truncate(BIG)

    tracemalloc.start()
    try:
        results = [
            cli("recall", "--json", "kettle"),
            cli("doctor", "--json"),
            cli("reindex"),
            cli("recall", "--json", "zeppelin"),
        ]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # doctor reports the big file: a problem, so it exits 1.
    assert [r.code for r in results] == [0, 1, 0, 0], [r.err for r in results]
    assert peak < BIG // 4, f"{peak} bytes held at once: the big file was read"
    assert [r["path"] for r in json.loads(results[0].out)["results"]] == ["semantic/kettle.md"]
    assert "episodic/dump.md" in results[0].err
    assert "large" in results[0].err
    assert json.loads(results[3].out)["results"] == []
    assert path.stat().st_size == BIG


# -- a named pipe --------------------------------------------------------------------------------


def kenomem(vault_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, killed if it hangs."""
    env = {**os.environ, "KENOMEM_VAULT": str(vault_dir), "NO_COLOR": "1"}
    try:
        return subprocess.run(
            [sys.executable, "-m", "kenomem", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_PROCESS,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kenomem {' '.join(args)} hung on a named pipe in the vault")


def unblock(fifo: Path) -> None:
    """Let a reader stuck opening `fifo` go (it reads an empty file)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")


@pytest.fixture
def fifo(vault_dir: Path, kettle: Path) -> Path:
    path = vault_dir / "semantic/pipe.md"
    os.mkfifo(path)
    return path


@needs_fifo
def test_scan_of_a_named_pipe_does_not_open_it(vault_dir: Path, fifo: Path) -> None:
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(scan(vault_dir)), daemon=True)
    worker.start()
    worker.join(WAIT)
    if worker.is_alive():
        unblock(fifo)
        pytest.fail("the scan hung on a named pipe")
    assert "semantic/kettle.md" in outcome[0].files  # type: ignore[attr-defined]


@needs_fifo
def test_core_sync_and_doctor_do_not_hang_on_a_named_pipe(vault_dir: Path, fifo: Path) -> None:
    vault = CoreVault.open(vault_dir)
    done: list[object] = []

    def work() -> None:
        done.append(vault.sync())
        done.append(doctor(vault, DoctorRequest(fix=True)))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    for _ in range(int(WAIT * 10)):
        worker.join(0.1)
        if len(done) == 2 or not worker.is_alive():
            break
    if worker.is_alive():
        stuck = "doctor" if done else "the sync"
        while worker.is_alive():
            unblock(fifo)
            worker.join(0.1)
        pytest.fail(f"{stuck} hung opening a named pipe")
    report, result = done
    assert "semantic/pipe.md" in report.errors  # type: ignore[attr-defined]
    assert set(vault.ids()) == {KETTLE_ID}
    assert "semantic/pipe.md" in {f.path for f in result.findings}  # type: ignore[attr-defined]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@needs_fifo
def test_commands_do_not_hang_on_a_named_pipe(vault_dir: Path, fifo: Path) -> None:
    recall = kenomem(vault_dir, "recall", "--json", "kettle")
    assert recall.returncode == 0, recall.stderr
    assert [r["path"] for r in json.loads(recall.stdout)["results"]] == ["semantic/kettle.md"]
    assert "semantic/pipe.md" in recall.stderr
    for args in (("doctor", "--json", "--fix"), ("reindex",), ("list", "--json")):
        result = kenomem(vault_dir, *args)
        # doctor reports the pipe, which it cannot fix: exit 1, and no hang.
        assert result.returncode == (1 if args[0] == "doctor" else 0), (args, result.stderr)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
