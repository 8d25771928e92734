"""The installed console script and `python -m kenomem`, run as real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kenomem
from tests.cli.helpers import console_script
from tests.conftest import TEMPLATE

LAUNCHERS = {
    "console-script": lambda: [console_script()],
    "python-m": lambda: [sys.executable, "-m", "kenomem"],
}


def env_for(vault: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KENOMEM_VAULT"] = str(vault)
    env["NO_COLOR"] = "1"
    return env


def run(
    launcher: list[str], vault: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*launcher, *args],
        env=env_for(vault),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def strict_json(text: str) -> Any:
    def reject(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=reject)


@pytest.fixture(params=sorted(LAUNCHERS))
def launcher(request: pytest.FixtureRequest) -> list[str]:
    return LAUNCHERS[request.param]()


def test_init_remember_recall(launcher: list[str], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    made = run(launcher, vault, "init", str(vault))
    assert made.returncode == 0, made.stderr
    assert (vault / "foundation.md").is_file()
    assert str(vault) in made.stdout

    stored = run(launcher, vault, "remember", "-", "--json", stdin="The ferry leaves at nine\n")
    assert stored.returncode == 0, stored.stderr
    doc = strict_json(stored.stdout)
    assert doc["action"] == "created"
    assert (vault / doc["path"]).is_file()

    found = run(launcher, vault, "recall", "ferry", "--json")
    assert found.returncode == 0, found.stderr
    result = strict_json(found.stdout)
    assert result["query"] == "ferry"
    assert [r["id"] for r in result["results"]] == [doc["id"]]
    assert "Traceback" not in stored.stderr + found.stderr


def test_recall_process_ends_with_everything_written(launcher: list[str], tmp_path: Path) -> None:
    """A recall process ends without the interpreter's teardown: its output, its touch of
    the file and its journal line must all be there, and the next call sees them."""
    vault = tmp_path / "vault"
    assert run(launcher, vault, "init", str(vault)).returncode == 0
    stored = run(launcher, vault, "remember", "The ferry leaves at nine", "--json")
    path = vault / strict_json(stored.stdout)["path"]
    for expected in (1, 2):
        found = run(launcher, vault, "recall", "ferry", "--json", "--verbose")
        assert found.returncode == 0, found.stderr
        (hit,) = strict_json(found.stdout)["results"]
        assert hit["access_count"] == expected
        assert f"access_count: {expected}" in path.read_text(encoding="utf-8")
        assert "recall: done in" in found.stderr
    assert (vault / ".kenomem" / "journal").stat().st_size > 0
    quiet = run(launcher, vault, "recall", "nothing-like-it", "--no-touch")
    assert quiet.returncode == 0 and "Traceback" not in quiet.stderr


def test_error_exit_codes(launcher: list[str], tmp_path: Path) -> None:
    missing = run(launcher, tmp_path / "nowhere", "recall", "ferry", "--json")
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert missing.stderr.startswith("error: no vault at ")
    assert "Traceback" not in missing.stderr

    vault = tmp_path / "vault"
    assert run(launcher, vault, "init", str(vault)).returncode == 0
    unknown = run(launcher, vault, "show", "mem_19990101_000000_dead")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error: ")
    assert "Traceback" not in unknown.stderr

    usage = run(launcher, vault, "remember", "a fact", "--importance", "11")
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr
    assert list((vault / "semantic").glob("*.md")) == []


def test_version(launcher: list[str], tmp_path: Path) -> None:
    result = run(launcher, tmp_path, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"kenomem {kenomem.__version__}"


PROBE = """
import json, sys
from kenomem.cli.entry import main

code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = {name: name in sys.modules for name in ("typer", "click", "rich")}
sys.stderr.write("\\n" + json.dumps({"code": code, "loaded": loaded}) + "\\n")
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "ferry", "--json"],
        ["recall", "ferry", "-n", "3", "--explain"],
        ["remember", "The ferry is late on Sundays", "--tag", "travel"],
    ],
    ids=" ".join,
)
def test_a_cold_call_imports_neither_typer_nor_rich(tmp_path: Path, argv: list[str]) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(TEMPLATE, vault)
    (vault / "semantic" / "ferry.md").write_text(
        "# Ferry\n\nThe ferry leaves at nine.\n", encoding="utf-8"
    )
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        env=env_for(vault),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(probe.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), probe.stderr
    assert "ferry" in probe.stdout.lower()
    assert report["loaded"] == {"typer": False, "click": False, "rich": False}
