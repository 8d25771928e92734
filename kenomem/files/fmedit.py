"""Change a few frontmatter keys and leave every other byte of the file as it was.

A human's comments, unknown keys, key order, quoting and spacing must survive kenomem
updating `last_accessed`. Re-dumping YAML cannot promise that (python-frontmatter sorts
and reformats; ruamel.yaml's round-trip keeps ~99%), so we splice: only the characters of
the values we change are replaced, and a missing key becomes one new line before the
closing `---`.

Two ways to find a value:
- a line scanner for the common case, where every top-level key sits on one line. It
  needs no YAML library, which keeps `recall` (which touches what it returns) fast;
- PyYAML's composer for the rest (block lists, multi-line strings), whose node marks give
  exact spans (`fmcompose`). A list that only grows gets its new items added in the style
  of the items already there. Its result is parsed again and checked before it is returned.

A key to set that the frontmatter holds twice (two `access_count:` lines, written by hand
or left by a merge) is not set at all: YAML reads the last, the person may mean either,
and changing both would hide the slip. `RepeatedKey` is raised and the file is left as
it is; recall then keeps the access in the state, as it does for a value a person wrote.
"""

from __future__ import annotations

import re
from typing import Any

from kenomem.errors import FrontmatterError
from kenomem.files import fm, fmcompose

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?=[ \t]|\r?$)")


class _Entry:
    __slots__ = ("key", "line", "single_line", "value_end", "value_start")

    def __init__(self, key: str, line: int, value_start: int, value_end: int) -> None:
        self.key = key
        self.line = line  # index into the frontmatter's lines
        self.value_start = value_start  # where the value sits in that line
        self.value_end = value_end
        self.single_line = True  # no following line belongs to the value


class RepeatedKey(FrontmatterError):
    """A key kenomem was to set is written more than once in the frontmatter."""

    def __init__(self, key: str, lines: list[int], path: str) -> None:
        where = ", ".join(str(n) for n in lines)
        super().__init__(
            f"`{key}` is written {'twice' if len(lines) == 2 else f'{len(lines)} times'} "
            f"(lines {where}); kenomem does not choose which one to change and leaves the "
            "file as it is",
            path=path,
            line=lines[0],
        )
        self.key = key
        self.hint = f"keep one `{key}:` line in {path or 'the file'}"


def set_keys(text: str, updates: dict[str, Any], *, path: str = "") -> str:
    """`text` with each key of `updates` set to its value; everything else unchanged.

    A file without frontmatter gets one at the top, holding only these keys. A key of
    `updates` written twice in the frontmatter raises `RepeatedKey` (see above).
    """
    parts = fm.split(text, path)
    if not parts.has_frontmatter:
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        return bom + fm.emit(updates, parts.newline) + text[len(bom) :]
    fm_text = parts.fm_text
    entries = _scan(fm_text)
    if entries is None:  # not one key a line, or a key written twice: YAML's nodes say
        twice = fmcompose.repeated(fm_text, updates, path, parts.first_line)
        if twice:
            key, lines = next(iter(twice.items()))
            raise RepeatedKey(key, lines, path)
    if any(isinstance(value, list | tuple) for value in updates.values()):
        extended, updates = fmcompose.extend_lists(
            fm_text, updates, parts.newline, path, parts.first_line
        )
        if extended != fm_text:
            fm_text, entries = extended, _scan(extended)
    if not updates:
        new_fm = fm_text
    else:
        if entries is not None and all(
            _plainly_editable(fm_text, entries[k]) for k in updates if k in entries
        ):
            new_fm = _splice_lines(fm_text, entries, updates, parts.newline)
        else:
            new_fm = fmcompose.splice_composed(
                fm_text, updates, parts.newline, path, parts.first_line
            )
    return text[: parts.fm_start] + new_fm + text[parts.fm_end :]


def _plainly_editable(fm_text: str, entry: _Entry) -> bool:
    if not entry.single_line:
        return False
    value = fm_text.splitlines()[entry.line][entry.value_start : entry.value_end]
    # Anchors, aliases, tags and block indicators have meaning beyond their characters:
    # such a value goes to the careful path, which checks what it wrote.
    return value[:1] not in ("|", ">", "!") and "&" not in value and "*" not in value


def _scan(fm_text: str) -> dict[str, _Entry] | None:
    """Top-level keys and where their values sit, or None if the block is not that simple.

    An entry is `single_line` when no following line belongs to its value (no block list,
    no block or multi-line string).
    """
    entries: dict[str, _Entry] = {}
    current: _Entry | None = None
    for i, raw in enumerate(fm_text.splitlines()):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if line[0] in " \t" or (line[0] == "-" and (len(line) == 1 or line[1] in " \t")):
            if current is None:
                return None
            current.single_line = False
            continue
        m = _KEY_LINE.match(line)
        if m is None or m.group(1) in entries:
            return None
        span = _value_span(line, m.end())
        if span is None:
            return None
        current = _Entry(m.group(1), i, span[0], span[1])
        entries[current.key] = current
    return entries


def _value_span(line: str, after_colon: int) -> tuple[int, int] | None:
    """Where the value after a key starts and ends on its line; None if it runs on.

    An empty value, a block indicator (`|`, `>`) or a lone anchor or tag may be followed
    by lines that belong to it; `_scan` notices those.
    """
    i = after_colon
    while i < len(line) and line[i] in " \t":
        i += 1
    if i == len(line):
        return i, i
    first = line[i]
    if first == "#":
        return i, i
    if first == '"':
        end = _close_double(line, i)
    elif first == "'":
        end = _close_single(line, i)
    elif first in "[{":
        end = _close_flow(line, i)
    else:
        end = _plain_end(line, i)
    if end < 0:
        return None
    rest = line[end:]
    if rest.strip() and not (rest[0] in " \t" and rest.lstrip(" \t").startswith("#")):
        return None
    return i, end


def _close_double(line: str, i: int) -> int:
    j = i + 1
    while j < len(line):
        if line[j] == "\\":
            j += 2
            continue
        if line[j] == '"':
            return j + 1
        j += 1
    return -1


def _close_single(line: str, i: int) -> int:
    j = i + 1
    while j < len(line):
        if line[j] == "'":
            if j + 1 < len(line) and line[j + 1] == "'":
                j += 2
                continue
            return j + 1
        j += 1
    return -1


def _close_flow(line: str, i: int) -> int:
    depth = 0
    j = i
    while j < len(line):
        ch = line[j]
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return j + 1
        elif ch == '"':
            j = _close_double(line, j)
            if j < 0:
                return -1
            continue
        elif ch == "'":
            j = _close_single(line, j)
            if j < 0:
                return -1
            continue
        elif ch == "#" and line[j - 1] in " \t":
            return -1
        j += 1
    return -1


def _plain_end(line: str, i: int) -> int:
    comment = re.search(r"[ \t]#", line[i:])
    end = i + comment.start() if comment else len(line)
    return len(line[:end].rstrip(" \t"))


def _splice_lines(
    fm_text: str, entries: dict[str, _Entry], updates: dict[str, Any], newline: str
) -> str:
    lines = fm_text.splitlines(keepends=True)
    missing: list[str] = []
    for key, value in updates.items():
        entry = entries.get(key)
        rendered = fm.emit_scalar(value)
        if entry is None:
            missing.append(f"{key}: {rendered}{newline}")
            continue
        line = lines[entry.line]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if entry.value_start == entry.value_end and entry.value_start >= len(body.rstrip(" \t")):
            # `key:` with nothing after it.
            body = body.rstrip(" \t") + " " + rendered
        elif entry.value_start == entry.value_end:
            # `key:   # comment` with no value: the value goes before the comment.
            body = body[: entry.value_start] + rendered + " " + body[entry.value_start :]
        else:
            body = body[: entry.value_start] + rendered + body[entry.value_end :]
        lines[entry.line] = body + ending
    if missing:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        lines.extend(missing)
    return "".join(lines)
