"""Handlers of what an agent uses while it works: the context block, the session's working
memory, the procedural patterns, and importing chat histories. Like those in
`handlers/memory.py`, each calls one method of the Python API and hands its result to the
renderer."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kenomem.cli.kit import opened, read_text
from kenomem.cli.output import Output
from kenomem.errors import UsageError

if TYPE_CHECKING:
    from kenomem.agents.context import ContextRequest
    from kenomem.agents.procedural import PatternsRequest


def working_show(out: Output, *, session: str, vault: str | None = None) -> None:
    from kenomem.cli.render import agents as render

    with opened(out, vault) as v:
        render.working_show(out, session, v.working(session))


def working_set(out: Output, *, session: str, text: str, vault: str | None = None) -> None:
    from kenomem.cli.render import agents as render

    with opened(out, vault) as v:
        render.working_set(out, v.set_working(session, text))


def working_clear(out: Output, *, session: str, vault: str | None = None) -> None:
    from kenomem.cli.render import agents as render

    with opened(out, vault) as v:
        render.working_clear(out, v.clear_working(session))


def patterns(out: Output, *, request: PatternsRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import agents as render

    if request.message is not None and not request.message.strip():
        raise UsageError(
            "the message is empty", hint="kenomem patterns (no message) lists them all"
        )
    with opened(out, vault) as v:
        render.patterns(out, v.patterns(request))


def context(out: Output, *, request: ContextRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import agents as render

    with opened(out, vault) as v:
        render.context(out, v.context(request))


def import_(out: Output, *, file: str, vault: str | None = None, **options: Any) -> None:
    """`file` is read by the API (`import_file`), or here from stdin for '-'; the other
    options are the fields of `ImportRequest`."""
    from contextlib import ExitStack

    from kenomem.cli.render import agents as render

    text = read_text("-") if file == "-" else None
    with opened(out, vault) as v, ExitStack() as stack:
        bar: list[Callable[[int], None]] = []

        def progress(done: int, total: int) -> None:
            if not bar:  # the bar opens once the number of records is known
                bar.append(stack.enter_context(out.progress("importing", total)))
            bar[0](done)

        result = v.import_file(
            None if text is not None else file, text=text, progress=progress, **options
        )
        stack.close()
        render.import_(out, result)
