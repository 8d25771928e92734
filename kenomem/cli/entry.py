"""The console script. Most calls are parsed without importing Typer (about 40 ms of a
cold start); anything the fast path does not recognise goes to the Typer app."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if "_KENOMEM_COMPLETE" not in os.environ:
        if not args:  # a first meeting: how to begin, or where the vault stands
            from kenomem.cli.handlers.intro import welcome
            from kenomem.cli.output import Output

            sys.exit(welcome(Output()))
        if args[0] == "merge-driver":  # git's call, once per file: no parsing to pay for
            from kenomem.cli.merge_driver import main as merge_driver

            sys.exit(merge_driver(args[1:]))
        if args == ["--version"]:
            from kenomem.cli.handlers import version

            print(version())
            return
        if argv is None:  # a watcher may have the command's code loaded already
            from kenomem.cli.served.client import answer

            served = answer(args)
            if served is not None:
                _quick_exit(served)
                sys.exit(served)
        from kenomem.cli.argspec import fast_parse

        parsed = fast_parse(args)
        if parsed is not None:
            from kenomem.cli.handlers import run

            code = run(*parsed)
            if argv is None and parsed[0] in QUICK_EXIT:
                _quick_exit(code)
            sys.exit(code)
    from kenomem.cli.app import app

    app(args=args, prog_name="kenomem")


# Commands that leave nothing to clean up once they return (files closed, threads joined,
# the lock released), so that their process can end without tearing the interpreter
# down: freeing every module and object of a search costs a cold recall about 15 ms.
QUICK_EXIT = frozenset({"recall"})


def _quick_exit(code: int) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the usual exit reports it
    os._exit(code)
