"""The sleep cycle keeps chats apart (an episode drawn from chat X's entries is scoped to
X, each chat gets its own day summary, facts stay global), with the heuristics and with
an LLM; and a day consolidated early is finished, once, for the entries logged after."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files import buffer
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault
from tests.conftest import Cli
from tests.sleep.helpers import Fake, assert_same_vault, failing_after, memories, of, snapshot

NOW = datetime(2026, 3, 4, 4, 0, tzinfo=UTC)
DAY3 = "buffer/2026-03-03.md"
DAY4 = "buffer/2026-03-04.md"

# (minute, session, text): two chats and an entry of no chat, on 2026-03-03 at 9:MM.
CHATS = [
    (0, "chat-A", "Remember this: the Falcon launch code word is BLUEBIRD."),
    (5, "chat-A", "Remember this: the Falcon review moved to the Orion room."),
    (10, "chat-B", "Remember this: Priya's surprise party is on Saturday."),
    (15, "chat-B", "ok thanks"),
    (20, "chat-B", "I live in Lisbon."),
    (25, "", "Remember this: the office wifi password changes on Monday."),
]
SECRET_OF = {"chat-A": ("Falcon", "BLUEBIRD", "Orion"), "chat-B": ("Priya",), "": ("wifi",)}


def at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC)


def chats(vault: CoreVault) -> None:
    for minute, session, text in CHATS:
        request = LogRequest(text, who="Adrian", session=session or None, at=at(3, 9, minute))
        log_entry(vault, request)


def scope_of(session: str) -> str:
    return session or "global"


def assert_chats_kept_apart(vault_dir: Path) -> None:
    episodes = [m for m in of(vault_dir, type="episodic") if "summary" not in m["tags"]]
    for m in episodes:
        (session,) = [s for _, s, text in CHATS if f"Adrian: {text}" == m["body"]]
        assert m["scope"] == scope_of(session)
    summaries = {m["scope"]: m for m in of(vault_dir, type="episodic") if "summary" in m["tags"]}
    assert set(summaries) == {"global", "chat-A", "chat-B"}
    for scope, summary in summaries.items():
        others = [w for s, words in SECRET_OF.items() if scope_of(s) != scope for w in words]
        assert not [w for w in others if w in summary["body"] + summary["title"]], scope
    assert summaries["chat-A"]["title"] == "Day summary 2026-03-03 (chat chat-A)"
    assert summaries["global"]["title"] == "Day summary 2026-03-03"
    assert "BLUEBIRD" in summaries["chat-A"]["body"]
    assert summaries["chat-B"]["body"].endswith("\n3 entries, 1 trivia.")
    # What a person says about themselves holds in every chat.
    (lisbon,) = of(vault_dir, title="Adrian lives in Lisbon")
    assert lisbon["scope"] == "global"


def test_each_chat_keeps_its_episodes_and_gets_its_own_summary(
    vault_dir: Path, vault: CoreVault
) -> None:
    chats(vault)
    before = snapshot(vault_dir)
    (planned,) = consolidate(vault, ConsolidateRequest(dry_run=True), now=NOW).days
    assert snapshot(vault_dir) == before
    scopes = {(a.action, a.scope) for a in planned.actions}
    assert scopes == {
        ("create", "chat-A"),
        ("create", "chat-B"),
        ("create", "global"),  # the entry of no chat, and the fact
        ("summarize", "global"),
        ("summarize", "chat-A"),
        ("summarize", "chat-B"),
    }
    for action in planned.actions:
        assert action.memory is not None and action.memory.scope == action.scope

    (done,) = consolidate(vault, ConsolidateRequest(), now=NOW).days
    assert [(a.action, a.id, a.scope) for a in done.actions] == [
        (a.action, a.id, a.scope) for a in planned.actions
    ]
    assert_chats_kept_apart(vault_dir)

    after = snapshot(vault_dir)
    assert consolidate(vault, ConsolidateRequest(), now=NOW).days == []
    (again,) = consolidate(vault, ConsolidateRequest(date=at(3, 0, 0)), now=NOW).days
    assert again.actions == done.actions
    assert snapshot(vault_dir) == after


def test_the_llm_is_asked_about_each_chat_alone_and_never_gives_the_scope(
    tmp_path: Path, vault_dir: Path, vault: CoreVault
) -> None:
    chats(vault)
    fake = Fake(tmp_path / "fake")
    answer = {
        "episodes": [{"entry": 1, "importance": 7, "title": "The first thing", "scope": "chat-B"}],
        "facts": [],
        "patterns": [],
        "summary": "A short day.",
        "scope": "global",
    }
    fake.answer(json.dumps(answer))
    warnings: list[str] = []
    request = ConsolidateRequest(llm=fake.command)
    (day,) = consolidate(vault, request, now=NOW, warn=warnings.append).days
    assert (warnings, day.method, fake.runs) == ([], "llm", 3)  # global, chat-A, chat-B
    assert "Priya" in fake.prompt and not {"Falcon", "wifi"} & set(fake.prompt.split())
    firsts = {"chat-A": CHATS[0][2], "chat-B": CHATS[2][2], "global": CHATS[5][2]}
    episodes = [m for m in of(vault_dir, type="episodic") if "summary" not in m["tags"]]
    # The episodes the model picked, and every other entry but trivia, in its own chat.
    assert {(m["scope"], m["body"]) for m in episodes} == {
        (scope_of(s), f"Adrian: {text}") for _, s, text in CHATS if text != "ok thanks"
    }
    picked = {m["scope"]: m["body"] for m in episodes if m["title"] == "The first thing"}
    assert picked == {scope: f"Adrian: {text}" for scope, text in firsts.items()}
    summaries = {m["scope"]: m for m in of(vault_dir, type="episodic") if "summary" in m["tags"]}
    assert set(summaries) == set(firsts)
    for scope, summary in summaries.items():
        assert summary["body"].startswith("A short day.")
        others = [w for s, words in SECRET_OF.items() if scope_of(s) != scope for w in words]
        assert not [w for w in others if w in summary["body"]]


def test_a_chat_the_llm_cannot_answer_for_sends_the_day_to_the_heuristics(
    tmp_path: Path, vault_dir: Path, vault: CoreVault
) -> None:
    chats(vault)
    fake = Fake(tmp_path / "fake")
    fake.answer(json.dumps({"episodes": [{"entry": 3, "importance": 7}]}))  # chat-B has 3
    warnings: list[str] = []
    request = ConsolidateRequest(llm=fake.command)
    (day,) = consolidate(vault, request, now=NOW, warn=warnings.append).days
    assert day.method == "heuristics" and len(warnings) == 1
    assert_chats_kept_apart(vault_dir)


# -- a day consolidated early -----------------------------------------------------------------

EARLY = [
    (9, 0, "Remember this: the car is parked on level 3."),
    (10, 0, "hello"),
]
LATER = [
    (15, 0, "Remember this: the keys are in the drawer."),
    (15, 5, "ok thanks"),
]


def early_then_later(vault: CoreVault) -> None:
    """Today's entries consolidated at noon (`--include-today`), then more logged."""
    for hour, minute, text in EARLY:
        log_entry(vault, LogRequest(text, who="Adrian", session="s1", at=at(4, hour, minute)))
    (first,) = consolidate(vault, ConsolidateRequest(include_today=True), now=at(4, 12, 0)).days
    assert (first.day, first.entries) == (DAY4, 2)
    for hour, minute, text in LATER:
        log_entry(vault, LogRequest(text, who="Adrian", session="s1", at=at(4, hour, minute)))


def bodies(vault_dir: Path, text: str) -> list[str]:
    return [m["id"] for m in memories(vault_dir) if m["body"] == f"Adrian: {text}"]


def test_entries_logged_after_an_early_consolidation_are_consolidated_once(
    vault_dir: Path, vault: CoreVault
) -> None:
    early_then_later(vault)
    # Today is still left alone by a plain run.
    assert consolidate(vault, ConsolidateRequest(), now=at(4, 16, 0)).days == []
    night = at(5, 4, 0)
    before = snapshot(vault_dir)
    (planned,) = consolidate(vault, ConsolidateRequest(dry_run=True), now=night).days
    assert snapshot(vault_dir) == before
    assert (planned.entries, planned.trivia, planned.upto) == (2, 1, 4)
    assert [(a.action, a.title) for a in planned.actions] == [
        ("create", "Remember this: the keys are in the drawer"),
        ("summarize", "Day summary 2026-03-04 (chat s1), from 15:00"),
    ]

    (done,) = consolidate(vault, ConsolidateRequest(), now=night).days
    assert done.actions == planned.actions
    day = buffer.read_day(vault.root, DAY4)
    assert (day.consolidated, day.done, day.pending) == (night, 4, [])
    assert len(bodies(vault_dir, LATER[0][2])) == 1
    assert len(bodies(vault_dir, EARLY[0][2])) == 1
    summaries = [m for m in of(vault_dir, type="episodic") if "summary" in m["tags"]]
    assert sorted(m["title"] for m in summaries) == [
        "Day summary 2026-03-04 (chat s1)",
        "Day summary 2026-03-04 (chat s1), from 15:00",
    ]
    later = next(m for m in summaries if "15:00" in m["title"])
    assert "level 3" not in later["body"] and "drawer" in later["body"]

    after = snapshot(vault_dir)
    assert consolidate(vault, ConsolidateRequest(), now=night).days == []
    assert consolidate(vault, ConsolidateRequest(include_today=True), now=night).days == []
    assert snapshot(vault_dir) == after


def test_a_day_consolidated_early_twice_the_same_day_takes_each_entry_once(
    vault_dir: Path, vault: CoreVault
) -> None:
    early_then_later(vault)
    (second,) = consolidate(vault, ConsolidateRequest(include_today=True), now=at(4, 16, 0)).days
    assert (second.entries, second.upto) == (2, 4)
    assert buffer.read_day(vault.root, DAY4).done == 4
    assert consolidate(vault, ConsolidateRequest(include_today=True), now=at(4, 17, 0)).days == []
    assert len(bodies(vault_dir, LATER[0][2])) == 1


@pytest.mark.parametrize(("name", "calls"), [("create", 0), ("create", 1), ("update_keys", 0)])
def test_an_interrupted_later_part_then_a_rerun_ends_as_one_clean_run(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    vault_dir: Path,
    vault: CoreVault,
    name: str,
    calls: int,
) -> None:
    early_then_later(vault)
    clean = tmp_path / "clean"
    shutil.copytree(vault_dir, clean, ignore=shutil.ignore_patterns(".kenomem"))
    consolidate(CoreVault.open(clean), ConsolidateRequest(), now=at(5, 4, 0))
    with monkeypatch.context() as patch:
        failing_after(patch, name, calls)
        with pytest.raises(OSError, match="disk on fire"):
            consolidate(vault, ConsolidateRequest(), now=at(5, 4, 0))
    assert buffer.read_day(vault.root, DAY4).done == 2
    consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=at(5, 4, 0))
    assert_same_vault(vault_dir, clean)


def test_a_day_marked_early_by_an_older_version_is_finished(
    vault_dir: Path, vault: CoreVault
) -> None:
    """A day marked with its time alone (no count), then logged to: the entries after the
    mark are consolidated, those before it are not done again."""
    early_then_later(vault)
    path = vault_dir / DAY4
    path.write_text(
        path.read_text("utf-8").replace("consolidated_entries: 2\n", "", 1), encoding="utf-8"
    )
    assert buffer.read_day(vault.root, DAY4).done == 2
    (done,) = consolidate(vault, ConsolidateRequest(), now=at(5, 4, 0)).days
    assert done.entries == 2
    assert len(bodies(vault_dir, LATER[0][2])) == 1
    assert len(bodies(vault_dir, EARLY[0][2])) == 1


def test_cli_consolidates_the_later_entries_of_a_day_done_early(
    cli: Cli, vault_dir: Path, vault: CoreVault
) -> None:
    early_then_later(vault)
    planned = json.loads(cli("consolidate", "--dry-run", "--include-today", "--json").out)
    (day,) = planned["days"]
    assert (day["day"], day["entries"]) == (DAY4, 2)
    assert [a["scope"] for a in day["actions"]] == ["s1", "s1"]
    done = json.loads(cli("consolidate", "--include-today", "--json").out)
    assert [d["day"] for d in done["days"]] == [DAY4]
    assert len(bodies(vault_dir, LATER[0][2])) == 1
    again = cli("consolidate", "--include-today")
    assert again.code == 0 and "nothing to consolidate" in again.err


def test_a_hand_written_session_that_is_no_label_is_still_a_chat_of_its_own(
    vault_dir: Path, vault: CoreVault
) -> None:
    text = "Remember this: the vault key is under the mat."
    (vault_dir / "buffer").mkdir(exist_ok=True)
    (vault_dir / DAY3).write_text(
        "---\ndate: 2026-03-03\nconsolidated: null\n---\n\n"
        f"## 09:00:00 Adrian @bad%0Achat\n{text}\n",
        encoding="utf-8",
    )
    (day,) = consolidate(vault, ConsolidateRequest(), now=NOW).days
    scopes = {a.scope for a in day.actions}
    assert len(scopes) == 1 and scopes != {"global"}
    (scope,) = scopes
    assert scope.startswith("chat-") and "\n" not in scope
    assert {m["scope"] for m in of(vault_dir, type="episodic")} == {scope}
