"""The design's working-memory JSON (`session`, `task`, `context` list, `pending` list,
`notes`, `updated`) is another form of `working set`: lists become `- ` lines, `session`
must be the session written, `updated` is ignored."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.agents import working_form
from kenomem.agents.working import set_working, show_working
from kenomem.errors import InvalidInput
from kenomem.vault.core import CoreVault
from tests.conftest import Cli

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)

DESIGN = {
    "session": "s1",
    "task": "Fix the n8n webhook",
    "context": ["n8n answers 401 on the webhook", "the token was renewed on Monday"],
    "pending": ["renew the credential", "run the workflow again"],
    "notes": "Ana owns the n8n instance",
    "updated": "2020-01-01T00:00:00Z",
}
FIELDS = {
    "task": "Fix the n8n webhook",
    "context": "- n8n answers 401 on the webhook\n- the token was renewed on Monday",
    "pending": ["renew the credential", "run the workflow again"],
    "notes": "Ana owns the n8n instance",
}


def test_the_design_form_gives_the_fields_with_lists_as_lines() -> None:
    assert working_form.parse(json.dumps(DESIGN), "s1") == FIELDS
    notes = {**DESIGN, "notes": ["one", 2, "  "], "updated": 1767225600}
    assert working_form.parse(json.dumps(notes), "s1")["notes"] == "- one\n- 2"
    # Read back from the stored layout, the same fields.
    stored = working_form.format_fields(FIELDS)
    assert working_form.parse_fields(stored) == FIELDS


def test_a_session_that_is_not_the_one_written_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"for session 's2'.*session 's1'") as caught:
        working_form.parse(json.dumps({**DESIGN, "session": "s2"}), "s1")
    assert "same session" in caught.value.hint
    for bad in (["s1"], {"id": "s1"}, 7):
        with pytest.raises(InvalidInput, match="'session' must be text"):
            working_form.parse(json.dumps({**DESIGN, "session": bad}), "s1")
    with pytest.raises(InvalidInput, match="'updated' must be a time"):
        working_form.parse(json.dumps({**DESIGN, "updated": {"at": 1}}), "s1")
    with pytest.raises(InvalidInput, match="'context' must be text or a list of lines"):
        working_form.parse(json.dumps({**DESIGN, "context": [["nested"]]}), "s1")


def test_a_hostile_session_in_the_json_never_picks_the_file(
    vault: CoreVault, vault_dir: Path
) -> None:
    for other in ("../../etc/passwd", "s2", "s1 ", "S1"):
        with pytest.raises(InvalidInput):
            set_working(vault, "s1", json.dumps({**DESIGN, "session": other}), NOW)
    assert list((vault_dir / "working").glob("*.md")) == []
    assert list(vault_dir.rglob("passwd")) == []


def test_updated_is_ignored_the_write_time_is_kept(vault: CoreVault) -> None:
    set_working(vault, "s1", json.dumps(DESIGN), NOW)
    view = show_working(vault, "s1", NOW)
    assert view is not None
    assert view.fields == FIELDS
    assert view.updated == NOW  # not 2020: the scratchpad is fresh, not stale
    assert not view.stale


def test_cli_working_set_takes_the_design_form(cli: Cli, vault_dir: Path) -> None:
    made = cli("working", "set", "--session", "s1", "--json", input=json.dumps(DESIGN))
    assert made.code == 0, made.err
    assert json.loads(made.out)["fields"] == FIELDS
    shown = json.loads(cli("working", "show", "--session", "s1", "--json").out)
    assert shown["fields"] == FIELDS and shown["stale"] is False
    text = (vault_dir / "working/s1.md").read_text(encoding="utf-8")
    assert "## Context\n\n- n8n answers 401 on the webhook\n" in text
    assert "2020" not in text

    block = cli("context", "--session", "s1").out
    assert "Context:\n- n8n answers 401 on the webhook\n- the token was renewed" in block
    assert "Pending:\n- renew the credential" in block

    other = cli("working", "set", "--session", "s2", input=json.dumps(DESIGN))
    assert other.code == 1 and "for session 's1'" in other.err
    assert not (vault_dir / "working/s2.md").exists()


@settings(max_examples=30)
@given(named=st.text(max_size=40))
def test_whatever_session_the_json_names_the_file_is_the_callers(named: str) -> None:
    text = json.dumps({**DESIGN, "session": named})
    if named == "s1":
        assert working_form.parse(text, "s1") == FIELDS
    else:
        with pytest.raises(InvalidInput):
            working_form.parse(text, "s1")
