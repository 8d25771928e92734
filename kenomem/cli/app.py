"""The Typer app: the families of commands declared in `cli/commands/`, under the options
of the app itself (--version, and the flags that may come before the command).

The entry point parses most calls without importing Typer (`cli/argspec.py`); this app
is used for `--help`, completion, and every call the fast path does not recognise, so
usage errors always come from here. The man page, the completions and argspec.json are
generated from it (`cli/introspect.py`, `scripts/`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from kenomem.cli.commands import agents, intro, memory, serve, share, upkeep
from kenomem.cli.commands.options import GIVEN_BEFORE, Quiet, Verbose

app = typer.Typer(
    name="kenomem",
    help="A long-term memory for LLM agents and the people they work for, kept as markdown."
    '\n\nExample: kenomem remember "Prefers short answers" && kenomem recall answer style',
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from kenomem.cli.handlers import version

        typer.echo(version())
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """kenomem: remember and recall, from a vault of markdown files.

    Example: kenomem remember "Prefers short answers" && kenomem recall "answer style"
    """
    GIVEN_BEFORE.update(quiet=quiet, verbose=verbose)


# In the order `kenomem --help` lists them.
for family in (memory, serve, agents, intro, upkeep, share):
    app.add_typer(family.commands)
app.add_typer(agents.working_app)
app.add_typer(upkeep.model_app)
app.add_typer(serve.token_app)
