"""Shared fixtures: every test works on a real vault copied from `vault-template/`."""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from kenomem.vault import Vault

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "vault-template"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's real vault, settings or editor."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KENOMEM_VAULT", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A fresh vault folder, as `kenomem init` makes it."""
    target = tmp_path / "vault"
    shutil.copytree(TEMPLATE, target)
    return target


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    return Vault.open(vault_dir)


def write(vault_dir: Path, rel: str, text: str) -> Path:
    """Write a file into the vault the way a person's editor would."""
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CliResult(NamedTuple):
    code: int
    out: str
    err: str


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Cli:
    """Run the console script's `main` in-process against `vault_dir`.

    This goes through the same entry point as the installed `kenomem` (the fast argument
    path, falling back to Typer), with `KENOMEM_VAULT` pointing at the test vault.
    """
    from kenomem.entry import main

    monkeypatch.setenv("KENOMEM_VAULT", str(vault_dir))

    def run(*args: str, input: str | None = None) -> CliResult:
        capsys.readouterr()
        if input is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(input))
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
