"""The agents' transcripts read as turns, projects named, and a turn made a buffer entry."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import InvalidInput, SecretDetected
from kenomem.files.paths import check_label
from kenomem.ingest import transcripts
from kenomem.ingest.transcripts import (
    Turn,
    claude_code_turns,
    codex_turns,
    detect,
    entry_of,
    normalised_remote,
    project_root,
    project_scope,
)

DATA = Path(__file__).parent.parent / "data" / "agents"
HARBOR = "/home/dana/code/harbor"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


def cc_line(text: object, **extra: object) -> str:
    line: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "cwd": HARBOR,
        "sessionId": "s-1",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": "u-1",
        "timestamp": "2025-06-03T09:15:40.512Z",
    }
    line.update(extra)
    return json.dumps(line)


# -- Claude Code -------------------------------------------------------------------------


def test_claude_code_sample_keeps_what_was_said() -> None:
    turns = claude_code_turns(lines("claude-code.jsonl"))
    assert [(t.speaker, t.text.split()[0]) for t in turns] == [
        ("user", "The"),
        ("assistant", "I'll"),
        ("assistant", "The"),
        ("user", "Thanks."),
    ]
    first = turns[0]
    assert first.id == "a7e0c3d1-0000-4000-8000-000000000003"
    assert first.session == "5f1c2a9e-7b3d-4e8a-9c61-2d4f8b0e1a37"
    assert first.at == datetime(2025, 6, 3, 9, 15, 40, tzinfo=UTC)
    assert first.project == HARBOR
    said = " ".join(t.text for t in turns)
    # Thinking, tool calls and results, meta lines, command echoes and sidechains: out.
    for noise in ("Look at the script", "toolu_", "#!/bin/sh", "Caveat", "/clear", "Search the"):
        assert noise not in said


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (cc_line("hi", isMeta=True), "meta"),
        (cc_line("hi", isSidechain=True), "a subagent's"),
        (cc_line("summary of before", isCompactSummary=True), "a compaction summary"),
        (cc_line([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]), "tool noise"),
        (cc_line([{"type": "image", "source": {}}]), "no text"),
        (cc_line("hi", uuid=None), "no id"),
        (cc_line("hi", sessionId=7), "no session"),
        (cc_line("   "), "blank"),
        (cc_line("hi", type="system"), "not a message"),
        ('{"type":"summary","summary":"x","leafUuid":"u"}', "a summary line"),
        ("{not json", "broken"),
        ("[1, 2]", "not an object"),
        ('{"type": "user", "message": "hi"}', "a message that is no object"),
    ],
)
def test_claude_code_lines_that_are_no_turn(line: str, why: str) -> None:
    assert claude_code_turns([line]) == [], why


def test_claude_code_text_blocks_are_paragraphs_and_thinking_is_left_out() -> None:
    content = [
        {"type": "thinking", "thinking": "private"},
        {"type": "text", "text": "One."},
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}},
        {"type": "text", "text": "Two."},
    ]
    line = cc_line(content, type="assistant")
    line = line.replace('"role": "user"', '"role": "assistant"')
    (turn,) = claude_code_turns([line])
    assert (turn.speaker, turn.text) == ("assistant", "One.\n\nTwo.")


def test_claude_code_bad_lines_are_counted_and_the_rest_read() -> None:
    found = list(transcripts.read_claude_code(["{oops", "", cc_line("hello"), "\x00\x00"]))
    assert [(r.line, r.turn is not None, bool(r.reason)) for r in found] == [
        (1, False, True),
        (3, True, False),
        (4, False, True),
    ]


KEYS = "type message content role uuid sessionId timestamp cwd text isMeta isSidechain payload id"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(KEYS.split()),
            inner,
            max_size=6,
        )
    ),
    max_leaves=12,
)
LINES = st.one_of(
    st.text(max_size=60),
    JSON_VALUES.map(lambda v: json.dumps(v)),
    st.builds(
        lambda content, extra: cc_line(content, **extra),
        JSON_VALUES,
        st.dictionaries(
            st.sampled_from(["type", "uuid", "sessionId", "timestamp", "cwd", "isMeta"]),
            JSON_VALUES,
            max_size=3,
        ),
    ),
)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(LINES, max_size=6))
def test_readers_never_raise(found: list[str]) -> None:
    for turn in claude_code_turns(found) + codex_turns(found):
        assert turn.speaker in ("user", "assistant") and turn.text and turn.id
        assert turn.at is None or turn.at.tzinfo is not None
    detect("\n".join(found))


# -- projects ------------------------------------------------------------------------------


def git_repo(folder: Path, origin: str | None = None) -> Path:
    (folder / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if origin is not None:
        config += (
            f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (folder / ".git" / "config").write_text(config)
    return folder


def test_project_is_the_nearest_git_root(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "harbor")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert project_root(str(deep)) == str(repo.resolve())
    assert project_scope(str(deep)) == project_scope(str(repo))
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_root(str(plain)) == str(plain.resolve())
    assert project_scope(str(plain)) != project_scope(str(repo))


def test_scope_is_readable_stable_and_a_valid_label(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "Harbor Deploy")
    scope = project_scope(str(repo))
    assert scope.startswith("Harbor-Deploy-") and len(scope) == len("Harbor-Deploy-") + 6
    assert scope == project_scope(str(repo) + "/")
    assert check_label(scope, "scope") == scope
    for odd in ("", "/", "ünï cödé", "a" * 300, "x\x1by", "-..-"):
        folder = tmp_path / "odd" / (odd or "empty")[:200].replace("/", "_").replace("\x1b", "_")
        folder.mkdir(parents=True, exist_ok=True)
        assert check_label(project_scope(str(folder)), "scope")
    assert check_label(project_scope("/"), "scope")


def test_same_remote_on_two_machines_is_one_project(tmp_path: Path) -> None:
    here = git_repo(tmp_path / "a" / "harbor", "git@github.com:dana/harbor.git")
    there = git_repo(tmp_path / "b" / "checkout", "https://dana:tok@GitHub.com/dana/harbor/")
    other = git_repo(tmp_path / "c" / "harbor", "https://github.com/someone/harbor.git")
    assert project_scope(str(here)) == project_scope(str(there))
    assert project_scope(str(here)).startswith("harbor-")
    assert project_scope(str(other)) != project_scope(str(here))


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("https://github.com/o/r.git", "github.com/o/r"),
        ("https://user:secret@github.com/o/r", "github.com/o/r"),
        ("ssh://git@GitHub.com:22/o/r.git/", "github.com/o/r"),
        ("git@github.com:o/r.git", "github.com/o/r"),
        ("/srv/git/r.git", "/srv/git/r"),
        ("file:///srv/git/r.git", "/srv/git/r"),
    ],
)
def test_remote_normalised(url: str, normal: str) -> None:
    assert normalised_remote(url) == normal


def test_worktree_reads_the_main_repositorys_origin(tmp_path: Path) -> None:
    main = git_repo(tmp_path / "harbor", "https://github.com/dana/harbor")
    admin = main / ".git" / "worktrees" / "feature"
    admin.mkdir(parents=True)
    (admin / "commondir").write_text("../..\n")
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {admin}\n")
    assert project_scope(str(tree)) == project_scope(str(main))


def test_a_fifo_or_a_huge_config_never_blocks(tmp_path: Path) -> None:
    repo = tmp_path / "trap"
    (repo / ".git").mkdir(parents=True)
    os.mkfifo(repo / ".git" / "config")
    assert project_scope(str(repo)).startswith("trap-")  # the path's hash: no remote read
    big = git_repo(tmp_path / "big")
    (big / ".git" / "config").write_text("[core]\n" + "x = y\n" * 200_000)
    assert project_scope(str(big)).startswith("big-")


# -- a turn made an entry --------------------------------------------------------------------


def turn(text: str = "We deploy on Tuesdays", **changes: Any) -> Turn:
    made = Turn("u-1", "s-1", "user", text, datetime(2025, 6, 3, 9, 15, 40, tzinfo=UTC), HARBOR)
    return made._replace(**changes)


def test_entry_of_a_turn() -> None:
    entry = entry_of(turn(), "harbor-afbf40", "claude-code")
    assert (entry.who, entry.session, entry.channel, entry.text) == (
        "user",
        "harbor-afbf40",
        "claude-code",
        "We deploy on Tuesdays",
    )
    assert entry.at == datetime(2025, 6, 3, 9, 15, 40, tzinfo=UTC)


def test_entry_of_refuses_what_must_never_be_logged() -> None:
    with pytest.raises(SecretDetected) as caught:
        entry_of(turn(f"the token is {TOKEN}"), "harbor-afbf40", "claude-code")
    assert TOKEN not in caught.value.message
    for bad in (turn("nul\x00byte"), turn("esc\x1b[2J"), turn(at=None), turn("x" * 100_001)):
        with pytest.raises(InvalidInput):
            entry_of(bad, "harbor-afbf40", "claude-code")
    with pytest.raises(InvalidInput):
        entry_of(turn(speaker="system"), "harbor-afbf40", "claude-code")
    with pytest.raises(InvalidInput):
        entry_of(turn(), "bad\nscope", "claude-code")


# -- telling the formats apart -----------------------------------------------------------------


def test_each_sample_is_told_by_content() -> None:
    kinds = {
        "claude-code.jsonl": "claude-code",
        "codex-rollout.jsonl": "codex",
        "chatgpt-conversations.json": "chatgpt",
        "claude-ai-conversations.json": "claude-ai",
    }
    for name, kind in kinds.items():
        assert detect((DATA / name).read_text()) == kind, name
    for other in ('{"role": "user", "content": "hi"}', "[]", '[{"mapping": 1}]', "", "x"):
        assert detect(other) == ""


def test_a_resumed_claude_code_session_starts_with_summaries() -> None:
    summaries = [
        json.dumps({"type": "summary", "summary": f"s{i}", "leafUuid": f"l{i}"}) for i in range(30)
    ]
    said = json.dumps(json.loads(cc_line("said\u2028across a line separator")), ensure_ascii=False)
    assert "\u2028" in said  # as Claude Code writes it: not escaped
    text = "\n".join([*summaries, said])
    assert detect(text) == "claude-code"
    found = transcripts.read(text)
    assert found is not None
    (read,) = found.found
    assert read.turn is not None and read.turn.text == "said\u2028across a line separator"


def test_an_older_codex_session() -> None:
    lines = [
        json.dumps({"id": "old-1", "timestamp": "2025-04-16T17:02:11.000Z", "instructions": ""}),
        json.dumps({"record_type": "state"}),
        json.dumps(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Rename the cli flag"}],
            }
        ),
        json.dumps({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}),
        json.dumps(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Renamed it to --out."}],
            }
        ),
    ]
    assert detect("\n".join(lines)) == "codex"
    turns = codex_turns(lines)
    assert [(t.id, t.speaker, t.text) for t in turns] == [
        ("old-1:3", "user", "Rename the cli flag"),
        ("old-1:5", "assistant", "Renamed it to --out."),
    ]
    assert {t.at for t in turns} == {datetime(2025, 4, 16, 17, 2, 11, tzinfo=UTC)}


def test_chatgpt_follows_the_branch_last_seen() -> None:
    found = transcripts.read((DATA / "chatgpt-conversations.json").read_text())
    assert found is not None
    turns = [r.turn for r in found.found if r.turn is not None]
    assert [t.id for t in turns] == ["u-new", "a-new", "u-3", "a-3", "q2", "a2"]
    assert turns[3].at == turns[2].at  # no time of its own: the message before it's
