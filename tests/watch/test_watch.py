"""`watch` on real vaults: the system's observer and the polling one, editors' save
patterns, bursts, folders moved, the vault vanishing, and the heartbeat other commands
trust. Every wait is for a condition, with a deadline only so that a failure cannot hang.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kenomem.errors import IndexCorrupt
from kenomem.files.paths import state_dir
from kenomem.index import Boosts, Filters, heartbeat, scanjob
from kenomem.index import state as state_mod
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.watch.watcher import Stopper, WatchRequest, WatchSummary, run
from tests.conftest import write
from tests.watch.helpers import (
    DEADLINE,
    found,
    indexed,
    indexed_as,
    kenomem,
    note,
    start_watch,
    wait_for,
)

pytestmark = pytest.mark.slow  # real watchers


class Watcher:
    """`kenomem.watch.watcher.run` in a thread, with its log collected."""

    def __init__(self, root: Path, polling: bool) -> None:
        self.root = root
        self.polling = polling
        self.stopper = Stopper()
        self.lines: list[tuple[str, str]] = []
        self.summary: WatchSummary | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, name="kenomem-watch", daemon=True)

    def _main(self) -> None:
        try:
            self.summary = run(
                self.root, WatchRequest(self.polling), log=self._log, stopper=self.stopper
            )
        except BaseException as exc:
            self.error = exc

    def _log(self, level: str, message: str) -> None:
        self.lines.append((level, message))

    def messages(self, level: str | None = None) -> list[str]:
        return [text for lvl, text in list(self.lines) if level is None or lvl == level]

    def start(self) -> Watcher:
        self.thread.start()
        wait_for(
            lambda: self.error is not None or not self.thread.is_alive() or self.messages(),
            "the watcher to start",
        )
        self.check()
        wait_for(self.idle, "the watcher's first heartbeat")
        return self

    def idle(self) -> bool:
        """The watcher beats, with nothing pending (as other processes would trust it).

        A polling watcher never vouches for the index (it sees changes only at its next
        poll), so its beat always shows one pending change.
        """
        self.check()
        beat = heartbeat.read(state_dir(self.root))
        return (
            beat is not None
            and beat.pid == os.getpid()
            and beat.pending == (1 if self.polling else 0)
            and time.time() - beat.time <= heartbeat.FRESH_SECONDS
        )

    def check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"the watcher failed: {self.error!r}") from self.error
        assert self.thread.is_alive() or self.summary is not None, "the watcher ended"

    def stop(self) -> WatchSummary:
        self.stopper.stop()
        self.thread.join(DEADLINE)
        assert not self.thread.is_alive(), "the watcher did not stop"
        self.check()
        assert self.summary is not None
        return self.summary


@pytest.fixture(params=[False, True], ids=["native", "polling"])
def polling(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def watching(vault_dir: Path, polling: bool) -> Iterator[Callable[[], Watcher]]:
    """Start a watcher on `vault_dir`, whose index is first brought up to date (so the
    watcher's summary counts only what it reindexed itself)."""
    started: list[Watcher] = []

    def start() -> Watcher:
        CoreVault.open(vault_dir).sync()
        watcher = Watcher(vault_dir, polling)
        started.append(watcher)
        return watcher.start()

    yield start
    for watcher in started:
        watcher.stopper.stop()
        watcher.thread.join(DEADLINE)


# -- new, edited, renamed and deleted files ---------------------------------------------


def test_a_new_file_is_indexed(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    watcher = watching()
    write(vault_dir, "semantic/alpaca.md", note("Alpacas", "The alpaca sleeps in the barn."))
    mem_id = indexed_as(vault_dir, "semantic/alpaca.md")
    assert found(vault_dir, "alpaca") == {"semantic/alpaca.md": mem_id}
    summary = watcher.stop()
    assert summary.reindexed == 1
    assert summary.removed == 0
    assert any("semantic/alpaca.md" in line for line in watcher.messages("detail"))


PETS_ID = "mem_20260101_090000_aaaa"
BEFORE = note("Pets", "The alpaca sleeps in the barn.", PETS_ID)
AFTER = note("Pets", "The walrus sleeps in the barn.", PETS_ID)  # the same size


def edited(vault_dir: Path) -> None:
    """The edit reached the index: the new text is found, the old one is not, same id."""
    wait_for(lambda: "semantic/pets.md" in in_index(vault_dir, "walrus"), "the edit to be indexed")
    assert found(vault_dir, "walrus") == {"semantic/pets.md": PETS_ID}
    assert found(vault_dir, "alpaca") == {}


def in_index(root: Path, word: str) -> set[str]:
    """Paths of the memories the index finds for `word`, searched without syncing."""
    try:
        result = CoreVault.open(root).engine.search(word, Filters(), Boosts(), 50)
    except IndexCorrupt:  # read in the middle of a write
        return set()
    return {hit.doc.path for hit in result.hits}


def test_vim_style_save(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    """A swap file while editing, a probe of the folder, then the new text written to a
    temporary file and renamed over the old one."""
    path = write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    folder = vault_dir / "semantic"
    swap = folder / ".pets.md.swp"
    swap.write_text("b0VIM 9.0\n" + AFTER.replace("walrus", "ocelot"))
    probe = folder / "4913"
    probe.write_text("")
    probe.unlink()
    temp = folder / "pets.md.tmp"
    temp.write_text(AFTER)
    os.replace(temp, path)
    swap.write_text("b0VIM 9.0\n" + AFTER.replace("walrus", "ocelot") + "more")
    edited(vault_dir)
    assert found(vault_dir, "ocelot") == {}
    assert set(indexed(vault_dir)) == {"semantic/pets.md"}
    summary = watcher.stop()
    assert summary.reindexed == 1
    assert summary.removed == 0
    assert watcher.messages("warn") == []


def test_truncate_and_write_in_place(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    """VS Code's save: the same file opened, truncated and written."""
    path = write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    inode = path.stat().st_ino
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.flush()
        os.fsync(handle.fileno())
        handle.write(AFTER.encode())
    assert path.stat().st_ino == inode
    edited(vault_dir)
    assert set(indexed(vault_dir)) == {"semantic/pets.md"}
    assert watcher.stop().removed == 0


def test_emacs_style_save_with_a_backup(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    """While editing, a lock file and an auto-save file; on save, the file renamed to
    `name~` and the new text written under the name; the backup stays."""
    path = write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    folder = vault_dir / "semantic"
    lock = folder / ".#pets.md"  # a plain file where symlinks cannot be made
    lock.write_text("someone@host.12345:1700000000")
    autosave = folder / "#pets.md#"
    autosave.write_text(AFTER.replace("walrus", "ocelot"))
    # The editing goes on for a while: the watcher sees those files before the save.
    write(vault_dir, "episodic/meanwhile.md", note("Meanwhile", "A heron flew over."))
    indexed_as(vault_dir, "episodic/meanwhile.md")
    os.rename(path, folder / "pets.md~")
    path.write_text(AFTER)
    autosave.unlink()
    lock.unlink()
    edited(vault_dir)
    assert (folder / "pets.md~").read_text() == BEFORE
    assert set(indexed(vault_dir)) == {"semantic/pets.md", "episodic/meanwhile.md"}
    summary = watcher.stop()
    assert (summary.reindexed, summary.removed) == (2, 0)
    assert watcher.messages("warn") == []


def test_a_rename_keeps_the_id(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    """A hand-made note without an id in it: its id is carried over the rename."""
    write(vault_dir, "semantic/pets.md", "# Pets\n\nThe alpaca sleeps in the barn.\n")
    before = CoreVault.open(vault_dir)
    before.sync()
    (mem_id,) = before.ids()
    watching()
    os.rename(vault_dir / "semantic/pets.md", vault_dir / "semantic/barn-animals.md")
    wait_for(
        lambda: indexed(vault_dir) == {"semantic/barn-animals.md": mem_id},
        "the rename to be indexed",
    )
    assert found(vault_dir, "alpaca") == {"semantic/barn-animals.md": mem_id}


def test_a_deleted_file_is_removed(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    write(vault_dir, "semantic/pets.md", BEFORE)
    write(vault_dir, "semantic/kettle.md", note("Kettle", "The kettle is descaled monthly."))
    watcher = watching()
    (vault_dir / "semantic/pets.md").unlink()
    wait_for(lambda: "semantic/pets.md" not in indexed(vault_dir), "the deletion to be indexed")
    assert found(vault_dir, "alpaca") == {}
    assert list(found(vault_dir, "kettle")) == ["semantic/kettle.md"]
    summary = watcher.stop()
    assert summary.removed == 1
    assert summary.reindexed == 0


def test_a_burst_of_changes_is_all_indexed(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    """What a `git checkout` does: many files created, changed and deleted at once."""
    folders = ["semantic", "episodic", "procedural", "episodic/2026-02"]
    (vault_dir / "episodic/2026-02").mkdir()
    for i in range(20):
        write(vault_dir, f"semantic/old{i:02d}.md", note(f"Old {i}", f"An old wombat note {i}."))
    watcher = watching()
    for i in range(100):
        write(vault_dir, f"{folders[i % 4]}/n{i:03d}.md", note(f"Note {i}", f"A quokka, {i}."))
    for i in range(10):
        (vault_dir / f"semantic/old{i:02d}.md").unlink()
    for i in range(10, 20):
        write(vault_dir, f"semantic/old{i:02d}.md", note(f"Old {i}", f"Now a numbat note {i}."))
    expected = {f"{folders[i % 4]}/n{i:03d}.md" for i in range(100)} | {
        f"semantic/old{i:02d}.md" for i in range(10, 20)
    }
    wait_for(lambda: set(indexed(vault_dir)) == expected, "the burst to be indexed")
    assert set(found(vault_dir, "quokka", limit=200)) == expected - {
        f"semantic/old{i:02d}.md" for i in range(10, 20)
    }
    assert len(found(vault_dir, "numbat")) == 10
    assert found(vault_dir, "wombat") == {}
    summary = watcher.stop()
    assert summary.removed == 10
    assert summary.reindexed == 110


def test_a_folder_moved_then_removed(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    for i in range(3):
        write(vault_dir, f"semantic/project/n{i}.md", f"# Project {i}\n\nThe heron plan {i}.\n")
    before = CoreVault.open(vault_dir)
    before.sync()
    ids = {path: mem_id for mem_id, path in before.ids().items()}
    watching()
    shutil.move(vault_dir / "semantic/project", vault_dir / "archive/project")
    moved = {path.replace("semantic/", "archive/"): mem_id for path, mem_id in ids.items()}
    wait_for(lambda: indexed(vault_dir) == moved, "the moved folder to be indexed")
    shutil.rmtree(vault_dir / "archive/project")
    wait_for(lambda: indexed(vault_dir) == {}, "the removed folder to be indexed")


def test_a_folder_moved_in_from_outside(
    vault_dir: Path, tmp_path: Path, watching: Callable[[], Watcher]
) -> None:
    outside = tmp_path / "incoming"
    for i in range(5):
        write(outside, f"deep/n{i}.md", note(f"Trip {i}", f"The ibis at stop {i}."))
    watching()
    shutil.move(outside, vault_dir / "episodic/incoming")
    expected = {f"episodic/incoming/deep/n{i}.md" for i in range(5)}
    wait_for(lambda: set(indexed(vault_dir)) == expected, "the folder moved in to be indexed")
    assert set(found(vault_dir, "ibis")) == expected


def test_a_memory_folder_created_after_the_start_is_watched(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    """Only the memory folders are watched (not .kenomem/ nor .git/): one that appears
    later must be watched from then on."""
    shutil.rmtree(vault_dir / "archive")
    watching()
    write(vault_dir, "archive/semantic/first.md", note("First", "The first okapi."))
    indexed_as(vault_dir, "archive/semantic/first.md")
    write(vault_dir, "archive/semantic/second.md", note("Second", "The second okapi."))
    indexed_as(vault_dir, "archive/semantic/second.md")


def test_ignored_files_are_not_indexed(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    with open(vault_dir / ".gitignore", "a") as handle:
        handle.write("semantic/private/\n")
    watching()
    write(vault_dir, "semantic/private/secret.md", note("Secret", "The lynx code."))
    write(vault_dir, "semantic/public.md", note("Public", "The lynx is shy."))
    indexed_as(vault_dir, "semantic/public.md")
    assert "semantic/private/secret.md" not in indexed(vault_dir)
    assert list(found(vault_dir, "lynx")) == ["semantic/public.md"]


# -- the heartbeat ------------------------------------------------------------------------


def test_the_heartbeat_is_there_while_watching_and_gone_after(
    vault_dir: Path, watching: Callable[[], Watcher], polling: bool
) -> None:
    watcher = watching()
    beat = heartbeat.read(state_dir(vault_dir))
    assert beat is not None
    assert beat.pid == os.getpid()
    # A polling watcher sees changes only at its next poll: it never vouches for the index.
    assert trusted_elsewhere(vault_dir) is not polling
    watcher.stop()
    assert heartbeat.read(state_dir(vault_dir)) is None
    assert not trusted_elsewhere(vault_dir)


def trusted_elsewhere(root: Path) -> bool:
    """Whether another process (a command) would trust the heartbeat now."""
    code = (
        "import sys; from pathlib import Path; from kenomem.index import heartbeat; "
        "sys.exit(3 if heartbeat.trusted(Path(sys.argv[1])) else 4)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(state_dir(root))], timeout=60, check=False
    )
    assert done.returncode in (3, 4)
    return done.returncode == 3


def test_recall_touching_files_causes_no_reindexing(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    for i in range(5):
        mem_id = f"mem_20260101_0900{i:02d}_abc{i}"
        write(
            vault_dir, f"semantic/k{i}.md", note(f"Kettle {i}", "The kettle is descaled.", mem_id)
        )
    watcher = watching()
    before = {i: (vault_dir / f"semantic/k{i}.md").read_text() for i in range(5)}
    result = recall(CoreVault.open(vault_dir), RecallRequest("kettle", limit=10, touch=True))
    assert len(result.results) == 5
    for i in range(5):
        assert (vault_dir / f"semantic/k{i}.md").read_text() != before[i]  # really rewritten
    # A change made after the touches: once it is indexed, their events were seen too.
    write(vault_dir, "episodic/zebra.md", note("Zebra", "A zebra passed by."))
    indexed_as(vault_dir, "episodic/zebra.md")
    result = recall(CoreVault.open(vault_dir), RecallRequest("kettle", limit=10, touch=True))
    assert len(result.results) == 5
    write(vault_dir, "episodic/okapi.md", note("Okapi", "An okapi passed by."))
    indexed_as(vault_dir, "episodic/okapi.md")
    summary = watcher.stop()
    assert summary.reindexed == 2
    assert summary.removed == 0


def test_the_log_names_only_what_was_reindexed(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    """A file whose content did not change (a checkout of the same bytes, recall's touch)
    is not reindexed, and the log must not say it was."""
    path = write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    path.write_text(BEFORE)  # the same bytes, a new mtime
    write(vault_dir, "semantic/kettle.md", note("Kettle", "The kettle is descaled monthly."))
    indexed_as(vault_dir, "semantic/kettle.md")
    summary = watcher.stop()
    assert summary.reindexed == 1
    details = watcher.messages("detail")
    assert any("semantic/kettle.md" in line for line in details)
    assert not any("semantic/pets.md" in line for line in details), details


def test_a_file_saved_while_the_watcher_starts_is_not_missed(
    vault_dir: Path, polling: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save that lands while the watcher starts, just after its first full sync and
    before its first heartbeat, is indexed all the same."""
    original = CoreVault.sync
    saved: list[Path] = []

    def sync_then_save(self: CoreVault, *args: Any, **kwargs: Any) -> Any:
        report = original(self, *args, **kwargs)
        if not saved and threading.current_thread().name == "kenomem-watch":
            saved.append(write(vault_dir, "semantic/early.md", note("Early", "A heron.")))
        return report

    monkeypatch.setattr(CoreVault, "sync", sync_then_save)
    watcher = Watcher(vault_dir, polling).start()
    try:
        assert saved
        indexed_as(vault_dir, "semantic/early.md")
        wait_for(watcher.idle, "the watcher to be idle")
        assert list(found(vault_dir, "heron")) == ["semantic/early.md"]
    finally:
        watcher.stop()


def test_a_same_size_rewrite_within_one_timestamp_tick_is_seen(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    """On a file system with coarse timestamps (FAT, HFS+, many network mounts) two saves
    within one tick have the same mtime; with the same size only the content tells them
    apart, which is why a stat recorded that soon is not trusted (scans re-read it).
    The coarse clock is simulated by giving both versions the same whole-second mtime."""
    path = vault_dir / "semantic/pets.md"
    tick = (time.time_ns() // 1_000_000_000) * 1_000_000_000
    watching()
    temp = vault_dir / "semantic/pets.md.tmp"
    temp.write_text(BEFORE)
    os.utime(temp, ns=(tick, tick))
    os.replace(temp, path)
    indexed_as(vault_dir, "semantic/pets.md")
    temp.write_text(AFTER)
    os.utime(temp, ns=(tick, tick))
    os.replace(temp, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (len(BEFORE), tick)
    wait_for(
        lambda: "semantic/pets.md" in in_index(vault_dir, "walrus"),
        "the second save to be indexed",
    )


# -- failures -----------------------------------------------------------------------------


def test_an_unreadable_file_is_reported_once_and_skipped(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    watcher = watching()
    write(vault_dir, "semantic/broken.md", "---\ntitle: [unclosed\n---\n\nThe koala is lost.\n")
    write(vault_dir, "semantic/good.md", note("Good", "The koala sleeps all day."))
    indexed_as(vault_dir, "semantic/good.md")

    def warnings() -> list[str]:
        return [line for line in watcher.messages("warn") if "semantic/broken.md" in line]

    wait_for(warnings, "a warning about the broken file")
    write(vault_dir, "semantic/more.md", note("More", "Another batch, a wallaby."))
    indexed_as(vault_dir, "semantic/more.md")
    write(vault_dir, "episodic/more.md", note("More", "And another, an emu."))
    indexed_as(vault_dir, "episodic/more.md")
    assert len(warnings()) == 1
    assert list(found(vault_dir, "koala")) == ["semantic/good.md"]
    assert "semantic/broken.md" not in indexed(vault_dir)

    write(vault_dir, "semantic/broken.md", note("Fixed", "The koala is found."))
    indexed_as(vault_dir, "semantic/broken.md")
    assert set(found(vault_dir, "koala")) == {"semantic/good.md", "semantic/broken.md"}
    watcher.stop()
    assert len(warnings()) == 1


def vault_is_away(watcher: Watcher, root: Path) -> Callable[[], bool]:
    return lambda: any(str(root) in line for line in watcher.messages("warn"))


def test_the_vault_briefly_absent(vault_dir: Path, watching: Callable[[], Watcher]) -> None:
    """An unmounted drive or a checkout of the folder itself: the watcher waits for the
    vault to come back and then watches it again."""
    write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    away = vault_dir.with_name("vault-away")
    os.rename(vault_dir, away)
    wait_for(vault_is_away(watcher, vault_dir), "a warning that the vault is gone")
    assert not (vault_dir / ".kenomem").exists()  # nothing recreated in its place
    os.rename(away, vault_dir)
    back = time.time()

    def beating_again() -> bool:
        beat = heartbeat.read(state_dir(vault_dir))
        return beat is not None and beat.time > back

    wait_for(beating_again, "the watcher to beat again in the vault")
    write(vault_dir, "semantic/after.md", note("After", "The marmot came back."))
    indexed_as(vault_dir, "semantic/after.md")
    wait_for(watcher.idle, "the watcher to be idle")
    assert list(found(vault_dir, "marmot")) == ["semantic/after.md"]
    assert found(vault_dir, "alpaca") == {"semantic/pets.md": PETS_ID}
    watcher.stop()
    assert heartbeat.read(state_dir(vault_dir)) is None


def test_changes_made_while_the_vault_was_away_are_indexed(
    vault_dir: Path, watching: Callable[[], Watcher]
) -> None:
    write(vault_dir, "semantic/pets.md", BEFORE)
    watcher = watching()
    away = vault_dir.with_name("vault-away")
    os.rename(vault_dir, away)
    wait_for(vault_is_away(watcher, vault_dir), "a warning that the vault is gone")
    write(away, "semantic/while-away.md", note("Away", "The marmot moved in."))
    (away / "semantic/pets.md").unlink()
    os.rename(away, vault_dir)
    wait_for(
        lambda: set(indexed(vault_dir)) == {"semantic/while-away.md"},
        "the changes made while the vault was away to be indexed",
    )
    wait_for(watcher.idle, "the watcher to be idle")
    assert list(found(vault_dir, "marmot")) == ["semantic/while-away.md"]
    assert found(vault_dir, "alpaca") == {}


# -- the command, as a process ------------------------------------------------------------


def recalled(root: Path, query: str) -> list[str]:
    done = kenomem(root, "recall", query, "--json", "--no-touch")
    assert done.returncode == 0, done.stderr
    return [item["path"] for item in json.loads(done.stdout)["results"]]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_the_watch_command_indexes_and_stops_on_a_signal(
    vault_dir: Path,
    tmp_path: Path,
    reap: list[subprocess.Popen[str]],
    signum: signal.Signals,
) -> None:
    process, out = start_watch(vault_dir, tmp_path, "--verbose")
    reap.append(process)
    write(vault_dir, "semantic/alpaca.md", note("Alpacas", "The alpaca sleeps in the barn."))
    indexed_as(vault_dir, "semantic/alpaca.md")
    assert recalled(vault_dir, "alpaca") == ["semantic/alpaca.md"]
    process.send_signal(signum)
    assert process.wait(timeout=5) == 0, out.read_text()
    assert heartbeat.read(state_dir(vault_dir)) is None
    assert "semantic/alpaca.md" in out.read_text()  # --verbose says what it reindexed


def test_after_the_watcher_dies_commands_scan_again(
    vault_dir: Path, tmp_path: Path, reap: list[subprocess.Popen[str]]
) -> None:
    write(vault_dir, "semantic/pets.md", BEFORE)
    process, _ = start_watch(vault_dir, tmp_path)
    reap.append(process)
    process.kill()
    process.wait(DEADLINE)
    beat = heartbeat.read(state_dir(vault_dir))
    assert beat is not None  # left behind, its writer dead
    assert beat.pid == process.pid
    write(vault_dir, "semantic/pets.md", AFTER.replace("walrus", "iguana"))
    write(vault_dir, "semantic/newt.md", note("Newt", "A newt in the pond."))
    assert recalled(vault_dir, "iguana") == ["semantic/pets.md"]
    assert recalled(vault_dir, "newt") == ["semantic/newt.md"]

    # A watcher that is alive but stuck: its beat grows old, and is not trusted either.
    old = time.time() - heartbeat.FRESH_SECONDS - 10
    (state_dir(vault_dir) / heartbeat.NAME).write_text(f"{os.getpid()} {old:.3f} 0\n")
    write(vault_dir, "semantic/newt.md", note("Toad", "A toad in the pond now."))
    assert recalled(vault_dir, "toad") == ["semantic/newt.md"]
    assert recalled(vault_dir, "newt") == []


def test_commands_skip_their_scan_only_while_a_watcher_vouches(
    vault_dir: Path,
    tmp_path: Path,
    reap: list[subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Path] = []
    original = scanjob.start

    def recording(root: Path, state: Any) -> Any:
        calls.append(root)
        return original(root, state)

    monkeypatch.setattr(scanjob, "start", recording)
    write(vault_dir, "semantic/pets.md", BEFORE)
    process, out = start_watch(vault_dir, tmp_path)
    reap.append(process)
    sd = state_dir(vault_dir)
    wait_for(lambda: heartbeat.trusted(sd), "a trusted heartbeat")
    pending = CoreVault.open(vault_dir).begin_sync()
    assert pending.job is None
    pending.finish()
    assert calls == []

    # what the watcher indexed is found without a scan
    write(vault_dir, "semantic/kettle.md", note("Kettle", "The kettle is descaled monthly."))
    indexed_as(vault_dir, "semantic/kettle.md")
    wait_for(lambda: heartbeat.trusted(sd), "a trusted heartbeat")
    assert list(found(vault_dir, "kettle")) == ["semantic/kettle.md"]
    assert calls == []

    process.terminate()
    assert process.wait(timeout=5) == 0, out.read_text()
    assert heartbeat.read(sd) is None
    pending = CoreVault.open(vault_dir).begin_sync()
    assert pending.job is not None
    pending.finish()
    assert calls == [vault_dir]


def test_recalls_own_touches_leave_the_watcher_idle(
    vault_dir: Path, watching: Callable[[], Watcher], polling: bool
) -> None:
    """A recall's touches rewrite the files it returns; the watcher knows them for
    kenomem's own (journaled before the rename), so it keeps vouching for the index and
    the next command skips its scan. A person's edit right after is still seen."""
    if polling:
        pytest.skip("a polling watcher never vouches for the index")
    write(vault_dir, "semantic/a.md", note("Herons", "The heron waits by the pond."))
    write(vault_dir, "semantic/b.md", note("More herons", "A heron nests in the reeds."))
    watcher = watching()
    wait_for(watcher.idle, "the watcher to be idle")
    result = recall(CoreVault.open(vault_dir), RecallRequest("heron"))
    assert len(result.results) == 2
    assert all(item.access_count == 1 for item in result.results)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # long enough for a burst to be seen and applied
        assert watcher.idle(), "the watcher took recall's touches for pending work"
        time.sleep(0.02)
    write(vault_dir, "semantic/a.md", note("Herons", "The heron flew to the river."))
    wait_for(lambda: "semantic/a.md" in in_index(vault_dir, "river"), "the edit to be indexed")
    summary = watcher.stop()
    assert summary.reindexed == 1  # the edit; not the touches


def test_journaled_rewrites_are_the_latest_rewrite_of_each_file(tmp_path: Path) -> None:
    state_mod.append_journal(
        tmp_path,
        [
            ["r", "semantic/a.md", 10, 111, "d1", "mem_a", "", 0.0, 1],
            ["a", "semantic/b.md", 5.0, 2],
            ["r", "semantic/a.md", 12, 222, "d2", "mem_a", "", 0.0, 2],
        ],
    )
    with open(tmp_path / state_mod.JOURNAL_NAME, "a", encoding="utf-8") as handle:
        handle.write('["r", "semantic/c.md", 1')  # a torn last line
    assert state_mod.journaled_rewrites(tmp_path) == {"semantic/a.md": (12, 222)}
    assert state_mod.journaled_rewrites(tmp_path / "missing") == {}
