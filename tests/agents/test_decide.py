"""`approve` and `reject`: a person decides on the patterns the sleep cycle proposed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from kenomem.agents.decide import approve, reject
from kenomem.errors import KenomemError
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
PATTERN_ID = "mem_20260301_000000_a1b2c3"
PATTERN = "procedural/when-deploy-and-cache.md"


def pattern_file(mem_id: str = PATTERN_ID, status: str = "proposed") -> str:
    return (
        "---\n"
        f"id: {mem_id}\n"
        "type: procedural\n"
        "title: When deploy and cache\n"
        "tags: [learned]\n"
        "created: 2026-03-02T09:05:00Z\n"
        "importance: 6\n"
        f"status: {status}\n"
        "trigger: deploy + cache\n"
        "confidence: 0.7\n"
        "usage_count: 0\n"
        'learned_from: ["buffer/2026-03-01.md", "buffer/2026-03-02.md"]\n'
        "# a comment a person wrote\n"
        "---\n\n"
        "Clear the build cache and deploy again.\n"
    )


def frontmatter(path: Path) -> dict[str, object]:
    return yaml.load(path.read_text(encoding="utf-8").split("---\n")[1], Loader=yaml.BaseLoader)


@pytest.fixture
def proposed(vault_dir: Path) -> Path:
    return write(vault_dir, PATTERN, pattern_file())


def body_and_other_keys(text: str) -> str:
    return "\n".join(
        line
        for line in text.splitlines()
        if not line.startswith(("status:", "approved:", "rejected:"))
    )


# -- approve ----------------------------------------------------------------------------------


def test_approve_makes_a_proposed_pattern_active(vault_dir: Path, proposed: Path) -> None:
    before = proposed.read_text(encoding="utf-8")
    result = approve(CoreVault.open(vault_dir), PATTERN_ID, now=NOW)
    assert result.id == PATTERN_ID
    assert result.path == PATTERN
    assert result.status == "active"
    assert result.title == "When deploy and cache"
    meta = frontmatter(proposed)
    assert meta["status"] == "active"
    assert meta["approved"] == "2026-03-05T12:00:00Z"
    after = proposed.read_text(encoding="utf-8")
    assert body_and_other_keys(after) == body_and_other_keys(before)
    assert "# a comment a person wrote" in after


def test_an_approved_pattern_is_found_by_recall(vault_dir: Path, proposed: Path) -> None:
    vault = CoreVault.open(vault_dir)
    request = RecallRequest("deploy cache", touch=False, now=NOW, types=("procedural",))
    assert [r.id for r in recall(vault, request).results] == []
    approve(vault, PATTERN_ID, now=NOW)
    assert [r.id for r in recall(vault, request).results] == [PATTERN_ID]


@pytest.mark.parametrize("prefix", ["mem_20260301_000000_a1", "20260301_000000_a1b", PATTERN_ID])
def test_approve_takes_an_id_prefix(vault_dir: Path, proposed: Path, prefix: str) -> None:
    result = approve(CoreVault.open(vault_dir), prefix, now=NOW)
    assert result.id == PATTERN_ID
    assert frontmatter(proposed)["status"] == "active"


# -- reject -----------------------------------------------------------------------------------


def test_reject_archives_a_proposed_pattern(vault_dir: Path, proposed: Path) -> None:
    result = reject(CoreVault.open(vault_dir), PATTERN_ID[:-3], now=NOW)
    assert result.id == PATTERN_ID
    assert result.status == "archived"
    assert result.path == "archive/" + PATTERN
    assert not proposed.exists()
    moved = vault_dir / result.path
    meta = frontmatter(moved)
    assert meta["id"] == PATTERN_ID
    assert meta["status"] == "archived"
    assert meta["rejected"] == "2026-03-05T12:00:00Z"
    assert "Clear the build cache" in moved.read_text(encoding="utf-8")
    vault = CoreVault.open(vault_dir)
    vault.sync()
    assert vault.ids()[PATTERN_ID] == result.path
    request = RecallRequest("deploy cache", touch=False, now=NOW)
    assert PATTERN_ID not in [r.id for r in recall(vault, request).results]


# -- only proposed patterns -------------------------------------------------------------------


@pytest.mark.parametrize("status", ["active", "superseded", "archived"])
@pytest.mark.parametrize("decide", [approve, reject])
def test_only_proposed_patterns_can_be_decided(
    vault_dir: Path, status: str, decide: object
) -> None:
    path = write(vault_dir, PATTERN, pattern_file(status=status))
    before = path.read_bytes()
    with pytest.raises(KenomemError, match="not a proposed pattern"):
        decide(CoreVault.open(vault_dir), PATTERN_ID, now=NOW)  # type: ignore[operator]
    assert path.read_bytes() == before


def test_a_memory_that_is_not_a_pattern_cannot_be_decided(vault_dir: Path) -> None:
    path = write(
        vault_dir,
        "semantic/tea.md",
        "---\nid: mem_20260301_000000_feed01\ntype: semantic\ntitle: Likes tea\n---\n\nTea.\n",
    )
    before = path.read_bytes()
    for decide in (approve, reject):
        with pytest.raises(KenomemError):
            decide(CoreVault.open(vault_dir), "mem_20260301_000000_feed01", now=NOW)
    assert path.read_bytes() == before


def test_a_decided_pattern_cannot_be_decided_again(vault_dir: Path, proposed: Path) -> None:
    approve(CoreVault.open(vault_dir), PATTERN_ID, now=NOW)
    after = proposed.read_bytes()
    for decide in (approve, reject):
        with pytest.raises(KenomemError, match="not a proposed pattern"):
            decide(CoreVault.open(vault_dir), PATTERN_ID, now=NOW)
    assert proposed.read_bytes() == after


# -- the commands -----------------------------------------------------------------------------


def test_cli_approve_json(cli: Cli, vault_dir: Path, proposed: Path) -> None:
    result = cli("approve", PATTERN_ID[:-2], "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "id": PATTERN_ID,
        "path": PATTERN,
        "status": "active",
        "title": "When deploy and cache",
    }
    assert frontmatter(proposed)["status"] == "active"


def test_cli_reject(cli: Cli, vault_dir: Path, proposed: Path) -> None:
    result = cli("reject", PATTERN_ID[:-2])
    assert result.code == 0, result.err
    assert "rejected" in result.out and PATTERN_ID in result.out
    assert (vault_dir / "archive" / PATTERN).is_file()


@pytest.mark.parametrize("command", ["approve", "reject"])
def test_cli_refuses_what_is_not_proposed_with_exit_1(
    cli: Cli, vault_dir: Path, command: str
) -> None:
    path = write(vault_dir, PATTERN, pattern_file(status="active"))
    before = path.read_bytes()
    result = cli(command, PATTERN_ID)
    assert result.code == 1
    assert result.out == ""
    assert "not a proposed pattern" in result.err
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) <= 2  # the error, and a hint
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", ["approve", "reject"])
def test_cli_unknown_and_ambiguous_ids(cli: Cli, vault_dir: Path, command: str) -> None:
    write(vault_dir, PATTERN, pattern_file())
    write(
        vault_dir,
        "procedural/other.md",
        pattern_file("mem_20260301_000000_a1ffff").replace("deploy + cache", "ssh + key"),
    )
    unknown = cli(command, "mem_19990101")
    assert unknown.code == 1
    assert "no memory matches" in unknown.err
    ambiguous = cli(command, "mem_20260301_000000_a1")
    assert ambiguous.code == 1
    assert "matches 2 memories" in ambiguous.err
    assert frontmatter(vault_dir / PATTERN)["status"] == "proposed"
