"""kenomem.files.fm: finding, reading and writing frontmatter."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import FrontmatterError
from kenomem.files import fm

FAST = settings(max_examples=200, deadline=None)


# -- split ------------------------------------------------------------------------------


def test_split_finds_yaml_and_body() -> None:
    text = "---\nid: a\ntitle: x\n---\nbody line\n"
    parts = fm.split(text)
    assert parts.has_frontmatter
    assert parts.fm_text == "id: a\ntitle: x\n"
    assert text[parts.fm_start : parts.fm_end] == parts.fm_text
    assert text[parts.body_start :] == "body line\n"
    assert parts.newline == "\n"
    assert parts.first_line == 2


def test_split_keeps_bom_outside_the_yaml() -> None:
    text = "\ufeff---\nid: a\n---\nbody\n"
    parts = fm.split(text)
    assert parts.has_frontmatter
    assert parts.fm_text == "id: a\n"
    assert text[parts.body_start :] == "body\n"


def test_split_crlf() -> None:
    text = "---\r\nid: a\r\n---\r\nbody\r\n"
    parts = fm.split(text)
    assert parts.has_frontmatter
    assert parts.newline == "\r\n"
    assert parts.fm_text == "id: a\r\n"
    assert text[parts.body_start :] == "body\r\n"


def test_split_no_frontmatter() -> None:
    for text in ("# Title\n\nText\n", "", "text --- with dashes\n---\n", "----\na: 1\n---\n"):
        parts = fm.split(text)
        assert not parts.has_frontmatter
        assert parts.fm_text == ""
        assert parts.body_start == 0


def test_split_no_frontmatter_detects_crlf() -> None:
    assert fm.split("line one\r\nline two\r\n").newline == "\r\n"
    assert fm.split("line one\nline two\n").newline == "\n"


def test_split_closing_variants() -> None:
    # `...` closes a YAML document too; trailing blanks on the delimiters are allowed.
    parts = fm.split("--- \na: 1\n... \nbody")
    assert parts.fm_text == "a: 1\n"
    assert parts.body_start == len("--- \na: 1\n... \n")
    # A file that ends right at the closing delimiter.
    text = "---\na: 1\n---"
    parts = fm.split(text)
    assert parts.fm_text == "a: 1\n"
    assert text[parts.body_start :] == ""


def test_split_empty_frontmatter() -> None:
    parts = fm.split("---\n---\nbody\n")
    assert parts.has_frontmatter
    assert parts.fm_text == ""
    assert fm.parse(parts.fm_text) == {}


def test_split_stops_at_first_closing_delimiter() -> None:
    text = "---\na: 1\n---\nbody\n---\nmore\n"
    parts = fm.split(text)
    assert parts.fm_text == "a: 1\n"
    assert text[parts.body_start :] == "body\n---\nmore\n"


def test_split_unclosed_frontmatter_is_an_error_on_line_1() -> None:
    with pytest.raises(FrontmatterError) as info:
        fm.split("---\nid: a\ntitle: never closed\n\nbody\n", "semantic/x.md")
    assert info.value.line == 1
    assert info.value.path == "semantic/x.md"
    assert str(info.value).startswith("semantic/x.md:1: ")


# -- parse ------------------------------------------------------------------------------


def test_parse_keeps_every_scalar_as_typed() -> None:
    data = fm.parse(
        "id: 0123\n"
        "big: 1e10\n"
        "hash: 09e494321750\n"
        "yes_: yes\n"
        "no_: no\n"
        "on_: On\n"
        "flag: true\n"
        "day: 2026-02-14\n"
        "moment: 2026-02-14T10:30:00Z\n"
        "ratio: 1.50\n"
        "hex: 0x1F\n"
        "inf: .inf\n"
        "neg: -7\n"
        "quoted: '007'\n"
    )
    assert data == {
        "id": "0123",
        "big": "1e10",
        "hash": "09e494321750",
        "yes_": "yes",
        "no_": "no",
        "on_": "On",
        "flag": "true",
        "day": "2026-02-14",
        "moment": "2026-02-14T10:30:00Z",
        "ratio": "1.50",
        "hex": "0x1F",
        "inf": ".inf",
        "neg": "-7",
        "quoted": "007",
    }


def test_parse_resolves_only_null() -> None:
    data = fm.parse("a: null\nb: ~\nc:\nd: Null\ne: 'null'\nf: nullable\n")
    assert data == {"a": None, "b": None, "c": None, "d": None, "e": "null", "f": "nullable"}


def test_parse_lists_and_nested_maps() -> None:
    data = fm.parse(
        "tags: [a, 2, no, null]\nblock:\n  - x\n  - 10\nnested:\n  inner: 1\n  deep:\n    k: [y]\n"
    )
    assert data == {
        "tags": ["a", "2", "no", None],
        "block": ["x", "10"],
        "nested": {"inner": "1", "deep": {"k": ["y"]}},
    }


def test_parse_numeric_keys_become_strings() -> None:
    assert fm.parse("1: one\n2026: year\n") == {"1": "one", "2026": "year"}


def test_parse_empty_and_blank() -> None:
    assert fm.parse("") == {}
    assert fm.parse("   \n\n") == {}
    assert fm.parse("# only a comment\n") == {}


def test_parse_not_a_mapping() -> None:
    with pytest.raises(FrontmatterError) as info:
        fm.parse("- a\n- b\n", path="p.md", first_line=2)
    assert info.value.line == 2
    with pytest.raises(FrontmatterError):
        fm.parse("just a sentence\n")


def _error_of(text: str, path: str = "semantic/x.md") -> FrontmatterError:
    parts = fm.split(text, path)
    with pytest.raises(FrontmatterError) as info:
        fm.parse(parts.fm_text, path=path, first_line=parts.first_line)
    return info.value


def test_parse_error_unclosed_flow_list_reports_file_lines() -> None:
    # File line 3 opens the list; the parser notices on line 4.
    err = _error_of("---\nid: x\ntags: [a, b\ntitle: y\n---\nbody\n")
    assert err.line == 4
    assert err.path == "semantic/x.md"
    assert "line 3" in str(err)
    assert str(err).startswith("semantic/x.md:4: ")


def test_parse_error_line_counts_blank_lines_and_bom() -> None:
    err = _error_of("\ufeff---\r\n\r\n\r\na: 1\r\nb: {c\r\n---\r\n")
    assert err.line == 6
    assert "line 5" in str(err)


def test_parse_error_bad_indentation_line() -> None:
    err = _error_of("---\na: 1\n  b: 2\n---\n")
    assert err.line == 3


def test_parse_error_unterminated_quote() -> None:
    err = _error_of('---\na: 1\nb: "open\n---\n')
    assert err.line == 4
    assert "line 3" in str(err)


def test_parse_error_undefined_alias() -> None:
    err = _error_of("---\nx: 1\na: *nope\n---\n")
    assert err.line == 3


def test_parse_error_default_first_line_is_2() -> None:
    # Without `first_line` the YAML is taken to start on file line 2 (after `---`).
    with pytest.raises(FrontmatterError) as info:
        fm.parse("a: [1\n", path="f.md")
    assert info.value.line == 3
    assert "line 2" in str(info.value)


# -- emit_scalar ------------------------------------------------------------------------


def _read_back(rendered: str) -> object:
    return fm.parse(f"k: {rendered}")["k"]


@FAST
@given(st.text())
def test_emit_scalar_round_trips_any_text(s: str) -> None:
    rendered = fm.emit_scalar(s)
    assert "\n" not in rendered and "\r" not in rendered
    assert _read_back(rendered) == s
    assert yaml.safe_load(f"k: {rendered}") == {"k": s}


TRICKY = [
    "",
    " ",
    "  leading",
    "trailing  ",
    "a  b",
    "key: value",
    "a:b",
    "# not a comment",
    "a #b",
    "a#b",
    "'single'",
    '"double"',
    "it's",
    "back\\slash",
    "- item",
    "-",
    "?",
    "? q",
    "[x]",
    "{x: 1}",
    "a, b",
    "&anchor",
    "*alias",
    "!tag",
    "%directive",
    "@at",
    "`tick",
    "|",
    ">",
    "---",
    "...",
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "true",
    "False",
    "null",
    "NULL",
    "~",
    "0123",
    "1e10",
    "09e494321750",
    "2026-02-14",
    "2026-02-14T10:30:00Z",
    ".inf",
    "0x1F",
    "tab\there",
    "line\nbreak",
    "cr\rcr",
    "nul\x00byte",
    "del\x7f",
    "nel\x85",
    "ls\u2028ps\u2029",
    "bom\ufeff",
    "\ufeffbom",
    "nbsp\u00a0",
    "\u00a0",
    "Café crème",
    "日本語のメモ",
    "emoji 😀",
    "😀",
    "\U0010ffff",
    "\ue000private",
    "\ufffe",
]


@pytest.mark.parametrize("s", TRICKY)
def test_emit_scalar_round_trips_tricky_text(s: str) -> None:
    rendered = fm.emit_scalar(s)
    assert "\n" not in rendered and "\r" not in rendered
    assert _read_back(rendered) == s
    assert yaml.safe_load(f"k: {rendered}") == {"k": s}


def test_emit_scalar_plain_when_safe() -> None:
    assert fm.emit_scalar("hello world") == "hello world"
    assert fm.emit_scalar("mem_20260214_103000_7f3a") == "mem_20260214_103000_7f3a"
    assert fm.emit_scalar("Café") == "Café"


def test_emit_scalar_quotes_reserved_words_and_numbers() -> None:
    for s in ("yes", "no", "true", "null", "~", "0123", "1e10", "2026-02-14"):
        assert fm.emit_scalar(s).startswith('"'), s


def test_emit_scalar_other_types() -> None:
    assert fm.emit_scalar(None) == "null"
    assert fm.emit_scalar(True) == "true"
    assert fm.emit_scalar(False) == "false"
    assert fm.emit_scalar(7) == "7"
    assert fm.emit_scalar(0.5) == "0.5"
    assert fm.emit_scalar(date(2026, 2, 14)) == "2026-02-14"
    assert fm.emit_scalar([]) == "[]"
    assert fm.emit_scalar(("a", "b")) == "[a, b]"


def test_emit_scalar_datetime_is_utc_with_z() -> None:
    moment = datetime(2026, 2, 14, 10, 30, tzinfo=UTC)
    assert fm.emit_scalar(moment) == "2026-02-14T10:30:00Z"
    plus_two = datetime(2026, 2, 14, 12, 30, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert fm.emit_scalar(plus_two) == "2026-02-14T10:30:00Z"
    assert fm.emit_scalar(datetime(2026, 2, 14, 10, 30)) == "2026-02-14T10:30:00Z"
    assert _read_back(fm.emit_scalar(moment)) == "2026-02-14T10:30:00Z"


@FAST
@given(st.lists(st.text(), max_size=6))
def test_emit_scalar_lists_of_strings_round_trip(items: list[str]) -> None:
    rendered = fm.emit_scalar(items)
    assert "\n" not in rendered
    assert _read_back(rendered) == items
    assert yaml.safe_load(f"k: {rendered}") == {"k": items}


def test_emit_scalar_list_with_separators_inside_items() -> None:
    items = ["a, b", "[x]", "{y}", "c: d", "#e", " f ", ""]
    assert _read_back(fm.emit_scalar(items)) == items


# -- emit -------------------------------------------------------------------------------


def test_emit_one_line_per_key_in_order() -> None:
    out = fm.emit({"id": "mem_1", "tags": ["a", "b"], "pinned": False, "supersedes": None})
    assert out == "---\nid: mem_1\ntags: [a, b]\npinned: false\nsupersedes: null\n---\n"


def test_emit_crlf() -> None:
    out = fm.emit({"a": "one", "b": "two"}, "\r\n")
    assert out == "---\r\na: one\r\nb: two\r\n---\r\n"


def test_emit_empty() -> None:
    assert fm.emit({}) == "---\n---\n"


@FAST
@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True),
        st.one_of(st.text(), st.lists(st.text(), max_size=3), st.none()),
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n"]),
    st.text(),
)
def test_emit_then_split_and_parse(values: dict, newline: str, body: str) -> None:
    text = fm.emit(values, newline) + body
    parts = fm.split(text)
    assert parts.has_frontmatter
    assert text[parts.body_start :] == body
    assert fm.parse(parts.fm_text) == values


# -- times ------------------------------------------------------------------------------


def test_format_time() -> None:
    assert fm.format_time(datetime(2026, 2, 14, 10, 30, tzinfo=UTC)) == "2026-02-14T10:30:00Z"
    assert fm.format_time(datetime(2026, 2, 14, 10, 30, 59, 999999)) == "2026-02-14T10:30:59Z"
    west = timezone(timedelta(hours=-5))
    assert fm.format_time(datetime(2026, 2, 14, 22, 0, tzinfo=west)) == "2026-02-15T03:00:00Z"


def test_parse_time_accepts_human_and_kenomem_forms() -> None:
    want = datetime(2026, 2, 14, 10, 30, tzinfo=UTC)
    assert fm.parse_time("2026-02-14T10:30:00Z") == want
    assert fm.parse_time("2026-02-14T10:30:00+00:00") == want
    assert fm.parse_time("2026-02-14T12:30:00+02:00") == want
    assert fm.parse_time("2026-02-14T10:30") == want
    assert fm.parse_time("2026-02-14 10:30:00") == want
    assert fm.parse_time("  2026-02-14T10:30:00Z  ") == want
    assert fm.parse_time("2026-02-14") == datetime(2026, 2, 14, tzinfo=UTC)
    assert fm.parse_time(date(2026, 2, 14)) == datetime(2026, 2, 14, tzinfo=UTC)
    assert fm.parse_time(datetime(2026, 2, 14, 10, 30)) == want
    result = fm.parse_time("2026-02-14T12:30:00+02:00")
    assert result is not None and result.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", [None, "", "   ", "soon", "2026-13-01", "14/02/2026", 5, [], {}])
def test_parse_time_not_a_time(value: object) -> None:
    assert fm.parse_time(value) is None


@FAST
@given(
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1)),
    st.integers(min_value=-23 * 60, max_value=23 * 60),
)
def test_format_then_parse_time(moment: datetime, offset_minutes: int) -> None:
    aware = moment.replace(tzinfo=timezone(timedelta(minutes=offset_minutes)))
    written = fm.format_time(aware)
    assert written.endswith("Z") and len(written) == 20
    back = fm.parse_time(written)
    assert back == aware.replace(microsecond=0)
    assert fm.format_time(back) == written


def test_from_epoch() -> None:
    assert fm.from_epoch(0) == datetime(1970, 1, 1, tzinfo=UTC)
    assert fm.from_epoch(86400.5) == datetime(1970, 1, 2, 0, 0, 0, 500000, tzinfo=UTC)


# -- anchors and aliases ------------------------------------------------------------------


def alias_bomb(levels: int, breadth: int = 9) -> str:
    """`levels` lists, each holding `breadth` aliases of the one before: breadth**levels
    items for whatever walks the value, from a few hundred bytes."""
    lines = ["a: &a [" + ",".join(["lol"] * breadth) + "]"]
    for i in range(1, levels):
        name, prev = "abcdefghijklmnopqrstuvwxyz"[i], "abcdefghijklmnopqrstuvwxyz"[i - 1]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * breadth) + "]")
    return "\n".join(lines) + "\n"


def test_the_nine_level_alias_bomb_is_refused() -> None:
    bomb = alias_bomb(9)
    assert len(bomb) < 400  # the 400 bytes, 9**9 items once expanded
    err = _error_of(f"---\nid: mem_1\n{bomb}---\nbody\n")
    assert "anchors and aliases" in err.reason
    assert err.line == 3  # the first anchor, on the line after `id:`
    assert err.path == "semantic/x.md"


@pytest.mark.parametrize(
    "text",
    [
        "a: &x value\nb: *x\n",
        "a: &x value\n",  # an anchor alone: refused too, so the rule is simple to state
        "base: &b {k: v}\nmerged:\n  <<: *b\n",
        "list:\n  - &i item\n  - *i\n",
        "m: {k: &x v, j: *x}\n",
        "t: &x [1, 2]\n",
        "x: 1\na: *nope\n",
    ],
)
def test_anchors_and_aliases_are_refused(text: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        fm.parse(text)
    assert "anchors and aliases" in info.value.reason


@pytest.mark.parametrize(
    "text",
    [
        "title: 'a & b'\n",
        'title: "5 * 3 is 15"\n',
        "title: rock & roll\n",
        "title: a *b* c\n",
        "tags: ['&x', '*y']\n",
        "note: |\n  &anchor and *alias are only words here\n",
    ],
)
def test_ampersands_and_stars_in_values_are_only_characters(text: str) -> None:
    value = next(iter(fm.parse(text).values()))
    assert value is not None
    assert "&" in str(value) or "*" in str(value)


_ANCHOR_NAMES = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


@st.composite
def alias_bombs(draw: st.DrawFn) -> str:
    """A frontmatter with ordinary keys and, somewhere among them, nested aliases written
    in one of YAML's forms (flow or block lists, maps, merge keys)."""
    names = draw(st.lists(_ANCHOR_NAMES, min_size=2, max_size=6, unique=True))
    breadth = draw(st.integers(2, 12))
    form = draw(st.sampled_from(["flow", "block", "map", "merge"]))
    lines = [f"k0: &{names[0]} [x, y]"]
    for i, name in enumerate(names[1:], 1):
        prev = names[i - 1]
        if form == "flow":
            lines.append(f"k{i}: &{name} [" + ", ".join([f"*{prev}"] * breadth) + "]")
        elif form == "block":
            lines.append(f"k{i}: &{name}")
            lines.extend([f"  - *{prev}"] * breadth)
        elif form == "map":
            items = ", ".join(f"m{j}: *{prev}" for j in range(breadth))
            lines.append(f"k{i}: &{name} {{{items}}}")
        else:
            lines.append(f"k{i}: &{name}\n  <<: *{prev}\n  extra{i}: v")
    plain = draw(st.lists(st.sampled_from(["id: m1", "title: T", "tags: [a, b]", "n: 3"])))
    where = draw(st.integers(0, len(plain)))
    return "\n".join([*plain[:where], *lines, *plain[where:]]) + "\n"


@settings(max_examples=200, deadline=None)
@given(alias_bombs())
def test_any_alias_bomb_is_refused_before_it_is_built(text: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        fm.parse(text, path="semantic/bomb.md")
    assert "anchors and aliases" in info.value.reason
    first = next(i for i, line in enumerate(text.splitlines()) if "&" in line)
    assert info.value.line == 2 + first
