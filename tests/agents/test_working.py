"""Working memory: one scratchpad per session, structured or free, stale after
`memory.working_stale_days`, cleared into the archive."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kenomem.agents import working_form
from kenomem.agents.working import clear_working, current_working, set_working, show_working
from kenomem.errors import InvalidInput
from kenomem.forget.prune import PruneRequest, prune
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)

STRUCTURED = """Task: ship v2
Context: the API is frozen
Pending:
- tag the release
- write the notes
  for users
Notes: ask Ana first
"""
LAYOUT = """## Task

ship v2

## Context

the API is frozen

## Pending

- tag the release
- write the notes for users

## Notes

ask Ana first
"""
FIELDS = {
    "task": "ship v2",
    "context": "the API is frozen",
    "pending": ["tag the release", "write the notes for users"],
    "notes": "ask Ana first",
}


def frontmatter(path: Path) -> dict[str, object]:
    return yaml.load(path.read_text(encoding="utf-8").split("---\n")[1], Loader=yaml.BaseLoader)


# -- the structured form -----------------------------------------------------------------


def test_labelled_lines_headings_and_json_give_the_same_fields() -> None:
    headings = "## task\nship v2\n\n## CONTEXT:\nthe API is frozen\n\n### Pending\n"
    headings += "1. tag the release\n2. write the notes for users\n\n## Note\nask Ana first\n"
    as_json = json.dumps(FIELDS)
    assert working_form.parse(STRUCTURED) == FIELDS
    assert working_form.parse(headings) == FIELDS
    assert working_form.parse(as_json) == FIELDS
    assert working_form.format_fields(FIELDS) == LAYOUT


def test_free_text_is_not_taken_for_a_form() -> None:
    for text in (
        "Working on the release. Pending: nothing much.",
        "Context matters: keep it short",
        "{not json at all",
        "",
    ):
        assert working_form.parse(text) == {}


def test_json_that_is_not_a_scratchpad_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not valid JSON"):
        working_form.parse("{task: x}")
    with pytest.raises(InvalidInput, match="unknown key 'owner'"):
        working_form.parse('{"task": "x", "owner": "me"}')
    with pytest.raises(InvalidInput, match="must be a list"):
        working_form.parse('{"pending": {"a": 1}}')


line = st.text(
    alphabet=st.characters(whitelist_categories=("L", "N", "Zs"), max_codepoint=0x24F),
    min_size=1,
    max_size=30,
).map(lambda s: " ".join(s.split()))


@given(
    task=line,
    context=line,
    pending=st.lists(line, max_size=4),
    notes=line,
)
def test_the_stored_layout_reads_back_to_the_same_fields(
    task: str, context: str, pending: list[str], notes: str
) -> None:
    fields = working_form.parse(
        json.dumps({"task": task, "context": context, "pending": pending, "notes": notes})
    )
    assert working_form.parse_fields(working_form.format_fields(fields)) == fields


# -- set, show, clear --------------------------------------------------------------------


def test_set_writes_the_normalised_layout_and_replaces_it_in_place(
    vault: CoreVault, vault_dir: Path
) -> None:
    first = set_working(vault, "s1", STRUCTURED, NOW)
    assert (first.action, first.path, first.structured) == ("created", "working/s1.md", True)
    text = (vault_dir / "working/s1.md").read_text(encoding="utf-8")
    assert text.endswith("---\n\n" + LAYOUT)
    meta = frontmatter(vault_dir / "working/s1.md")
    assert (meta["type"], meta["session"], meta["title"]) == ("working", "s1", "ship v2")

    second = set_working(vault, "s1", "Just looking around.", NOW + DAY)
    assert (second.action, second.id, second.structured) == ("updated", first.id, False)
    view = show_working(vault, "s1", NOW + DAY)
    assert view is not None
    assert (view.text, view.fields, view.updated) == ("Just looking around.", {}, NOW + DAY)
    assert sorted(p.name for p in (vault_dir / "working").glob("*.md")) == ["s1.md"]


def test_show_gives_the_fields_of_a_structured_memory(vault: CoreVault) -> None:
    set_working(vault, "s1", json.dumps(FIELDS), NOW)
    view = show_working(vault, "s1", NOW + timedelta(hours=2))
    assert view is not None
    assert view.fields == FIELDS
    assert view.text == LAYOUT.strip()
    assert (view.age_seconds, view.stale, view.session) == (7200.0, False, "s1")


def test_no_working_memory_is_none(vault: CoreVault) -> None:
    assert show_working(vault, "nobody", NOW) is None
    assert current_working(vault, "nobody", NOW) is None


def test_empty_text_is_refused_and_nothing_written(vault: CoreVault, vault_dir: Path) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        set_working(vault, "s1", "  \n", NOW)
    with pytest.raises(InvalidInput, match="empty"):
        set_working(vault, "s1", '{"pending": []}', NOW)
    assert not (vault_dir / "working/s1.md").exists()


def test_stale_exactly_after_working_stale_days(vault: CoreVault) -> None:
    set_working(vault, "s1", "Task: x", NOW)
    limit = NOW + 7 * DAY
    fresh = show_working(vault, "s1", limit)
    old = show_working(vault, "s1", limit + timedelta(seconds=1))
    assert fresh is not None and not fresh.stale
    assert old is not None and old.stale
    assert current_working(vault, "s1", limit) is not None
    assert current_working(vault, "s1", limit + timedelta(seconds=1)) is None


def test_the_setting_decides_and_a_write_makes_it_fresh_again(vault_dir: Path) -> None:
    write(vault_dir, "kenomem.toml", "[memory]\nworking_stale_days = 2\n")
    vault = CoreVault.open(vault_dir)
    set_working(vault, "s1", "Task: x", NOW)
    assert current_working(vault, "s1", NOW + 3 * DAY) is None
    set_working(vault, "s1", "Task: y", NOW + 3 * DAY)
    view = current_working(vault, "s1", NOW + 4 * DAY)
    assert view is not None and view.fields == {"task": "y"}


def test_staleness_agrees_with_prune(vault: CoreVault) -> None:
    set_working(vault, "old", "Task: old", NOW)
    set_working(vault, "new", "Task: new", NOW + 2 * DAY)
    later = NOW + 8 * DAY
    stale = {s for s in ("old", "new") if (v := show_working(vault, s, later)) and v.stale}
    plan = prune(vault, PruneRequest(dry_run=True), now=later).plan
    retired = {r.path for r in plan.retire if r.why == "stale-working"}
    assert stale == {"old"}
    assert retired == {"working/old.md"}


def test_a_hand_written_scratchpad_is_read_as_it_is(vault: CoreVault, vault_dir: Path) -> None:
    write(
        vault_dir,
        "working/s9.md",
        "---\ntype: working\nsession: s9\nupdated: 2026-03-01T12:00:00Z\npinned: false\n---\n\n"
        "## Task\n\nread the logs\n",
    )
    view = show_working(vault, "s9", NOW)
    assert view is not None
    assert view.fields == {"task": "read the logs"}
    assert view.updated == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert view.age_seconds == 4 * 86400


def test_a_pinned_scratchpad_is_never_stale(vault: CoreVault, vault_dir: Path) -> None:
    write(
        vault_dir,
        "working/s9.md",
        "---\ntype: working\nsession: s9\nupdated: 2025-01-01T00:00:00Z\npinned: true\n---\n\n"
        "keep this\n",
    )
    assert current_working(vault, "s9", NOW) is not None


def test_clear_archives_and_loses_nothing(vault: CoreVault, vault_dir: Path) -> None:
    made = set_working(vault, "s1", STRUCTURED, NOW)
    cleared = clear_working(vault, "s1")
    assert cleared.cleared and cleared.id == made.id
    assert (cleared.old_path, cleared.path) == ("working/s1.md", "archive/working/s1.md")
    assert not (vault_dir / "working/s1.md").exists()
    kept = vault_dir / "archive/working/s1.md"
    assert kept.read_text(encoding="utf-8").endswith(LAYOUT)
    assert frontmatter(kept)["status"] == "archived"
    assert show_working(vault, "s1", NOW) is None
    assert not clear_working(vault, "s1").cleared

    again = set_working(vault, "s1", "Task: next", NOW)
    assert again.action == "created" and again.id != made.id
    assert clear_working(vault, "s1").path == "archive/working/s1-2.md"


def test_a_session_id_cannot_leave_the_vault(vault: CoreVault, vault_dir: Path) -> None:
    result = set_working(vault, "../../etc/x", "Task: x", NOW)
    assert result.path.startswith("working/") and "/" not in result.path[len("working/") :]
    assert (vault_dir / result.path).is_file()
    with pytest.raises(InvalidInput):
        show_working(vault, "two\nlines", NOW)


# -- the command line -----------------------------------------------------------------------


def test_cli_set_from_stdin_show_and_clear(cli: Cli, vault_dir: Path) -> None:
    made = cli("working", "set", "--session", "s1", "--json", input=STRUCTURED)
    assert made.code == 0, made.err
    assert json.loads(made.out)["action"] == "created"
    shown = cli("working", "show", "--session", "s1", "--json")
    doc = json.loads(shown.out)
    assert doc["found"] is True
    assert doc["fields"] == FIELDS
    assert doc["stale"] is False
    assert isinstance(doc["age_seconds"], float)
    assert datetime.fromisoformat(doc["updated"].replace("Z", "+00:00")).tzinfo is not None
    plain = cli("working", "show", "--session", "s1")
    assert "working memory of s1" in plain.out and "updated " in plain.out
    assert "STALE" not in plain.out and "- tag the release" in plain.out

    cleared = cli("working", "clear", "--session", "s1", "--json")
    assert json.loads(cleared.out)["path"] == "archive/working/s1.md"
    missing = cli("working", "show", "--session", "s1", "--json")
    assert missing.code == 0
    assert json.loads(missing.out) == {"session": "s1", "found": False}
    assert "no working memory" in cli("working", "show", "--session", "s1").err


def test_cli_show_says_stale(cli: Cli, vault_dir: Path) -> None:
    write(
        vault_dir,
        "working/s1.md",
        "---\ntype: working\nsession: s1\nupdated: 2020-01-01T00:00:00Z\n---\n\nold plan\n",
    )
    shown = cli("working", "show", "--session", "s1")
    assert shown.code == 0, shown.err
    assert "STALE" in shown.out and "old plan" in shown.out
    assert json.loads(cli("working", "show", "--session", "s1", "--json").out)["stale"] is True


def test_cli_text_argument_and_errors(cli: Cli) -> None:
    assert cli("working", "set", "Free text plan", "--session", "s1").code == 0
    assert json.loads(cli("working", "show", "--session", "s1", "--json").out)["fields"] == {}
    assert cli("working", "set", "--session", "s1", input="").code == 1
    bad = cli("working", "set", "--session", "s1", input='{"task": 1, "who": 2}')
    assert bad.code == 1 and "unknown key" in bad.err
    assert cli("working", "show").code == 2  # --session is required


@pytest.mark.parametrize("sub", ["show", "set", "clear"])
def test_each_working_command_has_help_with_an_example(cli: Cli, sub: str) -> None:
    result = cli("working", sub, "--help")
    assert result.code == 0, result.err
    assert "Example" in result.out and f"kenomem working {sub}" in result.out
    assert "kenomem working" in cli("working", "--help").out
