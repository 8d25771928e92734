"""What the vault tests share: memories written and indexed, doctor run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kenomem.vault.core import CoreVault
from tests.conftest import Cli, CliResult

# -- from test_doctor.py

ID_A = "mem_20260101_090000_aaaa"


# Found and shown, but no problem: they do not make doctor exit 1.
NOTES = {"outside", "plain-note"}


def memory(mem_id: str, title: str, body: str, **extra: str) -> str:
    keys = "".join(f"{key}: {value}\n" for key, value in extra.items())
    return f"---\nid: {mem_id}\ntitle: {title}\n{keys}---\n\n{body}\n"


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def expected_code(doc: dict[str, Any], fix: bool) -> int:
    """1 while a problem is left: found without --fix, or found and not fixable with it.
    A file outside the memory folders and a note without frontmatter are notes, not
    problems."""
    problems = [f for f in doc["findings"] if f["kind"] not in NOTES]
    return 1 if any(not (fix and f["fixable"]) for f in problems) else 0


def run_doctor(cli: Cli, *args: str) -> dict[str, Any]:
    """`doctor --json`'s document; its exit code checked against what it found."""
    result = cli("doctor", "--json", *args)
    assert "Traceback" not in result.err and result.out.count("\n") == 1, result
    doc = json.loads(result.out)
    assert result.code == expected_code(doc, "--fix" in args), (result.code, doc)
    return doc


def findings(doc: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if kind is None or f["kind"] == kind]


def recalled(cli: Cli, query: str) -> list[dict[str, Any]]:
    return one_json(cli("recall", "--json", "--no-touch", "--limit", "50", query))["results"]


def indexed(vault_dir: Path) -> None:
    """The index built and in step with the files, as after any command."""
    CoreVault.open(vault_dir).sync()
