"""The man page is generated from the Typer app (scripts/gen_man.py) and is current."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from typer.main import get_command

from kenomem.cli.app import app
from tests.conftest import REPO

PAGE = REPO / "man" / "kenomem.1"
SHARED = ("vault", "debug", "quiet", "verbose")  # described once, for every command


def test_the_man_page_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_man.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_man_page_has_every_command_and_option() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in SHARED:
        assert f"\\-\\-{name}" in text.split(".SH COMMANDS")[0], name
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None) or {"": command}
        for sub_name, sub in subs.items():
            assert f'.SS "kenomem {" ".join(filter(None, (name, sub_name)))}"' in text
            for param in sub.params:
                if param.name in SHARED:
                    continue
                for opt in param.opts:
                    if opt.startswith("-"):
                        assert f"\\fB{opt.replace('-', chr(92) + '-')}\\fR" in text, opt


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_groff_reads_the_man_page_without_a_warning() -> None:
    done = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(PAGE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
