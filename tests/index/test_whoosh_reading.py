"""Reading a Whoosh index while other processes commit to it: a commit removes the files
of the generation it replaces, so a reader that read the old table of contents may find
them gone. That is not damage, and must not cost a rebuild of the whole index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kenomem.errors import IndexCorrupt
from kenomem.index import Boosts, Filters
from kenomem.vault.core import CoreVault
from tests.conftest import write

NOTE = "---\nid: mem_w1\ntype: semantic\ntitle: Walruses\n---\nThe walrus basks on the ice.\n"


@pytest.fixture
def engine(vault_dir: Path, engine_name: str) -> Any:
    if engine_name != "whoosh":
        pytest.skip("the Whoosh engine's reading")
    write(vault_dir, "semantic/walrus.md", NOTE)
    vault = CoreVault.open(vault_dir)
    vault.sync()
    return vault.engine


def vanishing(times: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make opening a searcher fail `times` times as if a commit had removed its files."""
    from whoosh.index import FileIndex

    real = FileIndex.searcher
    calls: list[int] = []

    def searcher(self: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise FileNotFoundError(2, "No such file or directory", "_MAIN_2.toc")
        return real(self, **kwargs)

    monkeypatch.setattr(FileIndex, "searcher", searcher)
    return calls


def test_files_gone_under_a_reader_are_read_again(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = vanishing(2, monkeypatch)
    found = engine.search("walrus", Filters(), Boosts(), 10)
    assert [hit.doc.id for hit in found.hits] == ["mem_w1"]
    assert len(calls) == 3


def test_files_that_stay_gone_are_damage(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    vanishing(99, monkeypatch)
    with pytest.raises(IndexCorrupt):
        engine.search("walrus", Filters(), Boosts(), 10)


def test_analysis_does_not_read_the_index(engine: Any, vault_dir: Path) -> None:
    # The analyser is the code's, not unpickled from the table of contents (which a
    # commit elsewhere may have just removed).
    for toc in (vault_dir / ".kenomem" / "index" / "whoosh").glob("*.toc"):
        toc.unlink()
    assert engine.analyze("The walruses basked") == ["walrus", "bask"]
    assert engine.term_offsets("Walruses bask.", ["walrus"]) == [("walrus", 0)]
