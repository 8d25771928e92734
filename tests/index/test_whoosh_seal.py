"""Whoosh's tables of contents are pickles: one kenomem did not write (a clone of a vault
whose remote force-added it, a hand-run `git pull`, another user's copy) is never loaded;
the index is rebuilt from the files instead (`index/whoosh_storage.py`)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, write

WHOOSH = Path(".kenomem") / "index" / "whoosh"


class Marker:
    """A pickle that, when loaded, makes a file: a harmless stand-in for code that runs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.path,))


def plant_toc(folder: Path, generation: int, marker: Path) -> Path:
    """A table of contents of the next generation in Whoosh's own format, whose schema is
    the marker pickle: what a remote could commit as `_MAIN_<n>.toc`."""
    from whoosh import __version__
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import _CURRENT_TOC_VERSION, _FLOAT_SIZE, _INT_SIZE, _LONG_SIZE

    name = f"_MAIN_{generation}.toc"
    stream = FileStorage(str(folder)).create_file(name)
    for size in (_INT_SIZE, _LONG_SIZE, _FLOAT_SIZE):
        stream.write_varint(size)
    stream.write_int(-12345)
    stream.write_int(_CURRENT_TOC_VERSION)
    for number in __version__[:3]:
        stream.write_varint(number)
    stream.write_string(pickle.dumps(Marker(marker), 2))
    stream.write_int(generation)
    stream.write_int(0)
    stream.write_pickle([])
    stream.close()
    return folder / name


def generation(folder: Path) -> int:
    return max(int(p.name[6:-4]) for p in folder.glob("_MAIN_*.toc"))


@pytest.fixture
def indexed(vault_dir: Path, cli: Any) -> Path:
    write(vault_dir, "semantic/fox.md", "# Fox\n\nThe quick brown fox jumps.\n")
    assert cli("recall", "fox", "--json").code == 0
    folder = vault_dir / WHOOSH
    assert any(p.name.startswith("seal-") for p in folder.iterdir())
    return folder


def test_a_planted_table_of_contents_is_never_loaded(
    indexed: Path, cli: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "code-ran"
    plant_toc(indexed, generation(indexed) + 1, marker)
    result: CliResult = cli("recall", "fox", "--json")
    assert not marker.exists(), "a pickle kenomem did not write was loaded"
    assert result.code == 0 and "fox" in result.out
    assert "seal" in result.err  # the rebuild says why
    assert cli("recall", "fox", "--json").err == ""  # rebuilt once, sealed again


def test_a_table_of_contents_with_a_copied_seal_is_not_loaded(
    indexed: Path, cli: Any, tmp_path: Path
) -> None:
    """A seal is of the bytes it was made for: put beside other bytes, it does not match."""
    marker = tmp_path / "code-ran"
    current = generation(indexed)
    toc = plant_toc(indexed, current + 1, marker)
    shutil.copy(indexed / f"seal-_MAIN_{current}.toc", indexed / f"seal-{toc.name}")
    assert cli("recall", "fox", "--json").code == 0
    assert not marker.exists()


def test_an_index_sealed_by_another_user_is_rebuilt(
    indexed: Path, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's secret (here: another home) seals differently: their index, copied
    in whole, is not taken for ours."""
    other_home = tmp_path / "other-home"
    other_home.mkdir()
    monkeypatch.setenv("HOME", str(other_home))
    result = cli("recall", "fox", "--json")
    assert result.code == 0 and "fox" in result.out
    assert "seal" in result.err


def test_the_whoosh_write_lock_is_never_followed(vault_dir: Path, cli: Any, tmp_path: Path) -> None:
    write(vault_dir, "semantic/fox.md", "# Fox\n\nThe quick brown fox.\n")
    assert cli("recall", "fox").code == 0
    outside = tmp_path / "not-kenomem"
    lock = vault_dir / WHOOSH / "MAIN_WRITELOCK"
    if lock.exists():
        lock.unlink()
    lock.symlink_to(outside)
    write(vault_dir, "semantic/owl.md", "# Owl\n\nThe owl hoots.\n")
    found = cli("recall", "owl", "--json")
    assert not outside.exists(), "the write lock was created through a link"
    assert found.code == 0 and "semantic/owl.md" in found.out
