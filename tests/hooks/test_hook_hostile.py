"""A hook's payload is a stranger's: whatever it holds, `kenomem hook` exits 0 with one
line on stderr, prints nothing for the model, and changes nothing in the vault; a
transcript is read only from the agent's folder of transcripts, never through a link,
never a pipe or a device."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.errors import InvalidInput
from kenomem.hooks import payload
from tests.helpers import vault_files
from tests.hooks.agent import Agent, project, sample


@pytest.fixture
def agent(tmp_path: Path, vault_dir: Path) -> Agent:
    cwd = project(tmp_path / "ferry", origin="git@example.org:harbour/ferry.git")
    made = Agent(tmp_path / "home", vault_dir, cwd)
    made.write()
    return made


def refused(agent: Agent, args: list[str], stdin: str | bytes, **extra: str) -> str:
    """Run the hook; check it refused quietly with nothing changed; its stderr line."""
    before = vault_files(agent.vault)
    done = agent.hook(args, stdin, **extra)
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kenomem hook: "), done.stderr
    assert vault_files(agent.vault) == before
    return done.stderr


def stop_at(agent: Agent, path: str) -> str:
    document = json.loads(agent.payload("stop.json"))
    document["transcript_path"] = path
    return json.dumps(document)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stdin", "why"),
    [
        (b"{not json", "not a JSON document"),
        (b'{"hook_event_name": "Stop", "cwd": "/tmp\x00"}', "NUL"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b"\xff\xfe{}", "not a JSON document"),
        (b'{"hook_event_name": "PreToolUse"}', "not an event"),
        (b'{"hook_event_name": "Stop"}', "no transcript_path"),
        (b"[" * 100_000 + b"]" * 100_000, "not a JSON"),
        (b'{"prompt": "' + b"x" * (payload.MAX_PAYLOAD + 10) + b'"}', "over 4 MiB"),
    ],
    ids=["broken", "nul", "array", "not-utf8", "other-event", "no-path", "deep", "huge"],
)
def test_a_bad_payload_is_refused_with_one_line(agent: Agent, stdin: bytes, why: str) -> None:
    assert why in refused(agent, ["claude-code"], stdin)


@pytest.mark.slow
def test_a_transcript_outside_the_agents_folder_is_never_read(agent: Agent, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(sample("session.jsonl", cwd=str(agent.cwd)))
    projects = agent.home / ".claude" / "projects"
    link = projects / "-link" / "s.jsonl"
    link.parent.mkdir()
    link.symlink_to(outside)
    folder_link = projects / "-folder-link"
    folder_link.symlink_to(tmp_path)
    fifo = projects / "-pipe" / "s.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    for path, why in [
        (str(outside), "not in claude-code's folder"),
        (str(projects / ".." / ".." / "elsewhere.jsonl"), "not in claude-code's folder"),
        ("relative/s.jsonl", "not an absolute path"),
        (str(link), "link"),
        (str(folder_link / "elsewhere.jsonl"), "link"),
        (str(fifo), "not a regular file"),
        (str(projects), "not in claude-code's folder"),
        (str(fifo.parent), "not a regular file"),
        (str(projects / "-nothing" / "s.jsonl"), "cannot read"),
    ]:
        assert why in refused(agent, ["claude-code"], stop_at(agent, path)), path


@pytest.mark.slow
def test_claude_config_dir_names_the_folder_of_transcripts(
    agent: Agent, tmp_path: Path, vault_dir: Path
) -> None:
    config = tmp_path / "claude-config"
    moved = config / "projects" / "-ferry" / "s.jsonl"
    moved.parent.mkdir(parents=True)
    moved.write_text(sample("session.jsonl", cwd=str(agent.cwd)))
    done = agent.hook(["claude-code"], stop_at(agent, str(moved)), CLAUDE_CONFIG_DIR=str(config))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert any("ferry timetable" in p.read_text() for p in (vault_dir / "buffer").glob("*.md"))


@pytest.mark.slow
def test_a_line_longer_than_a_read_is_skipped_and_the_rest_logged(
    agent: Agent, vault_dir: Path
) -> None:
    from kenomem.hooks.transcript import MAX_READ

    huge = json.loads(sample("more.jsonl", cwd=str(agent.cwd)).splitlines()[0])
    huge["message"]["content"] = "tide " * (MAX_READ // 4)
    with open(agent.transcript, "w", encoding="utf-8") as f:
        f.write(json.dumps(huge) + "\n")
        f.write(sample("more.jsonl", cwd=str(agent.cwd)))
    for _ in range(3):  # one read of the long line's start, one of its end and the rest
        done = agent.event("stop.json")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    days = "".join(p.read_text() for p in (vault_dir / "buffer").glob("*.md"))
    assert "Saturday timetable" in days and "23:40 sailing" in days
    assert "tide tide" not in days


@pytest.mark.slow
def test_a_secret_in_the_prompt_is_not_searched_for(agent: Agent) -> None:
    secret = "sk-ant-" + "api03-" + "Xq7" * 20
    why = refused(
        agent, ["claude-code"], agent.payload("user-prompt-submit.json", prompt=f"use {secret}")
    )
    assert "secret" in why and secret not in why


@pytest.mark.slow
def test_no_vault_or_an_unknown_agent_is_one_line(agent: Agent, tmp_path: Path) -> None:
    assert "vault" in refused(
        agent, ["claude-code"], agent.payload("stop.json"), KENOMEM_VAULT=str(tmp_path / "none")
    )
    assert "unknown agent" in refused(agent, ["cursor"], agent.payload("stop.json"))


@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "replace")))
def test_reading_a_payload_refuses_or_gives_a_payload(data: bytes) -> None:
    for agent in payload.AGENTS:
        try:
            read = payload.read(agent, None if agent == "claude-code" else "notify", data)
        except InvalidInput:
            continue
        assert all(isinstance(value, str) for value in read)
