"""What a remote's commits may bring into the vault, decided before git touches it.

A remote is a stranger: whoever can push to it chooses what its commits hold. `sync`
merges only the vault's own files, so before its `git merge` it lists what the fetched
branch changed since the merge base (`git diff-tree -r -z --no-renames`, with modes; from
each base when there are several; every file of the branch when there is none: a first
sync, or histories that do not meet), and refuses the whole merge when one change is:

- a name that is hidden (it starts with a dot), at any depth: `.kenomem/` (the derived
  index, whose segments Whoosh unpickles, the lock), `archive/.reset/` (the trash of
  `reset`, which sync never commits either), a file named `.kenomem`,
  `semantic/.kenomem`, `.git`, a `.gitignore` in a folder. A name is read as a
  case-insensitive file system or one that ignores some characters would read it:
  `.KENOMEM`, `.kenomem` behind a zero-width character, `KENOME~1` (Windows' short name)
  are all `.kenomem`. The vault's own exceptions: `.gitkeep` in a folder, and the top
  `.gitignore` and `.gitattributes` under the rule below;
- a symlink (mode 120000), a submodule (160000), anything but a regular file;
- a path outside the vault's own files (`is_own`): memory files (`*.md`) in the memory
  folders and buffer days, `foundation.md`, `kenomem.toml`, `README.md`;
- a name with an empty, `.` or `..` part;
- a top `.gitignore` or `.gitattributes` whose rules differ from this clone's (its lines
  but blank ones and comments, in order): the first keeps `.kenomem/` out of git (a
  remote that un-ignored it would have the next `git add -A` share the index), the
  second chooses merge drivers, filters and encodings for every file.

Nothing is merged then: the error names each path, why, and the commit that brought it.
`kenomem.toml` arrives like any file: what of it is trusted is decided where settings
are read (`config.py`).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import RemoteRefused
from kenomem.files.paths import BUFFER_DIR, FOUNDATION, MARKER, MEMORY_DIRS, STATE_DIR
from kenomem.share.git import LITERAL, blobs, git, git_bytes
from kenomem.share.setup import ATTRIBUTES, IGNORE

KEEP = ".gitkeep"
OWN_FILES = (FOUNDATION, MARKER, "README.md", ATTRIBUTES, IGNORE)
RULE_FILES = (IGNORE, ATTRIBUTES)
FILE_MODES = ("100644", "100755")
DELETED = "000000"
SHOWN = 5  # refused paths named, with their commits, before "and N more"

# What a case-insensitive or Windows file system may read as a hidden name: `KENOME~1`,
# `GIT~1` (8.3 short names).
_SHORT_NAME = re.compile(r"^(kenome|git)~\d+$")


class Change(NamedTuple):
    """A path the merge would bring, with its mode after the change ("000000": deleted)."""

    path: str
    mode: str


class Refusal(NamedTuple):
    path: str
    why: str
    commit: str = ""  # the short hash of the commit that brought it


def is_own(path: str) -> bool:
    """Whether a work-tree path is one of the vault's own files, the ones `sync` commits
    and merges: memory files and buffer days (and the `.gitkeep` that keep their
    folders), `foundation.md`, `kenomem.toml`, `README.md`, `.gitattributes`,
    `.gitignore`. Never `.kenomem/` or a hidden name in a folder (the trash of `reset`,
    `archive/.reset/`, is one: memories deleted here are never shared). Pure."""
    parts = path.split("/")
    if len(parts) == 1:
        return path in OWN_FILES
    if parts[0] not in MEMORY_DIRS and parts[0] != BUFFER_DIR:
        return False
    if any(_hidden(part) for part in parts[:-1]):
        return False
    return parts[-1] == KEEP or (path.endswith(".md") and not _hidden(parts[-1]))


def why_refused(path: str, mode: str) -> str:
    """Why a change a remote brings is never merged ("" when it may be): its name, its
    mode and where it is. The rules of `.gitignore` and `.gitattributes` are judged by
    `rules_differ`. Pure."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "a path with an empty, . or .. part"
    for part in parts:
        if _bare(part) == STATE_DIR:
            return f"in or named {STATE_DIR}, kenomem's own state"
    if mode == "120000":
        return "a symlink"
    if mode == "160000":
        return "a submodule"
    if mode not in (*FILE_MODES, DELETED):
        return f"not a regular file (mode {mode})"
    if not is_own(path):
        hidden = any(_hidden(part) for part in parts) and parts[-1] != KEEP
        return "a hidden name" if hidden else "not one of the vault's own files"
    return ""


def rules(text: str) -> list[str]:
    """The lines of a `.gitignore` or `.gitattributes` that say something, in order:
    blank lines and comments left out, every other byte kept. Pure."""
    lines = (line.removesuffix("\r") for line in text.split("\n"))
    return [line for line in lines if line.strip() and not line.startswith("#")]


def rules_differ(ours: str, theirs: str) -> bool:
    return rules(ours) != rules(theirs)


def _bare(name: str) -> str:
    """A name as a case-insensitive file system that ignores some characters may store
    it: compatibility-normalised, case-folded, format characters (zero-width ones, as
    HFS+ ignores) left out, trailing dots and spaces (as Windows drops) too; an 8.3
    short name of a hidden one becomes that name."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf").rstrip(". ")
    short = _SHORT_NAME.match(folded)
    if short:
        return ".kenomem" if short.group(1) == "kenome" else ".git"
    return folded


def _hidden(name: str) -> bool:
    return _bare(name).startswith(".") or name.startswith(".")


# -- reading what the fetched branch brings -----------------------------------------------


def refusals(root: Path, ref: str, *, limit: int = SHOWN) -> tuple[list[Refusal], int]:
    """What of the changes `ref` brings since its merge base(s) with HEAD is refused,
    the first `limit` with the commit that brought each; and how many in all."""
    bases = git(root, "merge-base", "--all", "HEAD", ref, check=False).out.split()
    changes = incoming(root, ref, bases)
    refused = [Refusal(c.path, why) for c in changes if (why := why_refused(c.path, c.mode))]
    rule_files = [c.path for c in changes if c.path in RULE_FILES and not why_refused(*c)]
    if rule_files:
        texts = blobs(root, [f"{rev}:{p}" for p in rule_files for rev in ("HEAD", ref)])
        for i, path in enumerate(rule_files):
            ours, theirs = (_text(t) for t in texts[2 * i : 2 * i + 2])
            if rules_differ(ours, theirs):
                refused.append(Refusal(path, f"rules that differ from this clone's {path}"))
    refused.sort()
    named = [r._replace(commit=_brought_by(root, ref, bases, r.path)) for r in refused[:limit]]
    return named, len(refused)


def incoming(root: Path, ref: str, bases: list[str]) -> list[Change]:
    """Every path `ref` changed since one of `bases`, with its new mode; every file of
    `ref` when there is no base."""
    found: dict[str, str] = {}
    if not bases:
        listed = git_bytes(root, "ls-tree", "-r", "-z", "--full-tree", ref).split(b"\0")
        for record in filter(None, listed):
            info, _, path = record.partition(b"\t")
            found[os.fsdecode(path)] = info.split()[0].decode()
    for base in bases:
        listed = git_bytes(root, "diff-tree", "-r", "-z", "--no-renames", base, ref).split(b"\0")
        for info, path in zip(listed[0::2], listed[1::2], strict=False):
            if info.startswith(b":"):  # ":old-mode new-mode old new status"
                mode = info[1:].split()[1].decode()
                name = os.fsdecode(path)
                if found.get(name, DELETED) == DELETED:
                    found[name] = mode
    return [Change(path, mode) for path, mode in sorted(found.items())]


def check(root: Path, ref: str, remote: str, branch: str) -> None:
    """Refuse (`RemoteRefused`) a merge of `ref` that would bring what kenomem never
    merges; nothing is changed either way."""
    named, total = refusals(root, ref)
    if not named:
        return
    first = named[0].commit or ref
    raise RemoteRefused(
        f"{remote}/{branch} brings what kenomem never merges: {describe(named, total)}. "
        "Nothing was merged; the vault is as it was",
        hint=f"whoever controls {remote} must remove it from {branch} (git rm, commit, "
        f"push), then kenomem sync again; to review it: git show {first}. Merge it "
        f"yourself (git merge {remote}/{branch}) only if you trust every file it brings",
    )


def describe(named: list[Refusal], total: int) -> str:
    """The refused paths, each with why and its commit; "and N more" past those named."""
    listed = "; ".join(f"{shown(r.path)} ({r.why}; commit {r.commit or '?'})" for r in named)
    return listed + (f"; and {total - len(named)} more" if total > len(named) else "")


def shown(path: str) -> str:
    """A path as a message names it: as it is when printable, else quoted with its
    control characters escaped (a newline in a name never splits the message)."""
    return path if path.isprintable() else repr(path)


def _brought_by(root: Path, ref: str, bases: list[str], path: str) -> str:
    """The short hash of the newest commit of `ref`, since `bases`, that changed `path`."""
    args = ["log", "-1", "--format=%h", ref, *(f"^{b}" for b in bases), "--", f"{LITERAL}{path}"]
    return git(root, *args, check=False).out.strip()


def _text(blob: bytes | None) -> str:
    return "" if blob is None else blob.decode("utf-8", "replace")
