"""Write kenomem/cli/argspec.json from the Typer app: each command's parameters, their
types and the conversions declared on them, for the fast parser and the handlers.

    python scripts/gen_argspec.py          # write it
    python scripts/gen_argspec.py --check  # exit 1 if it is out of date

tests/cli/test_argspec.py checks that it is current.
"""

from __future__ import annotations

import sys

from kenomem.cli.argspec import SPEC_FILE
from kenomem.cli.introspect import generate, render_spec


def main() -> int:
    wanted = render_spec(generate())
    if "--check" in sys.argv:
        current = SPEC_FILE.read_text(encoding="utf-8") if SPEC_FILE.is_file() else ""
        if current != wanted:
            print("out of date: kenomem/cli/argspec.json; run python scripts/gen_argspec.py")
            return 1
        return 0
    SPEC_FILE.write_text(wanted, encoding="utf-8")
    print(f"wrote {SPEC_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
