"""What the command handlers share: opening the vault named by the options with its
warnings reported, reading times and text from the options, asking before deleting."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kenomem.cli.output import Output
from kenomem.errors import InvalidInput, Refused
from kenomem.files.paths import resolve_vault

MAX_WARNINGS = 5


@contextmanager
def opened(out: Output, vault_flag: str | None, *, skipped: bool = True) -> Iterator[Any]:
    """The vault named by the options (the Python API's `Vault`, which the handlers call
    like any Python agent would), with its warnings reported however the command ends.

    `skipped=False` leaves out the files the sync skipped (`doctor` lists them itself).
    """
    from kenomem.api import Vault

    api = Vault(resolve_vault(vault_flag), source="cli")
    vault = api.core
    try:
        yield api
    finally:
        if out.verbose:
            for line in sync_details(vault):
                out.detail(line)
        for warning in vault.warnings:
            out.warn(warning)
        errors = vault.last_sync.errors if vault.last_sync and skipped else {}
        for path, why in list(errors.items())[:MAX_WARNINGS]:
            out.warn(f"skipped {path}: {why}")
        if len(errors) > MAX_WARNINGS:
            out.warn(
                f"... and {len(errors) - MAX_WARNINGS} more unreadable files "
                "(kenomem stats --json lists them)"
            )


def sync_details(vault: Any) -> list[str]:
    """What --verbose tells about the vault: where, which engine, what the sync did."""
    lines = [f"vault {vault.root} (index engine: {vault.settings.index.engine})"]
    sync = vault.last_sync
    if sync is None:
        return lines
    if sync.rebuilt:
        lines.append(f"index rebuilt: {sync.indexed} files read")
    elif sync.changed:
        counts = (
            ("added", sync.added),
            ("updated", sync.updated),
            ("removed", sync.removed),
            ("moved", sync.moved),
        )
        lines.append("rescanned: " + ", ".join(f"{n} {what}" for what, n in counts if n))
        shown = sync.paths[:MAX_WARNINGS]
        lines.extend(f"  {path}" for path in shown)
        if len(sync.paths) > len(shown):
            lines.append(f"  ... and {len(sync.paths) - len(shown)} more")
    else:
        lines.append("no file changed since the last command")
    return lines


def moment(text: str | None, end_of_day: bool = False) -> datetime | None:
    if text is None:
        return None
    from kenomem.files.timeparse import parse_moment

    return parse_moment(text, datetime.now(UTC), end_of_day=end_of_day)


def read_text(text: str) -> str:
    if text != "-":
        return text
    if sys.stdin.isatty():
        raise InvalidInput(
            "'-' reads the text from stdin, but stdin is a terminal",
            hint='pipe the text in: echo "..." | kenomem remember -',
        )
    return sys.stdin.read()


def confirmed(out: Output, question: str, yes: bool) -> None:
    """Go on only with --yes, or a yes typed at a terminal; refuse otherwise."""
    if yes:
        return
    answer = out.confirm(question)
    if answer is None:
        raise Refused(
            "refusing to delete without confirmation",
            hint="add --yes to go ahead without a question",
        )
    if not answer:
        raise Refused("nothing changed")
