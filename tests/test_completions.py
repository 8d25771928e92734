"""The shipped completion scripts are generated from the app and answer real completions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


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
