"""How working memory and procedural patterns look: the JSON document and the lines for
people."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kenomem.api import to_jsonable
from kenomem.cli.output import Line, Output, Segment
from kenomem.cli.render.memory import TYPE_STYLE
from kenomem.files.plural import counted

if TYPE_CHECKING:  # only for annotations: a command imports just the core it runs
    from kenomem.agents.context import ContextResult
    from kenomem.agents.procedural import PatternsResult
    from kenomem.agents.working import WorkingClearResult, WorkingSetResult, WorkingView
    from kenomem.ingest.importer import ImportResult


def working_show(out: Output, session: str, view: WorkingView | None) -> None:
    if view is None:
        out.message(f"no working memory for session {session}")
        out.data({"session": session, "found": False}, [])
        return
    from kenomem.files.fm import format_time
    from kenomem.files.timeparse import ago

    doc = {"found": True, **to_jsonable(view)}
    relative = ago(view.updated, datetime.now(UTC))
    # A terminal reads "2 hours ago"; a pipe gets the exact time as well.
    age = f"updated {relative}" if out.rich else f"updated {format_time(view.updated)} ({relative})"
    header: Line = [
        (f"working memory of {view.session}", "bold"),
        (f"  {view.id}", "dim"),
        (f"  {age}", "dim"),
    ]
    if view.stale:
        header.append(
            (
                f"  STALE: not written for over {counted(view.stale_days, 'day')}; context "
                "leaves it out",
                "yellow",
            )
        )
    lines: list[Line] = [header, [("", "")]]
    lines.extend([(line, "")] for line in view.text.splitlines())
    out.data(doc, lines)


def working_set(out: Output, result: WorkingSetResult) -> None:
    form = f"structured: {', '.join(result.fields)}" if result.structured else "free text"
    out.data(
        to_jsonable(result),
        [
            [
                (f"{result.action} ", "green"),
                ("working memory of ", ""),
                (result.session, "bold"),
                (f"  {result.path}  ({form})", "dim"),
            ]
        ],
    )


def working_clear(out: Output, result: WorkingClearResult) -> None:
    if not result.cleared:
        out.message(f"no working memory for session {result.session}: nothing to clear")
        out.data(to_jsonable(result), [])
        return
    out.data(
        to_jsonable(result),
        [
            [
                ("archived ", "green"),
                ("working memory of ", ""),
                (result.session, "bold"),
                (f"  {result.old_path} -> {result.path}", "dim"),
            ]
        ],
    )


def patterns(out: Output, result: PatternsResult) -> None:
    doc = to_jsonable(
        {"message": result.message, "touched": result.touched, "patterns": result.patterns}
    )
    if not result.patterns:
        out.message(
            "no pattern matches this message"
            if result.message is not None
            else "no procedural patterns yet (consolidate proposes them from repetition)"
        )
    if result.message is not None:
        lines: list[Line] = []
        for p in result.patterns:
            lines.append(
                [
                    (p.title, "bold"),
                    (f"  when {p.trigger}" if p.trigger else "  pinned", "dim"),
                    (f"  {p.id}", "dim"),
                ]
            )
            lines.extend([("    " + line, "")] for line in p.text.splitlines() if line.strip())
        out.data(doc, lines)
        return
    rows: list[list[Segment]] = [
        [
            (p.status, "green" if p.status == "active" else "yellow"),
            (p.trigger or "-", ""),
            ("" if p.confidence is None else f"{p.confidence:g}", "dim"),
            (str(p.usage_count), "dim"),
            (p.title, TYPE_STYLE["procedural"] if p.pinned else ""),
            (p.id, "dim"),
        ]
        for p in result.patterns
    ]
    proposed = sum(p.status == "proposed" for p in result.patterns)
    footer: list[Line] = []
    if proposed:
        footer.append(
            [(f"{proposed} proposed: kenomem approve ID or kenomem reject ID decides", "dim")]
        )
    out.table(doc, ["status", "trigger", "confidence", "used", "title", "id"], rows, footer)


def context(out: Output, result: ContextResult) -> None:
    """The block itself is the product: plain markdown on stdout, for a prompt. What was
    left out is said inside the block; the totals go to stderr."""
    if out.json_mode:
        out.data(to_jsonable(result), [])
        return
    out.text(result.text)
    from kenomem.agents.context import left_out_said

    left = sum(p.left_out for p in result.parts)
    said = left_out_said(result.left_out) if result.left_out_note else ""
    more = f"; left out: {said}" if said else f", {counted(left, 'entry')} left out" if left else ""
    out.message(f"{result.tokens} of {result.budget} tokens ({result.tokenizer}){more}")


MAX_PROBLEMS = 20


def import_(out: Output, result: ImportResult) -> None:
    """The counts on stdout; each invalid record, and each one skipped for a reason other
    than being there already, on stderr (all of them in the JSON's `items`)."""
    problems = [
        item
        for item in result.items
        if item.action == "invalid" or (item.action == "skipped" and "already" not in item.reason)
    ]
    for item in problems[:MAX_PROBLEMS]:
        out.warn(f"{item.action} {item.where}: {item.reason}")
    if len(problems) > MAX_PROBLEMS:
        out.warn(f"... and {len(problems) - MAX_PROBLEMS} more (--json lists every record)")
    for warning in result.warnings:
        out.warn(warning)
    made = "buffer entry" if result.target == "buffer" else "memory"
    verb = "would create" if result.dry_run else "created"
    line: Line = [
        (f"{verb} {counted(result.created, made)}", "green" if result.created else ""),
        (f", skipped {result.skipped}", "dim"),
        (f", invalid {result.invalid}", "yellow" if result.invalid else "dim"),
        (f"  ({result.format.upper()}, {result.seconds:.1f} s)", "dim"),
    ]
    out.data(to_jsonable(result), [line])
