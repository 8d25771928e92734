"""`consolidate`, the sleep cycle: a buffer day becomes the right few episodes, facts (one
superseding an older one), proposed patterns and a summary, once, however often it runs
and wherever it is interrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from kenomem.agents.decide import approve, reject
from kenomem.files import buffer
from kenomem.recall.search import RecallRequest, recall
from kenomem.sleep.consolidate import ConsolidateRequest, ConsolidateResult, consolidate
from kenomem.vault.core import CoreVault
from tests.conftest import Cli
from tests.sleep.helpers import (
    NOW,
    assert_same_vault,
    at,
    clean_copy,
    failing_after,
    index_ids,
    log,
    memories,
    of,
    snapshot,
)

DAY1 = "buffer/2026-03-01.md"
DAY3 = "buffer/2026-03-03.md"

# The judged day: (hour, minute, who, text).
JUDGED = [
    (8, 0, "Adrian", "good morning"),
    (8, 1, "Adrian", "My wife is called Maria and I live in Lisbon."),
    (8, 2, "assistant", "ok"),
    (8, 5, "Adrian", "Remember this: the staging server password rotates every Monday."),
    (9, 0, "Adrian", "The deploy failed with a timeout error on the build step."),
    (9, 10, "Adrian", "Fixed it: the cache caused the timeout, cleared it and it works now."),
    (9, 20, "Adrian", "I don't like coffee anymore, tea is better."),
    (9, 30, "Adrian", "thanks!"),
    (9, 31, "Adrian", "We decided to ship the release on Friday."),
]
TRIVIA = ["good morning", "ok", "thanks!"]
MUST_KEEP = [JUDGED[3][3], JUDGED[4][3], JUDGED[5][3], JUDGED[8][3]]


def plan_of(result: ConsolidateResult) -> list[list[tuple[str, str, str, str, str]]]:
    return [
        [(a.action, a.id, a.type, a.title, a.target) for a in day.actions] for day in result.days
    ]


def recall_ids(vault: CoreVault, query: str, archive: bool = False) -> list[str]:
    request = RecallRequest(query, touch=False, now=NOW, archive=archive)
    return [item.id for item in recall(vault, request).results]


def judged_vault(vault: CoreVault) -> None:
    """An earlier, consolidated day that knows an older preference and a fact; then the
    judged day, not yet consolidated."""
    log(vault, 1, 9, 0, "I really like coffee.")
    log(vault, 1, 9, 5, "My wife is called Maria.")
    log(vault, 1, 9, 6, "ok thanks")
    first = consolidate(vault, ConsolidateRequest(), now=at(2, 4, 0))
    assert [d.day for d in first.days] == [DAY1]
    for hour, minute, who, text in JUDGED:
        log(vault, 3, hour, minute, text, who=who)


@pytest.fixture
def judged(vault: CoreVault) -> CoreVault:
    judged_vault(vault)
    return vault


# -- the judged day ---------------------------------------------------------------------------


def test_the_judged_day(vault_dir: Path, judged: CoreVault) -> None:
    older = of(vault_dir, title="Adrian likes coffee")[0]
    wife = of(vault_dir, title="Adrian's wife: Maria")[0]
    result = consolidate(judged, ConsolidateRequest(), now=NOW)

    (day,) = result.days
    assert (day.day, day.entries, day.trivia, day.method) == (DAY3, 9, 3, "heuristics")
    assert not result.dry_run

    # Episodes: every entry but trivia, verbatim, its speaker named; the remember-this,
    # the error, the fix and the decision among the important ones.
    episodes = [
        m
        for m in of(vault_dir, type="episodic")
        if "summary" not in m["tags"] and m["buffer"].startswith(DAY3)
    ]
    said = {f"{who}: {text}": text for *_, who, text in JUDGED}
    kept = {said[m["body"]] for m in episodes}
    assert kept == {text for *_, text in JUDGED} - set(TRIVIA)
    for m in episodes:
        entry = next(e for e in JUDGED if f"{e[2]}: {e[3]}" == m["body"])
        assert m["when"] == at(3, entry[0], entry[1]).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert m["buffer"] == f"{DAY3}#{entry[0]:02d}:{entry[1]:02d}:00"
        assert m["channel"] == "telegram"
        assert "Adrian" in m["participants"]
        assert 5 <= int(m["importance"]) <= 10 or entry[3] not in MUST_KEEP
        assert m["source"] == "consolidate"
        assert m["scope"] == "s1"  # the chat the entries were logged in
    explicit = next(m for m in episodes if m["body"] == f"Adrian: {JUDGED[3][3]}")
    assert int(explicit["importance"]) >= 7

    # Facts: a new one, a reinforced one, and one superseding the older preference.
    lisbon = of(vault_dir, title="Adrian lives in Lisbon")
    assert [(m["status"], m["attribute"], m["value"]) for m in lisbon] == [
        ("active", "lives in", "Lisbon")
    ]
    (dislikes,) = of(vault_dir, title="Adrian dislikes coffee")
    (likes,) = of(vault_dir, title="Adrian likes coffee")
    assert dislikes["status"] == "active"
    assert dislikes["supersedes"] == older["id"] == likes["id"]
    assert likes["status"] == "superseded"
    assert likes["superseded_by"] == dislikes["id"]
    (wife_now,) = of(vault_dir, title="Adrian's wife: Maria")
    assert wife_now["id"] == wife["id"]
    assert wife_now["reinforced"] == "1"
    assert wife_now["sources"] == [f"{DAY1}#09:05:00", f"{DAY3}#08:01:00"]
    assert result.superseded == 1 and result.reinforced == 1

    # One summary of the day, for its one chat; facts stay global.
    assert {m["scope"] for m in of(vault_dir, type="semantic")} == {"global"}
    (summary,) = [m for m in of(vault_dir, type="episodic", buffer=DAY3) if "summary" in m["tags"]]
    assert summary["title"] == "Day summary 2026-03-03 (chat s1)"
    assert summary["scope"] == "s1"
    assert summary["tags"] == ["summary"]
    assert summary["buffer"] == DAY3
    assert summary["body"].splitlines()[-1] == "9 entries, 3 trivia."
    assert "Adrian: Remember this: the staging server" in summary["body"]
    assert "good morning" not in summary["body"] and "thanks" not in summary["body"]
    assert int(summary["importance"]) < int(explicit["importance"])

    # The day is marked consolidated; trivia is nowhere in memory.
    assert buffer.read_day(judged.root, DAY3).consolidated == NOW
    for m in memories(vault_dir):
        for text in TRIVIA:
            assert text not in m["body"].splitlines()
    assert "good morning" not in "".join(m["body"] for m in memories(vault_dir))

    # Recall knows the new preference, and the old one only in the archive search.
    found = recall_ids(judged, "coffee")
    assert dislikes["id"] in found
    assert likes["id"] not in found
    assert likes["id"] in recall_ids(judged, "coffee", archive=True)


def test_a_second_run_changes_nothing(vault_dir: Path, judged: CoreVault) -> None:
    consolidate(judged, ConsolidateRequest(), now=NOW)
    files, ids = snapshot(vault_dir), index_ids(vault_dir)
    again = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=at(5, 4, 0))
    assert again.days == []
    assert (again.created, again.reinforced, again.superseded, again.proposed) == (0, 0, 0, 0)
    assert snapshot(vault_dir) == files
    assert index_ids(vault_dir) == ids


def test_rerunning_one_consolidated_day_changes_nothing(vault_dir: Path, judged: CoreVault) -> None:
    consolidate(judged, ConsolidateRequest(), now=NOW)
    files, ids = snapshot(vault_dir), index_ids(vault_dir)
    again = consolidate(
        CoreVault.open(vault_dir), ConsolidateRequest(date=date(2026, 3, 3)), now=at(6, 4, 0)
    )
    assert [d.day for d in again.days] == [DAY3]
    assert (again.created, again.reinforced, again.superseded, again.proposed) == (0, 0, 0, 0)
    assert index_ids(vault_dir) == ids
    assert snapshot(vault_dir) == files


def test_dry_run_writes_nothing_and_plans_what_the_run_does(
    vault_dir: Path, judged: CoreVault
) -> None:
    before = snapshot(vault_dir)
    ids = index_ids(vault_dir)
    dry = consolidate(judged, ConsolidateRequest(dry_run=True), now=NOW)
    assert dry.dry_run
    assert snapshot(vault_dir) == before
    assert index_ids(vault_dir) == ids
    assert buffer.read_day(judged.root, DAY3).consolidated is None

    real = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert plan_of(dry) == plan_of(real)
    assert (dry.created, dry.reinforced, dry.superseded, dry.proposed) == (
        real.created,
        real.reinforced,
        real.superseded,
        real.proposed,
    )
    made = {a.id for d in real.days for a in d.actions if a.memory is not None}
    assert made <= set(index_ids(vault_dir))
    assert len(index_ids(vault_dir)) == len(ids) + len(made)


def test_the_plan_says_what_it_will_do(judged: CoreVault) -> None:
    (day,) = consolidate(judged, ConsolidateRequest(dry_run=True), now=NOW).days
    actions = {(a.action, a.title) for a in day.actions}
    assert ("supersede", "Adrian dislikes coffee") in actions
    assert ("reinforce", "Adrian's wife: Maria") in actions
    assert ("create", "Adrian lives in Lisbon") in actions
    assert ("summarize", "Day summary 2026-03-03 (chat s1)") in actions
    (supersede,) = [a for a in day.actions if a.action == "supersede"]
    assert supersede.target.startswith("mem_20260301_")
    assert "likes" in supersede.why


# -- which days -------------------------------------------------------------------------------


def test_today_is_left_alone_unless_asked(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 3, 9, 0, "Remember this: the car is parked on level 3.")
    log(vault, 4, 1, 0, "Remember this: the keys are in the drawer.")
    first = consolidate(vault, ConsolidateRequest(), now=NOW)
    assert [d.day for d in first.days] == [DAY3]
    assert buffer.read_day(vault.root, "buffer/2026-03-04.md").consolidated is None
    assert not [m for m in memories(vault_dir) if "drawer" in m["body"]]

    second = consolidate(vault, ConsolidateRequest(include_today=True), now=NOW)
    assert [d.day for d in second.days] == ["buffer/2026-03-04.md"]
    assert buffer.read_day(vault.root, "buffer/2026-03-04.md").consolidated == NOW
    assert [m["title"] for m in memories(vault_dir) if "Remember this: the k" in m["body"]]


def test_date_picks_one_day(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 1, 9, 0, "Remember this: the car is parked on level 3.")
    log(vault, 2, 9, 0, "Remember this: the keys are in the drawer.")
    result = consolidate(vault, ConsolidateRequest(date=date(2026, 3, 2)), now=NOW)
    assert [d.day for d in result.days] == ["buffer/2026-03-02.md"]
    assert buffer.read_day(vault.root, DAY1).consolidated is None
    assert buffer.read_day(vault.root, "buffer/2026-03-02.md").consolidated == NOW
    assert consolidate(vault, ConsolidateRequest(date=date(2026, 2, 27)), now=NOW).days == []


def test_date_can_pick_today(vault: CoreVault) -> None:
    log(vault, 4, 1, 0, "Remember this: the keys are in the drawer.")
    result = consolidate(vault, ConsolidateRequest(date=date(2026, 3, 4)), now=NOW)
    assert [d.day for d in result.days] == ["buffer/2026-03-04.md"]


def test_an_empty_vault_has_nothing_to_do(vault_dir: Path, vault: CoreVault) -> None:
    before = snapshot(vault_dir)
    result = consolidate(vault, ConsolidateRequest(), now=NOW)
    assert (result.days, result.created) == ([], 0)
    assert snapshot(vault_dir) == before


def test_a_day_of_trivia_is_consolidated_without_a_summary(
    vault_dir: Path, vault: CoreVault
) -> None:
    for minute, text in enumerate(["hi", "ok", "thanks", "lol", "bye"]):
        log(vault, 3, 9, minute, text)
    (planned,) = consolidate(vault, ConsolidateRequest(dry_run=True), now=NOW).days
    assert (planned.trivia, planned.actions) == (5, [])
    (day,) = consolidate(vault, ConsolidateRequest(), now=NOW).days
    assert (day.trivia, day.actions) == (5, [])
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW
    assert memories(vault_dir) == []
    assert consolidate(vault, ConsolidateRequest(), now=NOW).days == []


def test_an_assistants_i_is_not_the_user(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 3, 9, 0, "I live in the cloud and I like answering questions.", who="assistant")
    consolidate(vault, ConsolidateRequest(), now=NOW)
    assert of(vault_dir, type="semantic") == []


# -- interruption -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "calls"),
    [("create", 0), ("create", 2), ("create", 6), ("update_keys", 0), ("update_keys", 1)],
)
def test_an_interrupted_run_then_a_rerun_ends_as_one_clean_run(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    vault_dir: Path,
    judged: CoreVault,
    name: str,
    calls: int,
) -> None:
    clean = clean_copy(vault_dir, tmp_path)
    with monkeypatch.context() as patch:
        failing_after(patch, name, calls)
        with pytest.raises(OSError, match="disk on fire"):
            consolidate(judged, ConsolidateRequest(), now=NOW)
    assert buffer.read_day(judged.root, DAY3).consolidated is None
    consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert_same_vault(vault_dir, clean)
    (wife,) = of(vault_dir, title="Adrian's wife: Maria")
    assert wife["reinforced"] == "1"


_KILLER = """
import os, signal, sys
from datetime import datetime
from pathlib import Path
from kenomem.files import store
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault

name, calls = sys.argv[2], int(sys.argv[3])
original = getattr(store, name)
count = [0]

def dying(*args, **kwargs):
    count[0] += 1
    if count[0] > calls:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)

setattr(store, name, dying)
consolidate(
    CoreVault.open(Path(sys.argv[1])),
    ConsolidateRequest(),
    now=datetime.fromisoformat(sys.argv[4]),
)
"""


@pytest.mark.parametrize(("name", "calls"), [("create", 3), ("update_keys", 0)])
def test_a_killed_process_then_a_rerun_ends_as_one_clean_run(
    tmp_path: Path, vault_dir: Path, judged: CoreVault, name: str, calls: int
) -> None:
    clean = clean_copy(vault_dir, tmp_path)
    script = tmp_path / "killer.py"
    script.write_text(textwrap.dedent(_KILLER), encoding="utf-8")
    killed = subprocess.run(
        [sys.executable, str(script), str(vault_dir), name, str(calls), NOW.isoformat()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    assert buffer.read_day(CoreVault.open(vault_dir).root, DAY3).consolidated is None
    consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert_same_vault(vault_dir, clean)


# -- reinforcement ----------------------------------------------------------------------------


def test_a_fact_repeated_on_a_later_day_reinforces_once(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 1, 9, 0, "I work at Acme Corp.")
    consolidate(vault, ConsolidateRequest(), now=at(2, 4, 0))
    (fact,) = of(vault_dir, type="semantic")
    assert (fact["reinforced"], fact["sources"]) == ("0", [f"{DAY1}#09:00:00"])

    log(vault, 3, 10, 0, "As I said, I work at Acme Corp.")
    result = consolidate(vault, ConsolidateRequest(), now=NOW)
    assert result.reinforced == 1
    assert [a.action for a in result.days[0].actions if a.type == "semantic"] == ["reinforce"]
    (fact,) = of(vault_dir, type="semantic")
    assert fact["reinforced"] == "1"
    assert fact["sources"] == [f"{DAY1}#09:00:00", f"{DAY3}#10:00:00"]
    assert fact["last_accessed"] == "2026-03-04T04:00:00Z"

    again = consolidate(vault, ConsolidateRequest(date=date(2026, 3, 3)), now=at(5, 4, 0))
    assert again.reinforced == 0
    (fact,) = of(vault_dir, type="semantic")
    assert fact["reinforced"] == "1"
    assert len(fact["sources"]) == 2

    log(vault, 5, 10, 0, "I work at Acme Corp, still.")
    consolidate(vault, ConsolidateRequest(), now=at(6, 4, 0))
    (fact,) = of(vault_dir, type="semantic")
    assert fact["reinforced"] == "2"


def test_a_fact_said_twice_in_one_day_is_one_memory(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 3, 9, 0, "I live in Lisbon.")
    log(vault, 3, 18, 0, "Like I said, I live in Lisbon.")
    consolidate(vault, ConsolidateRequest(), now=NOW)
    assert len(of(vault_dir, type="semantic")) == 1


def test_a_place_that_changes_supersedes_across_days(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 1, 9, 0, "I live in Lisbon.")
    log(vault, 3, 9, 0, "I moved to Porto last month.")
    consolidate(vault, ConsolidateRequest(), now=NOW)
    (lisbon,) = of(vault_dir, title="Adrian lives in Lisbon")
    (porto,) = of(vault_dir, title="Adrian lives in Porto")
    assert (lisbon["status"], lisbon["superseded_by"]) == ("superseded", porto["id"])
    assert (porto["status"], porto["supersedes"]) == ("active", lisbon["id"])


def test_many_valued_facts_do_not_supersede(vault_dir: Path, vault: CoreVault) -> None:
    log(vault, 1, 9, 0, "I'm allergic to peanuts.")
    log(vault, 3, 9, 0, "I'm allergic to shellfish.")
    consolidate(vault, ConsolidateRequest(), now=NOW)
    facts = of(vault_dir, type="semantic")
    assert sorted(m["value"] for m in facts) == ["peanuts", "shellfish"]
    assert {m["status"] for m in facts} == {"active"}


# -- patterns ---------------------------------------------------------------------------------

PROBLEM = "The deploy failed with a timeout error on the build step."
FIX = "Cleared the build cache and the deploy works now."


def problem_day(vault: CoreVault, day: int) -> None:
    log(vault, day, 9, 0, PROBLEM)
    log(vault, day, 9, 1, "hmm")
    log(vault, day, 9, 5, FIX)


def proposed(vault_dir: Path) -> list[dict[str, Any]]:
    return of(vault_dir, type="procedural")


def test_the_same_problem_on_two_days_proposes_one_pattern(
    vault_dir: Path, vault: CoreVault
) -> None:
    problem_day(vault, 1)
    problem_day(vault, 2)
    result = consolidate(vault, ConsolidateRequest(), now=at(3, 4, 0))
    assert result.proposed == 1
    (pattern,) = proposed(vault_dir)
    assert pattern["status"] == "proposed"
    assert pattern["path"].startswith("procedural/")
    assert pattern["learned_from"] == [DAY1, "buffer/2026-03-02.md"]
    assert 0 < float(pattern["confidence"]) <= 1
    assert pattern["body"] == FIX
    words = pattern["trigger"].split(" + ")
    assert "deploy" in words and "build" in words
    assert not {"error", "failed", "timeout", "fixed", "cleared"} & set(words)
    assert all(word.isalpha() and word.islower() for word in words)
    (action,) = [a for d in result.days for a in d.actions if a.action == "propose"]
    assert action.id == pattern["id"]

    # Running again, or over the day again, does not propose it twice.
    assert consolidate(vault, ConsolidateRequest(), now=at(4, 4, 0)).proposed == 0
    assert (
        consolidate(vault, ConsolidateRequest(date=date(2026, 3, 2)), now=at(4, 4, 0)).proposed == 0
    )
    assert len(proposed(vault_dir)) == 1


def test_a_problem_on_one_day_proposes_nothing(vault_dir: Path, vault: CoreVault) -> None:
    problem_day(vault, 1)
    log(vault, 2, 9, 0, "The printer is broken.")
    log(vault, 2, 9, 5, "Restarted the printer, fixed.")
    assert consolidate(vault, ConsolidateRequest(), now=at(3, 4, 0)).proposed == 0
    assert proposed(vault_dir) == []


def test_problems_on_days_consolidated_apart_still_make_a_pattern(
    vault_dir: Path, vault: CoreVault
) -> None:
    problem_day(vault, 1)
    assert consolidate(vault, ConsolidateRequest(), now=at(2, 4, 0)).proposed == 0
    problem_day(vault, 3)
    assert consolidate(vault, ConsolidateRequest(), now=NOW).proposed == 1
    (pattern,) = proposed(vault_dir)
    assert pattern["learned_from"] == [DAY1, DAY3]


def test_approve_makes_a_proposed_pattern_active_and_it_stays_one(
    vault_dir: Path, vault: CoreVault
) -> None:
    problem_day(vault, 1)
    problem_day(vault, 2)
    consolidate(vault, ConsolidateRequest(), now=at(3, 4, 0))
    (pattern,) = proposed(vault_dir)
    decided = approve(vault, pattern["id"][:-2], now=NOW)
    assert (decided.id, decided.status) == (pattern["id"], "active")
    (after,) = proposed(vault_dir)
    assert after["status"] == "active"
    assert after["trigger"] == pattern["trigger"]

    problem_day(vault, 5)
    assert consolidate(vault, ConsolidateRequest(), now=at(6, 4, 0)).proposed == 0
    (still,) = proposed(vault_dir)
    assert still["status"] == "active"


def test_reject_archives_a_pattern_and_it_is_not_proposed_again(
    vault_dir: Path, vault: CoreVault
) -> None:
    problem_day(vault, 1)
    problem_day(vault, 2)
    consolidate(vault, ConsolidateRequest(), now=at(3, 4, 0))
    (pattern,) = proposed(vault_dir)
    decided = reject(vault, pattern["id"], now=NOW)
    assert decided.status == "archived"
    assert decided.path.startswith("archive/procedural/")
    (gone,) = proposed(vault_dir)
    assert gone["path"] == decided.path
    assert gone["status"] == "archived"

    problem_day(vault, 5)
    assert consolidate(vault, ConsolidateRequest(), now=at(6, 4, 0)).proposed == 0
    assert [m["path"] for m in proposed(vault_dir)] == [decided.path]


# -- the command ------------------------------------------------------------------------------


def test_cli_json_is_one_document_and_no_progress_bar_off_a_terminal(
    cli: Cli, vault_dir: Path
) -> None:
    vault = CoreVault.open(vault_dir)
    judged_vault(vault)
    result = cli("consolidate", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert set(doc) >= {"days", "dry_run", "created", "reinforced", "superseded", "proposed"}
    assert [d["day"] for d in doc["days"]] == [DAY3]
    assert doc["dry_run"] is False
    assert doc["superseded"] == 1
    actions = doc["days"][0]["actions"]
    assert {a["action"] for a in actions} >= {"create", "supersede", "reinforce", "summarize"}
    assert "consolidating" not in result.err
    assert "\r" not in result.err and "\x1b" not in result.err
    assert buffer.read_day(vault.root, DAY3).consolidated is not None


def test_cli_dry_run_writes_nothing(cli: Cli, vault_dir: Path) -> None:
    judged_vault(CoreVault.open(vault_dir))
    before = snapshot(vault_dir)
    result = cli("consolidate", "--dry-run")
    assert result.code == 0, result.err
    assert "would be created" in result.out
    assert "Adrian dislikes coffee" in result.out
    assert "dropped   trivia     08:00 Adrian: good morning" in result.out
    assert snapshot(vault_dir) == before


def test_cli_leaves_today_alone_unless_asked(cli: Cli, vault_dir: Path) -> None:
    assert cli("log", "Remember this: the keys are in the drawer.").code == 0
    skipped = cli("consolidate", "--json")
    assert skipped.code == 0, skipped.err
    assert json.loads(skipped.out)["days"] == []
    included = cli("consolidate", "--include-today", "--json")
    assert included.code == 0, included.err
    (day,) = json.loads(included.out)["days"]
    vault = CoreVault.open(vault_dir)
    assert buffer.read_day(vault.root, day["day"]).consolidated is not None


def test_cli_date_and_a_bad_date(cli: Cli, vault_dir: Path) -> None:
    vault = CoreVault.open(vault_dir)
    log(vault, 1, 9, 0, "Remember this: the car is on level 3.")
    log(vault, 2, 9, 0, "Remember this: the keys are in the drawer.")
    result = cli("consolidate", "--date", "2026-03-02", "--json")
    assert result.code == 0, result.err
    assert [d["day"] for d in json.loads(result.out)["days"]] == ["buffer/2026-03-02.md"]
    assert buffer.read_day(vault.root, DAY1).consolidated is None
    bad = cli("consolidate", "--date", "the second of March")
    assert bad.code in (1, 2)
    assert "Traceback" not in bad.err
    assert buffer.read_day(vault.root, DAY1).consolidated is None


def _run_on_terminals(vault_dir: Path, *args: str) -> tuple[int, str, str]:
    """Run kenomem with stdout and stderr each on its own terminal; what each showed."""
    import pty
    import threading

    env = {**os.environ, "KENOMEM_VAULT": str(vault_dir), "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    ends = [pty.openpty(), pty.openpty()]
    shown = [b"", b""]

    def drain(i: int) -> None:
        while True:
            try:
                chunk = os.read(ends[i][0], 65536)
            except OSError:
                return
            if not chunk:
                return
            shown[i] += chunk

    process = subprocess.Popen(
        [sys.executable, "-m", "kenomem", *args],
        stdin=subprocess.DEVNULL,
        stdout=ends[0][1],
        stderr=ends[1][1],
        env=env,
    )
    for _, terminal in ends:
        os.close(terminal)
    readers = [threading.Thread(target=drain, args=(i,)) for i in range(2)]
    for reader in readers:
        reader.start()
    code = process.wait(timeout=120)
    for reader in readers:
        reader.join(timeout=30)
    for controller, _ in ends:
        os.close(controller)
    out, err = (b.decode("utf-8", "replace").replace("\r\n", "\n") for b in shown)
    return code, out, err


def test_a_progress_bar_on_a_terminal_goes_to_stderr(vault_dir: Path) -> None:
    judged_vault(CoreVault.open(vault_dir))
    code, out, err = _run_on_terminals(vault_dir, "consolidate")
    assert code == 0, err
    assert "consolidating" in err
    assert DAY3 in out


def test_no_progress_bar_with_json_even_on_a_terminal(vault_dir: Path) -> None:
    judged_vault(CoreVault.open(vault_dir))
    code, out, err = _run_on_terminals(vault_dir, "consolidate", "--json")
    assert code == 0, err
    assert "consolidating" not in err
    assert json.loads(out)["days"][0]["day"] == DAY3


def test_no_progress_bar_when_stderr_is_not_a_terminal(vault_dir: Path) -> None:
    judged_vault(CoreVault.open(vault_dir))
    env = {**os.environ, "KENOMEM_VAULT": str(vault_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", "consolidate", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["days"][0]["day"] == DAY3
    assert "consolidating" not in done.stderr
    assert "\x1b" not in done.stderr and "\x1b" not in done.stdout
