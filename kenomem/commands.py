"""What each command does once its options are parsed: call one core function and hand
its result to the renderer. Errors are caught in one place, `run`.

This module does not import Typer: `cli.py` declares the options for Typer, and the
entry point's fast path (`argspec.py`) parses the same options without it. Both end
here with the same parameters.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kenomem.errors import InvalidInput, KenomemError, Refused
from kenomem.output import Output
from kenomem.paths import resolve_vault

MAX_WARNINGS = 5


def run(command: str, params: dict[str, Any]) -> int:
    """Run one command; return its exit code. The only place errors are caught."""
    params = dict(params)
    debug = bool(params.pop("debug", False))
    out = Output(json_mode=bool(params.pop("json", False)))
    try:
        HANDLERS[command](out, **params)
        sys.stdout.flush()
    except KenomemError as exc:
        if debug:
            raise
        out.error(exc.message, exc.hint)
        return exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except Exception as exc:
        if debug:
            raise
        out.error(
            f"unexpected {type(exc).__name__}: {exc}",
            hint="run again with --debug for the traceback, and report it",
        )
        return 1
    return 0


def _silence_stdout() -> None:
    # The reader went away (`kenomem list | head`): drop what is left quietly.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


@contextmanager
def opened(out: Output, vault_flag: str | None, *, skipped: bool = True) -> Iterator[Any]:
    """The vault named by the options, with its warnings reported however the command ends.

    `skipped=False` leaves out the files the sync skipped (`doctor` lists them itself).
    """
    from kenomem.vault import Vault

    vault = Vault.open(resolve_vault(vault_flag))
    try:
        yield vault
    finally:
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


def _moment(text: str | None, end_of_day: bool = False) -> datetime | None:
    if text is None:
        return None
    from kenomem.timeparse import parse_moment

    return parse_moment(text, datetime.now(UTC), end_of_day=end_of_day)


def _read_text(text: str) -> str:
    if text != "-":
        return text
    if sys.stdin.isatty():
        raise InvalidInput(
            "'-' reads the text from stdin, but stdin is a terminal",
            hint='pipe the text in: echo "..." | kenomem remember -',
        )
    return sys.stdin.read()


# -- the commands ------------------------------------------------------------------------


def init(out: Output, *, path: str | None) -> None:
    from kenomem import render
    from kenomem.vault_init import init_vault

    render.init(out, init_vault(resolve_vault(path)))


def remember(
    out: Output,
    *,
    text: str,
    type_: str | None,
    tag: list[str],
    importance: int | None,
    scope: str | None,
    session: str | None,
    title: str | None,
    pin: bool,
    supersedes: str | None,
    vault: str | None,
) -> None:
    from kenomem import render
    from kenomem.remember import RememberRequest
    from kenomem.remember import remember as run_remember

    request = RememberRequest(
        text=_read_text(text),
        type=type_,
        tags=tuple(tag),
        importance=importance,
        scope=scope,
        session=session,
        title=title,
        pinned=pin,
        supersedes=supersedes,
    )
    with opened(out, vault) as v:
        render.remember(out, run_remember(v, request))


def recall(
    out: Output,
    *,
    query: list[str],
    limit: int | None,
    type_: list[str],
    tag: list[str],
    scope: list[str],
    since: str | None,
    until: str | None,
    archive: bool,
    no_touch: bool,
    explain: bool,
    w_recency: float | None,
    w_importance: float | None,
    w_relevance: float | None,
    vault: str | None,
) -> None:
    from kenomem import render
    from kenomem.recall import RecallRequest
    from kenomem.recall import recall as run_recall

    request = RecallRequest(
        query=" ".join(query),
        limit=limit,
        types=tuple(type_),
        tags=tuple(tag),
        scopes=tuple(scope),
        since=_moment(since),
        until=_moment(until, end_of_day=True),
        archive=archive,
        touch=False if no_touch else None,
        w_recency=w_recency,
        w_importance=w_importance,
        w_relevance=w_relevance,
    )
    with opened(out, vault) as v:
        result = run_recall(v, request)
        for warning in result.warnings:
            out.warn(warning)
        render.recall(out, result, explain)


def show(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem import render
    from kenomem.views import show as run_show

    with opened(out, vault) as v:
        render.show(out, run_show(v, id))


def list_(
    out: Output,
    *,
    type_: list[str],
    tag: list[str],
    scope: list[str],
    status: list[str],
    archive: bool,
    since: str | None,
    until: str | None,
    sort: str,
    asc: bool,
    limit: int,
    vault: str | None,
) -> None:
    from kenomem import render
    from kenomem.memory import STATUSES
    from kenomem.views import ListRequest, list_memories

    statuses = tuple(status) or (STATUSES if archive else ("active",))
    request = ListRequest(
        types=tuple(type_),
        tags=tuple(tag),
        scopes=tuple(scope),
        statuses=statuses,
        since=_moment(since),
        until=_moment(until, end_of_day=True),
        sort=sort,
        reverse=not asc,
        limit=limit,
    )
    with opened(out, vault) as v:
        render.list_(out, list_memories(v, request))


def forget(out: Output, *, id: str, delete: bool, yes: bool, vault: str | None) -> None:
    from kenomem import render
    from kenomem.forget import forget as run_forget

    with opened(out, vault) as v:
        if delete and not yes:
            v.sync()
            found, path = v.resolve_id(id)
            answer = out.confirm(f"delete {found} ({path}) for good?")
            if answer is None:
                raise Refused(
                    "refusing to delete without confirmation",
                    hint="add --yes to delete without asking",
                )
            if not answer:
                raise Refused("nothing deleted")
        render.forget(out, run_forget(v, id, delete=delete))


def edit(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem import render
    from kenomem.edit import edit as run_edit
    from kenomem.edit import editor_command

    with opened(out, vault) as v:
        render.edit(out, run_edit(v, id, editor_command()))


def reindex(out: Output, *, vault: str | None) -> None:
    from kenomem import render
    from kenomem.maintenance import count_files
    from kenomem.maintenance import reindex as run_reindex

    with opened(out, vault) as v:
        with out.progress("indexing", count_files(v) if sys.stderr.isatty() else None) as tick:
            result = run_reindex(v, tick)
        render.reindex(out, result)


def stats(out: Output, *, vault: str | None) -> None:
    from kenomem import render
    from kenomem.views import stats as run_stats

    with opened(out, vault) as v:
        render.stats(out, run_stats(v))


def doctor(out: Output, *, fix: bool, vault: str | None) -> None:
    from kenomem import render
    from kenomem.doctor import doctor as run_doctor

    with opened(out, vault, skipped=False) as v:
        render.doctor(out, run_doctor(v, fix=fix))


def watch(out: Output, *, polling: bool, verbose: bool, vault: str | None) -> None:
    import signal

    from kenomem import render
    from kenomem.paths import require_vault
    from kenomem.watch import Stopper
    from kenomem.watch import run as run_watch

    root = require_vault(resolve_vault(vault))
    stopper = Stopper()
    signal.signal(signal.SIGTERM, stopper.stop)
    signal.signal(signal.SIGINT, stopper.stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, stopper.stop)

    def log(level: str, message: str) -> None:
        if level == "detail" and not verbose:
            return
        stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        (out.warn if level == "warn" else out.message)(f"{stamp} {message}")

    render.watch(out, run_watch(root, log=log, stopper=stopper, polling=polling))


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
    from kenomem import render
    from kenomem.buffer import log as run_log

    moment = _moment(at) if at else None
    with opened(out, vault) as v:
        result = run_log(
            v,
            _read_text(text),
            who=who or "",
            session=session or "",
            channel=channel or "",
            at=moment,
        )
        render.log(out, result)


def extract(
    out: Output,
    *,
    session: str | None,
    log: bool,
    who: str,
    user_message: str | None,
    vault: str | None,
) -> None:
    from kenomem import render
    from kenomem.extract import extract as run_extract

    if sys.stdin.isatty():
        raise InvalidInput(
            "extract reads the LLM's reply on stdin",
            hint="pipe it in: llm 'question' | kenomem extract --session s1",
        )
    reply = sys.stdin.read()
    with opened(out, vault) as v:
        result = run_extract(v, reply, session=session, log=log, who=who, user_message=user_message)
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
    from kenomem import render
    from kenomem.buffer import days as buffer_days
    from kenomem.consolidate import consolidate as run_consolidate

    moment = _moment(date)
    only = moment.date() if moment else None
    with opened(out, vault) as v:
        command = llm if llm is not None else v.settings.consolidate.llm_command or None
        with out.progress("consolidating", len(buffer_days(v))) as tick:
            result = run_consolidate(
                v,
                include_today=include_today,
                only=only,
                dry_run=dry_run,
                llm=command,
                progress=tick,
                warn=out.warn,
            )
        render.consolidate(out, result)


def approve(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem import render
    from kenomem.decide import approve as run_approve

    with opened(out, vault) as v:
        render.decided(out, run_approve(v, id))


def reject(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem import render
    from kenomem.decide import reject as run_reject

    with opened(out, vault) as v:
        render.decided(out, run_reject(v, id))


HANDLERS: dict[str, Callable[..., None]] = {
    "init": init,
    "remember": remember,
    "recall": recall,
    "show": show,
    "list": list_,
    "forget": forget,
    "edit": edit,
    "reindex": reindex,
    "stats": stats,
    "watch": watch,
    "doctor": doctor,
    "log": log,
    "extract": extract,
    "consolidate": consolidate,
    "approve": approve,
    "reject": reject,
}


def version() -> str:
    from kenomem import __version__

    return f"kenomem {__version__}"
