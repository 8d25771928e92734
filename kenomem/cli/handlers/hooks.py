"""The handler of `kenomem hook AGENT [EVENT] [PAYLOAD]`, the command an agent runs on its
events (`hooks/run.py` says what each does).

An agent waits for its hooks and may take a failed one for a reason to stop, so this
handler ends with exit code 0 whatever happens: a failure is one line on stderr and
nothing on stdout. What the agent adds to its model's context is printed as Claude Code
reads it: `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`,
nothing when there is nothing to add. Claude Code's payload comes on stdin; Codex's
`notify` program gives it as the last argument.
"""

from __future__ import annotations

import sys

from kenomem.cli.output import Output
from kenomem.errors import KenomemError, storage_error

PREFIX = "kenomem hook"


def hook(
    out: Output,
    *,
    agent: str,
    event: str | None = None,
    payload: str | None = None,
    vault: str | None = None,
) -> int:
    from kenomem.api import Vault
    from kenomem.files.paths import resolve_vault
    from kenomem.hooks.run import HookRequest

    try:
        data: bytes | str = payload if payload is not None else _stdin()
        opened = Vault(resolve_vault(vault), source="hook")
        result = opened.hook(HookRequest(agent, event, data))
    except KenomemError as exc:
        _say(f"{exc.message} (nothing was added)")
        return 0
    except OSError as exc:
        refused = storage_error(exc)
        _say(refused.message if refused is not None else f"{type(exc).__name__}: {exc}")
        return 0
    except Exception as exc:  # never the agent's problem: said, and reported as a bug
        _say(f"unexpected {type(exc).__name__}: {exc} (a bug: please report it)")
        return 0
    if result.context and agent == "claude-code":
        import json

        answer = {
            "hookSpecificOutput": {
                "hookEventName": result.event,
                "additionalContext": result.context,
            }
        }
        sys.stdout.write(json.dumps(answer) + "\n")
    if result.problems:
        more = f" (and {len(result.problems) - 1} more)" if len(result.problems) > 1 else ""
        _say(result.problems[0] + more)
    out.detail(
        f"hook {result.agent} {result.event}: scope {result.scope or '-'}, "
        f"{result.logged} turns logged, {result.already} logged before, "
        f"{result.dropped} not logged, {len(result.stored)} memories stored"
        + (" (turned off in [hooks])" if result.off else "")
    )
    return 0


def _stdin() -> bytes:
    """The payload on stdin, read up to one byte past the limit (so that the limit is
    seen); nothing when stdin is a terminal or closed."""
    from kenomem.hooks.payload import MAX_PAYLOAD

    stream = sys.stdin
    if stream is None or stream.closed or stream.isatty():
        return b""
    raw = getattr(stream, "buffer", None)  # a text stream without one: read as text
    if raw is None:
        return str(stream.read(MAX_PAYLOAD + 1)).encode("utf-8", "surrogateescape")
    data: bytes = raw.read(MAX_PAYLOAD + 1)
    return data


def _say(line: str) -> None:
    """One line on stderr, its control characters and line breaks shown, never run."""
    from kenomem.cli.output import inline

    try:
        sys.stderr.write(f"{PREFIX}: {inline(line)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
