"""Handlers of what an agent uses while it works: the context block, the session's
working memory and the procedural patterns. Like those in `commands.py`, each calls one
method of the Python API and hands its result to the renderer."""

from __future__ import annotations

from kenomem.command_kit import opened, read_text
from kenomem.errors import UsageError
from kenomem.output import Output


def working_show(out: Output, *, session: str, vault: str | None) -> None:
    from kenomem import render_agents as render

    with opened(out, vault) as v:
        render.working_show(out, session, v.working(session))


def working_set(out: Output, *, session: str, text: str | None, vault: str | None) -> None:
    from kenomem import render_agents as render

    content = read_text("-" if text is None else text)
    with opened(out, vault) as v:
        render.working_set(out, v.set_working(session, content))


def working_clear(out: Output, *, session: str, vault: str | None) -> None:
    from kenomem import render_agents as render

    with opened(out, vault) as v:
        render.working_clear(out, v.clear_working(session))


def patterns(out: Output, *, message: list[str], no_touch: bool, vault: str | None) -> None:
    from kenomem import render_agents as render

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
    from kenomem import render_agents as render

    with opened(out, vault) as v:
        result = v.context(
            " ".join(query), session=session, budget=budget, touch=False if no_touch else None
        )
        render.context(out, result)
