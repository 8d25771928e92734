"""Recall strengthens what it returns, several files at once, and never overwrites an edit
saved since the file was indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenomem import store, touch
from kenomem.vault import Vault
from tests.conftest import write
from tests.test_recall import memory_file


def _three(vault_dir: Path) -> None:
    for name in ("a", "b", "c"):
        text = memory_file(f"mem_{name}", f"Note {name}", f"The heron {name} stood still.")
        write(vault_dir, f"semantic/{name}.md", text.replace("---\n", "---\n# mine\n", 1))


@pytest.fixture(params=["threads", "one after another"])
def write_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the writes are made: in threads (a slow disk), in turn (a quick one)."""
    threshold = 0.0 if request.param == "threads" else float("inf")
    monkeypatch.setattr(touch, "_SERIAL_BELOW_SECONDS", threshold)
    return str(request.param)


def test_every_result_is_touched(vault_dir: Path, write_mode: str) -> None:
    _three(vault_dir)
    vault = Vault.open(vault_dir)
    from kenomem.recall import RecallRequest, recall

    found = recall(vault, RecallRequest("heron"))
    assert sorted(item.id for item in found.results) == ["mem_a", "mem_b", "mem_c"]
    for name in ("a", "b", "c"):
        text = (vault_dir / "semantic" / f"{name}.md").read_text("utf-8")
        assert "access_count: 1" in text and text.startswith("---\n# mine\n")
    journal = (vault_dir / ".kenomem" / "journal").read_text("utf-8").splitlines()
    rewrites = [line for line in journal if line.startswith('["r"')]
    assert len(rewrites) == 3  # each touch journaled once, before its rename


def test_an_edit_saved_since_indexing_is_left_alone_and_the_rest_touched(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, write_mode: str
) -> None:
    _three(vault_dir)
    vault = Vault.open(vault_dir)
    vault.sync()
    docs = vault.engine.lookup(["mem_a", "mem_b", "mem_c"])
    edited = vault_dir / "semantic" / "b.md"
    mine = edited.read_text("utf-8").replace("stood still", "flew off")
    edited.write_text(mine, "utf-8")  # saved after indexing, before the touch
    from datetime import UTC, datetime

    lines = touch.touch_all(
        vault, [(docs[i], 1) for i in ("mem_a", "mem_b", "mem_c")], datetime.now(UTC)
    )
    assert [t.line is not None for t in lines] == [True, False, True]
    assert [t.journaled for t in lines] == [True, False, True]
    assert edited.read_text("utf-8") == mine
    assert any("not touched" in w and "b.md" in w for w in vault.warnings)
    assert "access_count: 1" in (vault_dir / "semantic" / "c.md").read_text("utf-8")


def test_an_unexpected_error_in_a_writer_thread_reaches_the_caller(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, write_mode: str
) -> None:
    _three(vault_dir)
    vault = Vault.open(vault_dir)
    vault.sync()
    docs = vault.engine.lookup(["mem_a", "mem_b"])

    def broken(*args: object, **kwargs: object) -> store.Written:
        raise RuntimeError("a bug")

    monkeypatch.setattr(store, "update_keys", broken)
    from datetime import UTC, datetime

    with pytest.raises(RuntimeError, match="a bug"):
        touch.touch_all(vault, [(d, 1) for d in docs.values()], datetime.now(UTC))
