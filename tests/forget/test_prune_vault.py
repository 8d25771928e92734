"""`prune` on real vaults, with a fixed `now`: what moves to the archive and how, what the
summaries hold, what recall sees afterwards, and the bytes a human wrote."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from kenomem.capture.remember import RememberRequest, remember
from kenomem.config import PruneSettings, ResetSettings
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.forget.prune import PruneRequest, prune
from kenomem.forget.restore import restore
from kenomem.vault.core import CoreVault
from kenomem.vault.views import ListRequest, list_memories
from tests.conftest import write
from tests.forget.helpers import NOW, file_ids, meta_of, outside_state, put, recalled, settings_file

TRIPS = [f"mem_20260215_00000{n}_aaaa" for n in range(3)]


@pytest.fixture
def mixed(vault_dir: Path) -> Path:
    """A vault with something for every rule, and things no rule may touch."""
    for n, mem_id in enumerate(TRIPS):
        put(
            vault_dir,
            f"episodic/trip-{n}.md",
            mem_id,
            age=33 + n,
            tags=("ferry",),
            title=f"Ferry crossing number {n}",
        )
    put(
        vault_dir,
        "episodic/faded.md",
        "mem_20251101_000000_bbbb",
        age=140,
        importance=1,
        title="Lighthouse visit",
    )
    put(
        vault_dir,
        "episodic/vip.md",
        "mem_20251101_000000_cccc",
        age=140,
        importance=7,
        title="Lighthouse wedding",
    )
    put(vault_dir, "working/s1.md", "mem_20260312_000000_dddd", age=7.1, extra="session: s1\n")
    put(vault_dir, "working/s2.md", "mem_20260313_000000_eeee", age=6.9, extra="session: s2\n")
    put(vault_dir, "semantic/fact.md", "mem_20200101_000000_ffff", age=2000, importance=1)
    put(vault_dir, "procedural/habit.md", "mem_20200101_000000_abab", age=2000, importance=1)
    return vault_dir


def test_prune_archives_summarises_and_leaves_the_rest(mixed: Path) -> None:
    foundation = (mixed / "foundation.md").read_bytes()
    kept = {
        p: (mixed / p).read_bytes()
        for p in ("semantic/fact.md", "procedural/habit.md", "episodic/vip.md", "working/s2.md")
    }
    result = prune(CoreVault.open(mixed), PruneRequest(), now=NOW)
    assert (result.archived, result.summarized, result.resumed) == (5, 1, 0)
    archived = {
        "archive/episodic/faded.md": "low-retention",
        "archive/working/s1.md": "stale-working",
        **{f"archive/episodic/trip-{n}.md": "summarized" for n in range(3)},
    }
    for rel, reason in archived.items():
        meta = meta_of(mixed / rel)
        assert (meta["status"], meta["archived_why"]) == ("archived", reason)
        assert meta["archived_at"].replace(tzinfo=NOW.tzinfo) == NOW
        assert not (mixed / rel.removeprefix("archive/")).exists()
    assert (mixed / "foundation.md").read_bytes() == foundation
    for rel, data in kept.items():
        assert (mixed / rel).read_bytes() == data
    assert sorted(file_ids(mixed)) == sorted({*file_ids(mixed)})  # nothing doubled


def test_the_summary_replaces_its_episodes_in_recall(mixed: Path) -> None:
    vault = CoreVault.open(mixed)
    assert sorted(recalled(vault, "ferry crossing")) == TRIPS
    (summary,) = prune(vault, PruneRequest(), now=NOW).plan.summaries
    (path,) = [p for p in (mixed / "episodic").rglob("*.md") if summary.id in p.read_text()]
    meta = meta_of(path)
    assert meta["summarizes"] == [TRIPS[2], TRIPS[1], TRIPS[0]]
    assert "summary" in meta["tags"] and meta["status"] == "active"
    for v in (vault, CoreVault.open(mixed)):
        assert recalled(v, "ferry crossing") == [summary.id]
        assert set(TRIPS) <= set(recalled(v, "ferry crossing", archive=True))
    listed = list_memories(CoreVault.open(mixed), ListRequest(limit=None)).memories
    assert {m.id for m in listed} & set(TRIPS) == set()


def test_a_second_prune_plans_nothing(mixed: Path) -> None:
    first = prune(CoreVault.open(mixed), PruneRequest(), now=NOW)
    after = outside_state(mixed)
    for later in (NOW, NOW + timedelta(hours=1)):
        again = prune(CoreVault.open(mixed), PruneRequest(dry_run=True), now=later).plan
        assert (again.retire, again.summaries) == ([], [])
        assert again.active == first.plan.kept
    assert prune(CoreVault.open(mixed), PruneRequest(), now=NOW).archived == 0
    assert outside_state(mixed) == after


def test_dry_run_changes_no_byte(mixed: Path) -> None:
    before = outside_state(mixed)
    result = prune(CoreVault.open(mixed), PruneRequest(dry_run=True), now=NOW)
    assert len(result.plan.retire) == 5 and len(result.plan.summaries) == 1
    assert (result.archived, result.summarized) == (0, 0)
    assert outside_state(mixed) == before
    assert not (mixed / ".kenomem" / "prune-pending.json").exists()


def test_delete_removes_instead_of_archiving(mixed: Path) -> None:
    result = prune(CoreVault.open(mixed), PruneRequest(delete=True), now=NOW)
    assert result.deleted and result.archived == 5
    assert not list((mixed / "archive").rglob("*.md"))
    for rel in ("episodic/faded.md", "working/s1.md", "episodic/trip-0.md"):
        assert not (mixed / rel).exists()
    summary = result.plan.summaries[0].id
    assert recalled(CoreVault.open(mixed), "ferry crossing", archive=True) == [summary]


def test_settings_come_from_kenomem_toml(mixed: Path) -> None:
    settings_file(mixed, "[memory]\nworking_stale_days = 6.8\n[prune]\nsummarize_min_group = 4\n")
    result = prune(CoreVault.open(mixed), PruneRequest(dry_run=True), now=NOW).plan
    assert result.summaries == []
    assert {r.path: r.why for r in result.retire} == {
        "episodic/faded.md": "low-retention",
        "working/s1.md": "stale-working",
        "working/s2.md": "stale-working",
    }


def test_the_foundation_and_protected_memories_survive_any_bound(mixed: Path) -> None:
    settings_file(
        mixed, "[prune]\nmax_active = 0\nretention_threshold = 1.0\nsummarize_min_group = 99\n"
    )
    foundation = (mixed / "foundation.md").read_bytes()
    prune(CoreVault.open(mixed), PruneRequest(), now=NOW)
    assert (mixed / "foundation.md").read_bytes() == foundation
    left = {p.relative_to(mixed).as_posix() for p in mixed.rglob("*.md")} - {"README.md"}
    # The fact of importance 1 is kept by no rule: the bound takes it.
    assert {p for p in left if not p.startswith("archive/")} == {
        "foundation.md",
        "procedural/habit.md",
        "episodic/vip.md",
        "working/s2.md",
    }


def test_superseded_chains_are_archived_only_when_asked(vault_dir: Path, vault: CoreVault) -> None:
    then = NOW - timedelta(days=3)
    one = remember(vault, RememberRequest("The office is in Porto", type="semantic", now=then))
    two = remember(
        vault,
        RememberRequest("The office is in Braga", type="semantic", supersedes=one.id, now=then),
    )
    three = remember(
        vault,
        RememberRequest("The office is in Faro", type="semantic", supersedes=two.id, now=then),
    )
    assert prune(vault, PruneRequest(), now=NOW).archived == 0
    assert {p.parent.name for p in (vault_dir / "semantic").rglob("*.md")} == {"semantic"}
    result = prune(CoreVault.open(vault_dir), PruneRequest(superseded=True), now=NOW)
    assert {r.id: r.why for r in result.plan.retire} == {one.id: "superseded", two.id: "superseded"}
    assert [m.id for m in list_memories(vault, ListRequest()).memories] == [three.id]
    (newest,) = list((vault_dir / "semantic").rglob("*.md"))
    assert meta_of(newest)["supersedes"] == two.id
    old = {meta_of(p)["id"]: meta_of(p) for p in (vault_dir / "archive").rglob("*.md")}
    assert old[one.id]["superseded_by"] == two.id and old[two.id]["superseded_by"] == three.id
    assert recalled(vault, "office") == [three.id]


# -- the bytes a human wrote --------------------------------------------------------------

HAND = (
    "---\n# written by hand, keep this comment\nid: mem_20250101_000000_aaaa\ntype: episodic\n"
    "title:   Ferry ride   # fun\nmood: calm\nnested:\n  k: v   # keep\n"
    "created: 2025-01-01T00:00:00Z\nimportance: 2\n{status}---\n\nThe ferry ride.\n"
)
ADDED = {"archived_at: 2026-03-20T12:00:00Z", "archived_why: low-retention"}


def changed_lines(before: str, after: str) -> tuple[set[str], set[str]]:
    """(lines only in `before`, lines only in `after`)."""
    old, new = before.splitlines(), after.splitlines()
    return set(old) - set(new), set(new) - set(old)


@pytest.mark.parametrize(
    ("status", "gone", "added"),
    [
        ('status: "active"  # mine\n', {'status: "active"  # mine'}, {"status: archived  # mine"}),
        ("", set(), {"status: archived"}),
    ],
    ids=["with-status", "without-status"],
)
def test_archiving_changes_only_the_archive_lines(
    vault_dir: Path, status: str, gone: set[str], added: set[str]
) -> None:
    text = HAND.format(status=status)
    write(vault_dir, "episodic/ferry.md", text)
    prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    after = (vault_dir / "archive/episodic/ferry.md").read_text("utf-8")
    assert changed_lines(text, after) == (gone, added | ADDED)
    assert len(after.splitlines()) == len(text.splitlines()) + 2 + (0 if status else 1)
    assert after.endswith("---\n\nThe ferry ride.\n")


def test_archiving_keeps_crlf_line_ends(vault_dir: Path) -> None:
    text = (
        "---\r\nid: mem_20250101_000000_bbbb\r\ntitle: Crlf\r\ncreated: 2025-01-01T00:00:00Z\r\n"
        "importance: 1\r\nstatus: active\r\n---\r\n\r\nBody.\r\n"
    )
    (vault_dir / "episodic/crlf.md").write_bytes(text.encode())
    prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    after = (vault_dir / "archive/episodic/crlf.md").read_bytes().decode()
    assert after.count("\r\n") == after.count("\n")
    assert changed_lines(text, after) == ({"status: active"}, {"status: archived"} | ADDED)


def test_a_file_without_frontmatter_is_moved_as_it_is(vault_dir: Path) -> None:
    text = "# Kites on the beach\n\nA plain note, no frontmatter.\n"
    path = write(vault_dir, "episodic/kites.md", text)
    old = (NOW - timedelta(days=200)).timestamp()
    os.utime(path, (old, old))
    result = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    assert [r.why for r in result.plan.retire] == ["low-retention"]
    assert not path.exists()
    assert (vault_dir / "archive/episodic/kites.md").read_text("utf-8") == text
    assert recalled(CoreVault.open(vault_dir), "kites", archive=True) == [result.plan.retire[0].id]


def test_a_file_without_an_id_keeps_its_identity_in_the_archive(vault_dir: Path) -> None:
    text = "---\ntitle: Kites\ncreated: 2025-01-01T00:00:00Z\nimportance: 1\n---\n\nKites.\n"
    write(vault_dir, "episodic/kites.md", text)
    (item,) = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW).plan.retire
    after = (vault_dir / "archive/episodic/kites.md").read_text("utf-8")
    assert changed_lines(text, after) == (set(), {f"id: {item.id}", "status: archived"} | ADDED)
    fresh = CoreVault.open(vault_dir)
    fresh.rebuild()
    assert recalled(fresh, "kites", archive=True) == [item.id]


def test_the_pruned_vault_agrees_with_the_files_after_a_rebuild(mixed: Path) -> None:
    vault = CoreVault.open(mixed)
    prune(vault, PruneRequest(), now=NOW)
    listing = list_memories(vault, ListRequest(statuses=(), limit=None)).memories
    on_disk = {p.relative_to(mixed).as_posix() for p in mixed.rglob("*.md")}
    assert {m.path for m in listing} == on_disk - {"README.md", "foundation.md"}
    rebuilt = CoreVault.open(mixed)
    rebuilt.rebuild()
    again = list_memories(rebuilt, ListRequest(statuses=(), limit=None)).memories
    assert sorted((m.id, m.path, m.status) for m in again) == sorted(
        (m.id, m.path, m.status) for m in listing
    )


def test_episodes_are_never_summarised_into_an_archived_summary(vault_dir: Path) -> None:
    """A summary the user archived, its episodes restored: the next prune must not send
    them to the archive with nothing active in their place."""
    ids = [f"mem_2026021{n}_000000_aaaa" for n in range(3)]
    for n, mem_id in enumerate(ids):
        put(vault_dir, f"episodic/trip-{n}.md", mem_id, age=35 + n, tags=("ferry",))
    (summary,) = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW).plan.summaries
    later = NOW + timedelta(days=1)
    forget(CoreVault.open(vault_dir), ForgetRequest(summary.id))
    for mem_id in ids:
        restore(CoreVault.open(vault_dir), mem_id, now=later)
    prune(CoreVault.open(vault_dir), PruneRequest(), now=later)
    active = set(recalled(CoreVault.open(vault_dir), "note"))
    assert set(ids) <= active or summary.id in active, active


def test_every_prune_and_reset_setting_is_read_and_the_template_shows_the_defaults(
    vault_dir: Path,
) -> None:
    template = (vault_dir / "kenomem.toml").read_text("utf-8")
    for section, record in (("prune", PruneSettings()), ("reset", ResetSettings())):
        body = template.split(f"[{section}]\n", 1)[1].split("\n[", 1)[0]
        shown = dict(line[2:].split(" = ", 1) for line in body.splitlines() if " = " in line)
        assert set(shown) == set(record._fields), section
        for key, value in shown.items():
            assert float(value) == getattr(record, key), (section, key)
    chosen = PruneSettings(1.5, 2.5, 0.5, 3.5, 4, 5, 6, 7)
    lines = [f"{k} = {v}" for k, v in chosen._asdict().items()]
    settings_file(vault_dir, "[prune]\n" + "\n".join(lines) + "\n[reset]\ntrash_days = 8.5\n")
    settings = CoreVault.open(vault_dir).settings
    assert (settings.prune, settings.reset) == (chosen, ResetSettings(8.5))
