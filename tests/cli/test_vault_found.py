"""Which vault a command uses, found as git finds a repository: `--vault`, else
`$KENOMEM_VAULT`, else the folder it runs in or the nearest above holding a vault (its
`kenomem.toml` or `.kenomem/`) of the user's own, else `~/kenomem`; and `kenomem` alone
says which and why. Real processes, each in the folder a person would stand in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kenomem.cli.served import client as forkclient
from kenomem.files import vaultfind
from tests.cli.helpers import SERVED_NOTE, Watch, console_script
from tests.conftest import TEMPLATE


def run(*args: str, cwd: Path, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """`kenomem args` from `cwd`, with `home` as its home and no $KENOMEM_VAULT unless
    given; never handed to a watcher unless `served` is said."""
    env = {k: v for k, v in os.environ.items() if k not in ("KENOMEM_VAULT", forkclient.ENV_OFF)}
    env.update(HOME=str(home), NO_COLOR="1")
    if extra.pop("served", "") != "yes":
        env[forkclient.ENV_OFF] = "1"
    env.update(extra)
    return subprocess.run(
        [console_script(), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def new_vault(path: Path) -> Path:
    shutil.copytree(TEMPLATE, path)
    return path


def remembered(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["path"])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def test_a_command_in_a_vault_or_below_it_uses_that_vault(tmp_path: Path, home: Path) -> None:
    vault = new_vault(tmp_path / "notes")
    (vault / "semantic" / "deep" / "er").mkdir(parents=True)
    below = vault / "semantic" / "deep" / "er"
    made = run("remember", "The kettle is descaled monthly", "--json", cwd=below, home=home)
    assert (vault / remembered(made)).is_file()
    listed = run("list", "--json", cwd=vault / "episodic", home=home)
    assert listed.returncode == 0 and "kettle" in listed.stdout.lower()
    assert not (home / "kenomem").exists()

    said = run(cwd=below, home=home)
    assert said.returncode == 0
    assert (
        f"Vault {vault}" in said.stdout
        and "found in a folder above the one you are in" in said.stdout
    )
    said = run(cwd=vault, home=home)
    assert f"Vault {vault}" in said.stdout and "found in the folder you are in" in said.stdout


def test_a_folder_with_only_the_derived_state_is_a_vault(tmp_path: Path, home: Path) -> None:
    vault = new_vault(tmp_path / "old")
    (vault / "kenomem.toml").unlink()
    (vault / ".kenomem").mkdir()
    made = run(
        "remember", "The boiler is serviced in May", "--json", cwd=vault / "semantic", home=home
    )
    assert (vault / remembered(made)).is_file()


def test_without_a_vault_above_the_default_is_in_home(tmp_path: Path, home: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    said = run(cwd=elsewhere, home=home)
    assert said.returncode == 0
    assert f"No vault yet at {home / 'kenomem'}" in said.stdout
    assert "the default: no $KENOMEM_VAULT, and no vault in this folder or above it" in said.stdout
    missing = run("list", cwd=elsewhere, home=home)
    assert missing.returncode == 1 and f"no vault at {home / 'kenomem'}" in missing.stderr
    new_vault(home / "kenomem")
    made = run("remember", "The bins go out on Thursday", "--json", cwd=elsewhere, home=home)
    assert (home / "kenomem" / remembered(made)).is_file()


def test_kenomem_vault_wins_over_the_folder_and_the_flag_over_all(
    tmp_path: Path, home: Path
) -> None:
    here, named, flagged = (new_vault(tmp_path / name) for name in ("here", "named", "flagged"))
    inside = here / "semantic"
    made = run("remember", "Named by the variable", "--json", cwd=inside, home=home,
               KENOMEM_VAULT=str(named))  # fmt: skip
    assert (named / remembered(made)).is_file()
    said = run(cwd=inside, home=home, KENOMEM_VAULT=str(named))
    assert f"Vault {named}" in said.stdout and "named by $KENOMEM_VAULT" in said.stdout
    made = run("remember", "Named by the flag", "--json", "--vault", str(flagged), cwd=inside,
               home=home, KENOMEM_VAULT=str(named))  # fmt: skip
    assert (flagged / remembered(made)).is_file()
    # A relative --vault is read from the folder the command runs in.
    made = run("remember", "Named relative", "--json", "--vault", "../../flagged", cwd=inside,
               home=home)  # fmt: skip
    assert (flagged / remembered(made)).is_file()
    assert not list((here / "semantic").glob("*.md"))


def test_init_without_a_path_never_searches(tmp_path: Path, home: Path) -> None:
    vault = new_vault(tmp_path / "v")
    done = run("init", cwd=vault / "semantic", home=home)
    assert done.returncode == 0, done.stderr
    assert (home / "kenomem" / "kenomem.toml").is_file()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away"
)
def test_another_users_vault_above_is_passed_over(tmp_path: Path, home: Path) -> None:
    # /tmp/kenomem.toml made by someone else must not receive what this user remembers.
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    theirs = new_vault(shared / "theirs")
    below = theirs / "semantic"
    nobody = 65534
    for folder in (theirs, theirs / "kenomem.toml"):
        os.chown(folder, nobody, nobody)
    said = run(cwd=below, home=home)
    assert f"No vault yet at {home / 'kenomem'}" in said.stdout
    assert f"passed over {theirs}: another user's" in said.stdout
    refused = run("remember", "Not for them", cwd=below, home=home)
    assert refused.returncode == 1 and "no vault at" in refused.stderr
    assert not list(below.glob("*.md"))
    named = run("remember", "Named on purpose", "--vault", str(theirs), cwd=below, home=home)
    assert named.returncode == 0, named.stderr


def test_the_search_keeps_to_the_users_own_readable_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = new_vault(tmp_path / "outer")
    inner = outer / "semantic" / "inner"
    inner.mkdir()
    (inner / ".kenomem").symlink_to(tmp_path)  # a link is no vault's state
    assert vaultfind.find(str(inner)) == str(outer)
    assert vaultfind.choose(None, {}, str(inner)) == (str(outer), vaultfind.ABOVE)
    assert vaultfind.choose(None, {}, str(outer)) == (str(outer), vaultfind.HERE)
    passed: list[str] = []
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(outer).st_uid + 1)
    assert vaultfind.find(str(inner), passed) is None
    assert passed == [str(outer)]


def test_the_client_guesses_the_vault_from_the_callers_folder(tmp_path: Path) -> None:
    vault = new_vault(tmp_path / "v")
    inside = str(vault / "semantic")
    assert forkclient.guess_vault(["recall", "x"], {}, inside) == str(vault)
    assert forkclient.guess_vault(["recall", "x"], {"KENOMEM_VAULT": "/v/e"}, inside) == "/v/e"
    assert forkclient.guess_vault(["recall", "x", "--vault", ".."], {}, inside) == str(vault)


@pytest.mark.slow  # a real watcher and its command server
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command server runs on Linux")
def test_a_served_call_finds_the_vault_from_the_callers_folder(
    short_vault: Path, tmp_path: Path
) -> None:
    watch = Watch(short_vault, tmp_path / "watch.log")  # its own folder: pytest's, not the vault
    try:
        inside = short_vault / "semantic"
        home = Path(os.environ["HOME"])
        for args in (["recall", "alpaca"], ["recall", "alpaca", "--vault", ".."]):
            served = run(*args, "--json", "--no-touch", "-v", cwd=inside, home=home, served="yes")
            assert served.returncode == 0, served.stderr
            assert SERVED_NOTE in served.stderr, args
            found = [r["path"] for r in json.loads(served.stdout)["results"]]
            assert found == ["semantic/alpaca.md", "semantic/llama.md"]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        local = run("recall", "alpaca", "-v", cwd=elsewhere, home=home, served="yes")
        assert SERVED_NOTE not in local.stderr and local.returncode == 1
    finally:
        watch.stop()


@pytest.mark.slow  # the MCP SDK, in a server and a client
def test_kenomem_mcp_serves_the_vault_it_is_started_in(tmp_path: Path) -> None:
    import anyio
    from mcp import StdioServerParameters
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    vault = new_vault(tmp_path / "agent-vault")
    answered: list[Any] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "kenomem", "mcp"], cwd=vault / "semantic"
        )
        with (tmp_path / "mcp.log").open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                with anyio.fail_after(60):
                    await session.initialize()
                    made = await session.call_tool("remember", {"text": "Deploys on Fridays"})
                    answered.append(made.structured_content)

    anyio.run(main)
    (done,) = answered
    assert (vault / done["path"]).is_file()
