"""Symlinks and folders that lead out of the vault: never read, served or written through.

A vault synced from elsewhere may hold `semantic/shadow.md -> /etc/shadow`, or a memory
folder that is a symlink to `~/.ssh`. No door reads what such a path holds (the scan, the
watcher, a rebuild and its workers, `show`, `edit`, MCP resources, the buffer, the
foundation), and no write, move or removal goes through it. One check decides for all:
`paths.outside`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenomem import Vault as ApiVault
from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.errors import MemoryNotFound, UnsafePath
from kenomem.files import buffer
from kenomem.files.paths import OUTSIDE, outside, state_dir
from kenomem.files.scan import scan
from kenomem.index import heartbeat, rebuild
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from tests.conftest import REPO, Cli, write
from tests.watch.helpers import indexed_as, kenomem, note, start_watch, wait_for

SECRET = "zanzibar"  # a word of the files outside, to search for
LEAK = "x9hashleak"  # in them too: no output may hold it
SECRET_ID = "mem_20260101_000000_5ec7"
NOTE_ID = "mem_20260101_000000_0001"


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the vault, with files no command on the vault may read or change."""
    folder = tmp_path / "elsewhere"
    (folder / "sub").mkdir(parents=True)
    (folder / "shadow.md").write_text(
        f"---\nid: {SECRET_ID}\ntitle: Shadow\n---\n\nroot {SECRET} {LEAK}:19000:0:99999:7:::\n",
        encoding="utf-8",
    )
    (folder / "plain.md").write_text(
        f"daemon {SECRET} {LEAK}:19000:0:99999:7:::\n", encoding="utf-8"
    )
    (folder / "sub" / "photo.jpg").write_bytes(b"\xff\xd8\xff not a memory")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def link_folder(vault_dir: Path, name: str, target: Path) -> None:
    """Replace the memory folder `name` with a symlink to `target`."""
    shutil.rmtree(vault_dir / name)
    (vault_dir / name).symlink_to(target, target_is_directory=True)


def found_paths(vault: CoreVault, query: str) -> list[str]:
    return [item.path for item in recall(vault, RecallRequest(query, touch=False)).results]


def trust_a_watcher(vault_dir: Path) -> None:
    """A heartbeat of this (live) process: commands take the index as it is, unscanned."""
    heartbeat.write(state_dir(vault_dir), 0)
    assert heartbeat.trusted(state_dir(vault_dir))


# -- the check itself ---------------------------------------------------------------------

PARTS = ["a", "b.md", "in", "out", "up", "esc", "loop", "dangling", "missing", ".", ".."]


@pytest.fixture(scope="module")
def maze(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault with every kind of symlink: inside, out, up to the vault, a loop, dangling."""
    base = tmp_path_factory.mktemp("maze")
    root = base / "vault"
    (root / "a").mkdir(parents=True)
    (base / "beyond").mkdir()
    (root / "b.md").write_text("b", encoding="utf-8")
    (root / "a" / "b.md").write_text("ab", encoding="utf-8")
    (root / "in").symlink_to("a")
    (root / "out").symlink_to(base / "beyond")
    (root / "a" / "up").symlink_to("..")
    (root / "a" / "esc").symlink_to("../..")
    (root / "loop").symlink_to("loop")
    (root / "dangling").symlink_to(base / "nowhere")
    return root


def within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root + os.sep)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(PARTS), min_size=1, max_size=4), follow=st.booleans())
def test_outside_agrees_with_the_real_path(maze: Path, parts: list[str], follow: bool) -> None:
    """The quick walk (a lstat a part) says what comparing real paths says."""
    rel = "/".join(parts)
    full = os.path.join(maze, *parts)
    if ".." in parts:
        expected = True  # never climbs, even where it would come back
    else:
        target = full if follow else os.path.dirname(full)
        expected = not within(os.path.realpath(target), os.path.realpath(maze))
    assert outside(maze, rel, follow) is expected


@pytest.mark.parametrize("rel", ["", "/etc/shadow", "semantic//x.md", "semantic/../../x.md"])
def test_outside_refuses_paths_that_are_not_plainly_relative(vault_dir: Path, rel: str) -> None:
    assert outside(vault_dir, rel)


# -- the scan, the per-path sync of the watcher, and a rebuild ----------------------------


def test_the_scan_passes_over_a_memory_folder_that_leads_out(
    vault_dir: Path, elsewhere: Path
) -> None:
    link_folder(vault_dir, "episodic", elsewhere)
    (vault_dir / "semantic" / "shadow.md").symlink_to(elsewhere / "shadow.md")
    seen = scan(vault_dir)
    assert seen.files == {}
    assert seen.problems == {"episodic": OUTSIDE, "semantic/shadow.md": OUTSIDE}
    vault = CoreVault.open(vault_dir)
    report = vault.sync()
    assert report.errors == seen.problems
    assert found_paths(vault, SECRET) == []


def test_a_symlink_that_stays_inside_is_read(vault_dir: Path) -> None:
    write(vault_dir, "notes/heron.md", note("Heron", "The heron stood still."))
    (vault_dir / "semantic" / "heron.md").symlink_to("../notes/heron.md")
    assert found_paths(CoreVault.open(vault_dir), "heron") == ["semantic/heron.md"]


@pytest.mark.parametrize("where", ["semantic/shadow.md", "episodic/shadow.md"])
def test_the_watchers_per_path_sync_passes_over_what_leads_out(
    vault_dir: Path, elsewhere: Path, where: str
) -> None:
    if where.startswith("episodic/"):
        link_folder(vault_dir, "episodic", elsewhere)
    else:
        (vault_dir / where).symlink_to(elsewhere / "shadow.md")
    vault = CoreVault.open(vault_dir)
    vault.sync()
    report = vault.sync_paths([where], verify=True)  # what the watcher does on an event
    assert report.errors == {where: OUTSIDE}
    assert where not in vault.state
    assert not vault.engine.lookup([SECRET_ID])
    with pytest.raises(MemoryNotFound, match="outside the vault"):
        vault.load(where)


@pytest.mark.parametrize("procs", [0, 2])
def test_a_rebuild_never_reads_what_leads_out(
    vault_dir: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch, procs: int
) -> None:
    """Serial, and in forked workers: even a path handed to a reader that leads out (a
    folder swapped after the scan) is refused by the reader itself."""
    write(vault_dir, "semantic/kept.md", note("Kept", f"A note about {SECRET} kept here."))
    link_folder(vault_dir, "episodic", elsewhere)
    (vault_dir / "semantic" / "shadow.md").symlink_to(elsewhere / "shadow.md")
    monkeypatch.setattr(rebuild, "PARALLEL_FROM", 1)
    vault = CoreVault.open(vault_dir)
    seen = {"semantic/kept.md": (1, 1), "semantic/shadow.md": (1, 1), "episodic/plain.md": (1, 1)}
    reader = rebuild.Reader(vault_dir, seen, {}, vault.engine.prepare, **vault.read_options())
    reads = {item.path: (item.record.error, doc) for item, doc in reader.parallel(procs)}
    assert reads["semantic/shadow.md"] == (OUTSIDE, None)
    assert reads["episodic/plain.md"] == (OUTSIDE, None)
    assert reads["semantic/kept.md"][0] == "" and reads["semantic/kept.md"][1] is not None

    monkeypatch.setattr(rebuild, "workers", lambda: procs)
    report = vault.rebuild()
    assert report.indexed == 1
    assert report.errors == {"episodic": OUTSIDE, "semantic/shadow.md": OUTSIDE}
    assert found_paths(vault, SECRET) == ["semantic/kept.md"]


# -- doors that take a path from the index --------------------------------------------------


@pytest.fixture
def swapped(vault_dir: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A memory indexed as a plain file, then replaced by a symlink out of the vault while
    a watcher vouches for the index (so no command scans before it reads)."""
    monkeypatch.setenv("KENOMEM_NO_SERVE", "1")
    write(vault_dir, "semantic/note.md", note("Note", "A note about herons.", NOTE_ID))
    CoreVault.open(vault_dir).sync()
    (vault_dir / "semantic" / "note.md").unlink()
    (vault_dir / "semantic" / "note.md").symlink_to(elsewhere / "plain.md")
    trust_a_watcher(vault_dir)
    return vault_dir


def test_show_edit_and_recall_never_read_a_file_swapped_for_a_symlink_out(
    swapped: Path, elsewhere: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(elsewhere)
    shown = cli("show", NOTE_ID)
    assert shown.code != 0 and LEAK not in shown.out + shown.err
    assert "outside the vault" in shown.err
    monkeypatch.setenv("EDITOR", "true")
    edited = cli("edit", NOTE_ID)
    assert edited.code != 0 and "outside the vault" in edited.err
    recalled = cli("recall", "herons", "--json")
    assert recalled.code == 0, recalled.err
    assert LEAK not in recalled.out
    assert (swapped / "semantic" / "note.md").is_symlink()
    assert snapshot(elsewhere) == before


def test_forget_never_removes_or_moves_through_a_folder_that_leads_out(
    vault_dir: Path, elsewhere: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KENOMEM_NO_SERVE", "1")
    write(vault_dir, "semantic/sub/photo.jpg.md", note("Photo", "A photo note.", NOTE_ID))
    CoreVault.open(vault_dir).sync()
    shutil.rmtree(vault_dir / "semantic" / "sub")
    (vault_dir / "semantic" / "sub").symlink_to(elsewhere / "sub", target_is_directory=True)
    (elsewhere / "sub" / "photo.jpg.md").write_text("someone else's file\n", encoding="utf-8")
    before = snapshot(elsewhere)
    trust_a_watcher(vault_dir)
    result = cli("forget", NOTE_ID, "--delete", "--yes")
    assert result.code != 0 and "outside the vault" in result.err, result
    assert snapshot(elsewhere) == before


def test_nothing_is_archived_into_an_archive_that_leads_out(
    vault_dir: Path, elsewhere: Path, cli: Cli
) -> None:
    write(vault_dir, "semantic/note.md", note("Note", "A note about herons.", NOTE_ID))
    link_folder(vault_dir, "archive", elsewhere)
    before = snapshot(elsewhere)
    result = cli("forget", NOTE_ID)
    assert result.code != 0 and "outside the vault" in result.err, result
    assert (vault_dir / "semantic" / "note.md").is_file()
    assert snapshot(elsewhere) == before


def test_nothing_is_remembered_into_a_memory_folder_that_leads_out(
    vault_dir: Path, elsewhere: Path, cli: Cli
) -> None:
    link_folder(vault_dir, "semantic", elsewhere)
    before = snapshot(elsewhere)
    result = cli("remember", "The heron waits by the pond.", "--type", "semantic")
    assert result.code != 0 and "outside the vault" in result.err, result
    assert snapshot(elsewhere) == before


# -- the buffer and the foundation ----------------------------------------------------------

DAY = "buffer/2026-03-01.md"
AT = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def buffer_day(folder: Path) -> Path:
    path = folder / "2026-03-01.md"
    path.write_text(
        f"---\ndate: 2026-03-01\nconsolidated: null\n---\n\n## 09:00:00 Ana @s1\n{LEAK}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("linked", ["the day", "the folder"])
def test_a_buffer_day_that_leads_out_is_neither_read_nor_appended_to(
    vault_dir: Path, elsewhere: Path, cli: Cli, linked: str
) -> None:
    if linked == "the day":
        (vault_dir / DAY).symlink_to(buffer_day(elsewhere))
    else:
        buffer_day(elsewhere)
        link_folder(vault_dir, "buffer", elsewhere)
    before = snapshot(elsewhere)
    vault = CoreVault.open(vault_dir)
    assert buffer.days(vault.root) == []
    with pytest.raises(UnsafePath, match="outside the vault"):
        buffer.read_day(vault.root, DAY)
    with pytest.raises(UnsafePath, match="symlink"):  # out of the vault, or to write through
        log_entry(vault, LogRequest("The heron is back.", session="s1", at=AT))
    messages = [{"role": "user", "content": "The heron is back.", "timestamp": AT.isoformat()}]
    with pytest.raises(UnsafePath, match="symlink"):
        ApiVault(vault_dir).import_file(text=json.dumps(messages), target="buffer")
    block = cli("context", "--session", "s1", "--no-touch", "--json")
    assert block.code == 0, block.err
    assert LEAK not in block.out
    assert snapshot(elsewhere) == before


def test_a_foundation_that_leads_out_is_not_read(
    vault_dir: Path, elsewhere: Path, cli: Cli
) -> None:
    (vault_dir / "foundation.md").unlink()
    (vault_dir / "foundation.md").symlink_to(elsewhere / "plain.md")
    block = cli("context", "--no-touch", "--json")
    assert block.code == 0, block.err
    assert LEAK not in block.out
    assert "foundation.md: symlink to outside the vault" in block.err
    with pytest.raises(UnsafePath):
        ApiVault(vault_dir).foundation()


def test_a_scratchpad_that_leads_out_is_not_read(
    vault_dir: Path, elsewhere: Path, cli: Cli
) -> None:
    (elsewhere / "w.md").write_text(f"---\nsession: s1\n---\n\n{LEAK}\n", encoding="utf-8")
    (vault_dir / "working" / "s1.md").symlink_to(elsewhere / "w.md")
    block = cli("context", "--session", "s1", "--no-touch", "--json")
    assert block.code == 0, block.err
    assert LEAK not in block.out
    assert f"working/s1.md: {OUTSIDE}" in block.err
    assert ApiVault(vault_dir).working("s1") is None


# -- a real watcher, its command server, and the MCP server -------------------------------


@pytest.mark.slow
def test_a_watched_vault_never_serves_a_symlink_to_outside(
    vault_dir: Path, elsewhere: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    """`ln -s /etc/shadow semantic/shadow.md` while `kenomem watch` runs: recall, context
    and the MCP resources must not show its lines, and a touching recall leaves the link."""
    from mcp.client.session import ClientSession
    from mcp.shared.exceptions import MCPError

    from tests.mcp_client import serve

    before = snapshot(elsewhere)
    process, out = start_watch(vault_dir, tmp_path)
    reap.append(process)
    link = vault_dir / "semantic" / "shadow.md"
    link.symlink_to(elsewhere / "shadow.md")
    (vault_dir / "foundation.md").unlink()
    (vault_dir / "foundation.md").symlink_to(elsewhere / "plain.md")
    # Events are handled in order: once a file written after the link is indexed, the
    # link's own event has been looked at.
    write(vault_dir, "semantic/after.md", note("After", "Written after the link."))
    indexed_as(vault_dir, "semantic/after.md")
    sd = state_dir(vault_dir)
    wait_for(lambda: heartbeat.trusted(sd), "the watcher to vouch for the index")

    quiet = kenomem(vault_dir, "recall", SECRET, "--json", "--no-touch")
    assert quiet.returncode == 0, quiet.stderr
    assert json.loads(quiet.stdout)["results"] == [] and LEAK not in quiet.stdout
    touching = kenomem(vault_dir, "recall", SECRET, "root", "--json")
    assert touching.returncode == 0, touching.stderr
    assert LEAK not in touching.stdout
    block = kenomem(vault_dir, "context", SECRET, "--json")
    assert block.returncode == 0, block.stderr
    assert LEAK not in block.stdout

    async def check(session: ClientSession) -> None:
        for uri in (f"kenomem://memory/{SECRET_ID}", "kenomem://foundation"):
            with pytest.raises(MCPError) as refused:
                await session.read_resource(uri)
            assert LEAK not in str(refused.value)

    serve(vault_dir, check, tmp_path / "mcp.err")
    assert link.is_symlink() and (vault_dir / "foundation.md").is_symlink()
    assert snapshot(elsewhere) == before
    process.terminate()
    assert process.wait(timeout=10) == 0
    assert f"semantic/shadow.md: {OUTSIDE}" in out.read_text(encoding="utf-8")


def test_the_scanner_process_reports_a_folder_that_leads_out(
    vault_dir: Path, elsewhere: Path, tmp_path: Path
) -> None:
    """The scan of a command runs in a bare interpreter (`python -I -S`): it imports
    nothing of ours but scan.py, and passes over the folder there too."""
    link_folder(vault_dir, "working", elsewhere)
    code = "import sys; sys.path[:0] = [sys.argv[1]]; from kenomem.files.scan import scan; "
    code += "print(scan(sys.argv[2]).problems)"
    repo = str(REPO)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, repo, str(vault_dir)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == repr({"working": OUTSIDE})
