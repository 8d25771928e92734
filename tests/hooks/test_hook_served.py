"""`kenomem hook` handed to the watcher's command server: the payload on stdin and the
agent's folders (CLAUDE_CONFIG_DIR) reach the served call, which answers and logs as a
call of its own would."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import SERVED_NOTE, Watch
from tests.hooks.agent import Agent, context_of, entries, project, sample

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="served on Linux only"),
]


@pytest.fixture
def watch(vault_dir: Path, tmp_path: Path) -> Iterator[Watch]:
    running = Watch(vault_dir, tmp_path / "watch.log")
    try:
        yield running
    finally:
        running.stop()


def test_hooks_served_by_the_watcher(watch: Watch, tmp_path: Path, vault_dir: Path) -> None:
    cwd = project(tmp_path / "ferry", origin="git@example.org:harbour/ferry.git")
    agent = Agent(tmp_path / "home", vault_dir, cwd, served=True)
    config = tmp_path / "claude-config"
    agent.transcript = config / "projects" / "-ferry" / "s.jsonl"
    agent.transcript.parent.mkdir(parents=True)
    agent.write()
    env = {"CLAUDE_CONFIG_DIR": str(config)}

    stop = agent.hook(["claude-code", "--verbose"], agent.payload("stop.json"), **env)
    assert stop.returncode == 0 and stop.stdout == ""
    assert SERVED_NOTE in stop.stderr, stop.stderr
    assert [who for who, *_ in entries(vault_dir)] == ["user", "assistant"]

    with open(agent.transcript, "a", encoding="utf-8") as f:
        f.write(sample("more.jsonl", cwd=str(cwd)))
    again = agent.hook(["claude-code", "--verbose"], agent.payload("stop.json"), **env)
    assert SERVED_NOTE in again.stderr
    assert [who for who, *_ in entries(vault_dir)] == ["user", "assistant"] * 2

    prompt = agent.payload("user-prompt-submit.json", prompt="where do ferry timetables come from")
    found = agent.hook(["claude-code", "--verbose"], prompt, **env)
    assert SERVED_NOTE in found.stderr
    assert "harbour office" in context_of(found)

    start = agent.hook(["claude-code", "--verbose"], agent.payload("session-start.json"), **env)
    assert SERVED_NOTE in start.stderr
    assert "Saturday timetable" in context_of(start)  # the project's conversation

    # A refusal served is a refusal: one line, exit 0.
    bad = agent.hook(["claude-code"], json.dumps({"hook_event_name": "Stop", "cwd": "x"}), **env)
    assert (bad.returncode, bad.stdout, bad.stderr.count("\n")) == (0, "", 1)
