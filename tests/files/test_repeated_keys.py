"""A key kenomem sets, written twice by hand (two `access_count:` lines): YAML reads the
last, the person may mean either, and kenomem changes neither (`fmedit.RepeatedKey`);
recall keeps the access in the state instead, as it does for a value a person wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenomem.files import fmedit, store
from kenomem.files.fmedit import RepeatedKey
from kenomem.index import state as state_mod
from tests.conftest import Cli, write

TWICE = (
    "---\n"
    "id: mem_20260101_000000_0001\n"
    "title: The lighthouse keeper\n"
    "access_count: 3  # from the old vault\n"
    "tags: [coast]\n"
    "access_count: 4\n"
    "---\n\n"
    "The lighthouse keeper rows out at dawn.\n"
)


def test_a_key_written_twice_is_not_set() -> None:
    with pytest.raises(RepeatedKey) as caught:
        fmedit.set_keys(TWICE, {"access_count": 5}, path="semantic/keeper.md")
    error = caught.value
    assert error.key == "access_count" and error.line == 4
    assert "`access_count` is written twice (lines 4, 6)" in error.message
    assert error.hint == "keep one `access_count:` line in semantic/keeper.md"


def test_a_key_written_twice_in_other_forms_is_not_set() -> None:
    block = TWICE.replace("tags: [coast]\n", "tags:\n  - coast\n")
    quoted = TWICE.replace("access_count: 4", '"access_count": 4')
    lists = TWICE.replace("access_count: 3  # from the old vault", "tags: [sea]")
    for text, updates in ((block, {"access_count": 5}), (quoted, {"access_count": 5})):
        with pytest.raises(RepeatedKey):
            fmedit.set_keys(text, updates)
    with pytest.raises(RepeatedKey, match="`tags` is written twice"):
        fmedit.set_keys(lists, {"tags": ["sea", "light"]})


def test_other_keys_of_such_a_file_are_still_set() -> None:
    edited = fmedit.set_keys(TWICE, {"title": "The keeper"})
    assert edited == TWICE.replace("title: The lighthouse keeper", "title: The keeper")


def test_update_keys_leaves_the_file_as_it_is(vault_dir: Path) -> None:
    path = write(vault_dir, "semantic/keeper.md", TWICE)
    with pytest.raises(RepeatedKey):
        store.update_keys(vault_dir, "semantic/keeper.md", {"access_count": 5})
    assert path.read_text(encoding="utf-8") == TWICE


def test_recall_keeps_the_access_in_the_state(cli: Cli, vault_dir: Path) -> None:
    path = write(vault_dir, "semantic/keeper.md", TWICE)
    for _ in range(2):
        found = cli("recall", "lighthouse keeper")
        assert found.code == 0, found.err
        assert "The lighthouse keeper" in found.out and "not touched" not in found.err
    assert path.read_text(encoding="utf-8") == TWICE
    state = state_mod.load(vault_dir / ".kenomem")
    assert state is not None
    _at, count, _digest = state.access["semantic/keeper.md"]
    assert count == 6  # the count YAML reads (4), and two recalls
