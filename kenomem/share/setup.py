"""Setting a vault's repository up for kenomem's merge driver (`kenomem sync --setup`,
`kenomem init --git`); running it again changes nothing.

- `.gitattributes` sends memory files and buffer days to the driver
  (`semantic/**/*.md merge=kenomem`, ..., `buffer/*.md merge=kenomem`); lines already
  there are kept, missing ones added under a comment;
- `.gitignore` keeps `.kenomem/` (the derived index) out of git;
- the repository's own config (`.git/config`, never the user's) names the driver:
  `merge.kenomem.driver = '<python>' -m kenomem merge-driver %O %A %B %P`, with the
  absolute path of the Python that runs kenomem, so git finds it without PATH.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from kenomem.files.atomic import write_bytes
from kenomem.files.paths import BUFFER_DIR, MEMORY_DIRS, STATE_DIR, check_writable
from kenomem.share.git import git

DRIVER = "kenomem"
ATTRIBUTES = ".gitattributes"
IGNORE = ".gitignore"
HEADER = "# kenomem: memory files and buffer days merge through kenomem's merge driver"


def attribute_lines() -> list[str]:
    return [
        *(f"{folder}/**/*.md merge={DRIVER}" for folder in MEMORY_DIRS),
        f"{BUFFER_DIR}/*.md merge={DRIVER}",
    ]


def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m kenomem merge-driver %O %A %B %P"


def missing_lines(text: str, wanted: list[str]) -> list[str]:
    have = {line.strip() for line in text.splitlines()}
    return [line for line in wanted if line not in have]


def planned(root: Path) -> list[str]:
    """What `install` would change, one line each (nothing when all is in place)."""
    changes = []
    if missing_lines(_read(root / ATTRIBUTES), attribute_lines()):
        changes.append(f"{ATTRIBUTES}: send memory files and buffer days to the driver")
    if missing_lines(_read(root / IGNORE), [f"{STATE_DIR}/"]):
        changes.append(f"{IGNORE}: keep {STATE_DIR}/ out of git")
    for key, value in _config().items():
        done = git(root, "config", "--local", "--get", key, check=False)
        if done.code != 0 or done.out.strip() != value:
            changes.append(f"git config {key}")
    return changes


def install(root: Path) -> list[str]:
    """Put the driver in place in the repository at `root`; what changed."""
    changes = planned(root)
    _add_lines(root, ATTRIBUTES, attribute_lines(), HEADER)
    _add_lines(root, IGNORE, [f"{STATE_DIR}/"], "# derived and disposable: kenomem reindex")
    for key, value in _config().items():
        git(root, "config", "--local", key, value)
    return changes


def _config() -> dict[str, str]:
    return {
        f"merge.{DRIVER}.name": "kenomem: memory files and buffer days, without conflict markers",
        f"merge.{DRIVER}.driver": driver_command(),
    }


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _add_lines(root: Path, name: str, wanted: list[str], header: str) -> None:
    text = _read(root / name)
    missing = missing_lines(text, wanted)
    if not missing:
        return
    check_writable(root, name)
    if text and not text.endswith("\n"):
        text += "\n"
    text += ("\n" if text else "") + "\n".join([header, *missing]) + "\n"
    write_bytes(root / name, text.encode("utf-8"))
