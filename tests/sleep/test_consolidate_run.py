"""A run over many days: it writes each day's memories, indexes them once at the end, and
ends in the vault that one run per day would leave; what the assistant says and what the
user says on different days, as the sleep cycle judges them."""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from kenomem.files import atomic, buffer
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.sleep.salience import KEEP_AT
from kenomem.vault.core import CoreVault
from tests.sleep.helpers import (
    assert_same_vault,
    at,
    failing_after,
    index_ids,
    log,
    of,
    snapshot,
)

NIGHT = at(6, 4, 0)  # after the three days below

THREE_DAYS = [
    (1, 9, 0, "Adrian", "I live in Lisbon and my sister is called Ana."),
    (1, 9, 5, "Adrian", "The deploy failed with a timeout error on the build step."),
    (1, 9, 9, "Adrian", "Cleared the build cache and the deploy works now."),
    (1, 9, 10, "assistant", "Glad the build cache did it."),
    (2, 8, 0, "Adrian", "I moved to Porto last week, the flat is lovely."),
    (2, 8, 5, "Adrian", "I live in Porto now, and Ana is visiting in May."),
    (2, 9, 0, "Adrian", "We decided to ship the release on Friday."),
    (3, 9, 5, "Adrian", "The deploy failed again with a timeout error on the build step."),
    (3, 9, 9, "Adrian", "Cleared the build cache, fixed."),
    (3, 10, 0, "Adrian", "Important: the release moved to Monday, tell Ana."),
]


def log_all(vault: CoreVault) -> None:
    for day, hour, minute, who, text in THREE_DAYS:
        log(vault, day, hour, minute, text, who=who)


def test_one_run_over_three_days_ends_as_one_run_a_day(tmp_path: Path, vault_dir: Path) -> None:
    log_all(CoreVault.open(vault_dir))
    daily = tmp_path / "daily"
    shutil.copytree(vault_dir, daily)

    consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NIGHT)
    for day in (1, 2, 3):
        consolidate(CoreVault.open(daily), ConsolidateRequest(date=date(2026, 3, day)), now=NIGHT)

    assert snapshot(vault_dir) == snapshot(daily)
    assert index_ids(vault_dir) == index_ids(daily)
    (porto,) = of(vault_dir, title="Adrian lives in Porto")
    assert porto["reinforced"] == "1"  # said twice on day 2: the second reinforces
    (lisbon,) = of(vault_dir, title="Adrian lives in Lisbon")
    assert (lisbon["status"], lisbon["superseded_by"]) == ("superseded", porto["id"])
    assert len(of(vault_dir, type="procedural")) == 1


@pytest.mark.parametrize(("name", "calls"), [("create", 9), ("update_keys", 2)])
def test_a_run_that_fails_on_a_later_day_then_a_rerun_ends_as_one_clean_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, vault_dir: Path, name: str, calls: int
) -> None:
    log_all(CoreVault.open(vault_dir))
    clean = tmp_path / "clean"
    shutil.copytree(vault_dir, clean)
    consolidate(CoreVault.open(clean), ConsolidateRequest(), now=NIGHT)

    with monkeypatch.context() as patch:
        failing_after(patch, name, calls)
        with pytest.raises(OSError, match="disk on fire"):
            consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NIGHT)
    vault = CoreVault.open(vault_dir)
    marked = [
        buffer.read_day(vault.root, p).consolidated is not None for p in buffer.days(vault.root)
    ]
    assert marked[0] and not marked[-1]  # it stopped after the first day
    consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NIGHT)
    assert_same_vault(vault_dir, clean)


def test_folders_are_made_durable_once_a_day_not_once_a_file(
    monkeypatch: pytest.MonkeyPatch, vault_dir: Path
) -> None:
    log_all(CoreVault.open(vault_dir))
    synced: list[Path] = []
    original = atomic.fsync_dir

    def record(path: Path) -> None:
        synced.append(path)
        original(path)

    monkeypatch.setattr(atomic, "fsync_dir", record)
    result = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NIGHT)
    assert result.created > 6
    folders = [p for p in synced if p.name != "buffer"]
    assert max(Counter(folders).values()) <= 3  # once a day, over three days
    assert len(folders) < result.created


# -- what is kept -----------------------------------------------------------------------------


def test_the_assistants_replies_are_kept_low_but_its_promise_high(vault_dir: Path) -> None:
    vault = CoreVault.open(vault_dir)
    said: list[tuple[int, int, str, str]] = [
        (9, 0, "Dana", "Remember that I'm allergic to penicillin."),
        (9, 1, "assistant", "I'll remember that you're allergic to penicillin."),
        (9, 2, "Dana", "My mum's birthday is 21 March, I must order her present by the 15th."),
        (9, 3, "assistant", "I'll remind you on 13 March to order your mum's present."),
        (9, 4, "assistant", "There are good cafés on Wellington Street near Priya's office."),
    ]
    for hour, minute, who, text in said:
        log(vault, 3, hour, minute, text, who=who)
    consolidate(vault, ConsolidateRequest(), now=at(4, 4, 0))
    # Every entry is kept, its speaker named; what the assistant only restates is kept
    # below what matters, its promise with it.
    importance = {
        m["body"]: int(m["importance"])
        for m in of(vault_dir, type="episodic")
        if "summary" not in m["tags"]
    }
    assert set(importance) == {f"{who}: {text}" for *_, who, text in said}
    kept = [f"{who}: {text}" for *_, who, text in (said[0], said[2], said[3])]
    restated = [f"{who}: {text}" for *_, who, text in (said[1], said[4])]
    assert min(importance[t] for t in kept) >= KEEP_AT > max(importance[t] for t in restated)


def test_a_problem_said_in_other_words_with_the_same_fix_proposes_a_pattern(
    vault_dir: Path,
) -> None:
    vault = CoreVault.open(vault_dir)
    days: list[list[tuple[str, str]]] = [
        [
            ("Dana", "docker compose up fails: bind: address already in use on port 5432"),
            ("assistant", "Something listens on 5432; try brew services stop postgresql@16."),
            ("Dana", "it was the homebrew postgres, brew services stop postgresql@16 fixed it"),
        ],
        [
            ("Dana", "docker compose is complaining that port 5432 is already in use again"),
            ("assistant", "On Monday, brew services stop postgresql@16 fixed it."),
            ("Dana", "same thing. ran brew services stop postgresql@16 and compose is up."),
        ],
    ]
    for day, entries in zip((2, 5), days, strict=True):
        for minute, (who, text) in enumerate(entries):
            log(vault, day, 17, minute, text, who=who)
    result = consolidate(vault, ConsolidateRequest(), now=at(6, 4, 0))
    assert result.proposed == 1
    (pattern,) = of(vault_dir, type="procedural")
    assert pattern["learned_from"] == ["buffer/2026-03-02.md", "buffer/2026-03-05.md"]
    assert pattern["body"] == "ran brew services stop postgresql@16 and compose is up."
    assert {"docker", "compose"} <= set(pattern["trigger"].split(" + "))
