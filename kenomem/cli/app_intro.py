"""The command line, continued: `tour`, a first look at kenomem on a demo vault; declared
for Typer on the app of `cli.py`; no logic."""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.app import Debug, Quiet, Verbose, _run, app


@app.command()
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
    _run("tour", locals())
