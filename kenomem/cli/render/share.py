"""How the result of `sync` looks: the JSON document and the lines for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.api import to_jsonable
from kenomem.cli.output import Line, Output, inline

if TYPE_CHECKING:
    from kenomem.share.sync import SyncResult

SHOWN = 10  # files listed by name before "... and N more"


def sync(out: Output, result: SyncResult) -> None:
    doc = to_jsonable(result)
    lines: list[Line] = []  # file names through `inline`: a newline in one never splits a line
    verb = "would " if result.dry_run else ""
    for change in result.setup:
        lines.append([(f"{verb}set up ", "green"), (change, "")])
    if result.remote or result.committed or result.pulled:
        where = f"{result.remote}/{result.branch}" if result.remote else result.branch
        lines.append([(f"{verb or ''}sync ", "bold"), (where, "bold")])
        lines += _files(f"{verb}commit" if result.dry_run else "committed", result.committed)
        lines += _files(f"{verb}pull" if result.dry_run else "pulled", result.pulled)
        lines += _files("kept for review", result.review)
        if result.pushed:
            upstream = " (upstream set)" if result.upstream_set else ""
            lines.append([("pushed", "green"), (upstream, "dim")])
    if result.dry_run:
        lines.extend([(note, "dim")] for note in result.notes)
    if result.left:
        shown = ", ".join(map(inline, result.left[:SHOWN]))
        shown += " ..." if len(result.left) > SHOWN else ""
        lines.append([(f"left alone, not the vault's own (commit them yourself): {shown}",
                       "dim")])  # fmt: skip
    if not lines:
        lines.append([("the merge driver is set up: nothing to change", "green")])
    out.data(doc, lines)


def _files(what: str, paths: list[str]) -> list[Line]:
    if not paths:
        return []
    files = "file" if len(paths) == 1 else "files"
    lines: list[Line] = [[(f"  {what} {len(paths)} {files}", "")]]
    lines.extend([("    ", ""), (inline(p), "dim")] for p in paths[:SHOWN])
    if len(paths) > SHOWN:
        lines.append([(f"    ... and {len(paths) - SHOWN} more", "dim")])
    return lines
