"""`tour`, a first look at kenomem on a demo vault, declared for Typer; no logic."""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands.options import Debug, Quiet, Verbose, run

commands = typer.Typer()


@commands.command()
def tour(
    path: Annotated[
        str,
        typer.Argument(
            help="Where to make the demo vault: a new folder, or one an earlier tour made."
        ),
    ] = "kenomem-tour",
    no_pause: Annotated[
        bool,
        typer.Option(
            "--no-pause", help="Run every step at once (the default when not at a terminal)."
        ),
    ] = False,
    debug: Debug = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """A demo vault with a dozen memories, and the main commands run on it, explained.

    Example: kenomem tour /tmp/kenomem-tour
    """
    run("tour", locals())
