"""One truth per fact, end to end through the command line: a new value for what an
active fact states supersedes it when the words leave no doubt (`--json` says so,
`--no-supersede` keeps both), and is named with the command that supersedes it when they
do not; a context never gives both sides; `extract` does as `remember` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Cli

# The pairs, and more of the shapes a fact changes by.
CONFLICTS = [
    ("Deploys go out on Tuesdays", "Deploys go out on Wednesdays"),
    ("The standup is at 10:00", "The standup is at 9:30"),
    ("Lives in Porto", "Moved to Madrid"),
    ("The API is owned by Alice", "The API is owned by Bob"),
    ("The backend runs Python 3.10", "The backend runs Python 3.12"),
    ("The staging server is public", "The staging server is not public"),
]
# Pairs that only look alike: each second one is written beside the first.
LOOK_ALIKES = [
    ("Alice owns the API", "Bob owns the billing service"),
    ("Adrian lives in Porto", "Maria lives in Porto"),
    ("The standup is at 9:30", "The retro is at 9:30"),
    ("The standup is at 10:00", "The standup is at 10:00 in room 4"),
    ("Speaks Spanish", "Speaks French"),
    ("The team has 6 engineers", "The team has 2 designers"),
    ("Deploys go out on Tuesdays", "Deploys go out on Tuesdays and Thursdays"),
]


def remember(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("remember", *args, "--json")
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def meta(vault_dir: Path, path: str) -> dict[str, Any]:
    text = (vault_dir / path).read_text(encoding="utf-8")
    found: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    return found


def status(cli: Cli, mem_id: str) -> str:
    shown = cli("show", mem_id, "--json")
    assert shown.code == 0, shown.err
    value: str = json.loads(shown.out)["status"]
    return value


def context(cli: Cli, query: str = "") -> str:
    args = ("context", query) if query else ("context",)
    result = cli(*args, "--no-touch", "--budget", "4000")
    assert result.code == 0, result.err
    return result.out


@pytest.mark.parametrize(("old", "new"), CONFLICTS)
def test_a_new_value_supersedes_the_fact_and_json_says_so(
    cli: Cli, vault_dir: Path, old: str, new: str
) -> None:
    first = remember(cli, old)
    second = remember(cli, new)
    assert second["action"] == "superseded"
    assert second["supersedes"] == first["id"]
    assert [(s["id"], s["title"]) for s in second["superseded"]] == [(first["id"], old)]
    # the chain is kept, both ways, exactly as --supersedes keeps it
    assert meta(vault_dir, second["path"])["supersedes"] == first["id"]
    old_meta = meta(vault_dir, first["path"])
    assert (old_meta["status"], old_meta["superseded_by"]) == ("superseded", second["id"])
    block = context(cli)
    assert new in block and old not in block


def test_the_line_for_people_names_what_was_superseded(cli: Cli) -> None:
    first = remember(cli, "Deploys go out on Tuesdays")
    said = cli("remember", "Deploys go out on Wednesdays")
    assert said.code == 0, said.err
    assert f"supersedes {first['id']} 'Deploys go out on Tuesdays'" in said.out


@pytest.mark.parametrize(("old", "new"), LOOK_ALIKES)
def test_a_pair_that_only_looks_alike_keeps_both(cli: Cli, old: str, new: str) -> None:
    first = remember(cli, old)
    second = remember(cli, new)
    assert second["action"] == "created"
    assert second["superseded"] == [] and second["supersedes"] is None
    assert status(cli, first["id"]) == "active"


def test_no_supersede_keeps_both_active_and_names_the_fact(cli: Cli, vault_dir: Path) -> None:
    first = remember(cli, "Deploys go out on Tuesdays")
    second = remember(cli, "Hotfix deploys go out on Fridays")  # another fact: nothing named
    assert second["may_contradict"] == []
    third = remember(cli, "Deploys go out on Wednesdays", "--no-supersede")
    assert third["action"] == "created" and third["superseded"] == []
    assert status(cli, first["id"]) == "active"
    assert [n["id"] for n in third["may_contradict"]] == [first["id"]]
    assert "contradicts" not in meta(vault_dir, third["path"])  # both stand: none is hidden
    block = context(cli)
    assert "Deploys go out on Tuesdays" in block and "Deploys go out on Wednesdays" in block


def test_an_unsure_conflict_is_named_with_the_command_and_recorded(
    cli: Cli, vault_dir: Path
) -> None:
    first = remember(cli, "The default branch is master")
    said = cli("remember", "The default branch is main")
    assert said.code == 0, said.err
    assert f"may contradict {first['id']}" in said.out
    command = f"kenomem remember 'The default branch is main' --supersedes {first['id']}"
    assert command in said.out
    assert status(cli, first["id"]) == "active"  # not sure: nothing hidden

    doc = json.loads(cli("list", "--json").out)
    (new,) = [m for m in doc["memories"] if m["title"] == "The default branch is main"]
    assert meta(vault_dir, new["path"])["contradicts"] == [first["id"]]
    # context keeps the newer side only, with a query and without
    for block in (context(cli, "default branch"), context(cli)):
        assert "The default branch is main" in block
        assert "The default branch is master" not in block

    # the command named does what it says, and makes no second memory
    ran = remember(cli, "The default branch is main", "--supersedes", first["id"])
    assert (ran["id"], ran["action"], ran["supersedes"]) == (new["id"], "superseded", first["id"])
    assert status(cli, first["id"]) == "superseded"
    titles = [m["title"] for m in json.loads(cli("list", "--json").out)["memories"]]
    assert titles.count("The default branch is main") == 1


def test_the_unsure_json_carries_the_command(cli: Cli) -> None:
    first = remember(cli, "Prefers tea")
    second = remember(cli, "Prefers coffee")
    (named,) = second["may_contradict"]
    assert named["id"] == first["id"] and named["title"] == "Prefers tea"
    assert named["command"] == f"kenomem remember 'Prefers coffee' --supersedes {first['id']}"
    # preferences are recorded and kept apart in context too
    block = context(cli)
    assert "Prefers coffee" in block and "Prefers tea" not in block


def test_a_fact_of_another_chat_is_never_superseded(cli: Cli) -> None:
    shared = remember(cli, "Deploys go out on Tuesdays")
    mine = remember(cli, "Deploys go out on Wednesdays", "--scope", "chat-7")
    assert mine["action"] == "created"
    assert status(cli, shared["id"]) == "active"


def test_extract_supersedes_and_says_so(cli: Cli, vault_dir: Path) -> None:
    first = remember(cli, "The standup is at 10:00")
    reply = "Noted. <memory>The standup is at 9:30</memory>"
    result = cli("extract", "--json", input=reply)
    assert result.code == 0, result.err
    (stored,) = json.loads(result.out)["stored"]
    assert stored["action"] == "superseded"
    assert [s["id"] for s in stored["superseded"]] == [first["id"]]
    assert status(cli, first["id"]) == "superseded"

    said = cli("extract", input="<memory>The default branch is master</memory>")
    assert said.code == 0, said.err
    said = cli("extract", input="<memory>The default branch is main</memory>")
    assert "may contradict" in said.err and "--supersedes" in said.err


def test_extract_no_supersede_keeps_both(cli: Cli) -> None:
    first = remember(cli, "The standup is at 10:00")
    result = cli(
        "extract", "--json", "--no-supersede", input="<memory>The standup is at 9:30</memory>"
    )
    assert result.code == 0, result.err
    (stored,) = json.loads(result.out)["stored"]
    assert stored["action"] == "created" and stored["superseded"] == []
    assert status(cli, first["id"]) == "active"


def test_the_command_named_is_quoted_for_the_shell(cli: Cli) -> None:
    import shlex

    first = remember(cli, "The default branch is master")
    text = "The default branch is `main` $(touch pwned) 'x'"
    second = remember(cli, text)
    (named,) = second["may_contradict"]
    assert shlex.split(named["command"]) == [
        "kenomem",
        "remember",
        text,
        "--supersedes",
        first["id"],
    ]
