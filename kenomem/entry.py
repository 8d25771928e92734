"""The console script. Most calls are parsed without importing Typer (about 40 ms of a
cold start); anything the fast path does not recognise goes to the Typer app."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if "_KENOMEM_COMPLETE" not in os.environ:
        if not args:  # a first meeting: how to begin, or where the vault stands
            from kenomem.commands_intro import welcome
            from kenomem.output import Output

            sys.exit(welcome(Output()))
        if args == ["--version"]:
            from kenomem.commands import version

            print(version())
            return
        from kenomem.argspec import fast_parse

        parsed = fast_parse(args)
        if parsed is not None:
            from kenomem.commands import run

            sys.exit(run(*parsed))
    from kenomem.cli import app

    app(args=args, prog_name="kenomem")
