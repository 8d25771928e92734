"""The shipped completion scripts are generated from the app and answer real completions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, Cli


def test_completion_scripts_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_completions.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_bash_completion_offers_commands_and_options(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("kenomem")
    env = {**os.environ, "_KENOMEM_COMPLETE": "complete_bash", "KENOMEM_VAULT": str(tmp_path)}

    def complete(words: str, index: int) -> list[str]:
        env.update(COMP_WORDS=words, COMP_CWORD=str(index))
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("kenomem rem", 1) == ["remember"]
    assert "--limit" in complete("kenomem recall --li", 2)


@pytest.mark.slow
def test_bash_completion_offers_types_tags_and_ids_from_the_vault(
    vault_dir: Path, cli: Cli
) -> None:
    first = json.loads(cli("remember", "Deploys go out on Tuesdays", "--tag", "work", "--json").out)
    cli("remember", "The database is PostgreSQL", "--tag", "infra", "--tag", "work")
    script = Path(sys.executable).with_name("kenomem")
    env = {**os.environ, "_KENOMEM_COMPLETE": "complete_bash", "KENOMEM_VAULT": str(vault_dir)}

    def complete(words: str, index: int) -> list[str]:
        env.update(COMP_WORDS=words, COMP_CWORD=str(index))
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("kenomem recall x --type s", 4) == ["semantic"]
    assert complete("kenomem remember x -t p", 4) == ["procedural"]
    assert complete("kenomem list --tag ", 3) == ["work", "infra"]  # most used first
    assert complete("kenomem recall x --tag in", 4) == ["infra"]
    mem_id = first["id"]
    assert mem_id in complete("kenomem show mem_", 2)
    assert complete(f"kenomem forget {mem_id[:-1]}", 2) == [mem_id]
    assert complete(f"kenomem show {mem_id[4:-1]}", 2) == [mem_id[4:]]  # `mem_` left out
    env["KENOMEM_VAULT"] = str(vault_dir / "nowhere")
    assert complete("kenomem show mem_", 2) == []
