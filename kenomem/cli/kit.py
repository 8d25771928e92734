"""What the command handlers share: the parameters converted as the operation takes
them, the vault named by the options opened with its warnings reported, asking before
deleting.

How a command's parsed parameters become what its operation takes, one set of rules
for every command, whichever parser read the command line: a command's parameters are
named as the fields of the request its operation takes (or the keywords of the
`api.Vault` method it calls), so they map by name. What a parameter needs on the way is
declared once, on the parameter itself, as Annotated metadata of its Typer declaration
(`Annotated[str | None, typer.Option("--since"), MOMENT]`), and recorded with the rest
of it in argspec.json (`cli/introspect.py`), where `converted` reads it, for the Typer
app and the fast parser alike:

- MOMENT: a time (2026-02-14, 2026-02-14T10:30, yesterday, 7d) becomes a datetime;
  END_OF_DAY the same, but a date means the end of that day (`--until`);
- WORDS: the words of an argument, joined by spaces (a query);
- STDIN: '-' reads the text from stdin (after every other conversion, so that a
  mistake in another option is reported before stdin is read).

And without a declaration:

- a flag named `no_<name>` (`--no-touch`) says `<name>=False` when given;
- a repeatable option becomes a tuple;
- an option not given (None, or a repeatable one never repeated) is left out, so the
  request's own default stands (`recall.limit` from the settings, and so on).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kenomem.cli.output import Output
from kenomem.errors import InvalidInput, Refused
from kenomem.files.paths import resolve_vault
from kenomem.files.plural import counted

# Runs one command with its parameters, as `cli.handlers.run`; its exit code.
Run = Callable[[str, dict[str, Any]], int]

if TYPE_CHECKING:
    from kenomem.api import Vault
    from kenomem.config import Settings

MAX_WARNINGS = 5


class Convert:
    """A conversion, declared on a parameter (its `how` is written in argspec.json)."""

    __slots__ = ("how",)

    def __init__(self, how: str) -> None:
        self.how = how

    def __repr__(self) -> str:
        return f"Convert({self.how!r})"


MOMENT = Convert("moment")
END_OF_DAY = Convert("end_of_day")
WORDS = Convert("words")
STDIN = Convert("stdin")
KINDS = ("moment", "end_of_day", "words", "stdin")


def converted(spec: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """`params` (as a parser gave them) as the operation takes them; `spec` is the
    command's entry in argspec.json."""
    declared = {p["name"]: p.get("convert") or () for p in spec}
    done: dict[str, Any] = {}
    from_stdin = []
    for name, value in params.items():
        how = declared.get(name, ())
        if "words" in how:
            value = " ".join(value) if value else None
        elif isinstance(value, list):
            value = tuple(value) or None
        if value is None:
            continue
        if name.startswith("no_") and isinstance(value, bool):
            if value:
                done[name.removeprefix("no_")] = False
            continue
        if "moment" in how or "end_of_day" in how:
            value = moment(value, end_of_day="end_of_day" in how)
        if "stdin" in how and value == "-":
            from_stdin.append(name)
        done[name] = value
    for name in from_stdin:
        done[name] = read_text("-")
    return done


@contextmanager
def opened(out: Output, vault_flag: str | None, *, skipped: bool = True) -> Iterator[Vault]:
    """The vault named by the options (the Python API's `Vault`, which the handlers call
    like any Python agent would), with its warnings reported however the command ends.

    `skipped=False` leaves out the files the sync skipped (`doctor` lists them itself).
    """
    from kenomem.api import Vault

    vault = Vault(resolve_vault(vault_flag), source="cli")
    try:
        yield vault
    finally:
        if out.verbose:
            for line in sync_details(vault):
                out.detail(line)
        for warning in vault.warnings:
            out.warn(warning)
        errors = vault.last_sync.errors if vault.last_sync and skipped else {}
        for path, why in list(errors.items())[:MAX_WARNINGS]:
            out.warn(f"skipped {path}: {why}")
        if len(errors) > MAX_WARNINGS:
            out.warn(
                f"... and {len(errors) - MAX_WARNINGS} more unreadable files "
                "(kenomem stats --json lists them)"
            )


def sync_details(vault: Vault) -> list[str]:
    """What --verbose tells about the vault: where, which engine, what the sync did."""
    lines = [f"vault {vault.root} (index engine: {vault.settings.index.engine})"]
    lines.extend(env_details(vault.settings))
    sync = vault.last_sync
    if sync is None:
        return lines
    if sync.rebuilt:
        lines.append(f"index rebuilt: {counted(sync.indexed, 'file')} read")
    elif sync.changed:
        counts = (
            ("added", sync.added),
            ("updated", sync.updated),
            ("removed", sync.removed),
            ("moved", sync.moved),
        )
        lines.append("rescanned: " + ", ".join(f"{n} {what}" for what, n in counts if n))
        shown = sync.paths[:MAX_WARNINGS]
        lines.extend(f"  {path}" for path in shown)
        if len(sync.paths) > len(shown):
            lines.append(f"  ... and {len(sync.paths) - len(shown)} more")
    else:
        lines.append("no file changed since the last command")
    return lines


def env_details(settings: Settings) -> list[str]:
    """What --verbose tells about the settings environment variables set."""
    if not settings.from_env:
        return []
    from kenomem.files.secrets import redact

    lines = ["settings from the environment (over kenomem.toml):"]
    for setting in settings.from_env:
        value = setting.value
        shown = repr(redact(value)) if isinstance(value, str) else str(value).lower()
        lines.append(f"  {setting.key} = {shown}  ({setting.variable})")
    return lines


def moment(text: str | None, end_of_day: bool = False) -> datetime | None:
    if text is None:
        return None
    from kenomem.files.timeparse import parse_moment

    return parse_moment(text, datetime.now(UTC), end_of_day=end_of_day)


def read_text(text: str) -> str:
    if text != "-":
        return text
    if sys.stdin.isatty():
        raise InvalidInput(
            "'-' reads the text from stdin, but stdin is a terminal",
            hint='pipe the text in: echo "..." | kenomem remember -',
        )
    return sys.stdin.read()


def confirmed(out: Output, question: str, yes: bool) -> None:
    """Go on only with --yes, or a yes typed at a terminal; refuse otherwise."""
    if yes:
        return
    answer = out.confirm(question)
    if answer is None:
        raise Refused(
            "refusing to delete without confirmation",
            hint="add --yes to go ahead without a question",
        )
    if not answer:
        raise Refused("nothing changed")
