"""What each command does once its options are parsed: call one core function and hand
its result to the renderer. Errors are caught in one place, `run`.

This module does not import Typer: `cli.py` declares the options for Typer, and the
entry point's fast path (`argspec.py`) parses the same options without it. Both end
here with the same parameters.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kenomem.cli import handlers_agents as agents
from kenomem.cli import handlers_intro as intro
from kenomem.cli import handlers_upkeep as upkeep
from kenomem.cli.kit import confirmed, moment, opened, read_text
from kenomem.cli.output import Output
from kenomem.errors import KenomemError, storage_error
from kenomem.files.paths import require_vault, resolve_vault


def run(command: str, params: dict[str, Any]) -> int:
    """Run one command; return its exit code (a handler may return one: `doctor`). The only
    place errors are caught."""
    params = dict(params)
    debug = bool(params.pop("debug", False))
    out = Output(
        json_mode=bool(params.pop("json", False)),
        quiet=bool(params.pop("quiet", False)),
        verbose=bool(params.pop("verbose", False)),
    )
    started = time.perf_counter()
    try:
        code = HANDLERS[command](out, **params)
        sys.stdout.flush()
        out.detail(f"{command}: done in {(time.perf_counter() - started) * 1000:.0f} ms")
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
        refused = storage_error(exc)  # a full disk, a read-only folder: not a bug
        if refused is not None:
            out.error(refused.message, refused.hint)
            return refused.exit_code
        out.error(
            f"unexpected {type(exc).__name__}: {exc}",
            hint="run again with --debug for the traceback, and report it",
        )
        return 1
    return code or 0


def _silence_stdout() -> None:
    # The reader went away (`kenomem list | head`): drop what is left quietly.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


# -- the commands ------------------------------------------------------------------------


def init(out: Output, *, path: str | None) -> None:
    from kenomem.cli import render
    from kenomem.vault.init import init_vault

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
    from kenomem.cli import render

    content = read_text(text)
    with opened(out, vault) as v:
        result = v.remember(
            content,
            type=type_,
            tags=tag,
            importance=importance,
            scope=scope,
            session=session,
            title=title,
            pinned=pin,
            supersedes=supersedes,
        )
        render.remember(out, result)


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
    now: str | None,
    vault: str | None,
) -> None:
    from kenomem.cli import render

    start, end, at = moment(since), moment(until, end_of_day=True), moment(now)
    with opened(out, vault) as v:
        result = v.recall(
            " ".join(query),
            limit=limit,
            types=type_,
            tags=tag,
            scopes=scope,
            since=start,
            until=end,
            archive=archive,
            touch=False if no_touch else None,
            w_recency=w_recency,
            w_importance=w_importance,
            w_relevance=w_relevance,
            now=at,
        )
        for warning in result.warnings:
            out.warn(warning)
        render.recall(out, result, explain)


def show(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem.cli import render

    with opened(out, vault) as v:
        render.show(out, v.show(id))


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
    from kenomem.cli import render
    from kenomem.files.memory import STATUSES

    statuses = tuple(status) or (STATUSES if archive else ("active",))
    start, end = moment(since), moment(until, end_of_day=True)
    with opened(out, vault) as v:
        result = v.list(
            types=tuple(type_),
            tags=tuple(tag),
            scopes=tuple(scope),
            statuses=statuses,
            since=start,
            until=end,
            sort=sort,
            reverse=not asc,
            limit=limit,
        )
        render.list_(out, result)


def forget(out: Output, *, id: str, delete: bool, yes: bool, vault: str | None) -> None:
    from kenomem.cli import render

    with opened(out, vault) as v, v.core.sync_once():  # the question and the act: one scan
        if delete and not yes:
            found, path = v.core.resolve_id(id)
            confirmed(out, f"delete {found} ({path}) for good?", yes)
        render.forget(out, v.forget(id, delete=delete))


def edit(out: Output, *, id: str, vault: str | None) -> None:
    from kenomem.capture.edit import edit as run_edit
    from kenomem.capture.edit import editor_command
    from kenomem.cli import render

    with opened(out, vault) as v:
        render.edit(out, run_edit(v.core, id, editor_command()))


def reindex(out: Output, *, vault: str | None) -> None:
    from kenomem.cli import render
    from kenomem.vault.reindex import count_files

    with opened(out, vault) as v:
        files = count_files(v.core) if out.shows_progress else None
        with out.progress("indexing", files) as tick:
            result = v.reindex(tick)
        render.reindex(out, result)


def stats(out: Output, *, vault: str | None) -> None:
    from kenomem.cli import render

    with opened(out, vault) as v:
        render.stats(out, v.stats())


def doctor(out: Output, *, fix: bool, vault: str | None) -> int:
    """Exit 1 while a problem is left (notes alone do not count)."""
    from kenomem.cli import render

    with opened(out, vault, skipped=False) as v:
        result = v.doctor(fix=fix)
        render.doctor(out, result)
    return 1 if result.problems else 0


# What the commands a watcher serves (`served.client.SERVED`) import on the way, whichever
# engine and output they meet: its command server imports them once, before any call (a
# test checks the list against what the calls import).
SERVED_MODULES = (
    "kenomem.api",
    "kenomem.index.scanjob",
    "kenomem.index.concepts",
    "pathspec",
    "kenomem.recall.search",
    "kenomem.recall.rerank",
    "kenomem.recall.touch",
    "kenomem.files.timeparse",
    "kenomem.vault.suggest",
    "kenomem.vault.views",
    "kenomem.agents.context",
    "kenomem.agents.procedural",
    "kenomem.cli.render_agents",
    "kenomem.index.tantivy_engine",
    "tantivy",
    "kenomem.index.whoosh_engine",
    "whoosh.codec.whoosh3",
    "whoosh.collectors",
    "whoosh.highlight",
    "whoosh.query",
    "whoosh.scoring",
    "whoosh.searching",
    "whoosh.sorting",
    "whoosh.writing",
    "encodings.latin_1",
    "rich.console",
    "rich.table",
    "rich.text",
    "rich._emoji_codes",
)


def watch(out: Output, *, polling: bool, serve: bool, vault: str | None) -> None:
    import signal

    from kenomem.cli import render
    from kenomem.cli.argspec import SPEC_FILE, fast_parse
    from kenomem.cli.served import server as forkserver
    from kenomem.watch.watcher import Stopper
    from kenomem.watch.watcher import run as run_watch

    root = require_vault(resolve_vault(vault))
    stopper = Stopper()
    signal.signal(signal.SIGTERM, stopper.stop)
    signal.signal(signal.SIGINT, stopper.stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, stopper.stop)

    say = {"warn": out.warn, "detail": out.detail}

    def log(level: str, message: str) -> None:
        stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        say.get(level, out.message)(f"{stamp} {message}")

    # The command server is forked first, while this process is still one thread. It is
    # handed what it serves: it imports nothing of the command line above it.
    served = forkserver.Commands(run, fast_parse, SERVED_MODULES, (str(SPEC_FILE),))
    server = forkserver.start(root, log, served) if serve else None
    try:
        summary = run_watch(
            root,
            log=log,
            stopper=stopper,
            polling=polling,
            on_beat=lambda: forkserver.check(server, log),
        )
    finally:
        forkserver.stop(server)
    render.watch(out, summary)


def mcp(out: Output, *, vault: str | None) -> None:
    require_vault(resolve_vault(vault))  # before the SDK's import, which takes a while
    # The MCP SDK is imported here only: every other command starts without it.
    from kenomem.mcp_server import serve

    serve(vault)


HANDLERS: dict[str, Callable[..., int | None]] = {
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
    "mcp": mcp,
    "log": upkeep.log,
    "extract": upkeep.extract,
    "consolidate": upkeep.consolidate,
    "approve": upkeep.approve,
    "reject": upkeep.reject,
    "working show": agents.working_show,
    "working set": agents.working_set,
    "working clear": agents.working_clear,
    "patterns": agents.patterns,
    "context": agents.context,
    "import": agents.import_,
    "prune": upkeep.prune,
    "restore": upkeep.restore,
    "reset": upkeep.reset,
    "tour": intro.tour,
}


def version() -> str:
    from kenomem import __version__

    return f"kenomem {__version__}"
