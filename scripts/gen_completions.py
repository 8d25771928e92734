"""Write the shell completion scripts in completions/ from the Typer app.

    python scripts/gen_completions.py          # write them
    python scripts/gen_completions.py --check  # exit 1 if they are out of date

The scripts are small: each asks `kenomem` itself for candidates (commands, options),
so they follow the app as it changes; tests/cli/test_completions.py checks they are current.
"""

from __future__ import annotations

import sys
from pathlib import Path

from typer._completion_shared import get_completion_script

OUT = Path(__file__).resolve().parent.parent / "completions"
FILES = {"bash": "kenomem.bash", "zsh": "_kenomem", "fish": "kenomem.fish"}


def scripts() -> dict[str, str]:
    return {
        name: get_completion_script(
            prog_name="kenomem", complete_var="_KENOMEM_COMPLETE", shell=shell
        ).rstrip("\n")
        + "\n"
        for shell, name in FILES.items()
    }


def main() -> int:
    wanted = scripts()
    if "--check" in sys.argv:
        stale = [
            n
            for n, text in wanted.items()
            if not (OUT / n).is_file() or (OUT / n).read_text(encoding="utf-8") != text
        ]
        if stale:
            print(f"out of date: {', '.join(stale)}; run python scripts/gen_completions.py")
            return 1
        return 0
    OUT.mkdir(exist_ok=True)
    for name, text in wanted.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote completions/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
