"""Frontmatter: find it, read it, and write the values kenomem owns.

Reading uses PyYAML's C parser with every scalar kept as a string (only `null` is
resolved), so an id like `0123` or `1e10` comes back exactly as written and dates are
parsed by us, not guessed by YAML. Anchors and aliases are refused (a few hundred bytes of
nested aliases expand to gigabytes). Writing new files uses `emit`, which produces one
`key: value` line per key.
"""

# No `from __future__ import annotations`: its records are made at every cold start
# (docs/architecture.md, fast start).

import json
import re
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

from kenomem.errors import FrontmatterError

_OPEN = re.compile(r"\A(\ufeff)?---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


class Split(NamedTuple):
    """A file cut into frontmatter and body. Offsets are into the original text."""

    has_frontmatter: bool
    fm_text: str  # the YAML between the delimiters ("" when none)
    fm_start: int  # offset of the first YAML character
    fm_end: int  # offset of the closing delimiter line
    body_start: int  # offset of the first body character
    newline: str  # the file's line ending, kept for any line we insert
    first_line: int  # 1-based file line of the first YAML line


def split(text: str, path: str = "") -> Split:
    """Cut `text`; raise FrontmatterError if a frontmatter is opened and never closed."""
    m = _OPEN.match(text)
    if not m:
        newline = "\r\n" if "\r\n" in text[:4096] else "\n"
        return Split(False, "", 0, 0, 0, newline, 1)
    start = m.end()
    close = _CLOSE.search(text, start)
    if close is None:
        raise FrontmatterError("frontmatter opened with '---' is never closed", path=path, line=1)
    return Split(
        True, text[start : close.start()], start, close.start(), close.end(), m.group(2), 2
    )


def _string_loader() -> type:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StringLoader(base):  # type: ignore[misc, valid-type]
        pass

    # Keep only the null resolver: everything else stays the string the human typed.
    StringLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag == "tag:yaml.org,2002:null"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return StringLoader


_LOADER: type | None = None


# The frontmatter kenomem writes, and most that people write, is one `key: value` a line
# with plain or simply quoted scalars and flow lists. Such a block is read here, about
# ten times faster than through PyYAML (whose Python constructor is most of a reindex);
# anything else goes to PyYAML. Both give the same dict (tests/files/test_fm_fast.py).
_FAST_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*?))?[ ]*")
_FAST_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^#\t\[\]{},\"'\\]*")
_FAST_ITEM = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^#\t\[\]{},:\"'\\]*")
_NULLS = frozenset(["null", "Null", "NULL", "~"])
# Characters YAML reads as line breaks or refuses: such a block goes to PyYAML.
_FAST_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _fast_scalar(value: str, item: bool = False) -> tuple[bool, Any]:
    if value in _NULLS:
        return True, None
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        return ('"' not in inner and "\\" not in inner), inner
    if len(value) >= 2 and value[0] == value[-1] == "'":
        inner = value[1:-1]
        return "'" not in inner, inner
    rx = _FAST_ITEM if item else _FAST_PLAIN
    if rx.fullmatch(value) and ": " not in value and not value.endswith((":", " ")):
        return True, value
    return False, None


def _fast_line(line: str) -> tuple[str, Any] | None:
    """(key, value) of one line, a list as a tuple; ("", None) for a blank line; None
    when the line is not simple."""
    line = line.rstrip("\r")
    if not line.strip():
        return "", None
    if _FAST_UNSAFE.search(line):
        return None
    m = _FAST_LINE.fullmatch(line)
    if m is None:
        return None
    key, value = m.group(1), m.group(2)
    if not value:
        return key, None
    if value[0] == "[" and value[-1] == "]":
        inner = value[1:-1].strip()
        items: list[Any] = []
        for part in inner.split(",") if inner else []:
            ok, item = _fast_scalar(part.strip(), item=True)
            if not ok or not part.strip():
                return None
            items.append(item)
        return key, tuple(items)
    ok, scalar = _fast_scalar(value)
    return (key, scalar) if ok else None


# Lines read before: most lines of a vault's files are the same few ("type: semantic",
# "pinned: false", "tags: []"), so a rebuild reads each of them once. Those come first;
# once full, the table keeps them and new lines are read each time.
_LINES: dict[str, tuple[str, Any]] = {}
_LINES_LIMIT = 4096


def _fast_parse(fm_text: str) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    lines = _LINES
    for line in fm_text.split("\n"):
        read = lines.get(line)
        if read is None:
            read = _fast_line(line)
            if read is None:
                return None
            if len(lines) < _LINES_LIMIT:
                lines[line] = read
        key, value = read
        if key:
            out[key] = list(value) if type(value) is tuple else value
    return out


def parse(fm_text: str, *, path: str = "", first_line: int = 2) -> dict[str, Any]:
    """The frontmatter as a dict of strings, lists and dicts; errors carry the file line."""
    global _LOADER
    if not fm_text.strip():
        return {}
    fast = _fast_parse(fm_text)
    if fast is not None:
        return fast
    import yaml

    if _LOADER is None:
        _LOADER = _string_loader()
    try:
        if "&" in fm_text or "*" in fm_text:  # without them, YAML has no anchor or alias
            _refuse_aliases(fm_text, path, first_line)
        data = yaml.load(fm_text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        reason = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark
        if exc.context and context is not None and context.line != getattr(mark, "line", None):
            reason += f" ({exc.context} on line {first_line + context.line})"
        raise FrontmatterError(reason, path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(str(exc).splitlines()[0], path=path, line=first_line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            "frontmatter is not a set of 'key: value' lines", path=path, line=first_line
        )
    return {str(k): v for k, v in data.items()}


def _refuse_aliases(fm_text: str, path: str, first_line: int) -> None:
    """Refuse anchors and aliases: nine nested aliases in a few hundred bytes make a value
    of billions of items for whatever walks it (JSON output, the index), and frontmatter
    has no need of them. The events are read without building anything."""
    import yaml

    for event in yaml.parse(fm_text, Loader=_LOADER or _string_loader()):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            mark = event.start_mark
            raise FrontmatterError(
                "YAML anchors and aliases (&name, *name) are not supported in frontmatter; "
                "write the value out in full",
                path=path,
                line=first_line + (mark.line if mark is not None else 0),
            )


# -- writing values --------------------------------------------------------------------

# Compiled on first use: the wide character range costs milliseconds, and only writes need it.
_PLAIN_RX = r"[A-Za-z_\u00c0-\uffff][^\x00-\x1f\x7f:#\[\]{},\"'\\`|>&*!%@]*"
_plain: re.Pattern[str] | None = None
_RESERVED = frozenset(["y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"])


def emit_scalar(value: Any, *, in_list: bool = False) -> str:
    """One YAML flow value, on one line, that a YAML parser reads back as it was."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(emit_scalar(v, in_list=True) for v in value) + "]"
    global _plain
    if _plain is None:
        _plain = re.compile(_PLAIN_RX)
    text = str(value)
    if (
        _plain.fullmatch(text)
        and text == text.strip()
        and text.isprintable()
        and text.lower() not in _RESERVED
        and "  " not in text
        and not (in_list and "?" in text)  # inside [...], "?" can start a key
    ):
        return text
    return _double_quoted(text)


def _double_quoted(text: str) -> str:
    out = []
    for ch in json.dumps(text, ensure_ascii=False)[1:-1]:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def emit(values: dict[str, Any], newline: str = "\n") -> str:
    """A whole frontmatter block, delimiters included, one key per line."""
    lines = ["---"]
    lines.extend(f"{key}: {emit_scalar(value)}" for key, value in values.items())
    lines.append("---")
    return newline.join(lines) + newline


# -- times -------------------------------------------------------------------------------


def format_time(value: datetime) -> str:
    """UTC, second precision, with a Z: the one time format kenomem writes."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """A time written by a human or by kenomem; None when it is not a time."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            return None
    else:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
