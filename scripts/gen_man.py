"""Write the man page, man/kenomem.1, from the Typer app: the same help text as --help.

    python scripts/gen_man.py          # write it
    python scripts/gen_man.py --check  # exit 1 if it is out of date

Read it with `man ./man/kenomem.1`; tests/cli/test_man.py checks that it is current.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from typer.main import get_command

from kenomem import __version__
from kenomem.cli.app import app
from kenomem.cli.introspect import base_type, commands

OUT = Path(__file__).resolve().parent.parent / "man" / "kenomem.1"
METAVAR = {int: "N", float: "NUMBER", str: "TEXT", bool: ""}

ENVIRONMENT = [
    (
        "KENOMEM_VAULT",
        "The vault folder, when --vault is not given (default: the vault the working folder "
        "is in, else ~/kenomem).",
    ),
    (
        "KENOMEM_NO_SERVE",
        "Set (not to 0): every call runs in its own process, never by a watcher's server.",
    ),
    ("NO_COLOR", "Plain text even on a terminal."),
    ("VISUAL, EDITOR", "The editor of kenomem edit."),
]
FILES = [
    ("~/kenomem", "The default vault: a folder of markdown files, one memory per file."),
    ("VAULT/kenomem.toml", "The vault's settings; every key has a default."),
    ("VAULT/foundation.md", "Values and long-term goals, always first in context."),
    ("VAULT/buffer/YYYY-MM-DD.md", "The raw log of a day, for the sleep cycle."),
    (
        "VAULT/.kenomem/",
        "Derived: the index, state and lock; the user's alone (0700); delete it at any time.",
    ),
    (
        "VAULT/.kenomem/serve.sock",
        "The socket of kenomem watch's command server (Linux); used only if it and its"
        " folder are the caller's own.",
    ),
]
EXIT_STATUS = [
    ("0", "Success."),
    ("1", "A user error: one line on stderr, with a hint."),
    ("2", "A usage error: a bad option or value."),
    ("130", "Interrupted."),
]


def esc(text: str) -> str:
    """Text safe in groff: backslashes, hyphens (minus signs), a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n")
    )


def paragraphs(text: str) -> list[str]:
    out = []
    for block in (text or "").strip().split("\n\n"):
        joined = " ".join(line.strip() for line in block.splitlines() if line.strip())
        if joined:
            out.append(esc(joined))
    return out


def usage(path: str, command: Any) -> str:
    pieces = [f"\\fBkenomem {esc(path)}\\fR"]
    for param in command.params:
        if param.param_type_name != "argument":
            continue
        name = f"\\fI{esc(param.name.upper().rstrip('_'))}\\fR"
        if param.nargs == -1:
            name += "..."
        pieces.append(name if param.required else f"[{name}]")
    pieces.append("[\\fIOPTIONS\\fR]")
    return " ".join(pieces)


def option(param: Any) -> list[str]:
    names = ", ".join(f"\\fB{esc(o)}\\fR" for o in [*param.opts, *param.secondary_opts])
    if param.param_type_name == "argument":
        names = f"\\fI{esc(param.name.upper().rstrip('_'))}\\fR"
    metavar = "" if getattr(param, "is_flag", False) else METAVAR.get(base_type(param), "TEXT")
    if metavar and param.param_type_name != "argument":
        names += f" \\fI{metavar}\\fR"
    lines = [".TP", names]
    lines += paragraphs(param.help or "") or [""]
    return lines


def command_section(path: str, command: Any) -> list[str]:
    lines = [f'.SS "{esc("kenomem " + path)}"', usage(path, command), ".PP"]
    texts = paragraphs(command.help or "")
    for n, text in enumerate(texts):
        lines += [text] if n == 0 else [".PP", text]
    for param in command.params:
        if param.name in ("vault", "debug", "quiet", "verbose") or getattr(param, "hidden", False):
            continue
        lines += option(param)
    return lines


def definitions(rows: list[tuple[str, str]]) -> list[str]:
    lines = []
    for term, text in rows:
        lines += [".TP", f"\\fB{esc(term)}\\fR", esc(text)]
    return lines


def render() -> str:
    group = get_command(app)
    about, *_ = paragraphs(group.help or "")
    lines = [
        f'.TH KENOMEM 1 "" "kenomem {__version__}" "User Commands"',
        ".SH NAME",
        "kenomem \\- " + about[0].lower() + about[1:],
        ".SH SYNOPSIS",
        "\\fBkenomem\\fR [\\fB\\-\\-quiet\\fR | \\fB\\-\\-verbose\\fR] \\fICOMMAND\\fR "
        "[\\fIARGS\\fR]... [\\fIOPTIONS\\fR]",
        ".br",
        "\\fBkenomem\\fR [\\fB\\-\\-version\\fR | \\fB\\-\\-help\\fR | "
        "\\fB\\-\\-install\\-completion\\fR]",
        ".SH DESCRIPTION",
        esc(
            "kenomem keeps a memory modelled on human memory (working, episodic, semantic, "
            "procedural) as one markdown file per memory in a folder, the vault. Recall ranks "
            "by recency + importance + relevance over an index derived from the files. Run "
            "kenomem alone for where to begin, and kenomem tour for a demo."
        ),
        ".PP",
        esc(
            "Data goes to stdout, messages to stderr. Commands that report data take --json "
            "(one JSON document on stdout). Every command takes --vault PATH, --quiet, "
            "--verbose and --debug (the traceback of an error). An id may be any unique start "
            "of one."
        ),
        ".SH GLOBAL OPTIONS",
    ]
    for param in group.params:
        if not getattr(param, "hidden", False):
            lines += option(param)
    lines.append(".SH COMMANDS")
    for path, command in commands(group):
        lines += command_section(path, command)
    lines += [".SH ENVIRONMENT", *definitions(ENVIRONMENT)]
    lines += [".SH FILES", *definitions(FILES)]
    lines += [".SH EXIT STATUS", *definitions(EXIT_STATUS)]
    lines += [
        ".SH SEE ALSO",
        esc(
            "kenomem's README and the pages of its docs/ folder: docs/commands.md (these "
            "commands), docs/settings.md (kenomem.toml), docs/vault.md (the vault format), "
            "docs/sleep.md (cron and systemd set-up), docs/agents.md (MCP set-up)."
        ),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not OUT.is_file() or OUT.read_text(encoding="utf-8") != text:
            print("man/kenomem.1 is out of date; run python scripts/gen_man.py")
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(OUT.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
