"""What the vault's `.gitignore` excludes: such files are not memories, and the watcher
drops their events.

Only the `.gitignore` at the vault's root is read (the template's ignores `.kenomem/`).
Ignored files are still recorded in the state, marked, so that a scan sees nothing new
in them; a change to the rules re-evaluates every file (the index is rebuilt).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

GITIGNORE = ".gitignore"
IGNORED = "ignored by the vault's .gitignore"

Matcher = Callable[[str], bool]


def rules(root: Path) -> str:
    """The vault's ignore rules, one per line, comments and blanks dropped ("" if none).

    Cheap on purpose (one small read, no pattern compiled): every sync compares it with
    the rules the state was built under.
    """
    try:
        text = (root / GITIGNORE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(
        line.rstrip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def matcher(rule_text: str) -> Matcher:
    """Whether a vault-relative path is ignored under `rule_text` (from `rules`)."""
    if not rule_text:
        return lambda _path: False
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(rule_text.splitlines())

    def ignored(path: str) -> bool:
        # As git: a file in an excluded folder stays excluded, whatever `!` rules say.
        parts = path.split("/")
        folders = ("/".join(parts[:i]) + "/" for i in range(1, len(parts)))
        return any(spec.match_file(folder) for folder in folders) or spec.match_file(path)

    return ignored
