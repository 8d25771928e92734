"""Holes the adversarial suite found beyond issue 15's list, each closed:

- A vault's `kenomem.toml` names commands kenomem runs (`consolidate.llm_command`,
  `recall.expand_command` with `recall.llm_expand`): the file may come from a git remote
  or another user, so no command it names runs until this machine's user accepted its
  values with `kenomem trust` (`config`).
- A `.kenomem/` that is a symlink out of the vault would have its `lock`, state, index and
  temporary files written where it points: the vault is refused (`paths.require_vault`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.hostile import fresh_vault, tree

OTHER_UID = 65534


def run(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1", "KENOMEM_NO_SERVE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "kenomem", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def planted(vault: Path, tmp: Path) -> Path:
    """A kenomem.toml whose LLM command leaves a mark: what another user could write."""
    mark = tmp / "ran.txt"
    script = tmp / "llm.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {mark}\necho '[]'\n")
    script.chmod(0o755)
    (vault / "kenomem.toml").write_text(
        f'[recall]\nllm_expand = true\n[consolidate]\nllm_command = "{script}"\n'
    )
    return mark


@pytest.mark.parametrize(
    "how", ["as it arrived", "owned by another user", "writable by others", "changed after"]
)
def test_settings_the_user_did_not_accept_never_run_a_command(tmp_path: Path, how: str) -> None:
    """A kenomem.toml that arrived (a git remote, a sync folder, another user) runs no
    command, whoever owns it, until this machine's user accepts its values; a change
    after the acceptance is not accepted."""
    vault = fresh_vault(tmp_path / "vaults")
    (vault / "semantic" / "fox.md").write_text("# Fox\n\nthe quick brown fox\n")
    mark = planted(vault, tmp_path)
    if how == "owned by another user":
        os.chown(vault / "kenomem.toml", OTHER_UID, OTHER_UID)
    elif how == "writable by others":
        os.chmod(vault / "kenomem.toml", 0o666)
    elif how == "changed after":
        assert run(vault, "trust").returncode == 0
        config = vault / "kenomem.toml"
        config.write_text(config.read_text().replace("llm.sh", "llm.sh --evil"))
    for args in (("recall", "--json", "fox"), ("consolidate", "--json")):
        done = run(vault, *args)
        assert "Traceback" not in done.stderr
        assert "kenomem trust" in done.stderr  # the one warning says how to accept them
    assert not mark.exists(), "a command from settings the user did not accept was run"


def test_settings_the_user_accepted_do_run_their_command(tmp_path: Path) -> None:
    """The counterpart: once accepted (`kenomem trust`), the command runs (the test above is
    not vacuous)."""
    vault = fresh_vault(tmp_path / "vaults")
    (vault / "semantic" / "fox.md").write_text("# Fox\n\nthe quick brown fox\n")
    mark = planted(vault, tmp_path)
    shown = run(vault, "trust", "--dry-run", "--json")
    assert json.loads(shown.stdout)["accepted"] is False
    assert run(vault, "trust").returncode == 0
    done = run(vault, "recall", "--json", "fox")
    assert done.returncode == 0, done.stderr
    assert mark.exists()
    assert "kenomem trust" not in done.stderr


def test_a_state_folder_linked_out_of_the_vault_is_never_written(tmp_path: Path) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    outside = tmp_path / "outside"
    (outside / "index").mkdir(parents=True)
    (outside / "lock").write_text("a file that is not kenomem's\n")
    (outside / "index" / "keep").write_text("neither is this\n")
    (vault / ".kenomem").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    for args in (("remember", "the quick brown fox"), ("recall", "fox"), ("reindex",)):
        done = run(vault, *args)
        assert "Traceback" not in done.stderr
    assert tree(outside) == before, "kenomem wrote through a .kenomem/ link out of the vault"
