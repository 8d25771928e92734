"""`kenomem install` and `kenomem uninstall` on real settings files in a temporary home:
Claude Code's settings.json, settings.local.json and .mcp.json, Codex's config.toml.

Other hooks, servers, keys and tables are kept (the TOML file byte for byte), installing
twice changes nothing, a backup is written before a change, a dry run writes nothing and
shows the diff, uninstall gives back the file as it was, and a file kenomem cannot read
as the agent does (broken JSON, comments, a key twice, not an object, broken TOML) is
refused and left untouched.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kenomem.cli.app import app
from kenomem.hooks import install

KENOMEM = str(Path(sys.executable).with_name("kenomem"))

# Claude Code settings as a person keeps them: permissions, an env block, a statusline,
# and hooks of their own, on an event kenomem also hooks and on one it does not.
THEIRS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "env": {"NODE_ENV": "development"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 3}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])  # each test's own (tests/conftest.py)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository to stand in (its root: the folder holding .git), with kenomem's
    folder on PATH, as after `pip install kenomem`."""
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    monkeypatch.setenv("PATH", f"{Path(KENOMEM).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return root


def kenomem(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def as_json_file(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def ours(doc: dict[str, Any], agent: str = "claude-code") -> dict[str, list[str]]:
    """Each event's hook commands of kenomem's in a settings document."""
    found: dict[str, list[str]] = {}
    for event, groups in doc.get("hooks", {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                if install.is_our_hook(handler, agent):
                    found.setdefault(event, []).append(handler["command"])
    return found


def backups_of(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".kenomem-backup-*"))


def test_the_hooks_join_the_user_s_own_and_uninstall_gives_the_file_back(
    home: Path, project: Path
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = as_json_file(THEIRS)
    settings.write_bytes(original)

    code, out, err = kenomem("install", "claude-code")
    assert code == 0, err
    doc = json.loads(settings.read_text())
    assert set(ours(doc)) == set(install.CLAUDE_EVENTS)
    for event, commands in ours(doc).items():
        assert commands == [f"{KENOMEM} hook claude-code {event}"]
    # The user's hooks and keys are all there, in their places.
    assert {k: v for k, v in doc.items() if k != "hooks"} == {
        k: v for k, v in THEIRS.items() if k != "hooks"
    }
    assert doc["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    assert doc["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    # A backup of the file as it was, beside it; the line to add the MCP server.
    [backup] = backups_of(settings)
    assert backup.read_bytes() == original
    assert f"claude mcp add --scope user kenomem -- {KENOMEM} mcp" in out

    code, out, err = kenomem("uninstall", "claude-code")
    assert code == 0, err
    assert settings.read_bytes() == original
    assert len(backups_of(settings)) == 2


def test_installing_twice_changes_nothing(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(as_json_file(THEIRS))
    assert kenomem("install", "claude-code")[0] == 0
    after_first = settings.read_bytes()
    stamp = settings.stat().st_mtime_ns

    code, out, _ = kenomem("install", "claude-code", "--json")
    assert code == 0
    result = json.loads(out)
    assert [f["change"] for f in result["files"]] == ["none"]
    assert result["backups"] == []
    assert settings.read_bytes() == after_first
    assert settings.stat().st_mtime_ns == stamp
    assert len(backups_of(settings)) == 1  # the first install's only


def test_installing_again_keeps_kenomem_s_hooks_as_the_user_tuned_them(
    home: Path, project: Path
) -> None:
    settings = home / ".claude" / "settings.json"
    assert kenomem("install", "claude-code")[0] == 0
    doc = json.loads(settings.read_text())
    doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 120  # a long transcript, say
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say stopped"}]})
    tuned = as_json_file(doc)
    settings.write_bytes(tuned)
    assert kenomem("install", "claude-code")[0] == 0
    assert settings.read_bytes() == tuned


def test_a_missing_file_is_created_and_uninstall_removes_what_only_kenomem_filled(
    project: Path,
) -> None:
    code, out, err = kenomem("install", "claude-code", "--project", "--json")
    assert code == 0, err
    local = project / ".claude" / "settings.local.json"
    servers = project / ".mcp.json"
    result = json.loads(out)
    assert [(f["path"], f["change"]) for f in result["files"]] == [
        (str(local), "create"),
        (str(servers), "create"),
    ]
    assert set(ours(json.loads(local.read_text()))) == set(install.CLAUDE_EVENTS)
    assert json.loads(servers.read_text()) == {
        "mcpServers": {"kenomem": {"command": KENOMEM, "args": ["mcp"]}}
    }
    assert result["backups"] == []

    code, out, err = kenomem("uninstall", "claude-code", "--project")
    assert code == 0, err
    assert not local.exists() and not servers.exists()
    assert not backups_of(local) and not backups_of(servers)  # nothing of the user's in them


def test_an_empty_file_is_filled(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b"")
    assert kenomem("install", "claude-code")[0] == 0
    assert set(ours(json.loads(settings.read_text()))) == set(install.CLAUDE_EVENTS)


def test_other_servers_of_mcp_json_are_kept(project: Path) -> None:
    servers = project / ".mcp.json"
    theirs = {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}}}
    servers.write_bytes(as_json_file(theirs))
    assert kenomem("install", "claude-code", "--project")[0] == 0
    doc = json.loads(servers.read_text())
    assert doc["mcpServers"]["docs"] == theirs["mcpServers"]["docs"]
    assert doc["mcpServers"]["kenomem"] == {"command": KENOMEM, "args": ["mcp"]}
    assert kenomem("uninstall", "claude-code", "--project")[0] == 0
    assert servers.read_bytes() == as_json_file(theirs)


def test_a_dry_run_writes_nothing_and_shows_the_diff(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(as_json_file(THEIRS))
    before = sorted(p.name for p in settings.parent.iterdir())

    code, out, err = kenomem("install", "claude-code", "--dry-run")
    assert code == 0, err
    assert f"--- {settings}\n+++ {settings}\n" in out
    assert f'+            "command": "{KENOMEM} hook claude-code SessionStart",' in out
    assert settings.read_bytes() == as_json_file(THEIRS)
    assert sorted(p.name for p in settings.parent.iterdir()) == before

    code, out, err = kenomem("install", "claude-code", "--project", "--dry-run", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["dry_run"] is True and result["backups"] == []
    assert f"+++ {project / '.mcp.json'}" in result["diff"]
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()


def test_a_dry_run_never_shows_a_secret_of_the_file(home: Path, project: Path) -> None:
    key = "sk-ant-api03-" + "Q7x" * 12
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(as_json_file({"env": {"ANTHROPIC_API_KEY": key}, "hooks": {}}))
    code, out, _ = kenomem("install", "claude-code", "--dry-run")
    assert code == 0
    assert "ANTHROPIC_API_KEY" in out  # the line is shown as context...
    assert key not in out and key[:20] not in out  # ...without its secret


BROKEN = {
    "a trailing comma": b'{"hooks": {},}\n',
    "a comment": b'// mine\n{"hooks": {}}\n',
    "not an object": b'[{"hooks": {}}]\n',
    "a key twice": b'{"model": "opus", "model": "sonnet"}\n',
    "NaN": b'{"cleanupPeriodDays": NaN}\n',
    "not UTF-8": b'{"env": {"NAME": "caf\xe9"}}\n',
    "cut short": b'{"hooks": {"Stop": [',
    "hooks not an object": b'{"hooks": ["Stop"]}\n',
    "an event not a list": b'{"hooks": {"Stop": {"command": "x"}}}\n',
}


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN.keys())
def test_a_file_claude_code_would_not_read_as_kenomem_does_is_refused_untouched(
    home: Path, project: Path, content: bytes
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(content)
    for command in ("install", "uninstall"):
        code, out, err = kenomem(command, "claude-code")
        if command == "uninstall" and content in (BROKEN["an event not a list"],):
            assert code == 0  # nothing of kenomem's in it: nothing to change
        else:
            assert code == 1, (command, out, err)
            assert str(settings) in err and "left as it is" in err
            assert "unexpected" not in err
        assert settings.read_bytes() == content
        assert not backups_of(settings)


def test_a_server_named_kenomem_that_is_not_kenomem_is_refused(project: Path) -> None:
    servers = project / ".mcp.json"
    theirs = as_json_file({"mcpServers": {"kenomem": {"command": "npx", "args": ["kenomem"]}}})
    servers.write_bytes(theirs)
    code, _, err = kenomem("install", "claude-code", "--project")
    assert code == 1 and "does not run kenomem" in err
    assert servers.read_bytes() == theirs
    # The hooks file, before it in the plan, was not written either: nothing is half done.
    assert not (project / ".claude").exists()


def test_uninstall_keeps_a_hook_the_user_put_beside_kenomem_s(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    assert kenomem("install", "claude-code")[0] == 0
    doc = json.loads(settings.read_text())
    mine = {"type": "command", "command": "say stopped"}
    doc["hooks"]["Stop"][0]["hooks"].append(mine)
    settings.write_text(json.dumps(doc, indent=2) + "\n")

    assert kenomem("uninstall", "claude-code")[0] == 0
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [mine]}]}}


def test_a_kenomem_installed_elsewhere_is_replaced_not_doubled(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"type": "command", "command": "/old/venv/bin/kenomem hook claude-code Stop"}
    settings.write_bytes(as_json_file({"hooks": {"Stop": [{"hooks": [old]}]}}))
    assert kenomem("install", "claude-code")[0] == 0
    assert ours(json.loads(settings.read_text()))["Stop"] == [f"{KENOMEM} hook claude-code Stop"]


def test_a_vault_named_goes_into_every_command(
    home: Path, project: Path, vault_dir: Path, tmp_path: Path
) -> None:
    assert kenomem("install", "claude-code", "--project", "--vault", str(vault_dir))[0] == 0
    doc = json.loads((project / ".claude" / "settings.local.json").read_text())
    for event, [command] in ours(doc).items():
        argv = [KENOMEM, "hook", "claude-code", event, "--vault", str(vault_dir)]
        assert shlex.split(command) == argv
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["kenomem"]
    assert server["args"] == ["mcp", "--vault", str(vault_dir)]

    code, _, err = kenomem("install", "claude-code", "--vault", str(tmp_path / "nowhere"))
    assert code == 1 and "no vault at" in err
    assert not (home / ".claude").exists()


def test_the_file_s_mode_and_layout_are_kept(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = (json.dumps(THEIRS, indent=4) + "\n").encode()
    settings.write_bytes(original)
    settings.chmod(0o600)
    assert kenomem("install", "claude-code")[0] == 0
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert stat.S_IMODE(backups_of(settings)[0].stat().st_mode) == 0o600
    assert settings.read_text().startswith('{\n    "permissions"')  # four spaces, as it was
    assert kenomem("uninstall", "claude-code")[0] == 0
    assert settings.read_bytes() == original


def test_a_linked_settings_file_is_written_at_the_link_s_end(home: Path, project: Path) -> None:
    dotfiles = home / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(as_json_file(THEIRS))
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.symlink_to(dotfiles)

    assert kenomem("install", "claude-code")[0] == 0
    assert settings.is_symlink() and settings.resolve() == dotfiles
    assert set(ours(json.loads(dotfiles.read_text()))) == set(install.CLAUDE_EVENTS)
    assert backups_of(dotfiles)

    assert kenomem("uninstall", "claude-code")[0] == 0
    assert settings.is_symlink() and dotfiles.read_bytes() == as_json_file(THEIRS)
    dotfiles.write_bytes(b"")  # kenomem's entries alone: the file is emptied, not removed
    assert kenomem("install", "claude-code")[0] == 0
    assert kenomem("uninstall", "claude-code")[0] == 0
    assert settings.is_symlink() and json.loads(dotfiles.read_text()) == {}

    dotfiles.unlink()  # a link to nothing: refused, the link left as it is
    code, _, err = kenomem("install", "claude-code")
    assert code == 1 and "does not exist" in err
    assert settings.is_symlink() and not dotfiles.exists()


def test_claude_config_dir_is_where_the_user_settings_are(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    assert kenomem("install", "claude-code", "--user")[0] == 0
    assert (tmp_path / "claude-config" / "settings.json").is_file()


def test_both_scopes_or_another_agent_are_usage_errors(project: Path) -> None:
    assert kenomem("install", "claude-code", "--user", "--project")[0] == 2
    code, _, err = kenomem("install", "cursor")
    assert code == 2 and "claude-code and codex" in err


def test_a_file_changed_after_it_was_read_is_left_to_its_writer(home: Path, project: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(as_json_file(THEIRS))
    where = install.targets("claude-code", "user", {}, home, project)
    request = install.Request("claude-code", "install", "user", KENOMEM, None)
    plan = install.plan(request, {t.path: install.read_target(t.path) for t in where}, where)
    theirs = as_json_file({**THEIRS, "model": "opus"}) + b" "  # another writer, meanwhile
    settings.write_bytes(theirs)
    with pytest.raises(install.InstallError, match="changed while kenomem was reading it"):
        install.apply(plan)
    assert settings.read_bytes() == theirs
    assert not backups_of(settings)


def test_the_events_installed_are_the_hook_command_s() -> None:
    from kenomem.hooks import payload

    assert set(install.CLAUDE_EVENTS) <= set(payload.CLAUDE_EVENTS)
    assert "notify" in payload.CODEX_EVENTS


# -- Codex --------------------------------------------------------------------------------

CODEX_CONFIG = (
    "# Codex, as I like it\n"
    'model = "gpt-5-codex"\n'
    'approval_policy = "on-request"\n'
    "\n"
    "[mcp_servers.docs]\n"
    'command = "npx"\n'
    'args = ["-y", "docs-mcp"]\n'
    'env = { "DOCS_TOKEN_FILE" = "~/.docs" }\n'
    "\n"
    "[profiles.fast]\n"
    'model = "o4-mini"  # cheap\n'
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_codex_config_round_trip_keeps_every_other_byte(
    home: Path, project: Path, newline: str
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = CODEX_CONFIG.replace("\n", newline).encode()
    config.write_bytes(original)

    code, out, err = kenomem("install", "codex")
    assert code == 0, err
    text = config.read_bytes().decode()
    parsed = tomllib.loads(text)
    assert parsed["notify"] == [KENOMEM, "hook", "codex", "notify"]
    assert parsed["mcp_servers"]["kenomem"] == {"command": KENOMEM, "args": ["mcp"]}
    assert parsed["mcp_servers"]["docs"]["args"] == ["-y", "docs-mcp"]
    assert parsed["profiles"] == {"fast": {"model": "o4-mini"}}
    # Every byte of the user's is there, in order, around kenomem's two blocks.
    assert install.without_blocks(text, config).encode() == original
    assert backups_of(config)[0].read_bytes() == original
    assert "kenomem import ~/.codex/sessions" in out

    assert kenomem("install", "codex")[0] == 0
    assert config.read_bytes().decode() == text  # again: nothing changes
    assert kenomem("uninstall", "codex")[0] == 0
    assert config.read_bytes() == original


def test_codex_without_a_config_gets_one_and_loses_it(home: Path, project: Path) -> None:
    assert kenomem("install", "codex")[0] == 0
    config = home / ".codex" / "config.toml"
    assert tomllib.loads(config.read_text())["mcp_servers"]["kenomem"]["command"] == KENOMEM
    assert kenomem("uninstall", "codex")[0] == 0
    assert not config.exists()


def test_codex_s_own_notify_program_is_kept(home: Path, project: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'notify = ["notify-send", "codex"]\n'
    config.write_bytes(original)
    code, out, err = kenomem("install", "codex")
    assert code == 0, err
    parsed = tomllib.loads(config.read_text())
    assert parsed["notify"] == ["notify-send", "codex"]
    assert parsed["mcp_servers"]["kenomem"]["args"] == ["mcp"]
    assert "already names a notify program" in out
    assert kenomem("uninstall", "codex")[0] == 0
    assert config.read_bytes() == original


@pytest.mark.parametrize(
    "content",
    [
        b'[mcp_servers.kenomem]\ncommand = "something-else"\n',
        b"model = \n",  # broken TOML
        b'notify = "x"\n# >>> kenomem: written by hand\n[mcp_servers.a]\n',  # never closed
        b'mcp_servers = { docs = { command = "npx" } }\n',  # an inline table: closed to more
    ],
    ids=["their server named kenomem", "broken", "a block never closed", "inline servers"],
)
def test_codex_config_kenomem_cannot_change_safely_is_refused_untouched(
    home: Path, project: Path, content: bytes
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(content)
    code, _, err = kenomem("install", "codex")
    assert code == 1 and str(config) in err and "left as it is" in err
    assert config.read_bytes() == content
    assert not backups_of(config)


def test_codex_project_config(project: Path) -> None:
    assert kenomem("install", "codex", "--project")[0] == 0
    config = project / ".codex" / "config.toml"
    assert tomllib.loads(config.read_text())["mcp_servers"]["kenomem"]["command"] == KENOMEM


# -- as a person runs it ------------------------------------------------------------------


def test_the_real_command_installs_and_the_hook_it_writes_runs(tmp_path: Path) -> None:
    """`kenomem install claude-code` in a real process, HOME a temporary folder; the hook
    command it wrote run through a shell as Claude Code runs it, with a payload on stdin;
    then `kenomem uninstall` takes it all out again."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    original = as_json_file(THEIRS)
    settings.write_bytes(original)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{Path(KENOMEM).parent}{os.pathsep}/usr/bin:/bin",
        "NO_COLOR": "1",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KENOMEM, *args], cwd=work, env=env, capture_output=True, text=True, timeout=60
        )

    done = run("install", "claude-code", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["executable"] == KENOMEM
    assert [f["change"] for f in result["files"]] == ["change"]
    [command] = ours(json.loads(settings.read_text()))["SessionStart"]

    payload = json.dumps({"session_id": "s1", "cwd": str(work), "source": "startup"})
    hook = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=work,
        env=env,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert hook.returncode == 0, hook.stderr
    # The command line written is one the shell finds and kenomem's parser accepts.
    assert "not found" not in hook.stderr and "Usage:" not in hook.stderr

    done = run("uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == original
