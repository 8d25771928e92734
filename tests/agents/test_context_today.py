"""`context` and the buffer: entries not yet consolidated are found by the query; the
block's JSON says how sure the match is."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenomem.api import Vault
from tests.conftest import Cli

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)


@pytest.fixture
def api(vault_dir: Path) -> Vault:
    return Vault(vault_dir)


def test_an_entry_of_today_is_in_the_block(api: Vault) -> None:
    api.log("The codename of the launch is Bluebird", who="Ana", at=NOW - timedelta(hours=2))
    result = api.context("bluebird", now=NOW, budget=2000)
    assert "13:00 Ana: The codename of the launch is Bluebird" in result.text
    (recent,) = [p for p in result.parts if p.name == "recent"]
    assert recent.ids == ["buf_20260310_130000_0"]
    assert result.confidence in ("medium", "high")


def test_the_sessions_own_entries_are_not_shown_twice(api: Vault) -> None:
    api.log("Bluebird ships on Friday", session="chat-1", at=NOW - timedelta(hours=1))
    result = api.context("bluebird", session="chat-1", now=NOW, budget=2000)
    assert result.text.count("Bluebird ships on Friday") == 1
    assert [p.name for p in result.parts if p.ids and p.name == "recent"] == []


def test_confidence_without_a_query_or_a_match_is_none(api: Vault) -> None:
    api.remember("The cat is called Biscuit", type="semantic")
    assert api.context(now=NOW).confidence == "none"
    assert api.context("zeppelin", now=NOW).confidence == "none"


def test_context_json_carries_confidence(cli: Cli) -> None:
    assert cli("log", "We settled on the codename Bluebird").code == 0
    doc = json.loads(cli("context", "bluebird", "--json").out)
    assert doc["confidence"] in ("medium", "high")
    assert json.loads(cli("context", "--json").out)["confidence"] == "none"


def test_another_chats_entries_stay_out(api: Vault) -> None:
    api.log("Bluebird needs a logo", session="chat-2", at=NOW - timedelta(hours=1))
    api.log("Bluebird was announced", at=NOW - timedelta(hours=1))
    result = api.context("bluebird", session="chat-1", now=NOW, budget=2000)
    assert "Bluebird needs a logo" not in result.text
    assert "Bluebird was announced" in result.text  # logged without a session: global
