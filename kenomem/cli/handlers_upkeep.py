"""Handlers of the sleep cycle and of forgetting: log, extract, consolidate, approve,
reject, prune, restore and reset. Like those in `commands.py`, each calls one core
function and hands its result to the renderer."""

from __future__ import annotations

import sys

from kenomem.cli.kit import confirmed, moment, opened, read_text
from kenomem.cli.output import Output
from kenomem.errors import InvalidInput, UsageError


def log(
    out: Output,
    *,
    text: str,
    who: str | None,
    session: str | None,
    channel: str | None,
    at: str | None,
    vault: str | None,
) -> None:
    from kenomem.cli import render_upkeep as render

    when = moment(at) if at else None
    content = read_text(text)
    with opened(out, vault) as v:
        render.log(out, v.log(content, who=who, session=session, channel=channel, at=when))


def extract(
    out: Output,
    *,
    session: str | None,
    log: bool,
    who: str,
    user_message: str | None,
    vault: str | None,
) -> None:
    from kenomem.cli import render_upkeep as render

    if sys.stdin.isatty():
        raise InvalidInput(
            "extract reads the LLM's reply on stdin",
            hint="pipe it in: llm 'question' | kenomem extract --session s1",
        )
    reply = sys.stdin.read()
    with opened(out, vault) as v:
        result = v.extract(reply, session=session, log=log, who=who, user_message=user_message)
        for problem in result.problems:
            out.warn(problem)
        render.extract(out, result)


def consolidate(
    out: Output,
    *,
    include_today: bool,
    date: str | None,
    dry_run: bool,
    llm: str | None,
    vault: str | None,
) -> None:
    from kenomem.cli import render_upkeep as render
    from kenomem.files.buffer import days as buffer_days

    day = moment(date)
    with opened(out, vault) as v:
        days = len(buffer_days(v.core.root)) if out.shows_progress else None
        with out.progress("consolidating", days) as tick:
            result = v.consolidate(
                include_today=include_today,
                date=day,
                dry_run=dry_run,
                llm=llm,
                progress=tick,
                warn=out.warn,
            )
        render.consolidate(out, result)


def approve(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem.cli import render_upkeep as render

    with opened(out, vault) as v:
        render.decided(out, v.approve(id))


def reject(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem.cli import render_upkeep as render

    with opened(out, vault) as v:
        render.decided(out, v.reject(id))


def prune(
    out: Output, *, dry_run: bool, delete: bool, superseded: bool, yes: bool, vault: str | None
) -> None:
    from kenomem.cli import render_upkeep as render

    with opened(out, vault) as v:
        if delete and not dry_run:
            confirmed(out, "delete the memories prune retires, instead of archiving them?", yes)
        with out.progress("pruning", None) as tick:
            result = v.prune(dry_run=dry_run, delete=delete, superseded=superseded, progress=tick)
        render.prune(out, result)


def restore(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem.cli import render_upkeep as render

    with opened(out, vault) as v:
        render.restored(out, v.restore(id))


def reset(
    out: Output, *, memory: bool, all_: bool, undo: bool, yes: bool, vault: str | None
) -> None:
    from kenomem.cli import render_upkeep as render

    if sum((memory, all_, undo)) != 1:
        raise UsageError("say what to reset: --memory, --all, or --undo")
    with opened(out, vault) as v:
        if undo:
            render.reset(out, v.undo_reset())
            return
        what = (
            "every memory (all but kenomem.toml)"
            if all_
            else "the buffer and the episodic, working and procedural memories"
        )
        confirmed(out, f"reset {what}? (kenomem reset --undo brings it back)", yes)
        render.reset(out, v.reset(everything=all_))
