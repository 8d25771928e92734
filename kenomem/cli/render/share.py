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
        if result.dry_run:
            lines += _files(f"{verb}pull", result.pulled)
        else:
            lines += _changes(result)
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


def _changes(result: SyncResult) -> list[Line]:
    """What the pull, the merge and the push did on this side."""
    copies = set(result.review_pulled)
    pulled = [p for p in result.pulled if p not in copies]  # the copies: said below
    lines = _files("pulled", pulled)
    lines += _files("merged", result.merged, "by kenomem's rules (changed on both sides)")
    lines += _files(
        "kept",
        result.review,
        "for review: the other side's version, as a new memory beside the one kept here",
        ("copy", "copies"),
    )
    lines += _files(
        "kept",
        result.review_pulled,
        "for review by the other side's merge: the version it set aside, as a new memory "
        "(this side's own, when two machines share the vault)",
        ("copy", "copies"),
    )
    if result.review_command:
        lines.append([("  what waits for review: ", ""), (result.review_command, "cyan"),
                      (" (keep one and kenomem forget the other, or merge them by hand)",
                       "dim")])  # fmt: skip
    where = f"{result.remote}/{result.branch}"
    if not (result.pulled or result.merged or result.review):
        lines.append([(f"  nothing to pull: {where} brought no change", "dim")])
    upstream = " (upstream set)" if result.upstream_set else ""
    if result.pushed:
        n = result.pushed_commits
        lines.append([(f"pushed {n} commit{'' if n == 1 else 's'} to {where}", "green"),
                      (upstream, "dim")])  # fmt: skip
    else:
        lines.append([(f"nothing to push: {where} has every commit", "dim"), (upstream, "dim")])
    return lines


def _files(
    verb: str, paths: list[str], why: str = "", noun: tuple[str, str] = ("file", "files")
) -> list[Line]:
    if not paths:
        return []
    count = f"{len(paths)} {noun[0] if len(paths) == 1 else noun[1]}"
    lines: list[Line] = [[(f"  {verb} {count}", ""), (f" {why}" if why else "", "dim")]]
    lines.extend([("    ", ""), (inline(p), "dim")] for p in paths[:SHOWN])
    if len(paths) > SHOWN:
        lines.append([(f"    ... and {len(paths) - SHOWN} more", "dim")])
    return lines
