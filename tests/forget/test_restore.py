"""`restore`: an archived memory comes back to its folder, active, and stays back."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from kenomem.capture.remember import RememberRequest, remember
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.forget.prune import PruneRequest, prune
from kenomem.forget.restore import restore
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, CliResult, write
from tests.forget.helpers import NOW, file_ids, meta_of, outside_state, put, recalled

LATER = NOW + timedelta(days=1)


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def user_error(result: CliResult) -> str:
    assert result.code == 1, result
    assert result.out == "" and "Traceback" not in result.err
    (line,) = [x for x in result.err.splitlines() if x.startswith("error: ")]
    return line


def test_restore_brings_a_forgotten_memory_back(cli: Cli, vault_dir: Path) -> None:
    made = one_json(cli("remember", "The lighthouse keeper is Ana", "--json"))
    gone = one_json(cli("forget", made["id"], "--json"))
    assert one_json(cli("recall", "lighthouse", "--json"))["results"] == []
    doc = one_json(cli("restore", made["id"], "--json"))
    assert set(doc) == {"id", "path", "old_path", "title"}
    assert (doc["id"], doc["path"], doc["old_path"]) == (made["id"], made["path"], gone["path"])
    assert doc["title"] == "The lighthouse keeper is Ana"
    assert not (vault_dir / gone["path"]).exists()
    meta = meta_of(vault_dir / made["path"])
    assert (meta["id"], meta["status"]) == (made["id"], "active")
    found = one_json(cli("recall", "lighthouse", "--json"))["results"]
    assert [(r["id"], r["path"]) for r in found] == [(made["id"], made["path"])]
    listed = one_json(cli("list", "--json"))["memories"]
    assert [m["id"] for m in listed] == [made["id"]]
    assert file_ids(vault_dir) == [made["id"]]


def test_restore_by_prefix_and_its_message(cli: Cli, vault_dir: Path) -> None:
    made = one_json(cli("remember", "The lighthouse keeper is Ana", "--json"))
    cli("forget", made["id"])
    result = cli("restore", made["id"].removeprefix("mem_")[:-1])
    assert result.code == 0, result.err
    assert "restored" in result.out and made["id"] in result.out
    assert (vault_dir / made["path"]).is_file()


def test_restoring_a_memory_that_is_not_archived_is_an_error(cli: Cli, vault_dir: Path) -> None:
    made = one_json(cli("remember", "The lighthouse keeper is Ana", "--json"))
    before = outside_state(vault_dir)
    assert "not archived" in user_error(cli("restore", made["id"]))
    assert outside_state(vault_dir) == before


def test_restoring_an_unknown_id_is_an_error(cli: Cli, vault_dir: Path) -> None:
    cli("remember", "The lighthouse keeper is Ana")
    before = outside_state(vault_dir)
    user_error(cli("restore", "mem_19990101"))
    assert outside_state(vault_dir) == before


def test_a_name_clash_gets_a_suffix(cli: Cli, vault_dir: Path) -> None:
    one = "---\nid: mem_20260101_000000_0001\ntitle: Keeper\n---\n\nThe first keeper.\n"
    two = "---\nid: mem_20260101_000000_0002\ntitle: Keeper\n---\n\nThe second keeper.\n"
    write(vault_dir, "semantic/keeper.md", one)
    assert one_json(cli("forget", "mem_20260101_000000_0001", "--json"))["path"] == (
        "archive/semantic/keeper.md"
    )
    write(vault_dir, "semantic/keeper.md", two)
    doc = one_json(cli("restore", "mem_20260101_000000_0001", "--json"))
    assert doc["path"] == "semantic/keeper-2.md"
    assert (vault_dir / "semantic/keeper.md").read_text("utf-8") == two
    back = (vault_dir / "semantic/keeper-2.md").read_text("utf-8")
    assert "The first keeper." in back and "status: active" in back
    assert not list((vault_dir / "archive").rglob("*.md"))
    assert sorted(file_ids(vault_dir)) == ["mem_20260101_000000_0001", "mem_20260101_000000_0002"]
    found = one_json(cli("recall", "keeper", "--json", "--no-touch"))["results"]
    assert {r["path"] for r in found} == {"semantic/keeper.md", "semantic/keeper-2.md"}


def test_a_file_without_frontmatter_comes_back_as_it_was(vault_dir: Path, vault: CoreVault) -> None:
    text = "# Kites on the beach\n\nA plain note.\n"
    write(vault_dir, "archive/episodic/2025-06/kites.md", text)
    vault.sync()
    (mem_id,) = recalled(vault, "kites", archive=True)
    result = restore(vault, mem_id, now=NOW)
    assert (result.path, result.old_path) == (
        "episodic/2025-06/kites.md",
        "archive/episodic/2025-06/kites.md",
    )
    assert (vault_dir / result.path).read_text("utf-8") == text
    assert recalled(CoreVault.open(vault_dir), "kites") == [mem_id]


def test_an_interrupted_restore_is_finished(vault_dir: Path, vault: CoreVault) -> None:
    """A file already out of the archive but still marked archived is made active."""
    put(vault_dir, "semantic/keeper.md", "mem_20260101_000000_0001", age=3, status="archived")
    vault.sync()
    result = restore(vault, "mem_20260101_000000_0001", now=NOW)
    assert result.path == result.old_path == "semantic/keeper.md"
    assert meta_of(vault_dir / "semantic/keeper.md")["status"] == "active"


def test_restore_keeps_the_rest_of_a_hand_written_file(vault_dir: Path, vault: CoreVault) -> None:
    text = (
        "---\n# mine\nid: mem_20250101_000000_aaaa\ntitle:   Ferry   # fun\nmood: calm\n"
        "status: archived\n---\n\nThe ferry.\n"
    )
    write(vault_dir, "archive/semantic/ferry.md", text)
    restore(vault, "mem_20250101_000000_aaaa", now=NOW)
    after = (vault_dir / "semantic/ferry.md").read_text("utf-8").splitlines()
    before = text.splitlines()
    assert set(before) - set(after) == {"status: archived"}
    assert {line.split(":")[0] for line in set(after) - set(before)} <= {
        "status",
        "restored_at",
        "last_accessed",
    }
    assert "status: active" in after


# -- the status it had before it was archived --------------------------------------------


def superseded_pair(cli: Cli) -> tuple[dict[str, Any], dict[str, Any]]:
    old = one_json(cli("remember", "The office is on Elm street", "--json", "--type", "semantic"))
    new = one_json(
        cli("remember", "The office moved to Oak avenue", "--json", "--supersedes", old["id"])
    )
    return old, new


def test_a_superseded_memory_forgotten_comes_back_superseded(cli: Cli, vault_dir: Path) -> None:
    old, new = superseded_pair(cli)
    gone = one_json(cli("forget", old["id"], "--json"))
    assert meta_of(vault_dir / gone["path"])["status_before"] == "superseded"
    back = one_json(cli("restore", old["id"], "--json"))
    meta = meta_of(vault_dir / back["path"])
    assert (meta["status"], meta["superseded_by"]) == ("superseded", new["id"])
    assert meta_of(vault_dir / new["path"])["supersedes"] == old["id"]
    found = one_json(cli("recall", "office", "--json", "--no-touch"))["results"]
    assert [r["id"] for r in found] == [new["id"]]
    listed = one_json(cli("list", "--status", "superseded", "--json"))["memories"]
    assert [m["id"] for m in listed] == [old["id"]]


def test_a_superseded_memory_pruned_comes_back_superseded(vault_dir: Path) -> None:
    put(vault_dir, "semantic/new.md", "mem_20260101_000000_0002", age=3)
    extra = "superseded_by: mem_20260101_000000_0002\n"
    put(vault_dir, "semantic/old.md", "mem_20260101_000000_0001", age=9, extra=extra)
    text = (vault_dir / "semantic/old.md").read_text("utf-8")
    (vault_dir / "semantic/old.md").write_text(text.replace("status: active", "status: superseded"))
    first = prune(CoreVault.open(vault_dir), PruneRequest(superseded=True), now=NOW)
    assert {r.id: r.why for r in first.plan.retire} == {"mem_20260101_000000_0001": "superseded"}
    result = restore(CoreVault.open(vault_dir), "mem_20260101_000000_0001", now=LATER)
    assert result.path == "semantic/old.md"
    assert meta_of(vault_dir / result.path)["status"] == "superseded"


def test_a_proposed_pattern_forgotten_comes_back_proposed(
    vault_dir: Path, vault: CoreVault
) -> None:
    put(vault_dir, "procedural/ask.md", "mem_20260101_000000_0003", age=2, status="proposed")
    forget(vault, ForgetRequest("mem_20260101_000000_0003"))
    result = restore(CoreVault.open(vault_dir), "mem_20260101_000000_0003", now=LATER)
    assert meta_of(vault_dir / result.path)["status"] == "proposed"


def test_an_archive_without_status_before_trusts_the_superseded_by_link(
    vault_dir: Path, vault: CoreVault
) -> None:
    extra = "superseded_by: mem_20260101_000000_0002\n"
    put(vault_dir, "archive/semantic/old.md", "mem_20260101_000000_0001", age=9, extra=extra)
    put(vault_dir, "archive/semantic/plain.md", "mem_20260101_000000_0004", age=9)
    restore(vault, "mem_20260101_000000_0001", now=LATER)
    restore(vault, "mem_20260101_000000_0004", now=LATER)
    assert meta_of(vault_dir / "semantic/old.md")["status"] == "superseded"
    assert meta_of(vault_dir / "semantic/plain.md")["status"] == "active"


def test_an_active_memory_forgotten_twice_comes_back_active(
    vault_dir: Path, vault: CoreVault
) -> None:
    """`status_before` is written at each archiving: an old value does not linger."""
    put(vault_dir, "semantic/keeper.md", "mem_20260101_000000_0001", age=3, status="superseded")
    forget(vault, ForgetRequest("mem_20260101_000000_0001"))
    restore(vault, "mem_20260101_000000_0001", now=LATER)
    path = vault_dir / "semantic/keeper.md"
    path.write_text(path.read_text("utf-8").replace("status: superseded", "status: active"))
    forget(CoreVault.open(vault_dir), ForgetRequest("mem_20260101_000000_0001"))
    restore(CoreVault.open(vault_dir), "mem_20260101_000000_0001", now=LATER)
    assert meta_of(path)["status"] == "active"


def test_restoring_a_superseded_memory_that_is_not_archived_is_an_error(
    cli: Cli, vault_dir: Path
) -> None:
    old, new = superseded_pair(cli)
    before = outside_state(vault_dir)
    line = user_error(cli("restore", old["id"]))
    assert "superseded by " + new["id"] in line and "not archived" in line
    assert outside_state(vault_dir) == before


# -- the next prune leaves a restored memory alone ----------------------------------------


def stale_session(vault_dir: Path) -> str:
    """A session's working memory as kenomem writes it (with `updated`), 8 days old."""
    then = NOW - timedelta(days=8)
    request = RememberRequest("Draft the harbour report", type="working", session="s1", now=then)
    return remember(CoreVault.open(vault_dir), request).id


def faded(vault_dir: Path) -> str:
    put(vault_dir, "episodic/faded.md", "mem_20251001_000000_bbbb", age=170, importance=1)
    return "mem_20251001_000000_bbbb"


def summarised(vault_dir: Path) -> str:
    for n in range(3):
        put(
            vault_dir,
            f"episodic/trip-{n}.md",
            f"mem_2026021{n}_000000_aaaa",
            age=35 + n,
            tags=("ferry",),
        )
    return "mem_20260211_000000_aaaa"


def hand_session(vault_dir: Path) -> str:
    put(vault_dir, "working/s2.md", "mem_20260310_000000_cccc", age=8, extra="session: s2\n")
    return "mem_20260310_000000_cccc"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (faded, "low-retention"),
        (summarised, "summarized"),
        (hand_session, "stale-working"),
        (stale_session, "stale-working"),
    ],
    ids=["low-retention", "summarized", "stale-working-by-hand", "stale-working-by-kenomem"],
)
def test_a_restored_memory_is_not_retired_again(vault_dir: Path, make: Any, why: str) -> None:
    mem_id = make(vault_dir)
    first = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    assert {r.id: r.why for r in first.plan.retire}[mem_id] == why
    result = restore(CoreVault.open(vault_dir), mem_id, now=LATER)
    assert not result.path.startswith("archive/")
    again = prune(CoreVault.open(vault_dir), PruneRequest(), now=LATER)
    assert [r.id for r in again.plan.retire] == []
    assert (vault_dir / result.path).is_file()
    assert meta_of(vault_dir / result.path)["status"] == "active"


def test_a_restored_memory_comes_back_to_recall(vault_dir: Path) -> None:
    mem_id = faded(vault_dir)
    prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    assert recalled(CoreVault.open(vault_dir), "note") == []
    restore(CoreVault.open(vault_dir), mem_id, now=LATER)
    assert recalled(CoreVault.open(vault_dir), "note") == [mem_id]
    assert recalled(CoreVault.open(vault_dir), "note", archive=True) == [mem_id]


def test_forget_then_restore_round_trip_by_the_api(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("The kettle is blue", type="semantic", now=NOW))
    before = yaml.safe_load((vault_dir / made.path).read_text("utf-8").split("---\n")[1])
    forget(vault, ForgetRequest(made.id))
    result = restore(vault, made.id, now=LATER)
    after = meta_of(vault_dir / result.path)
    assert result.path == made.path
    assert {k: v for k, v in after.items() if k in before and k != "last_accessed"} == {
        k: v for k, v in before.items() if k != "last_accessed"
    }


def test_restored_episodes_of_a_summary_are_not_summarised_again(vault_dir: Path) -> None:
    """Bringing back every episode a summary replaced must stick, like any restore."""
    summarised(vault_dir)
    (summary,) = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW).plan.summaries
    for member in summary.members:
        restore(CoreVault.open(vault_dir), member, now=LATER)
    again = prune(CoreVault.open(vault_dir), PruneRequest(), now=LATER)
    assert [r.id for r in again.plan.retire] == []
    assert set(summary.members) <= set(recalled(CoreVault.open(vault_dir), "note"))
