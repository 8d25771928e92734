"""The ways to run kenomem unattended, as the docs and `contrib/` write them, on a fresh
account: the cron line of docs/sleep.md (read out of the page, so that the page and this
test cannot drift), the systemd units' commands and the launchd agent's, each run with
nothing of this environment (`env -i`), a new home and the venv's kenomem where pipx
puts it (`~/.local/bin/kenomem`)."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SLEEP_DOC = REPO / "docs" / "sleep.md"
SYSTEMD = REPO / "contrib" / "systemd"
PLIST = REPO / "contrib" / "launchd" / "com.kenomem.watch.plist"
BIN = Path(sys.executable).parent  # the venv's bin/, with the `kenomem` console script
PATH = f"{BIN}:/usr/bin:/bin"
ENTRY = "Decided to move the café meeting to Friday; the deploy waits for it"


def cron_line() -> tuple[list[str], str]:
    """The schedule and the command of the one cron line in docs/sleep.md."""
    blocks = re.findall(r"```cron\n(.*?)```", SLEEP_DOC.read_text("utf-8"), re.S)
    assert len(blocks) == 1, "docs/sleep.md should hold one ```cron block"
    lines = [line for line in blocks[0].splitlines() if line.strip() and line[0] != "#"]
    assert len(lines) == 1, lines
    *schedule, command = lines[0].split(None, 5)
    assert len(schedule) == 5, lines[0]
    assert "%" not in command, "cron reads % as a newline"
    return schedule, command


def fresh_account(tmp_path: Path) -> Path:
    """A new home: kenomem in ~/.local/bin (as pipx puts it), nothing else; then a vault
    in ~/kenomem with yesterday's buffer day, made as the account would."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "kenomem").symlink_to(BIN / "kenomem")
    vault = home / "kenomem"
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()
    for args in (["init", str(vault)], ["log", ENTRY, "--at", f"{yesterday}T14:30"]):
        done = as_account(home, ["kenomem", *args], {"KENOMEM_VAULT": str(vault)})
        assert done.returncode == 0, done.stderr
    return home


def as_account(
    home: Path, argv: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`argv` run with only HOME, PATH and `env` in its environment (`env -i`)."""
    settings = [f"{key}={value}" for key, value in (env or {}).items()]
    return subprocess.run(
        ["env", "-i", f"HOME={home}", f"PATH={PATH}", *settings, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def yesterday_day() -> str:
    return f"buffer/{(datetime.now(UTC) - timedelta(days=1)).date()}.md"


# -- cron -----------------------------------------------------------------------------------


def test_the_documented_cron_line_works_on_a_fresh_account(tmp_path: Path) -> None:
    schedule, command = cron_line()
    assert schedule == ["0", "4", "*", "*", "*"]
    home = fresh_account(tmp_path)
    assert not (home / ".local" / "state").exists()  # a fresh account has none
    for _night in (1, 2):
        done = as_account(home, ["sh", "-c", command])
        assert done.returncode == 0, done.stderr
        assert (done.stdout, done.stderr) == ("", "")  # all in the logs: cron mails nothing
    state = home / ".local" / "state"
    lines = (state / "kenomem-sleep.log").read_text("utf-8").splitlines()
    docs = [json.loads(line) for line in lines]  # JSON documents, one a line, nothing else
    assert len(docs) == 4, lines  # two a night
    consolidated, pruned, again, pruned_again = docs
    assert [day["day"] for day in consolidated["days"]] == [yesterday_day()]
    assert consolidated["created"] >= 1 and consolidated["days"][0]["warnings"] == []
    assert (again["days"], again["created"]) == ([], 0)  # done once
    for prune_doc in (pruned, pruned_again):
        assert {"retire", "archived", "trash_emptied"} <= set(prune_doc)
    said = (state / "kenomem-sleep.err").read_text("utf-8")
    assert "error:" not in said and "Traceback" not in said, said
    assert "nothing to consolidate" in said  # the second night
    found = as_account(
        home,
        ["kenomem", "recall", "café", "meeting", "--json"],
        {"KENOMEM_VAULT": str(home / "kenomem")},
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"], "the night's episode is not recalled"


def test_a_failing_night_says_why_in_the_error_log(tmp_path: Path) -> None:
    """No vault at ~/kenomem: consolidate fails, prune does not run, the log stays JSON."""
    _, command = cron_line()
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "kenomem").symlink_to(BIN / "kenomem")
    done = as_account(home, ["sh", "-c", command])
    assert done.returncode != 0 and (done.stdout, done.stderr) == ("", "")
    state = home / ".local" / "state"
    assert (state / "kenomem-sleep.log").read_text("utf-8") == ""
    said = (state / "kenomem-sleep.err").read_text("utf-8")
    assert said.startswith("error: ") and "kenomem init" in said, said


# -- systemd --------------------------------------------------------------------------------


def unit(name: str, home: Path) -> tuple[dict[str, str], list[list[str]]]:
    """The [Service] environment and ExecStart commands of a unit file, `%h` expanded
    to `home` (the only specifier they may use)."""
    env: dict[str, str] = {}
    commands: list[list[str]] = []
    section = ""
    for raw in (SYSTEMD / name).read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        key, _, value = line.partition("=")
        if section != "[Service]" or key not in ("Environment", "ExecStart"):
            continue
        assert not re.search(r"%[^h]", value), f"{name}: a specifier other than %h: {value}"
        value = value.replace("%h", str(home))
        if key == "Environment":
            for setting in shlex.split(value):
                var, _, setting_value = setting.partition("=")
                env[var] = setting_value
        else:
            commands.append(shlex.split(value))
    return env, commands


def test_the_sleep_units_commands_work_on_a_fresh_account(tmp_path: Path) -> None:
    home = fresh_account(tmp_path)
    env, commands = unit("kenomem-sleep.service", home)
    assert env == {"KENOMEM_VAULT": str(home / "kenomem")}
    assert [c[1:] for c in commands] == [["consolidate", "--json"], ["prune", "--json"]]
    docs = []
    for argv in commands:  # in order, each only if the one before succeeded (Type=oneshot)
        done = as_account(home, argv, env)
        assert done.returncode == 0, (argv, done.stderr)
        (line,) = done.stdout.splitlines()  # the journal gets one JSON document each
        docs.append(json.loads(line))
    assert [day["day"] for day in docs[0]["days"]] == [yesterday_day()]
    assert "trash_emptied" in docs[1]


def test_the_units_comments_name_the_page_that_documents_them() -> None:
    sleep = (SYSTEMD / "kenomem-sleep.service").read_text("utf-8")
    assert "docs/sleep.md" in sleep and "README" not in sleep
    assert "cp contrib/systemd/kenomem-sleep.service contrib/systemd/kenomem-sleep.timer" in (
        SLEEP_DOC.read_text("utf-8")
    )
    watch_doc = (REPO / "docs" / "watch.md").read_text("utf-8")
    assert "docs/watch.md" in (SYSTEMD / "kenomem-watch.service").read_text("utf-8")
    assert "cp contrib/systemd/kenomem-watch.service" in watch_doc
    assert "contrib/launchd/com.kenomem.watch.plist" in watch_doc


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    names = sorted(p.name for p in SYSTEMD.iterdir())
    for name in names:  # with kenomem where `verify` can check it is there and runs
        text = (SYSTEMD / name).read_text("utf-8")
        (tmp_path / name).write_text(text.replace("%h/.local/bin/kenomem", str(BIN / "kenomem")))
    done = subprocess.run(
        [analyze, "verify", "--man=no", *(f"./{name}" for name in names)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    about_ours = [line for line in done.stderr.splitlines() if "kenomem" in line]
    if done.returncode != 0 and not about_ours:
        pytest.skip(f"systemd-analyze cannot verify here: {done.stderr.strip()[:300]}")
    assert done.returncode == 0 and not about_ours, done.stderr


# -- the watcher: the systemd service and the launchd agent ---------------------------------


def run_until_watching(argv: list[str], env: dict[str, str], home: Path, log: Path) -> str:
    """Start `argv` as the service manager would (its output to `log`), wait until it
    watches, stop it with SIGTERM as the manager does; what it logged."""
    settings = [f"{key}={value}" for key, value in env.items()]
    with log.open("ab") as out:
        process = subprocess.Popen(
            ["env", "-i", f"HOME={home}", f"PATH={PATH}", *settings, *argv],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        while "watching " not in log.read_text("utf-8") and process.poll() is None:
            assert time.monotonic() < deadline, log.read_text("utf-8")
            time.sleep(0.05)
        assert process.poll() is None, log.read_text("utf-8")
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0, log.read_text("utf-8")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    return log.read_text("utf-8")


def test_the_watch_unit_runs_as_written(tmp_path: Path) -> None:
    home = fresh_account(tmp_path)
    env, commands = unit("kenomem-watch.service", home)
    (argv,) = commands
    said = run_until_watching(argv, env, home, tmp_path / "journal.log")
    assert f"watching {home / 'kenomem'}" in said and "stopped after" in said


def test_the_launchd_agent_runs_as_written_and_logs_in_the_users_own_folder(
    tmp_path: Path,
) -> None:
    home = fresh_account(tmp_path)
    agent = plistlib.loads(
        PLIST.read_text("utf-8").replace("/Users/YOU", str(home)).encode("utf-8")
    )
    assert agent["Label"] == PLIST.stem
    assert agent["ProgramArguments"][0] == str(home / ".local" / "bin" / "kenomem")
    assert agent["EnvironmentVariables"] == {"KENOMEM_VAULT": str(home / "kenomem")}
    log = Path(agent["StandardOutPath"])
    assert agent["StandardErrorPath"] == str(log)
    # Not /tmp, where another user may make the file first (a link, or one they read).
    assert log.parent == home / "Library" / "Logs"
    log.parent.mkdir(parents=True)  # every macOS account has it; launchd makes the file
    said = run_until_watching(agent["ProgramArguments"], agent["EnvironmentVariables"], home, log)
    assert f"watching {home / 'kenomem'}" in said and "stopped after" in said
    assert os.stat(log).st_uid == os.geteuid()
