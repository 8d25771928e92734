"""Handlers of the vault's upkeep: the sleep cycle (log, extract, consolidate, approve,
reject), forgetting (prune, restore, reset), doctor, trust, watch and model show|pull. Like those in
`handlers/memory.py`, each calls one method of the Python API, with the request built
from its parameters (`handlers.run`), and hands the result to the renderer."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenomem.cli.kit import Run, confirmed, opened
from kenomem.cli.output import Output
from kenomem.errors import InvalidInput, KenomemError, UsageError
from kenomem.files.paths import require_vault, resolve_vault

if TYPE_CHECKING:  # each handler imports what it runs when it is called
    from kenomem.capture.extract import ExtractRequest
    from kenomem.capture.log import LogRequest
    from kenomem.forget.prune import PruneRequest
    from kenomem.forget.reset import ResetRequest
    from kenomem.sleep.consolidate import ConsolidateRequest
    from kenomem.vault.doctor import DoctorRequest
    from kenomem.watch.watcher import WatchRequest


def log(out: Output, *, request: LogRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.log(out, v.log(request))


def extract(out: Output, *, request: ExtractRequest, vault: str | None = None) -> None:
    """The reply is read from stdin, into the request."""
    from kenomem.cli.render import upkeep as render

    if sys.stdin.isatty():
        raise InvalidInput(
            "extract reads the LLM's reply on stdin",
            hint="pipe it in: llm 'question' | kenomem extract --session s1",
        )
    reply = sys.stdin.read()
    with opened(out, vault) as v:
        result = v.extract(request, reply=reply)
        for problem in result.problems:
            out.warn(problem)
        render.extract(out, result)


def consolidate(out: Output, *, request: ConsolidateRequest, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        days = len(v.buffer_days()) if out.shows_progress else None
        with out.progress("consolidating", days) as tick:
            result = v.consolidate(request, progress=tick, warn=out.warn)
        render.consolidate(out, result)


def approve(out: Output, *, id: str, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.decided(out, v.approve(id))


def reject(out: Output, *, id: str, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.decided(out, v.reject(id))


def prune(
    out: Output, *, request: PruneRequest, yes: bool = False, vault: str | None = None
) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        if request.delete and not request.dry_run:
            confirmed(out, "delete the memories prune retires, instead of archiving them?", yes)
        with out.progress("pruning", None) as tick:
            result = v.prune(request, progress=tick)
        render.prune(out, result)


def restore(out: Output, *, id: str, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.restored(out, v.restore(id))


def reset(
    out: Output,
    *,
    request: ResetRequest,
    memory: bool = False,
    undo: bool = False,
    yes: bool = False,
    vault: str | None = None,
) -> None:
    """Exactly one of --memory, --all (the request's `everything`) and --undo: --memory
    says the request's default aloud, and --undo chooses the other method of the API
    (`undo_reset`); both are the command line's own."""
    from kenomem.cli.render import upkeep as render

    if sum((memory, request.everything, undo)) != 1:
        raise UsageError("say what to reset: --memory, --all, or --undo")
    with opened(out, vault) as v:
        if undo:
            render.reset(out, v.undo_reset())
            return
        what = (
            "every memory (all but kenomem.toml)"
            if request.everything
            else "the buffer and the episodic, working and procedural memories"
        )
        confirmed(out, f"reset {what}? (kenomem reset --undo brings it back)", yes)
        render.reset(out, v.reset(request))


def doctor(out: Output, *, request: DoctorRequest, vault: str | None = None) -> int:
    """Exit 1 while a problem is left (notes alone do not count)."""
    from kenomem.cli.render import upkeep as render

    with opened(out, vault, skipped=False) as v:
        result = v.doctor(request)
        render.doctor(out, result)
    return 1 if result.problems else 0


# What the commands a watcher serves (`served.client.SERVED`) import on the way, whichever
# engine and output they meet: its command server imports them once, before any call (a
# test checks the list against what the calls import).
SERVED_MODULES = (
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
    "kenomem.cli.handlers.memory",
    "kenomem.cli.handlers.agents",
    "kenomem.cli.render.agents",
    "kenomem.cli.handlers.hooks",
    "kenomem.hooks.run",
    "kenomem.hooks.prompt",
    "kenomem.hooks.transcript",
    "kenomem.ingest.transcripts",
    "kenomem.files.secrets",
    "kenomem.index.tantivy_engine",
    "tantivy",
    "kenomem.index.whoosh_engine",
    "kenomem.index.whoosh_storage",
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


def trust(
    out: Output, *, revoke: bool = False, dry_run: bool = False, vault: str | None = None
) -> None:
    """Read from the vault's file as it is, without opening the vault: what the file asks
    is shown, not warned about."""
    from kenomem.cli.render import upkeep as render
    from kenomem.config import accept_settings, revoke_settings

    if revoke and dry_run:
        raise UsageError("--revoke and --dry-run do not go together")
    root = require_vault(resolve_vault(vault))
    if revoke:
        render.trust(out, revoke_settings(root), action="revoke")
    else:
        render.trust(
            out, accept_settings(root, dry_run=dry_run), action="dry-run" if dry_run else "accept"
        )


def model_show(out: Output, *, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.model_show(out, v.model_info())


# What a served recall or context needs besides, in a vault with an embeddings provider.
MEANING_MODULES = (
    "numpy",
    "kenomem.embed.provider",
    "kenomem.embed.store",
    "kenomem.embed.keep",
    "kenomem.embed.likeness",
)
PROVIDER_MODULES = {
    "openai": ("kenomem.embed.http",),
    "fastembed": ("kenomem.embed.local", "fastembed"),
}


class Warmth:
    """What the watcher's command server keeps ready for the calls it forks, with an
    embeddings provider: the fastembed model (loaded once, so a served recall pays no
    model load; the openai provider's model lives in its server), and the vector store
    (opened at the start, and again before a call when its files changed)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.meaning: Any = None
        self.started = False

    def __call__(self) -> None:
        from kenomem.embed.keep import warm

        if not self.started:
            self.started = True
            from kenomem.vault.core import CoreVault

            vault = CoreVault.open(self.root)
            settings = vault.settings.embeddings
            if settings.provider == "fastembed":
                from kenomem.embed import local

                local.warm(settings)
            self.meaning = vault.meaning
        if self.meaning is not None:
            warm(self.meaning)


def preloaded(root: Path) -> tuple[str, ...]:
    """The modules the command server imports before any call: those of a recall, and
    with an embeddings provider, those of recall by meaning (numpy alone costs a cold call
    tens of milliseconds)."""
    from kenomem.config import load_settings

    try:
        provider = load_settings(root).embeddings.provider
    except KenomemError:
        provider = "none"
    if provider == "none":
        return SERVED_MODULES
    return (*SERVED_MODULES, *MEANING_MODULES, *PROVIDER_MODULES.get(provider, ()))


def model_pull(out: Output, *, vault: str | None = None) -> None:
    from kenomem.cli.render import upkeep as render

    with opened(out, vault) as v:
        render.model_pull(out, v.pull_model(progress=out.shows_progress, say=out.message))


def watch(
    out: Output,
    *,
    request: WatchRequest,
    run: Run,
    serve: bool = True,
    vault: str | None = None,
) -> None:
    """`run` runs one command, as `handlers.run`: the command server is handed it. Serving
    commands (`serve`) is the command line's own; the watcher knows nothing of it."""
    import signal

    from kenomem.cli.argspec import SPEC_FILE, fast_parse
    from kenomem.cli.render import upkeep as render
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
    served = forkserver.Commands(run, fast_parse, preloaded(root), (str(SPEC_FILE),), Warmth(root))
    server = forkserver.start(root, log, served) if serve else None
    try:
        summary = run_watch(
            root, request, log=log, stopper=stopper, on_beat=lambda: forkserver.check(server, log)
        )
    finally:
        forkserver.stop(server)
    render.watch(out, summary)
