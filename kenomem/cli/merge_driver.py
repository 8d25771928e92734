"""`kenomem merge-driver BASE OURS THEIRS PATH`: the hidden command git runs to merge a
memory file or a buffer day (`share/driver.py`; set up by `kenomem sync --setup`).

Reached straight from the entry point, before the command line is parsed (no Typer, no
argspec): git runs it once for each file both sides changed, so its start must cost
little. Not listed in `--help`: only git calls it.
"""

from __future__ import annotations

import sys
from pathlib import Path

USAGE = "usage: kenomem merge-driver BASE OURS THEIRS PATH (git runs it; see kenomem sync --setup)"


def main(args: list[str]) -> int:
    if len(args) != 4:
        print(USAGE, file=sys.stderr)
        return 2
    from kenomem.errors import KenomemError
    from kenomem.share.driver import run_driver

    base, ours, theirs, path = args
    try:
        result = run_driver(Path(base), Path(ours), Path(theirs), path, Path.cwd())
    except (OSError, UnicodeDecodeError, ValueError, KenomemError) as exc:
        print(f"kenomem merge-driver: {path}: {exc}", file=sys.stderr)
        return 1
    for note in result.notes:
        print(f"kenomem merge-driver: {note}", file=sys.stderr)
    return 0
