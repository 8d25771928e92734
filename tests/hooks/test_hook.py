"""`kenomem hook claude-code EVENT` as Claude Code runs it: a real process, the recorded
payload on stdin, the agent's environment, a real vault. What each event adds to the
model's context, what is logged from the transcript (each turn once, however often and
however many at once), and projects kept apart."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kenomem.files.buffer import read_day
from tests.cli.helpers import console_script
from tests.hooks.agent import Agent, context_of, entries, project, sample

CHANNEL = "claude-code"
TURNS = [
    (
        "user",
        "The ferry timetable parser drops the last sailing of the day. The timetables always "
        "come from the harbour office as CSV.",
    ),
    ("assistant", "The loop in parse.py skips the last row"),
]
MORE = [
    ("user", "Good. Add a test with the Saturday timetable too."),
    ("assistant", "Added test_saturday_timetable, which checks that the 23:40 sailing is kept."),
]


@pytest.fixture
def agent(tmp_path: Path, vault_dir: Path) -> Agent:
    cwd = project(tmp_path / "src" / "ferry", origin="git@example.org:harbour/ferry.git")
    return Agent(tmp_path / "home", vault_dir, cwd)


def said(vault: Path) -> list[tuple[str, str]]:
    """(who, the start of the text) of every entry, checked to be the agent's."""
    found = []
    for who, session, channel, text in entries(vault):
        assert channel == CHANNEL
        assert session.startswith("ferry-"), session  # the project's scope
        found.append((who, text))
    return found


def starts(found: list[tuple[str, str]], expected: list[tuple[str, str]]) -> bool:
    return len(found) == len(expected) and all(
        who == w and text.startswith(t) for (who, text), (w, t) in zip(found, expected, strict=True)
    )


def test_stop_logs_the_turns_once_without_tool_noise_and_stores_the_tags(
    agent: Agent, vault_dir: Path
) -> None:
    agent.write()
    done = agent.event("stop.json")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # The person's words and the agent's answer; no thinking, tool call, tool result or
    # subagent's turn.
    assert starts(said(vault_dir), TURNS)
    # The answer's tags: a global fact, and an episode of this project's alone.
    facts = list((vault_dir / "semantic").rglob("*.md"))
    assert any("harbour office as CSV" in p.read_text() for p in facts)
    episodes = [p.read_text() for p in (vault_dir / "episodic").rglob("*.md")]
    assert any("rows[:-1]" in text and "scope: ferry-" in text for text in episodes)
    # Again, and at the other events that read the transcript: nothing more.
    for name in ("stop.json", "pre-compact.json", "session-end.json"):
        again = agent.event(name)
        assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert starts(said(vault_dir), TURNS)
    assert len(list((vault_dir / "semantic").rglob("*.md"))) == len(facts)


def test_a_transcript_that_grows_is_read_from_where_the_last_call_stopped(
    agent: Agent, vault_dir: Path
) -> None:
    agent.write()
    assert agent.event("stop.json").returncode == 0
    more = sample("more.jsonl", cwd=str(agent.cwd))
    first, second = more.splitlines(keepends=True)
    with open(agent.transcript, "a", encoding="utf-8") as f:
        f.write(first + second[:40])  # the second line is still being written
    assert agent.event("stop.json").returncode == 0
    assert starts(said(vault_dir), [*TURNS, MORE[0]])
    with open(agent.transcript, "a", encoding="utf-8") as f:
        f.write(second[40:])
    assert agent.event("stop.json", "SubagentStop").returncode == 0
    assert starts(said(vault_dir), [*TURNS, *MORE])


def test_a_transcript_replaced_or_cut_is_read_again_and_logs_nothing_twice(
    agent: Agent, vault_dir: Path
) -> None:
    agent.write()
    assert agent.event("stop.json").returncode == 0
    first = sample("session.jsonl", cwd=str(agent.cwd))
    more = sample("more.jsonl", cwd=str(agent.cwd))
    # Replaced by another file (another inode), its lines in another order: the offset
    # kept would land inside a line of it.
    replacement = agent.transcript.with_suffix(".new")
    replacement.write_text(more + first)
    replacement.replace(agent.transcript)
    assert agent.event("stop.json").returncode == 0
    assert starts(said(vault_dir), [*TURNS, *MORE])
    # Cut short in place (a rewrite shorter than what was read) with one turn more.
    line = json.loads(more.splitlines()[0])
    line.update(uuid="0b6f2c11-0000-4000-8000-000000000009", timestamp="2026-11-26T08:09:00Z")
    line["message"]["content"] = "Ship it on Monday."
    agent.transcript.write_text(json.dumps(line) + "\n")
    assert agent.event("stop.json").returncode == 0
    assert starts(said(vault_dir), [*TURNS, *MORE, ("user", "Ship it on Monday.")])


@pytest.mark.slow
def test_hooks_at_once_on_one_transcript_log_each_turn_once(agent: Agent, vault_dir: Path) -> None:
    agent.write()
    agent.write("more.jsonl", append=True)
    payload = agent.payload("stop.json")
    running = [agent.start(["claude-code"], payload) for _ in range(6)]
    for process in running:
        out, err = process.communicate(timeout=60)
        assert (process.returncode, out, err) == (0, b"", b"")
    assert starts(said(vault_dir), [*TURNS, *MORE])
    facts = [p for p in (vault_dir / "semantic").rglob("*.md") if "harbour office" in p.read_text()]
    assert len(facts) == 1


def test_an_import_of_the_transcript_after_the_hook_adds_nothing(
    agent: Agent, vault_dir: Path
) -> None:
    agent.write()
    assert agent.event("stop.json").returncode == 0
    before = entries(vault_dir)
    imported = subprocess.run(
        [console_script(), "import", str(agent.transcript), "--as", "buffer"],
        env=agent.env(),
        cwd=agent.cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr
    assert entries(vault_dir) == before


def test_session_start_gives_the_projects_block_and_never_another_projects(
    tmp_path: Path, vault_dir: Path
) -> None:
    home = tmp_path / "home"
    ferry = Agent(
        home, vault_dir, project(tmp_path / "ferry", origin="https://example.org/harbour/ferry")
    )
    tides = Agent(home, vault_dir, project(tmp_path / "tides"))  # no remote: its own path
    ferry.write()
    assert ferry.event("stop.json").returncode == 0
    block = context_of(ferry.event("session-start.json"))
    assert "rows[:-1]" in block  # the project's episode, or its turns
    assert "drops the last sailing" in block  # the project's conversation
    other = context_of(tides.event("session-start.json"))
    assert "rows[:-1]" not in other
    assert "drops the last sailing" not in other
    assert "Foundation" in other  # what is global reaches every project


def test_the_same_repository_anywhere_is_one_project(tmp_path: Path, vault_dir: Path) -> None:
    home = tmp_path / "home"
    here = Agent(
        home,
        vault_dir,
        project(tmp_path / "a" / "ferry", origin="git@example.org:harbour/ferry.git"),
    )
    there = Agent(
        home,
        vault_dir,
        project(tmp_path / "b" / "ferry2", origin="https://u:pw@example.org/harbour/ferry"),
    )
    here.write()
    assert here.event("stop.json").returncode == 0
    assert "drops the last sailing" in context_of(there.event("session-start.json"))


def test_a_prompt_brings_back_what_it_recalls_and_nothing_when_nothing_matches(
    agent: Agent, vault_dir: Path
) -> None:
    agent.write()
    assert agent.event("stop.json").returncode == 0
    found = agent.event(
        "user-prompt-submit.json", prompt="where do the ferry timetables come from?"
    )
    assert found.returncode == 0 and found.stderr == ""
    text = context_of(found)
    assert "harbour office" in text
    assert len(text) <= 300 * 4 + 100  # hooks.prompt_budget tokens, estimated
    # A pattern whose trigger the prompt holds comes first, as what to do.
    told = subprocess.run(
        [
            console_script(),
            "remember",
            "Stop the local Postgres first",
            "--trigger",
            "docker + port",
        ],
        env=agent.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert told.returncode == 0, told.stderr
    prompt = "docker says the port 5432 is taken again"
    lines = context_of(agent.event("user-prompt-submit.json", prompt=prompt)).splitlines()
    assert lines[1] == "- When docker + port: Stop the local Postgres first", lines
    nothing = agent.event("user-prompt-submit.json", prompt="zebra quokka")
    assert (nothing.returncode, nothing.stdout, nothing.stderr) == (0, "", "")
    # The prompt itself is logged from the transcript, not by the prompt's hook.
    assert not any("where do the ferry" in text for *_, text in entries(vault_dir))


def test_each_event_can_be_turned_off(agent: Agent, vault_dir: Path) -> None:
    agent.write()
    off = {"KENOMEM_HOOKS_CAPTURE": "false", "KENOMEM_HOOKS_SESSION_START": "false"}
    done = agent.hook(["claude-code"], agent.payload("stop.json"), **off)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert entries(vault_dir) == []
    start = agent.hook(["claude-code"], agent.payload("session-start.json"), **off)
    assert (start.returncode, start.stdout) == (0, "")


def test_the_event_named_on_the_line_wins_over_the_payloads(agent: Agent, vault_dir: Path) -> None:
    agent.write()
    payload = json.loads(agent.payload("stop.json"))
    del payload["hook_event_name"]
    refused = agent.hook(["claude-code"], json.dumps(payload))
    assert refused.returncode == 0 and refused.stderr.count("\n") == 1
    assert entries(vault_dir) == []
    assert agent.hook(["claude-code", "Stop"], json.dumps(payload)).returncode == 0
    assert starts(said(vault_dir), TURNS)


def test_a_turn_holding_a_secret_is_never_logged(agent: Agent, vault_dir: Path) -> None:
    token = "ghp_" + "R7xK2mQ9vL4nT8wZ1pB6cY3dF5hJ0sA2eG7u"
    line = json.loads(sample("more.jsonl", cwd=str(agent.cwd)).splitlines()[0])
    line["message"]["content"] = f"The deploy token is {token}, use it."
    agent.write()
    with open(agent.transcript, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    done = agent.event("stop.json")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "secret" in done.stderr and token not in done.stderr
    assert starts(said(vault_dir), TURNS)
    everything = b"".join(p.read_bytes() for p in vault_dir.rglob("*") if p.is_file())
    assert token.encode() not in everything


def test_a_locked_vault_adds_nothing_and_the_next_call_catches_up(
    agent: Agent, vault_dir: Path
) -> None:
    from kenomem.files.lock import VaultLock
    from kenomem.files.paths import state_dir

    agent.write()
    lock = VaultLock(state_dir(vault_dir), 5)
    with lock:
        done = agent.hook(
            ["claude-code"], agent.payload("stop.json"), KENOMEM_HOOKS_LOCK_SECONDS="0.2"
        )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.count("\n") == 1 and "busy" in done.stderr
    assert entries(vault_dir) == []
    assert agent.event("stop.json").returncode == 0
    assert starts(said(vault_dir), TURNS)


def test_codex_notify_logs_the_sessions_rollout(tmp_path: Path, vault_dir: Path) -> None:
    cwd = project(tmp_path / "tides", origin="git@example.org:harbour/tides.git")
    agent = Agent(tmp_path / "home", vault_dir, cwd)
    codex_home = tmp_path / "codex"
    day = codex_home / "sessions" / "2026" / "11" / "26"
    day.mkdir(parents=True)
    thread = "5a0e7c3b-2f41-4d8e-9b16-7e2c1d0a9f34"
    rollout = day / f"rollout-2026-11-26T10-00-00-{thread}.jsonl"
    rollout.write_text(sample("codex-rollout.jsonl", cwd=str(cwd)))
    notice = sample("codex-notify.json", cwd=str(cwd))
    for _ in range(2):  # Codex's notify passes its JSON as the last argument
        done = agent.hook(["codex", "notify", notice], CODEX_HOME=str(codex_home))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    logged = entries(vault_dir)
    assert [(who, channel) for who, _s, channel, _t in logged] == [
        ("user", "codex"),
        ("assistant", "codex"),
    ]
    assert logged[0][3].startswith("Why does the tide table")
    assert all(session.startswith("tides-") for _w, session, _c, _t in logged)


def test_the_buffer_day_is_the_turns_own(agent: Agent, vault_dir: Path) -> None:
    agent.write()
    assert agent.event("stop.json").returncode == 0
    day = read_day(vault_dir, "buffer/2026-11-26.md")
    assert [e.at.strftime("%H:%M:%S") for e in day.entries] == ["08:02:11", "08:02:19"]
