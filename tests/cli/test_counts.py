"""Counts in what the command line prints: `1 memory`, `2 memories`, never `1 memories`
(`files/plural.counted`, the one helper of every message)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenomem.files.plural import counted
from tests.conftest import Cli


@pytest.mark.parametrize(
    ("n", "noun", "said"),
    [
        (1, "memory", "1 memory"),
        (0, "memory", "0 memories"),
        (3, "memory", "3 memories"),
        (1, "entry", "1 entry"),
        (2, "buffer entry", "2 buffer entries"),
        (2, "day", "2 days"),
        (2, "batch", "2 batches"),
        (2, "file", "2 files"),
        (1.0, "day", "1 day"),
        (2.5, "day", "2.5 days"),
        (2, "trivia", "2 trivia"),
    ],
)
def test_counted(n: float, noun: str, said: str) -> None:
    plural = "trivia" if noun == "trivia" else ""
    assert counted(n, noun, plural) == said


def test_one_of_a_kind_is_said_in_the_singular(cli: Cli, tmp_path: Path) -> None:
    assert cli("remember", "The office plant needs water on Fridays").code == 0
    assert "indexed 1 memory from 1 file in" in cli("reindex").out
    assert "(1 file, 0 pinned)" in cli("stats").out
    assert "the 1 file read, index in step" in cli("doctor").out
    assert cli("log", "Fixed the flaky build by pinning numpy").code == 0
    dry = cli("consolidate", "--include-today", "--dry-run").out
    assert "1 entry, 0 trivia" in dry and "\n1 day: " in f"\n{dry}", dry
    record = tmp_path / "one.jsonl"
    record.write_text(json.dumps({"role": "user", "content": "I moved to Lisbon"}) + "\n")
    assert cli("import", str(record)).out.startswith("created 1 memory, skipped 0")
