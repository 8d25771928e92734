"""The sleep cycle never copies a secret: not from a buffer file a person wrote by hand,
not into the LLM command's prompt, not from the LLM's answer (`secrets.redact`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.files import buffer
from kenomem.files.paths import MEMORY_DIRS
from kenomem.files.secrets import REDACTED, find_secrets, redact
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write
from tests.sleep.helpers import Fake

NOW = datetime(2026, 3, 4, 4, 0, tzinfo=UTC)
DAY = "buffer/2026-03-03.md"
# Fake tokens, built here so that no real credential sits in the tests.
GITHUB = "ghp_" + "aB3dE5fG7h" * 3 + "J9kL1m"
ANTHROPIC = "sk-ant-api03-" + "Qw8Er7Ty6U" * 4
SECRETS = (GITHUB, ANTHROPIC)

# A day file written by hand: `kenomem log` would have refused these entries.
BY_HAND = f"""---
date: 2026-03-03
consolidated: null
---

## 09:00:00 Adrian @s1 #chat
Remember this: the deploy token is {GITHUB}, rotate it on Friday.

## 09:05:00 Adrian @s1 #chat
I work at Acme Corp. My API key is {ANTHROPIC} for the billing bot.

## 09:10:00 Adrian @s1 #chat
ok thanks
"""


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path / "fake")


def memory_text(root: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for d in MEMORY_DIRS for p in sorted((root / d).rglob("*.md"))
    )


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text
        assert secret[8:30] not in text  # nor a piece of one
    assert find_secrets(text) == []


# -- redact ----------------------------------------------------------------------------------


def test_redact_replaces_each_secret_and_keeps_the_rest() -> None:
    text = f"token {GITHUB}, key {ANTHROPIC}; card 4111 1111 1111 1111."
    assert redact(text) == f"token {REDACTED}, key {REDACTED}; card {REDACTED}."
    assert redact("nothing to hide here") == "nothing to hide here"


def test_redact_takes_overlapping_findings_as_one() -> None:
    # A URL's password inside an assignment's value: one marker, not two or a stray tail.
    text = "DATABASE_PASSWORD=postgres://admin:hunter2@db.example.com/x"
    found = find_secrets(text)
    assert len(found) == 2 and found[1].start < found[0].end
    assert redact(f"{text} ok") == f"DATABASE_PASSWORD={REDACTED} ok"
    assert redact(f"<{ANTHROPIC}>") == f"<{REDACTED}>"


@pytest.mark.parametrize(
    "assignment", ["PASSWORD: hunter2hunter2", "DB_PASSWORD=s3cr3tpw", 'api_key: "k3y-v4lu3-x"']
)
def test_the_marker_is_no_value_of_an_assignment(assignment: str) -> None:
    # `PASSWORD: [secret removed]` must not read as a password again (and again...).
    key = assignment.split("=")[0].split(":")[0]
    clean = redact(f"set {assignment} then")
    assert clean.startswith(f"set {key}") and clean.count(REDACTED) == 1, clean
    assert find_secrets(clean) == [] and clean.endswith(" then")


ASSIGNMENTS = ["DB_PASSWORD=s3cr3tpw", "token: abc123def456", "Authorization: Bearer abcdefgh1234"]


@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from([*SECRETS, *ASSIGNMENTS, "4111111111111111", " "]),
        ),
        max_size=8,
    )
)
def test_redacted_text_holds_no_secret(parts: list[str]) -> None:
    text = "".join(parts)
    clean = redact(text)
    assert find_secrets(clean) == []
    if not find_secrets(text):
        assert clean == text


# -- a buffer file written by hand -----------------------------------------------------------


def test_a_secret_in_a_hand_written_entry_is_not_copied(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, DAY, BY_HAND)
    warnings: list[str] = []
    result = consolidate(vault, ConsolidateRequest(), now=NOW, warn=warnings.append)

    assert_no_secret(memory_text(vault_dir))
    # The rest of each entry is consolidated: the episode, with a marker, and the fact.
    episodes = [m for m in vault.browse(_all()).hits if m.doc.type == "episodic"]
    bodies = [(vault_dir / hit.doc.path).read_text("utf-8") for hit in episodes]
    assert any(f"the deploy token is {REDACTED}, rotate it on Friday." in b for b in bodies)
    assert any(hit.doc.title == "Adrian works at Acme Corp" for hit in vault.browse(_all()).hits)
    assert buffer.read_day(vault.root, DAY).consolidated == NOW
    # Each entry that held one is named, with what it looked like, so it can be cleaned.
    assert len(warnings) == 2
    assert f"{DAY}#09:00:00" in warnings[0] and "GitHub token" in warnings[0]
    assert f"{DAY}#09:05:00" in warnings[1] and "Anthropic API key" in warnings[1]
    assert result.days[0].warnings == warnings
    # The buffer file itself is left as the person wrote it.
    assert (vault_dir / DAY).read_text("utf-8").split("---", 2)[2] == BY_HAND.split("---", 2)[2]


def _all() -> object:
    from kenomem.index import Filters

    return Filters(statuses=())


def test_a_secret_in_the_heading_of_an_entry_is_not_copied(
    vault_dir: Path, vault: CoreVault
) -> None:
    write(
        vault_dir,
        DAY,
        f"---\ndate: 2026-03-03\nconsolidated: null\n---\n\n## 09:00:00 Adrian @{GITHUB}\n"
        "Remember this: the boiler is serviced in May.\n",
    )
    consolidate(vault, ConsolidateRequest(), now=NOW)
    text = memory_text(vault_dir)
    assert "the boiler is serviced in May" in text
    assert_no_secret(text)


def test_a_fix_holding_a_secret_is_proposed_without_it(vault_dir: Path, vault: CoreVault) -> None:
    for day in (2, 3):
        write(
            vault_dir,
            f"buffer/2026-03-0{day}.md",
            f"---\ndate: 2026-03-0{day}\nconsolidated: null\n---\n\n"
            "## 09:00:00 Dana\nThe deploy failed with a timeout error on the build step.\n\n"
            f"## 09:05:00 Dana\nFixed it: ran deploy --token {GITHUB} and it works now.\n",
        )
    result = consolidate(vault, ConsolidateRequest(), now=NOW)
    assert result.proposed == 1
    assert_no_secret(memory_text(vault_dir))


def test_the_cli_warns_on_stderr_and_lists_the_warning_in_json(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, DAY, BY_HAND)
    result = cli("consolidate", "--json")
    assert result.code == 0, result.err
    assert f"{DAY}#09:00:00" in result.err
    assert GITHUB not in result.out + result.err
    (day,) = json.loads(result.out)["days"]
    assert len(day["warnings"]) == 2
    assert_no_secret(memory_text(vault_dir))


# -- the LLM command -------------------------------------------------------------------------


def test_the_llm_command_is_sent_no_secret(vault_dir: Path, vault: CoreVault, fake: Fake) -> None:
    write(vault_dir, DAY, BY_HAND)
    # A fact a person wrote by hand, secret and all: the prompt lists the known facts.
    write(
        vault_dir,
        "semantic/token.md",
        f"---\ntype: semantic\ntags: [fact]\ntitle: Deploy token {GITHUB}\n---\n\nSee title.\n",
    )
    fake.answer(json.dumps({"summary": "A quiet day."}))
    consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW)
    assert fake.runs == 1
    assert "rotate it on Friday" in fake.prompt and "Deploy token" in fake.prompt
    assert_no_secret(fake.prompt)


def test_a_secret_in_the_llms_answer_is_not_written(
    vault_dir: Path, vault: CoreVault, fake: Fake
) -> None:
    write(vault_dir, DAY, BY_HAND)
    answer = {
        "episodes": [{"entry": 1, "importance": 8, "title": f"Token {GITHUB}"}],
        "facts": [
            {
                "entry": 2,
                "subject": "user",
                "attribute": "api key",
                "value": ANTHROPIC,
                "text": f"API key: {ANTHROPIC}",
            }
        ],
        "patterns": [{"trigger": "deploy + token", "response": f"use {GITHUB}", "confidence": 0.5}],
        "summary": f"The token is {GITHUB}.",
    }
    fake.answer(json.dumps(answer))
    warnings: list[str] = []
    result = consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append)
    assert result.days[0].method == "llm"
    assert any("LLM's answer" in w and "secret" in w for w in warnings)
    assert_no_secret(memory_text(vault_dir))
    assert any(hit.doc.title == f"Token {REDACTED}" for hit in vault.browse(_all()).hits)
