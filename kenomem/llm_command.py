"""Running the configured LLM command: the prompt on its stdin, the answer on its stdout.

Shared by the sleep cycle (`llm.py`) and recall's query expansion (`query_llm.py`); it
imports nothing of kenomem, so recall does not pay for the sleep cycle's modules.
"""

from __future__ import annotations

import shlex
import subprocess


class CommandFailed(Exception):
    """The command did not answer: `reason` says why ("could not run (...)", "took over
    Ns", "exited with N"); `stderr_tail` is the last line of its stderr when it exited."""

    def __init__(self, reason: str, stderr_tail: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr_tail = stderr_tail


def ask(command: str, prompt: str, timeout: float) -> str:
    """The command's stdout for `prompt`; CommandFailed if it has none to give."""
    try:
        done = subprocess.run(
            shlex.split(command),
            input=prompt,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, ValueError) as exc:
        raise CommandFailed(f"could not run ({exc})") from exc
    except subprocess.TimeoutExpired:
        raise CommandFailed(f"took over {timeout:g}s") from None
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [""])[-1][:200]
        raise CommandFailed(f"exited with {done.returncode}", tail)
    return done.stdout
