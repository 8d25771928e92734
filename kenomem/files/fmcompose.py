"""The careful path of `fmedit`: PyYAML's composer gives the exact span of every value, so
block lists, block texts, nested maps and multi-line values can be changed in place.

A list that only grows (a tag added by a reinforcement, a source added by consolidation)
gets its new items added in the style of those already there: a `  - item` line after
the last item of a block list, `, item` after the last item of a flow list. Any other
new value replaces the old one on the key's line, as one line; full-line comments that
were between the items of a replaced list or map are kept. Every result is parsed again
and checked before it is returned.
"""

from __future__ import annotations

import re
from typing import Any

from kenomem.errors import FrontmatterError
from kenomem.files import fm


def _compose(fm_text: str, path: str, first_line: int) -> list[tuple[Any, Any]]:
    """The (key node, value node) pairs of the frontmatter, with their marks."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(fm_text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        raise FrontmatterError(
            f"cannot update: {getattr(exc, 'problem', exc)}", path=path, line=line
        ) from None
    if root is None:
        return []
    if isinstance(root, yaml.MappingNode):
        return list(root.value)
    raise FrontmatterError(
        "frontmatter is not a set of 'key: value' lines", path=path, line=first_line
    )


class _Lines:
    """The frontmatter's lines, and the offset in the text of a YAML mark."""

    def __init__(self, fm_text: str) -> None:
        self.text = fm_text
        self.lines = fm_text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, mark: Any) -> int:  # marks count lines and characters, like str indices
        return min(self.starts[min(mark.line, len(self.lines))] + mark.column, len(self.text))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):  # from the end: offsets stay valid
        text = text[:start] + new + text[end:]
    return text


def extend_lists(
    fm_text: str, updates: dict[str, Any], newline: str, path: str, first_line: int
) -> tuple[str, dict[str, Any]]:
    """Add in place the new items of lists that only grow; the text and the updates left.

    A list set to what it already holds needs no edit at all. Anything this cannot do
    (or whose result does not read back as intended) is left to the other updates.
    """
    import yaml

    try:
        pairs = _compose(fm_text, path, first_line)
        old = fm.parse(fm_text, path=path, first_line=first_line)
    except FrontmatterError:
        return fm_text, updates  # the general path reports it
    nodes = {k.value: v for k, v in pairs if isinstance(k, yaml.ScalarNode)}
    text = _Lines(fm_text)
    edits: list[tuple[int, int, str]] = []
    done: dict[str, Any] = {}
    for key, value in updates.items():
        have = old.get(key)
        if not isinstance(value, list | tuple) or key not in nodes or not isinstance(have, list):
            continue
        if _written(list(value))[: len(have)] != have or len(value) < len(have):
            continue
        added = list(value)[len(have) :]
        if added:
            edit = _append_edit(text, nodes[key], added, newline)
            if edit is None:
                continue
            edits.append(edit)
        done[key] = value
    if not done:
        return fm_text, updates
    out = _apply(fm_text, edits)
    try:
        _check(fm_text, out, done, path, first_line)
    except FrontmatterError:
        return fm_text, updates
    return out, {k: v for k, v in updates.items() if k not in done}


def _append_edit(
    text: _Lines, node: Any, added: list[Any], newline: str
) -> tuple[int, int, str] | None:
    """The insertion that adds `added` after the last item of a list of plain values."""
    import yaml

    if not isinstance(node, yaml.SequenceNode) or not all(
        isinstance(item, yaml.ScalarNode) and item.style not in ("|", ">") for item in node.value
    ):
        return None
    if node.flow_style:
        items = [fm.emit_scalar(v, in_list=True) for v in added]
        if node.value:
            at = text.offset(node.value[-1].end_mark)
            return at, at, "".join(", " + item for item in items)
        at = text.offset(node.end_mark) - 1
        return (at, at, ", ".join(items)) if text.text[at : at + 1] == "]" else None
    if not node.value:
        return None
    last = node.value[-1]
    start, end = last.start_mark, last.end_mark
    if start.line >= len(text.lines):
        return None
    dash = text.lines[start.line][: start.column]  # `  - ` as this list writes it
    if not re.fullmatch(r"[ \t]*-[ \t]+", dash):
        return None
    end_line = end.line - 1 if end.column == 0 and end.line > start.line else end.line
    end_line = min(end_line, len(text.lines) - 1)
    at = text.starts[end_line + 1]
    lead = "" if text.lines[end_line].endswith(("\n", "\r")) else newline
    return at, at, lead + "".join(dash + fm.emit_scalar(v) + newline for v in added)


def repeated(
    fm_text: str, keys: dict[str, Any], path: str, first_line: int
) -> dict[str, list[int]]:
    """The keys of `keys` that the frontmatter holds more than once, each with the file
    lines it is on; none when the frontmatter cannot be composed (its edit says why)."""
    import yaml

    try:
        pairs = _compose(fm_text, path, first_line)
    except FrontmatterError:
        return {}
    lines: dict[str, list[int]] = {}
    for key_node, _ in pairs:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value in keys:
            lines.setdefault(key_node.value, []).append(first_line + key_node.start_mark.line)
    return {key: at for key, at in lines.items() if len(at) > 1}


def _written(value: Any) -> Any:
    """`value` as it reads back once written."""
    return fm.parse(f"v: {fm.emit_scalar(value)}")["v"]


def splice_composed(
    fm_text: str, updates: dict[str, Any], newline: str, path: str, first_line: int
) -> str:
    import yaml

    pairs = _compose(fm_text, path, first_line)
    text = _Lines(fm_text)
    lines, starts, offset = text.lines, text.starts, text.offset
    edits: list[tuple[int, int, str]] = []
    found: set[str] = set()
    for key_node, value_node in pairs:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if key not in updates:
            continue
        found.add(key)
        rendered = fm.emit_scalar(updates[key])
        block = (isinstance(value_node, yaml.CollectionNode) and not value_node.flow_style) or (
            isinstance(value_node, yaml.ScalarNode) and value_node.style in ("|", ">")
        )
        if block:
            edits.append(_block_edit(lines, starts, key_node, value_node, rendered, newline))
            continue
        start, end = offset(value_node.start_mark), offset(value_node.end_mark)
        if start == end and fm_text[start - 1 : start] == ":":
            rendered = " " + rendered  # `key:` with nothing after it
        edits.append((start, end, rendered))
    out = _apply(fm_text, edits)
    tail = [f"{k}: {fm.emit_scalar(v)}{newline}" for k, v in updates.items() if k not in found]
    if tail:
        if out and not out.endswith("\n"):
            out += newline
        out += "".join(tail)
    _check(fm_text, out, updates, path, first_line)
    return out


def _block_edit(
    lines: list[str],
    starts: list[int],
    key_node: Any,
    value_node: Any,
    rendered: str,
    newline: str,
) -> tuple[int, int, str]:
    """Replace a block value (a list or map on the lines below, or a `|` text) by one line.

    The key's line keeps its comment; blank lines and comments after the block stay, and
    so do the comment lines between the items of a list or map (after the new line).
    """
    key_line = key_node.start_mark.line
    line = lines[key_line]
    body = line.rstrip("\r\n")
    ending = line[len(body) :] or newline
    colon = body.index(":", key_node.end_mark.column)
    comment = re.search(r"[ \t]#.*$", body[colon + 1 :])
    new_line = body[: colon + 1] + " " + rendered
    if comment:
        new_line += " " + comment.group(0).strip()
    end = value_node.end_mark
    last = min(end.line - (1 if end.column == 0 else 0), len(lines) - 1)
    while last > key_line and (not lines[last].strip() or lines[last].startswith("#")):
        last -= 1
    inside = _value_lines(value_node)
    kept = [
        lines[i] if lines[i].endswith(("\n", "\r")) else lines[i] + newline
        for i in range(key_line + 1, last + 1)
        if i not in inside and lines[i].lstrip(" \t").startswith("#")
    ]
    return starts[key_line], starts[last + 1], new_line + ending + "".join(kept)


def _value_lines(node: Any) -> set[int]:
    """The lines that scalars of this value occupy (a `#` there may be text, not a comment);
    all of them for a block text."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return set(range(node.start_mark.line, node.end_mark.line + 1))
    lines: set[int] = set()
    for item in node.value:
        for part in item if isinstance(item, tuple) else (item,):
            lines |= _value_lines(part)
    return lines


def _check(before: str, after: str, updates: dict[str, Any], path: str, first_line: int) -> None:
    """Refuse an edit whose result does not read back as intended."""
    old = fm.parse(before, path=path, first_line=first_line)
    try:
        new = fm.parse(after, path=path, first_line=first_line)
    except FrontmatterError:
        new = None
    expected = dict(old)
    for key, value in updates.items():
        expected[key] = _written(value)
    if new != expected:
        raise FrontmatterError(
            "cannot update this frontmatter without rewriting it; left as it is",
            path=path,
            line=first_line,
        )
