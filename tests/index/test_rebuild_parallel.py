"""A large rebuild is shared among writer processes; the index must be the same."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenomem.files.scan import scan
from kenomem.index import Doc, Filters, rebuild, whoosh_engine
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault


def _fill(vault_dir: Path, n: int) -> None:
    folder = vault_dir / "semantic" / "bulk"
    folder.mkdir(parents=True)
    for i in range(n):
        word = "zebra" if i % 500 == 7 else "plain"
        (folder / f"m{i:05d}.md").write_text(
            f"---\nid: mem_20260101_000000_{i:05d}\ntitle: note {i}\n---\n\n"
            f"A {word} note number {i}.\n",
            encoding="utf-8",
        )


@pytest.mark.parametrize("procs", [1, 3])
def test_rebuild_in_several_processes_indexes_everything(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, procs: int
) -> None:
    monkeypatch.setattr(whoosh_engine, "_PARALLEL_FROM", 50)
    monkeypatch.setattr(whoosh_engine, "_procs", lambda: procs)
    _fill(vault_dir, 600)
    vault = CoreVault.open(vault_dir)
    report = vault.rebuild()
    assert report.indexed == 600 == vault.engine.count()
    found = recall(vault, RecallRequest("zebra", limit=20, touch=False))
    assert sorted(item.id[-5:] for item in found.results) == [f"{i:05d}" for i in (7, 507)]
    assert vault.engine.lookup(["mem_20260101_000000_00599"])  # the last one is there too


def _mixed(vault_dir: Path) -> None:
    """Good files, files that cannot be read for each reason, a duplicate id, an ignored
    file and a hand-made note without frontmatter."""
    _fill(vault_dir, 120)
    folder = vault_dir / "semantic" / "odd"
    folder.mkdir()
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n\nzeppelin\n", "utf-8")
    (folder / "open.md").write_text("---\ntitle: never closed\n\nbody\n", "utf-8")
    (folder / "binary.md").write_bytes(b"---\ntitle: x\n---\n\x00\x01")
    (folder / "latin.md").write_bytes("---\ntitle: caf\xe9\n---\n".encode("latin-1"))
    (folder / "copy.md").write_text(
        "---\nid: mem_20260101_000000_00042\ntitle: a copy\n---\n\nA copy of note 42.\n", "utf-8"
    )
    (folder / "plain.md").write_text("# A heading\n\nA plain note about a zebra.\n", "utf-8")
    (folder / "skipped.md").write_text("---\ntitle: skipped\n---\n\nzebra\n", "utf-8")
    (vault_dir / ".gitignore").write_text("semantic/odd/skipped.md\n", "utf-8")


def _rows(reads: list[rebuild.Read]) -> list[tuple[str, list[object], object]]:
    return [(item.path, item.record.to_row(), doc) for item, doc in reads]


def test_workers_read_every_file_as_one_process_does(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mixed(vault_dir)
    vault = CoreVault.open(vault_dir)
    seen = scan(vault_dir).files
    previous = {"semantic/odd/plain.md": "mem_kept"}  # a note without an id
    reader = rebuild.Reader(vault_dir, seen, previous, vault.engine.prepare, **vault.read_options())
    serial = _rows(list(reader.serial()))
    monkeypatch.setattr(rebuild, "PARALLEL_FROM", 10)
    monkeypatch.setattr(rebuild, "_CHUNK", 7)  # many chunks: they must come back in order
    parallel = _rows(list(reader.parallel(2)))
    assert len(serial) == len(seen) == 127
    assert parallel == serial
    errors = {path: row[4] for path, row, _ in parallel if row[4]}
    assert set(errors) == {
        "semantic/odd/broken.md",
        "semantic/odd/open.md",
        "semantic/odd/binary.md",
        "semantic/odd/latin.md",
        "semantic/odd/skipped.md",
    }
    assert parallel[0][0] == "semantic/odd/plain.md"  # a known path first, its id kept
    assert parallel[0][1][3] == "mem_kept"


def _snapshot(vault: CoreVault) -> tuple[list[Doc], dict[str, object], dict[str, str]]:
    docs = vault.engine.browse(Filters(statuses=()), "created", True, None).hits
    records = {path: vault.state.get(path) for path in sorted(vault.state.stats)}
    assert vault.last_sync is not None
    return [hit.doc for hit in docs], records, vault.last_sync.errors


@pytest.mark.both_engines
def test_a_rebuild_read_by_workers_makes_the_same_index(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mixed(vault_dir)
    vault = CoreVault.open(vault_dir)
    vault.rebuild()
    serial = _snapshot(vault)
    calls: list[int] = []
    real = rebuild.Reader.parallel

    def parallel(self: rebuild.Reader, procs: int, lock_fd: int | None = None) -> Iterator:
        calls.append(procs)
        return real(self, procs, lock_fd)

    monkeypatch.setattr(rebuild, "PARALLEL_FROM", 10)
    monkeypatch.setattr(rebuild, "_CHUNK", 9)
    monkeypatch.setattr(rebuild, "workers", lambda: 2)
    monkeypatch.setattr(type(vault.engine), "prepares_apart", True)
    monkeypatch.setattr(rebuild.Reader, "parallel", parallel)
    again = CoreVault.open(vault_dir)
    report = again.rebuild()
    assert calls == [2]
    assert report.indexed == 121 == again.engine.count()  # 120 and the plain note
    assert "duplicate id" in report.errors["semantic/odd/copy.md"]
    assert _snapshot(again) == serial
    found = recall(again, RecallRequest("zebra", limit=20, touch=False))
    assert sorted(item.path for item in found.results) == [
        "semantic/bulk/m00007.md",
        "semantic/odd/plain.md",
    ]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_a_worker_does_not_hold_the_vault_lock(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker closes its copy of the lock: were the parent killed, the lock would go."""
    _fill(vault_dir, 30)
    vault = CoreVault.open(vault_dir)
    seen = scan(vault_dir).files
    reader = rebuild.Reader(vault_dir, seen, {}, vault.engine.prepare, **vault.read_options())
    monkeypatch.setattr(rebuild, "PARALLEL_FROM", 10)
    lock = str(vault.lock.path)

    def holds_lock(pid: int) -> bool:
        folder = f"/proc/{pid}/fd"
        return any(os.path.realpath(f"{folder}/{n}") == lock for n in os.listdir(folder))

    with vault.lock:
        reads = reader.parallel(2, vault.lock.fd)
        next(reads)  # the workers have started
        workers = multiprocessing.active_children()
        assert len(workers) == 2
        assert holds_lock(os.getpid())
        assert not any(holds_lock(w.pid) for w in workers if w.pid is not None)
        reads.close()
    assert not multiprocessing.active_children()
