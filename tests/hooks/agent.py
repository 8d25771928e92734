"""An agent, played as it runs `kenomem hook`: a home with its folder of transcripts, a
project (a folder with a `.git` and an `origin`), a transcript made from the recorded
samples of tests/data/agents/hooks/, and the hook run as a real process with its JSON
on stdin and the agent's environment variables.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from kenomem.cli.served import client as forkclient
from kenomem.files.buffer import parse_day
from tests.cli.helpers import console_script

DATA = Path(__file__).resolve().parent.parent / "data" / "agents" / "hooks"
SESSION = "7c2d9e41-5a3b-4f10-8e77-3b9a0c4d2e15"


def sample(name: str, **values: str) -> str:
    """A recorded sample with its placeholders (`@CWD@`...) filled in."""
    text = (DATA / name).read_text(encoding="utf-8")
    for key, value in values.items():
        # Filled as JSON strings are: a value with a quote or a backslash stays JSON.
        text = text.replace(f"@{key.upper()}@", json.dumps(value)[1:-1])
    return text


def project(where: Path, origin: str = "") -> Path:
    """A project folder: a git repository, with an `origin` remote when given."""
    (where / ".git").mkdir(parents=True)
    config = "[core]\n\trepositoryformatversion = 0\n"
    if origin:
        config += (
            f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (where / ".git" / "config").write_text(config, encoding="utf-8")
    return where


class Agent:
    """Claude Code (or Codex) working in `cwd`, writing its transcript under `home`."""

    def __init__(self, home: Path, vault: Path, cwd: Path, *, served: bool = False) -> None:
        self.home = home
        self.vault = vault
        self.cwd = cwd
        self.served = served
        folder = "-" + str(cwd).strip("/").replace("/", "-")
        self.transcript = home / ".claude" / "projects" / folder / f"{SESSION}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)

    def write(self, name: str = "session.jsonl", *, append: bool = False) -> None:
        text = sample(name, cwd=str(self.cwd))
        with open(self.transcript, "a" if append else "w", encoding="utf-8") as f:
            f.write(text)

    def payload(self, name: str, **values: str) -> str:
        fields = {"cwd": str(self.cwd), "transcript": str(self.transcript), **values}
        return sample(name, **fields)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.pop(forkclient.ENV_OFF, None)
        if not self.served:
            env[forkclient.ENV_OFF] = "1"
        env.update(
            HOME=str(self.home),
            KENOMEM_VAULT=str(self.vault),
            NO_COLOR="1",
            CLAUDE_PROJECT_DIR=str(self.cwd),  # as Claude Code sets it for its hooks
        )
        env.update(extra)
        return env

    def start(
        self, args: list[str], stdin: str | bytes = "", **extra: str
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [console_script(), "hook", *args],
            cwd=self.cwd,
            env=self.env(**extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdin is not None
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        try:
            process.stdin.write(data)
            process.stdin.close()
        except BrokenPipeError:  # refused before it read it all: what a hook may do
            pass
        process.stdin = None  # written and closed: `communicate` only reads
        return process

    def hook(
        self, args: list[str], stdin: str | bytes = "", **extra: str
    ) -> subprocess.CompletedProcess[str]:
        process = self.start(args, stdin, **extra)
        out, err = process.communicate(timeout=60)
        return subprocess.CompletedProcess(
            process.args, process.returncode, out.decode("utf-8"), err.decode("utf-8")
        )

    def event(self, name: str, *args: str, **values: str) -> subprocess.CompletedProcess[str]:
        """Claude Code's event `name` (a sample's file name) with its payload on stdin."""
        return self.hook(["claude-code", *args], self.payload(name, **values))


def entries(vault: Path) -> list[tuple[str, str, str, str]]:
    """(who, session, channel, text) of every buffer entry, in file order."""
    found = []
    for day in sorted((vault / "buffer").glob("*.md")):
        for entry in parse_day(f"buffer/{day.name}", day.read_text(encoding="utf-8")).entries:
            found.append((entry.who, entry.session, entry.channel, entry.text))
    return found


def context_of(result: subprocess.CompletedProcess[str]) -> str:
    """What the hook adds to the model's context ("" for nothing), checked as Claude Code
    reads it: one JSON object naming its event."""
    if not result.stdout.strip():
        return ""
    answer = json.loads(result.stdout)
    specific = answer["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}
    text: str = specific["additionalContext"]
    assert text
    return text
