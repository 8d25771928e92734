"""What a person meets first: `kenomem` alone (how to start, or where the vault stands)
and `kenomem tour` (a demo vault, and the main commands run on it, explained)."""

from __future__ import annotations

import os
import sys

from kenomem.cli.kit import Run
from kenomem.cli.output import Output
from kenomem.errors import KenomemError
from kenomem.files.paths import resolve_vault
from kenomem.files.vaultfind import DEFAULT

# (what the step shows, the command line, without --vault)
STEPS: list[tuple[str, list[str]]] = [
    (
        "A vault is a folder of markdown files, one memory per file: facts (semantic), "
        "events (episodic), procedures, a session's scratchpad (working). list shows the "
        "newest first.",
        ["list"],
    ),
    (
        "recall finds memories and ranks them by recency + importance + relevance. It "
        "reads the words of the query, not an exact phrase.",
        ["recall", "database"],
    ),
    (
        "--explain shows the three terms of each result: how recently it was used, how "
        "important it is, how well it matches. A time in the query ('last week') counts too.",
        ["recall", "when is the launch", "--explain"],
    ),
    (
        "remember stores a memory in a file of its own; its type is classified from the "
        "text unless --type says it.",
        ["remember", "Mara wants feedback in writing, not in meetings", "--tag", "people"],
    ),
    (
        "Remembering what is already known reinforces that memory instead of writing a "
        "second one: it will rank a little higher from now on.",
        ["remember", "Mara wants feedback in writing, not in meetings."],
    ),
    (
        "Procedural memory: a pattern applies when a message holds every term of its "
        "trigger (here docker + port + in use).",
        ["patterns", "docker says port 8080 is already in use"],
    ),
    (
        "Working memory: one session's scratchpad (task, context, pending steps), which an "
        "agent rewrites as it works.",
        ["working", "show", "--session", "tour"],
    ),
    (
        "context packs what an agent should know into a block for its system prompt, "
        "within a token budget: the foundation, the scratchpad, the patterns and facts "
        "that fit the query, the conversation so far.",
        ["context", "deploy the launch build", "--session", "tour", "--budget", "500"],
    ),
]


def welcome(out: Output) -> int:
    """`kenomem` with no command: which vault the commands use here and why, then how to
    begin without a vault, or a short status with one."""
    from pathlib import Path

    from kenomem.cli.render import intro as render
    from kenomem.files.vaultfind import choose, find

    path, why = choose(None)
    root = Path(path)
    passed: list[str] = []
    if why == DEFAULT:  # say which vaults of others the search passed over
        try:
            find(os.getcwd(), passed)
        except OSError:
            pass
    if not root.is_dir():
        render.welcome(out, root, why, passed, None)
        return 0
    from kenomem.api import Vault

    try:
        stats = Vault(root, source="cli").stats()
    except KenomemError as exc:
        out.error(exc.message, exc.hint)
        return exc.exit_code
    render.welcome(out, root, why, passed, stats)
    return 0


def tour(out: Output, *, path: str, pause: bool = True, run: Run) -> None:
    """`run` runs one command, as `handlers.run`: each step is a command of its own."""
    from kenomem.cli.demo import build_demo
    from kenomem.cli.render import intro as render

    demo = build_demo(resolve_vault(path))
    shown = str(demo.root)
    render.tour_start(out, demo, shown)
    pause = pause and sys.stdin.isatty() and sys.stdout.isatty()
    for n, (why, argv) in enumerate(STEPS, 1):
        if pause and n > 1 and not _next():
            break
        render.tour_step(out, n, len(STEPS), why, f"kenomem {_shown(argv)}")
        _run_step(run, argv, demo.root)
    render.tour_end(out, shown)


def _run_step(run: Run, argv: list[str], root: object) -> None:
    from kenomem.cli.argspec import fast_parse

    parsed = fast_parse([*argv, "--vault", str(root)])
    if parsed is None:  # a step the fast path cannot read is a mistake in STEPS
        raise KenomemError(f"the tour cannot run: kenomem {_shown(argv)}")
    sys.stdout.flush()
    code = run(*parsed)
    sys.stdout.flush()
    if code:
        raise KenomemError(f"the tour stopped at: kenomem {_shown(argv)}")


def _next() -> bool:
    print("\n[Enter] next step, q to stop ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return False
    return answer.strip().lower() not in ("q", "quit")


def _shown(argv: list[str]) -> str:
    import shlex  # here: every command imports this module for the handler table

    return shlex.join(argv)
