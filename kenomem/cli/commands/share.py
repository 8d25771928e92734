"""Sharing a vault, declared for Typer: `sync` (commit, pull, merge, push through git).
Options, help and examples; no logic. Parameters are named as the fields of
`SyncRequest` (`share/sync.py`)."""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Json, Quiet, Vault, Verbose, run

commands = typer.Typer()


@commands.command()
def sync(
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Say what would be committed, pulled and pushed; change nothing."
        ),
    ] = False,
    setup: Annotated[
        bool,
        typer.Option(
            "--setup",
            help="Only set up kenomem's merge driver in the vault's repository "
            "(.gitattributes, .gitignore, the repository's git config); safe to repeat.",
        ),
    ] = False,
    vault: Vault = None,
    json: Json = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Commit the vault's changes, pull, merge and push through its git remote.

    Memory files and buffer days merge through kenomem's merge driver: never conflict
    markers in them. Never force-pushes; .kenomem/ stays out of git.

    Example: kenomem sync --dry-run && kenomem sync
    """
    run("sync", locals())
