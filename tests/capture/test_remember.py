"""`remember`: classification, the files it writes, reinforcing, superseding, working memory,
and what it refuses."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from kenomem.capture.remember import RememberRequest, remember
from kenomem.errors import InvalidInput, MemoryNotFound, SecretDetected, UsageError
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.views import show

pytestmark = pytest.mark.both_engines  # each test runs on Whoosh and on tantivy

NOW = datetime(2026, 3, 1, 10, 30, tzinfo=UTC)

# A bad option value: refused as bad input or as a usage error, either way nothing written.
REFUSED = (InvalidInput, UsageError)

SPEC_KEYS = [
    "id",
    "type",
    "title",
    "tags",
    "scope",
    "created",
    "last_accessed",
    "access_count",
    "reinforced",
    "importance",
    "pinned",
    "source",
    "status",
    "supersedes",
]


def frontmatter(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.load(text.split("---\n")[1], Loader=yaml.BaseLoader)


def memory_files(vault_dir: Path) -> list[str]:
    return sorted(
        p.relative_to(vault_dir).as_posix()
        for p in vault_dir.rglob("*.md")
        if ".kenomem" not in p.parts and p.parent != vault_dir
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def recall_ids(vault: CoreVault, query: str, archive: bool = False) -> list[str]:
    request = RecallRequest(query, touch=False, now=NOW, archive=archive)
    return [item.id for item in recall(vault, request).results]


# -- type ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Always run the linter before pushing a branch", "procedural"),
        ("Adrian prefers short answers without pleasantries", "procedural"),
        ("Yesterday we met Alice at the conference in Porto", "episodic"),
        ("The team shipped version 2.0 on 2026-02-14", "episodic"),
        ("The production database is PostgreSQL 15", "semantic"),
    ],
)
def test_type_is_classified_when_not_given(vault: CoreVault, text: str, kind: str) -> None:
    made = remember(vault, RememberRequest(text, now=NOW))
    assert made.type == kind
    assert made.classified is True
    assert made.path.startswith(kind + "/")
    assert frontmatter(vault.root / made.path)["type"] == kind


def test_explicit_type_is_kept(vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("Always run the linter", type="semantic", now=NOW))
    assert (made.type, made.classified) == ("semantic", False)
    assert made.path.startswith("semantic/")


def test_unknown_type_is_refused(vault_dir: Path, vault: CoreVault) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest("Some fact", type="factual", now=NOW))
    assert memory_files(vault_dir) == []


# -- files -------------------------------------------------------------------------------


def test_semantic_file_layout_and_keys(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(
        vault,
        RememberRequest(
            "Prefers direct communication without pleasantries.",
            type="semantic",
            tags=("preference", "communication"),
            importance=6,
            now=NOW,
        ),
    )
    assert made.action == "created"
    assert made.path == "semantic/prefers-direct-communication-without-pleasantries.md"
    meta = frontmatter(vault_dir / made.path)
    assert list(meta) == SPEC_KEYS
    assert meta["id"] == made.id
    assert made.id.startswith("mem_20260301_103000_")
    assert meta["title"] == "Prefers direct communication without pleasantries"
    assert meta["tags"] == ["preference", "communication"]
    assert meta["created"] == meta["last_accessed"] == "2026-03-01T10:30:00Z"
    assert meta["importance"] == "6"
    assert (meta["access_count"], meta["reinforced"], meta["pinned"]) == ("0", "0", "false")
    assert (meta["status"], meta["scope"], meta["supersedes"]) == ("active", "global", "null")
    body = (vault_dir / made.path).read_text(encoding="utf-8").split("---\n", 2)[2]
    assert body.strip() == "Prefers direct communication without pleasantries."


def test_episodic_file_goes_in_a_month_folder_with_when(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("Met Bob at the harbour", type="episodic", now=NOW))
    assert made.path == "episodic/2026-03/met-bob-at-the-harbour.md"
    meta = frontmatter(vault_dir / made.path)
    assert list(meta) == [*SPEC_KEYS, "when"]
    assert meta["when"] == "2026-03-01T10:30:00Z"


def test_working_file_is_named_after_the_session(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(
        vault, RememberRequest("Task: fix the build", type="working", session="s42", now=NOW)
    )
    assert made.path == "working/s42.md"
    meta = frontmatter(vault_dir / made.path)
    assert meta["session"] == "s42"
    assert meta["scope"] == "session:s42"
    assert meta["type"] == "working"


def test_title_and_pin_are_stored(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(
        vault,
        RememberRequest("Keys are under the mat", type="semantic", title="Keys", pinned=True),
    )
    assert made.path == "semantic/keys.md"
    meta = frontmatter(vault_dir / made.path)
    assert (meta["title"], meta["pinned"]) == ("Keys", "true")


def test_default_importance_is_five(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("The sky is blue", type="semantic", now=NOW))
    assert frontmatter(vault_dir / made.path)["importance"] == "5"


@pytest.mark.parametrize("importance", [1, 10])
def test_importance_bounds_are_accepted(vault_dir: Path, vault: CoreVault, importance: int) -> None:
    made = remember(
        vault, RememberRequest("The sky is blue", type="semantic", importance=importance)
    )
    assert frontmatter(vault_dir / made.path)["importance"] == str(importance)


@pytest.mark.parametrize("importance", [0, 11, -3])
def test_importance_out_of_bounds_is_refused(
    vault_dir: Path, vault: CoreVault, importance: int
) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest("The sky is blue", importance=importance))
    assert memory_files(vault_dir) == []


def test_two_memories_with_the_same_title_get_two_files(vault_dir: Path, vault: CoreVault) -> None:
    a = remember(vault, RememberRequest("Alpha fact about kites", title="Kites", type="semantic"))
    b = remember(vault, RememberRequest("Other thing on weather", title="Kites", type="semantic"))
    assert a.id != b.id
    assert a.path != b.path
    assert len(memory_files(vault_dir)) == 2
    assert "Alpha fact" in (vault_dir / a.path).read_text(encoding="utf-8")
    assert "Other thing" in (vault_dir / b.path).read_text(encoding="utf-8")


@pytest.mark.parametrize("title", ["../../etc/passwd", "/abs/path", "..", "a\\b", "~root"])
def test_titles_never_become_paths_outside(vault_dir: Path, vault: CoreVault, title: str) -> None:
    made = remember(vault, RememberRequest("Some plain fact", type="semantic", title=title))
    written = (vault_dir / made.path).resolve()
    assert written.parent == (vault_dir / "semantic").resolve()
    assert written.is_file()
    assert frontmatter(written)["title"] == title


def test_remembered_memory_is_recalled_at_once(vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("The harbour master is Ines", type="semantic", now=NOW))
    assert recall_ids(vault, "harbour master") == [made.id]  # recalled at NOW


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_empty_text_is_refused(vault_dir: Path, vault: CoreVault, text: str) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest(text))
    assert memory_files(vault_dir) == []


# -- reinforcing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "again",
    [
        "The production database is PostgreSQL 15",
        "the production database is postgresql 15!",
        "The production database is PostgreSQL 15.",
        "  THE PRODUCTION DATABASE IS POSTGRESQL 15 ",
    ],
)
def test_known_fact_reinforces(vault_dir: Path, vault: CoreVault, again: str) -> None:
    first = remember(vault, RememberRequest("The production database is PostgreSQL 15", now=NOW))
    later = NOW + timedelta(days=1)
    second = remember(CoreVault.open(vault_dir), RememberRequest(again, now=later))
    assert second.action == "reinforced"
    assert (second.id, second.path, second.reinforced) == (first.id, first.path, 1)
    assert memory_files(vault_dir) == [first.path]
    meta = frontmatter(vault_dir / first.path)
    assert meta["reinforced"] == "1"
    assert meta["last_accessed"] == "2026-03-02T10:30:00Z"
    third = remember(CoreVault.open(vault_dir), RememberRequest(again, now=later))
    assert third.reinforced == 2
    assert frontmatter(vault_dir / first.path)["reinforced"] == "2"


def test_reinforcing_keeps_the_human_bytes(vault_dir: Path, vault: CoreVault) -> None:
    first = remember(vault, RememberRequest("The ferry leaves at noon", type="semantic", now=NOW))
    path = vault_dir / first.path
    text = path.read_text(encoding="utf-8")
    edited = text.replace("status: active", "status: active  # checked\nmood: calm")
    path.write_text(edited, encoding="utf-8")
    made = remember(CoreVault.open(vault_dir), RememberRequest("The ferry leaves at noon", now=NOW))
    assert made.action == "reinforced"
    assert path.read_text(encoding="utf-8") == edited.replace("reinforced: 0", "reinforced: 1")


def test_reinforcing_adds_tags_and_raises_importance(vault_dir: Path, vault: CoreVault) -> None:
    first = remember(
        vault, RememberRequest("The ferry leaves at noon", type="semantic", tags=("boat",))
    )
    remember(
        vault,
        RememberRequest(
            "The ferry leaves at noon", type="semantic", tags=("boat", "port"), importance=8
        ),
    )
    meta = frontmatter(vault_dir / first.path)
    assert meta["tags"] == ["boat", "port"]
    assert meta["importance"] == "8"


def test_a_tag_added_to_a_hand_written_block_list_keeps_its_lines(
    vault_dir: Path, vault: CoreVault
) -> None:
    path = vault_dir / "semantic/ferry.md"
    head = '---\ntitle: Ferry\ntags:\n  - "project x"   # the big one\n  - travel\n'
    path.write_text(head + "---\n\nThe ferry leaves at noon\n", "utf-8")
    made = remember(vault, RememberRequest("The ferry leaves at noon", tags=("boat",), now=NOW))
    assert made.action == "reinforced"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(head + "  - boat\n")
    assert frontmatter(path)["tags"] == ["project x", "travel", "boat"]


def test_a_different_fact_creates_a_new_file(vault_dir: Path, vault: CoreVault) -> None:
    first = remember(vault, RememberRequest("The production database is PostgreSQL 15"))
    other = remember(vault, RememberRequest("The staging database is MySQL 8"))
    assert other.action == "created"
    assert other.id != first.id
    assert len(memory_files(vault_dir)) == 2
    assert frontmatter(vault_dir / first.path)["reinforced"] == "0"


def test_a_fact_already_known_by_a_hand_made_file_reinforces_it(
    vault_dir: Path, vault: CoreVault
) -> None:
    path = vault_dir / "semantic/db.md"
    path.write_text("---\ntitle: DB\n---\n\nThe production database is PostgreSQL 15\n", "utf-8")
    made = remember(vault, RememberRequest("The production database is PostgreSQL 15"))
    assert made.action == "reinforced"
    assert made.path == "semantic/db.md"
    assert memory_files(vault_dir) == ["semantic/db.md"]


# -- superseding -------------------------------------------------------------------------


def test_supersedes_keeps_the_old_one_and_links_both_ways(
    vault_dir: Path, vault: CoreVault
) -> None:
    old = remember(vault, RememberRequest("The office is in Porto", type="semantic", now=NOW))
    new = remember(
        vault,
        RememberRequest("The office moved to Lisbon", supersedes=old.id[:-2], now=NOW),
    )
    assert new.action == "superseded"
    assert new.supersedes == old.id
    assert new.id != old.id
    assert new.type == "semantic"  # the kind of the memory it replaces
    old_meta = frontmatter(vault_dir / old.path)
    new_meta = frontmatter(vault_dir / new.path)
    assert (old_meta["status"], old_meta["superseded_by"]) == ("superseded", new.id)
    assert (new_meta["status"], new_meta["supersedes"]) == ("active", old.id)
    assert "The office is in Porto" in (vault_dir / old.path).read_text(encoding="utf-8")

    assert recall_ids(vault, "office") == [new.id]
    assert sorted(recall_ids(vault, "office", archive=True)) == sorted([new.id, old.id])
    assert show(vault, old.id).memory.status == "superseded"


def test_supersede_link_to_a_hand_made_file_survives_a_move_and_a_reindex(
    vault_dir: Path, vault: CoreVault
) -> None:
    old_path = vault_dir / "semantic/office.md"
    old_path.write_text("---\ntitle: Office\n---\n\nThe office is in Porto.\n", "utf-8")
    (old,) = recall(vault, RecallRequest("porto", touch=False, now=NOW)).results
    new = remember(vault, RememberRequest("The office moved to Lisbon", supersedes=old.id))
    assert new.supersedes == old.id
    # The human files the old note away; later the derived index is deleted.
    (vault_dir / "semantic/history").mkdir()
    old_path.rename(vault_dir / "semantic/history/office.md")
    shutil.rmtree(vault_dir / ".kenomem")

    fresh = CoreVault.open(vault_dir)
    link = show(fresh, new.id).memory.supersedes
    assert link == old.id
    replaced = show(fresh, link).memory
    assert (replaced.path, replaced.superseded_by) == ("semantic/history/office.md", new.id)


def test_supersedes_an_unknown_id_writes_nothing(vault_dir: Path, vault: CoreVault) -> None:
    remember(vault, RememberRequest("The office is in Porto", type="semantic"))
    before = memory_files(vault_dir)
    with pytest.raises(MemoryNotFound):
        remember(vault, RememberRequest("The office moved", supersedes="mem_19990101"))
    assert memory_files(vault_dir) == before


# -- working memory ----------------------------------------------------------------------


def test_working_memory_is_replaced_for_the_same_session(vault_dir: Path, vault: CoreVault) -> None:
    first = remember(
        vault, RememberRequest("Task: paint the shed", type="working", session="s1", now=NOW)
    )
    second = remember(
        CoreVault.open(vault_dir),
        RememberRequest(
            "Task: mend the fence", type="working", session="s1", now=NOW + timedelta(hours=1)
        ),
    )
    assert (second.id, second.path) == (first.id, first.path)
    assert memory_files(vault_dir) == ["working/s1.md"]
    text = (vault_dir / "working/s1.md").read_text(encoding="utf-8")
    assert "mend the fence" in text
    assert "paint the shed" not in text
    vault = CoreVault.open(vault_dir)
    later = NOW + timedelta(hours=2)
    fence = recall(vault, RecallRequest("fence", touch=False, now=later)).results
    assert [item.id for item in fence] == [first.id]
    assert recall(vault, RecallRequest("shed", touch=False, now=later)).results == []


def test_another_session_gets_its_own_working_memory(vault_dir: Path, vault: CoreVault) -> None:
    a = remember(vault, RememberRequest("Task one", type="working", session="s1"))
    b = remember(vault, RememberRequest("Task two", type="working", session="s2"))
    assert a.id != b.id
    assert memory_files(vault_dir) == ["working/s1.md", "working/s2.md"]


def test_working_memory_needs_a_session(vault_dir: Path, vault: CoreVault) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest("Task: something", type="working"))
    assert memory_files(vault_dir) == []


@pytest.mark.parametrize(
    "session",
    ["../../etc/passwd", "a/b", "..", ".", ".hidden", "chat:telegram-123", "a\\b", "/etc/x"],
)
def test_session_ids_never_escape_working(
    vault_dir: Path, vault: CoreVault, tmp_path: Path, session: str
) -> None:
    outside_before = sorted(p for p in tmp_path.rglob("*") if vault_dir not in p.parents)
    made = remember(vault, RememberRequest("Task: the plan", type="working", session=session))
    written = vault_dir / made.path
    assert written.is_file()
    assert written.resolve().parent == (vault_dir / "working").resolve()
    assert not written.name.startswith(".")
    assert memory_files(vault_dir) == [made.path]
    assert frontmatter(written)["session"] == session
    outside_after = sorted(p for p in tmp_path.rglob("*") if vault_dir not in p.parents)
    assert outside_after == outside_before
    again = remember(vault, RememberRequest("Task: new plan", type="working", session=session))
    assert (again.id, again.path) == (made.id, made.path)


def test_sessions_that_look_alike_get_different_files(vault_dir: Path, vault: CoreVault) -> None:
    sessions = ["a/b", "a%2Fb", "a_b", "a:b"]
    paths = {
        remember(vault, RememberRequest(f"Task {s}", type="working", session=s)).path
        for s in sessions
    }
    assert len(paths) == len(sessions)


@pytest.mark.parametrize("session", ["", "two\nlines", "x" * 129])
def test_invalid_session_ids_are_refused(vault_dir: Path, vault: CoreVault, session: str) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest("Task: plan", type="working", session=session))
    assert memory_files(vault_dir) == []


# -- refused input -----------------------------------------------------------------------

SECRETS = [
    "The AWS key is AKIAIOSFODNN7EXAMPLE for the backup bucket",
    "token ghp_" + "a1B2c3D4e5" * 4,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "Card 4111 1111 1111 1111 expires soon",
    "Use sk-ant-" + "x" * 30 + " for the assistant",
    "db at postgres://admin:hunter22@db.internal/prod",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_are_refused_and_nothing_is_written(
    vault_dir: Path, vault: CoreVault, secret: str
) -> None:
    remember(vault, RememberRequest("An ordinary fact about boats", type="semantic"))
    before = snapshot(vault_dir)
    with pytest.raises(SecretDetected) as caught:
        remember(CoreVault.open(vault_dir), RememberRequest(secret))
    assert "nothing was written" in caught.value.message
    assert snapshot(vault_dir) == before


@pytest.mark.parametrize("field", ["title", "tags"])
def test_secret_in_title_or_tags_is_refused(vault_dir: Path, vault: CoreVault, field: str) -> None:
    vault.sync()
    before = snapshot(vault_dir)
    key = "AKIAIOSFODNN7EXAMPLE"
    if field == "title":
        request = RememberRequest("A fact", title=key)
    else:
        request = RememberRequest("A fact", tags=(key,))
    with pytest.raises(SecretDetected):
        remember(vault, request)
    assert snapshot(vault_dir) == before


def test_secret_in_working_memory_is_refused(vault_dir: Path, vault: CoreVault) -> None:
    with pytest.raises(SecretDetected):
        remember(
            vault,
            RememberRequest("token ghp_" + "Z9" * 20, type="working", session="s1"),
        )
    assert memory_files(vault_dir) == []


@pytest.mark.parametrize("tags", [("a,b",), ("ok", "x, y"), (",",)])
def test_tags_with_commas_are_refused(vault_dir: Path, vault: CoreVault, tags: tuple[str]) -> None:
    with pytest.raises(REFUSED):
        remember(vault, RememberRequest("A fact about kites", tags=tags))
    assert memory_files(vault_dir) == []


def test_tags_with_slashes_stay_tags(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("A fact about kites", tags=("../x", "proj/a")))
    assert made.path == "semantic/a-fact-about-kites.md"
    assert frontmatter(vault_dir / made.path)["tags"] == ["../x", "proj/a"]
