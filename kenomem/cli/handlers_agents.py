"""Handlers of what an agent uses while it works: the context block, the session's
working memory and the procedural patterns. Like those in `commands.py`, each calls one
method of the Python API and hands its result to the renderer."""

from __future__ import annotations

from collections.abc import Callable

from kenomem.cli.kit import opened, read_text
from kenomem.cli.output import Output
from kenomem.errors import UsageError


def working_show(out: Output, *, session: str, vault: str | None) -> None:
    from kenomem.cli import render_agents as render

    with opened(out, vault) as v:
        render.working_show(out, session, v.working(session))


def working_set(out: Output, *, session: str, text: str | None, vault: str | None) -> None:
    from kenomem.cli import render_agents as render

    content = read_text("-" if text is None else text)
    with opened(out, vault) as v:
        render.working_set(out, v.set_working(session, content))


def working_clear(out: Output, *, session: str, vault: str | None) -> None:
    from kenomem.cli import render_agents as render

    with opened(out, vault) as v:
        render.working_clear(out, v.clear_working(session))


def patterns(out: Output, *, message: list[str], no_touch: bool, vault: str | None) -> None:
    from kenomem.cli import render_agents as render

    words = list(message or [])
    text = read_text("-") if words == ["-"] else " ".join(words) if words else None
    if text is not None and not text.strip():
        raise UsageError(
            "the message is empty", hint="kenomem patterns (no message) lists them all"
        )
    with opened(out, vault) as v:
        render.patterns(out, v.patterns(text, touch=not no_touch))


def context(
    out: Output,
    *,
    query: list[str],
    session: str | None,
    budget: int | None,
    no_touch: bool,
    vault: str | None,
) -> None:
    from kenomem.cli import render_agents as render

    with opened(out, vault) as v:
        result = v.context(
            " ".join(query), session=session, budget=budget, touch=False if no_touch else None
        )
        render.context(out, result)


def import_(
    out: Output,
    *,
    file: str,
    as_: str,
    session: str | None,
    type_: str | None,
    tag: list[str],
    dry_run: bool,
    vault: str | None,
) -> None:
    from contextlib import ExitStack

    from kenomem.cli import render_agents as render

    text = read_text("-") if file == "-" else None
    with opened(out, vault) as v, ExitStack() as stack:
        bar: list[Callable[[int], None]] = []

        def progress(done: int, total: int) -> None:
            if not bar:  # the bar opens once the number of records is known
                bar.append(stack.enter_context(out.progress("importing", total)))
            bar[0](done)

        result = v.import_file(
            None if text is not None else file,
            text=text,
            target=as_,
            session=session,
            type=type_,
            tags=tag,
            dry_run=dry_run,
            progress=progress,
        )
        stack.close()
        render.import_(out, result)
