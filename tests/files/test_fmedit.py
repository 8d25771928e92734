"""kenomem.files.fmedit.set_keys: change some keys, leave every other byte of the file alone."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

from kenomem.errors import FrontmatterError
from kenomem.files import fm
from kenomem.files.fmedit import set_keys

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- a generator of hand-written frontmatters -------------------------------------------

# Printable text on one line: no control characters and nothing YAML or Python treats as
# a line break (U+0085, U+2028 and U+2029 are line breaks in YAML 1.1).
LINE_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Zl", "Zp", "Cn"), blacklist_characters="\x85"
)
line_text = st.text(LINE_CHARS, max_size=25)

ascii_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,10}", fullmatch=True)
unicode_key = st.sampled_from(["título", "名前", "clé_ü", "ключ"])
any_key = st.one_of(ascii_key, ascii_key, ascii_key, unicode_key)

PLAIN_EXAMPLES = [
    "0123",
    "1e10",
    "09e494321750",
    "yes",
    "no",
    "True",
    "2026-02-14",
    "2026-02-14T10:30:00Z",
    "hello world",
    "a:b",
    "x#y",
    "C'est ça",
    "日本語のメモ",
    "http://example.com/a?b=c#frag",
    "-5",
    "1.0",
    "~",
    "null",
    "mem_20260214_103000_7f3a",
    "emoji 😀 ok",
]


def _is_yaml_value(rendered: str) -> bool:
    try:
        data = fm.parse(f"k: {rendered}\n")
    except FrontmatterError:
        return False
    return list(data) == ["k"]


random_plain = (
    st.text(LINE_CHARS, min_size=1, max_size=20)
    .map(lambda s: s.strip(" \t"))
    .filter(lambda s: s != "" and _is_yaml_value(s))
)
double_quoted = line_text.map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')
single_quoted = line_text.map(lambda s: "'" + s.replace("'", "''") + "'")
flow_item = st.one_of(
    st.sampled_from(["a", "b c", "0123", "yes", "é", "x-y", "null"]),
    double_quoted,
    single_quoted,
)
flow_list = st.builds(
    lambda items, sep, pad: "[" + pad + sep.join(items) + pad + "]",
    st.lists(flow_item, max_size=4),
    st.sampled_from([", ", ",", " , ", ",  "]),
    st.sampled_from(["", " "]),
)
flow_map = st.sampled_from(["{a: 1, b: [x, y]}", "{}", "{ k: 'v', n: null }"])
comment_line = line_text.map(lambda s: "#" + s)
blank_line = st.sampled_from(["", " ", "   "])
filler = st.lists(st.one_of(comment_line, blank_line), max_size=2)
block_text = (
    st.text(LINE_CHARS, min_size=1, max_size=20)
    .map(lambda s: s.strip(" \t"))
    .filter(lambda s: s != "")
)


class Style:
    """The spacing a person might use.

    A tab is valid YAML after a colon, before a comment and inside a plain value, and the
    parser kenomem reads files with accepts it.
    """

    def __init__(self, tabs: bool) -> None:
        tab = ["\t"] if tabs else []
        plain_examples = PLAIN_EXAMPLES + (["tab\tinside"] if tabs else [])
        # Without tabs, no block indicators, anchors or tags either: one line, one value.
        plain = random_plain if tabs else random_plain.filter(lambda s: s[0] not in "|>&!")
        self.plain = st.one_of(st.sampled_from(plain_examples), plain)
        self.value = st.one_of(self.plain, double_quoted, single_quoted, flow_list, flow_map)
        self.gap = st.sampled_from([" "] * 5 + ["  ", "   ", *tab])
        self.empty_after = st.sampled_from(["", " ", "   ", *tab])
        self.trailing = st.one_of(
            st.just(""),
            st.builds(
                lambda gap, text: gap + "#" + text, st.sampled_from([" ", "  ", *tab]), line_text
            ),
        )


@st.composite
def single_line_entry(draw: Any, key: str, style: Style) -> list[str]:
    before = draw(st.sampled_from(["", "", "", " "]))
    if draw(st.integers(0, 5)) == 0:
        # `key:` with nothing after it (null), maybe with spaces or a comment.
        return [f"{key}{before}:{draw(style.empty_after)}{draw(style.trailing)}"]
    return [f"{key}{before}:{draw(style.gap)}{draw(style.value)}{draw(style.trailing)}"]


@st.composite
def multi_line_entry(draw: Any, key: str, style: Style) -> list[str]:
    kind = draw(st.sampled_from(["list", "list", "scalar", "map", "plain"]))
    head = f"{key}:{draw(style.trailing)}"
    if kind == "list":
        indent = draw(st.sampled_from(["", "  ", "    "]))
        items = draw(st.lists(st.one_of(style.plain, double_quoted), min_size=1, max_size=3))
        lines = [head]
        for n, item in enumerate(items):
            if n and draw(st.booleans()):
                lines.append(f"{indent or '  '}#{draw(line_text)}")
            lines.append(f"{indent}- {item}")
        return lines
    if kind == "scalar":
        indicator = draw(st.sampled_from(["|", ">", "|-", ">-"]))
        lines = [f"{key}: {indicator}{draw(style.trailing)}"]
        lines.extend("  " + t for t in draw(st.lists(block_text, min_size=1, max_size=3)))
        return lines
    if kind == "map":
        lines = [head]
        for sub in draw(st.lists(ascii_key, min_size=1, max_size=3, unique=True)):
            lines.append(f"  {sub}: {draw(style.value)}{draw(style.trailing)}")
        return lines
    words = draw(st.lists(st.sampled_from(["alpha", "beta", "gamma", "é"]), min_size=2))
    return [f"{key}: {words[0]}"] + ["  " + w for w in words[1:]]


update_value = st.one_of(
    st.text(max_size=20),
    st.integers(-5, 10**6),
    st.booleans(),
    st.none(),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
        lambda d: d.replace(microsecond=0, tzinfo=UTC)
    ),
    st.lists(st.text(max_size=8), max_size=3),
)


@dataclass
class Doc:
    opening: str  # BOM and `---` line, without the newline
    items: list[tuple[str | None, list[str]]]  # (key or None for filler, its lines)
    closing: str
    newline: str
    body: str
    updates: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        nl = self.newline
        lines = [line for _, group in self.items for line in group]
        head = self.opening + nl + "".join(line + nl for line in lines)
        return head + self.closing + nl + self.body

    @property
    def keys(self) -> list[str]:
        return [key for key, _ in self.items if key is not None]

    def other_lines(self) -> list[str]:
        """The lines an update keeps besides the `key:` lines of the keys it sets: every
        line of the other keys, comments and blanks; the items of a list that only grows,
        then its new items in the same style; the comment lines between the items of a list
        that is replaced."""
        before = fm.parse(fm.split(self.text).fm_text)
        lines: list[str] = []
        for key, group in self.items:
            if key not in self.updates:
                lines += group
            elif len(group) == 1:
                continue
            elif grows(before.get(key), self.updates[key]) and not holds_block_text(group):
                dash = re.match(r"[ \t]*-[ \t]+", group[-1])
                assert dash is not None
                added = self.updates[key][len(before[key]) :]
                lines += group[1:] + [dash.group(0) + fm.emit_scalar(v) for v in added]
            elif not re.match(r":[ \t]*[|>]", group[0][len(key) :]):  # not a block text
                lines += [line for line in group[1:] if line.lstrip(" \t").startswith("#")]
        return lines


def grows(old: Any, new: Any) -> bool:
    """Whether `new` is the list `old` with items added at the end (or the same)."""
    return (
        isinstance(old, list)
        and isinstance(new, list)
        and len(new) >= len(old)
        and _written(new)[: len(old)] == old
    )


def holds_block_text(group: list[str]) -> bool:
    """Whether a block list has an item written as a block text (`- |`)."""
    return any(re.match(r"[ \t]*-[ \t]+[|>]", line) for line in group[1:])


def simple_doc(lines: list[tuple[str | None, list[str]]], updates: dict[str, Any]) -> Doc:
    return Doc("---", lines, "---", "\n", "body\n", updates)


@st.composite
def docs(draw: Any, multiline: bool) -> Doc:
    """A frontmatter as people write them, and some keys to set.

    With `multiline`, values may span lines (block lists, block scalars, nested maps,
    wrapped plain text), keys may be non-ASCII and tabs may separate values; without it,
    every key is ASCII and sits on one line with its value.
    """
    style = Style(tabs=multiline)
    keys = draw(st.lists(any_key if multiline else ascii_key, max_size=6, unique=True))
    items: list[tuple[str | None, list[str]]] = []
    items.extend((None, [line]) for line in draw(filler))
    for key in keys:
        if multiline and draw(st.integers(0, 2)) == 0:
            lines = draw(multi_line_entry(key, style))
        else:
            lines = draw(single_line_entry(key, style))
        items.append((key, lines))
        items.extend((None, [line]) for line in draw(filler))
    doc = Doc(
        opening=draw(st.sampled_from(["", "\ufeff"])) + draw(st.sampled_from(["---", "--- "])),
        items=items,
        closing=draw(st.sampled_from(["---", "--- ", "..."])),
        newline=draw(st.sampled_from(["\n", "\r\n"])),
        body=draw(st.sampled_from(["", "\n"])) + draw(st.text(max_size=40)),
    )
    try:
        fm.parse(fm.split(doc.text).fm_text)
    except FrontmatterError:
        reject()
    changed = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    new = draw(st.lists(ascii_key.filter(lambda k: k not in keys), max_size=2, unique=True))
    names = changed + new
    if not names:
        names = [draw(ascii_key.filter(lambda k: k not in keys))]
    doc.updates = {name: draw(update_value) for name in names}
    return doc


# Small frontmatters on which the properties below are known to be hard to get right.
BLOCK_LIST_THEN_COMMENT = simple_doc(
    [("tags", ["tags:", "  - a"]), (None, [""]), (None, ["# about x"]), ("x", ["x: 1"])],
    {"tags": ["b"]},
)
EMPTY_VALUE_BESIDE_BLOCK_LIST = simple_doc(
    [("tags", ["tags:", "  - a"]), ("supersedes", ["supersedes:"])],
    {"tags": ["b"], "supersedes": "mem_2"},
)
TAB_BESIDE_BLOCK_LIST = simple_doc(
    [("tags", ["tags:", "  - a"]), ("count", ["count:\t1"])],
    {"tags": ["b"]},
)


def _fm_lines(text: str) -> list[str]:
    """The frontmatter's lines, split on LF only (a CR stays at the end of its line)."""
    fm_text = fm.split(text).fm_text
    assert fm_text == "" or fm_text.endswith("\n")
    return fm_text.split("\n")[:-1]


def _with_cr(doc: Doc, lines: list[str]) -> list[str]:
    cr = "\r" if doc.newline == "\r\n" else ""
    return [line + cr for line in lines]


def _written(value: Any) -> Any:
    return fm.parse(f"v: {fm.emit_scalar(value)}")["v"]


def _apply_or_skip(doc: Doc) -> str:
    """Most properties are about an edit that was made; refusals fail the values test."""
    try:
        return set_keys(doc.text, doc.updates)
    except FrontmatterError:
        reject()


def _check_body(doc: Doc, out: str) -> None:
    old, new = fm.split(doc.text), fm.split(out)
    assert new.has_frontmatter
    assert out[: new.fm_start] == doc.text[: old.fm_start]
    assert out[new.fm_end :] == doc.text[old.fm_end :]
    assert out[new.body_start :] == doc.body


def _key_line(key: str) -> re.Pattern[str]:
    return re.compile(re.escape(key) + r"[ \t]*:")


def _check_kept_lines(doc: Doc, out: str) -> None:
    updated = [_key_line(k) for k in doc.updates]
    remaining = [line for line in _fm_lines(out) if not any(rx.match(line) for rx in updated)]
    assert remaining == _with_cr(doc, doc.other_lines())


def _check_values(doc: Doc, out: str) -> None:
    before = fm.parse(fm.split(doc.text).fm_text)
    expected = dict(before)
    for key, value in doc.updates.items():
        expected[key] = _written(value)
    after = fm.parse(fm.split(out).fm_text)
    assert after == expected
    assert list(after) == list(expected)


def _check_one_line_per_key(doc: Doc, out: str) -> None:
    lines = _fm_lines(out)
    for key in doc.updates:
        assert sum(1 for line in lines if _key_line(key).match(line)) == 1, key
    new_keys = [k for k in doc.updates if k not in doc.keys]
    if new_keys:
        appended = [f"{k}: {fm.emit_scalar(doc.updates[k])}" for k in new_keys]
        assert lines[-len(new_keys) :] == _with_cr(doc, appended)
    assert len(lines) == len(doc.other_lines()) + len(doc.updates)


# -- properties: one-line values (the fast path) ----------------------------------------


@PROPERTY
@given(docs(multiline=False))
def test_single_line_frontmatter_all_properties(doc: Doc) -> None:
    out = set_keys(doc.text, doc.updates)
    _check_body(doc, out)
    _check_kept_lines(doc, out)
    _check_values(doc, out)
    _check_one_line_per_key(doc, out)
    assert set_keys(out, doc.updates) == out


# -- properties: any frontmatter, block values included ---------------------------------


@pytest.mark.slow
@PROPERTY
@given(docs(multiline=True))
def test_body_is_byte_identical(doc: Doc) -> None:
    _check_body(doc, _apply_or_skip(doc))


@pytest.mark.slow
@PROPERTY
@given(docs(multiline=True))
@example(BLOCK_LIST_THEN_COMMENT)
def test_lines_of_other_keys_comments_and_blanks_are_byte_identical(doc: Doc) -> None:
    _check_kept_lines(doc, _apply_or_skip(doc))


@pytest.mark.slow
@PROPERTY
@given(docs(multiline=True))
@example(EMPTY_VALUE_BESIDE_BLOCK_LIST)
@example(TAB_BESIDE_BLOCK_LIST)
def test_only_updated_keys_change_to_the_values_written(doc: Doc) -> None:
    # Refusing is not an answer here: every generated frontmatter is valid YAML with no
    # aliases, so the update must be made.
    _check_values(doc, set_keys(doc.text, doc.updates))


@pytest.mark.slow
@PROPERTY
@given(docs(multiline=True))
@example(BLOCK_LIST_THEN_COMMENT)
def test_each_updated_key_is_one_line_and_new_keys_are_appended(doc: Doc) -> None:
    _check_one_line_per_key(doc, _apply_or_skip(doc))


@pytest.mark.slow
@PROPERTY
@given(docs(multiline=True))
def test_setting_the_same_values_twice_is_idempotent(doc: Doc) -> None:
    once = _apply_or_skip(doc)
    assert set_keys(once, doc.updates) == once


# -- explicit cases ---------------------------------------------------------------------

NOW = datetime(2026, 2, 14, 10, 30, tzinfo=UTC)


def test_updates_a_value_in_place() -> None:
    text = "---\nid: mem_1\nlast_accessed: 2026-01-01T00:00:00Z\naccess_count: 3\n---\nBody\n"
    out = set_keys(text, {"last_accessed": NOW, "access_count": 4})
    assert (
        out == "---\nid: mem_1\nlast_accessed: 2026-02-14T10:30:00Z\naccess_count: 4\n---\nBody\n"
    )


def test_trailing_comment_on_updated_key_is_kept() -> None:
    text = "---\nlast_accessed: 2026-01-01T00:00:00Z   # touched by recall\nx: 1\n---\n"
    out = set_keys(text, {"last_accessed": NOW})
    assert out == "---\nlast_accessed: 2026-02-14T10:30:00Z   # touched by recall\nx: 1\n---\n"


def test_trailing_comment_after_quoted_value_with_hash_inside() -> None:
    text = '---\ntitle: "C# tips # 1"  # keep me\n---\n'
    out = set_keys(text, {"title": "New"})
    assert out == "---\ntitle: New  # keep me\n---\n"


def test_value_goes_before_comment_on_empty_key() -> None:
    text = "---\nsupersedes:   # none yet\n---\n"
    out = set_keys(text, {"supersedes": "mem_2"})
    assert out == "---\nsupersedes:   mem_2 # none yet\n---\n"
    assert fm.parse(fm.split(out).fm_text) == {"supersedes": "mem_2"}


def test_empty_key_gets_a_value() -> None:
    assert set_keys("---\na:\nb: 1\n---\n", {"a": "x"}) == "---\na: x\nb: 1\n---\n"
    assert set_keys("---\na:   \n---\n", {"a": "x"}) == "---\na: x\n---\n"


def test_odd_spacing_and_quoting_of_other_keys_kept() -> None:
    text = "---\nkey:   value\nq: 'it''s'\nd: \"x\\ty\"\nk2 :\tv\nn: 0123\n---\nbody"
    out = set_keys(text, {"n": "7"})
    assert out == text.replace("n: 0123", 'n: "7"')


def test_key_spacing_of_the_updated_key_kept() -> None:
    assert set_keys("---\nk :   old\n---\n", {"k": "new"}) == "---\nk :   new\n---\n"


def test_missing_key_appended_before_closing() -> None:
    text = "---\n# a comment\nid: x\n\n---\nbody\n"
    out = set_keys(text, {"reinforced": 1, "pinned": True})
    assert out == "---\n# a comment\nid: x\n\nreinforced: 1\npinned: true\n---\nbody\n"


def test_crlf_file_stays_crlf() -> None:
    text = "---\r\nid: x # c\r\ncount: 1\r\n---\r\nbody\r\n"
    out = set_keys(text, {"count": 2, "new": "v"})
    assert out == "---\r\nid: x # c\r\ncount: 2\r\nnew: v\r\n---\r\nbody\r\n"


def test_dots_closing_kept() -> None:
    out = set_keys("---\na: 1\n...\nbody\n", {"b": "2"})
    assert out == '---\na: 1\nb: "2"\n...\nbody\n'


def test_file_ending_at_closing_delimiter() -> None:
    assert set_keys("---\na: 1\n---", {"a": "x"}) == "---\na: x\n---"


def test_block_list_value_replaced() -> None:
    text = "---\ntitle: T\ntags:\n  - one\n  - two\nscope: global\n---\nbody\n"
    out = set_keys(text, {"tags": ["three", "four"]})
    assert out == "---\ntitle: T\ntags: [three, four]\nscope: global\n---\nbody\n"


def test_unindented_block_list_replaced() -> None:
    text = "---\ntags:\n- one\n- two\nscope: global\n---\n"
    out = set_keys(text, {"tags": []})
    assert out == "---\ntags: []\nscope: global\n---\n"


def test_block_list_with_other_key_updated_on_fast_path() -> None:
    text = "---\ntags:\n  - one\n# note\ncount: 1\n---\n"
    out = set_keys(text, {"count": 2})
    assert out == "---\ntags:\n  - one\n# note\ncount: 2\n---\n"


def test_comment_and_blank_line_after_replaced_block_list_kept() -> None:
    text = "---\ntags:\n  - one\n\n# about the scope\nscope: global\n---\nbody\n"
    out = set_keys(text, {"tags": ["two"]})
    assert out == "---\ntags: [two]\n\n# about the scope\nscope: global\n---\nbody\n"


def test_comment_on_block_list_key_line_kept() -> None:
    text = "---\ntags: # topics\n  - one\nscope: global\n---\n"
    out = set_keys(text, {"tags": ["two"]})
    assert "# topics" in out
    assert fm.parse(fm.split(out).fm_text) == {"tags": ["two"], "scope": "global"}


def test_multi_line_block_scalar_replaced() -> None:
    text = "---\nnotes: |\n  line one\n  # not a comment\n  line three\nkeep: yes\n---\nbody\n"
    out = set_keys(text, {"notes": "short"})
    assert out == "---\nnotes: short\nkeep: yes\n---\nbody\n"


def test_folded_block_scalar_followed_by_comment() -> None:
    text = "---\nnotes: >-\n  folded\n  text\n# after\nkeep: 1\n---\n"
    out = set_keys(text, {"notes": "x"})
    assert out == "---\nnotes: x\n# after\nkeep: 1\n---\n"


def test_block_scalar_untouched_when_other_key_updated() -> None:
    text = "---\nnotes: |\n  a: b\n  c # d\ncount: 1\n---\n"
    out = set_keys(text, {"count": 5})
    assert out == "---\nnotes: |\n  a: b\n  c # d\ncount: 5\n---\n"


def test_nested_map_replaced() -> None:
    text = "---\nmeta:\n  a: 1\n  b: [x]\nz: 2\n---\n"
    assert set_keys(text, {"meta": "flat"}) == "---\nmeta: flat\nz: 2\n---\n"


def test_multi_line_plain_scalar_replaced() -> None:
    text = "---\ntitle: a long\n  wrapped title\nz: 2\n---\n"
    assert set_keys(text, {"title": "short"}) == "---\ntitle: short\nz: 2\n---\n"


def test_multi_line_flow_list_replaced() -> None:
    text = "---\ntags: [a,\n  b]\nz: 2 # c\n---\n"
    assert set_keys(text, {"tags": ["c"]}) == "---\ntags: [c]\nz: 2 # c\n---\n"


def test_empty_value_updated_alongside_a_block_list() -> None:
    text = "---\ntags:\n  - a\nsupersedes:\n---\n"
    out = set_keys(text, {"tags": ["b"], "supersedes": "mem_2"})
    assert fm.parse(fm.split(out).fm_text) == {"tags": ["b"], "supersedes": "mem_2"}


def test_empty_value_updated_when_another_key_is_not_ascii() -> None:
    text = "---\ntítulo: x\nsupersedes:\n---\n"
    out = set_keys(text, {"supersedes": "mem_2"})
    assert out == "---\ntítulo: x\nsupersedes: mem_2\n---\n"


def test_comment_after_updated_value_on_slow_path() -> None:
    text = "---\ntítulo: x\ncount: 1 # c\n---\n"
    assert set_keys(text, {"count": 2}) == "---\ntítulo: x\ncount: 2 # c\n---\n"


def test_tab_separated_value_beside_block_list() -> None:
    # `fm.parse` reads this file; updating the block list must not be refused.
    text = "---\ntags:\n  - a\ncount:\t1\t# c\n---\n"
    assert fm.parse(fm.split(text).fm_text) == {"tags": ["a"], "count": "1"}
    assert set_keys(text, {"tags": ["b"]}) == "---\ntags: [b]\ncount:\t1\t# c\n---\n"


def test_tab_inside_plain_value_when_another_key_is_not_ascii() -> None:
    text = "---\ntítulo: a\tb\ncount: 1\n---\n"
    assert fm.parse(fm.split(text).fm_text) == {"título": "a\tb", "count": "1"}
    assert set_keys(text, {"count": 2}) == "---\ntítulo: a\tb\ncount: 2\n---\n"


def test_tab_separators_on_the_fast_path() -> None:
    text = "---\ncount:\t1\t# c\nnote: a\tb\n---\n"
    assert set_keys(text, {"count": 2}) == "---\ncount:\t2\t# c\nnote: a\tb\n---\n"


@pytest.mark.parametrize(
    ("text", "updates"),
    [
        ("---\nbase: &b value\ncopy: *b\n---\n", {"base": "new"}),
        ("---\nbase: &b value\ncopy: *b\n---\n", {"copy": "new"}),
        ("---\nbase: &b [1, 2]\ncopy: *b\n---\n", {"copy": "new"}),
        ("---\nbase: &b\n  - 1\ncopy: *b\n---\n", {"base": "new"}),
        ("---\nlist: [&x foo]\ncopy: *x\n---\n", {"list": "new"}),
        ("---\nmap: {k: &x v}\ncopy: *x\n---\n", {"map": "new"}),
    ],
)
def test_anchors_and_aliases_refused(text: str, updates: dict[str, Any]) -> None:
    with pytest.raises(FrontmatterError):
        set_keys(text, updates)


def test_anchor_elsewhere_does_not_block_a_new_key() -> None:
    text = "---\nbase: &b value\ncopy: *b\n---\n"
    out = set_keys(text, {"other": "x"})
    assert out == "---\nbase: &b value\ncopy: *b\nother: x\n---\n"


def test_no_frontmatter_gets_one_prepended() -> None:
    text = "# My note\n\nSome text.\n"
    out = set_keys(text, {"id": "note_1", "access_count": 1})
    assert out == "---\nid: note_1\naccess_count: 1\n---\n" + text


def test_no_frontmatter_crlf_gets_crlf_frontmatter() -> None:
    text = "# My note\r\nText\r\n"
    out = set_keys(text, {"a": "b"})
    assert out == "---\r\na: b\r\n---\r\n" + text


def test_no_frontmatter_empty_file() -> None:
    assert set_keys("", {"a": "b"}) == "---\na: b\n---\n"


def test_no_frontmatter_with_bom_keeps_bom_first_and_body_unchanged() -> None:
    text = "\ufeff# My note\nText\n"
    out = set_keys(text, {"a": "b"})
    parts = fm.split(out)
    assert parts.has_frontmatter
    assert fm.parse(parts.fm_text) == {"a": "b"}
    assert out[parts.body_start :] == "# My note\nText\n"
    assert "\ufeff" not in out[1:]


def test_empty_frontmatter() -> None:
    assert set_keys("---\n---\nbody\n", {"a": "x"}) == "---\na: x\n---\nbody\n"
    assert set_keys("---\n---\n", {"a": "x", "b": None}) == "---\na: x\nb: null\n---\n"


def test_frontmatter_of_only_comments() -> None:
    out = set_keys("---\n# nothing yet\n\n---\n", {"a": "x"})
    assert out == "---\n# nothing yet\n\na: x\n---\n"


def test_written_values_read_back() -> None:
    text = "---\na: 1\n---\n"
    values = {
        "a": "multi\nline: with # and 'quotes'",
        "b": ["x, y", "yes", ""],
        "c": None,
        "d": False,
        "e": NOW,
        "f": "0123",
    }
    out = set_keys(text, values)
    assert fm.parse(fm.split(out).fm_text) == {
        "a": "multi\nline: with # and 'quotes'",
        "b": ["x, y", "yes", ""],
        "c": None,
        "d": "false",
        "e": "2026-02-14T10:30:00Z",
        "f": "0123",
    }


def test_unclosed_frontmatter_refused() -> None:
    with pytest.raises(FrontmatterError) as info:
        set_keys("---\na: 1\nbody\n", {"a": "2"}, path="semantic/x.md")
    assert info.value.line == 1


def test_broken_yaml_refused_on_slow_path() -> None:
    with pytest.raises(FrontmatterError):
        set_keys("---\ntags:\n  - a\nbad: [x\n---\n", {"tags": ["b"]})


def test_body_that_looks_like_frontmatter_is_untouched() -> None:
    body = "---\nid: fake\n---\nlast_accessed: not this one\n"
    text = "---\nid: real\n---\n" + body
    out = set_keys(text, {"last_accessed": NOW, "id": "real2"})
    assert out.endswith("---\n" + body)
    assert out.startswith("---\nid: real2\nlast_accessed: 2026-02-14T10:30:00Z\n---\n")


# -- lists that only grow are extended in place -----------------------------------------

HAND_TAGS = 'title: Trip\ntags:\n  - "project x"   # the big one\n  - travel\nscope: global\n'


def test_a_tag_added_to_a_block_list_is_one_more_line_in_its_style() -> None:
    text = f"---\n{HAND_TAGS}---\nbody\n"
    out = set_keys(text, {"tags": ["project x", "travel", "packing"]})
    assert out == (
        '---\ntitle: Trip\ntags:\n  - "project x"   # the big one\n  - travel\n  - packing\n'
        "scope: global\n---\nbody\n"
    )


def test_a_list_set_to_what_it_holds_is_not_touched() -> None:
    text = f"---\n{HAND_TAGS}---\nbody\n"
    assert set_keys(text, {"tags": ["project x", "travel"]}) == text
    flow = "---\ntags: [\"a\", 'b']  # mine\n---\n"
    assert set_keys(flow, {"tags": ["a", "b"]}) == flow


def test_the_dash_style_and_indent_of_the_last_item_are_used() -> None:
    text = "---\ntags:\n-   one\n-   two\nx: 1\n---\n"
    assert set_keys(text, {"tags": ["one", "two", "three"]}) == (
        "---\ntags:\n-   one\n-   two\n-   three\nx: 1\n---\n"
    )


def test_new_items_go_after_the_last_item_not_after_trailing_comments() -> None:
    text = "---\ntags:\n  - a\n  # between\n  - b  # mine\n\n# about x\nx: 1\n---\n"
    out = set_keys(text, {"tags": ["a", "b", "c: d", "#e"]})
    assert out == (
        "---\ntags:\n  - a\n  # between\n  - b  # mine\n"
        '  - "c: d"\n  - "#e"\n\n# about x\nx: 1\n---\n'
    )
    assert fm.parse(fm.split(out).fm_text)["tags"] == ["a", "b", "c: d", "#e"]


def test_a_block_list_in_a_crlf_file_grows_with_crlf() -> None:
    text = "---\r\ntags:\r\n  - a\r\nx: 1\r\n---\r\nbody\r\n"
    out = set_keys(text, {"tags": ["a", "b"], "x": 2})
    assert out == "---\r\ntags:\r\n  - a\r\n  - b\r\nx: 2\r\n---\r\nbody\r\n"


def test_the_last_list_of_the_frontmatter_grows() -> None:
    text = "---\ntags:\n  - 'it''s'\n---\nbody\n"
    assert set_keys(text, {"tags": ["it's", "more"]}) == (
        "---\ntags:\n  - 'it''s'\n  - more\n---\nbody\n"
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("tags: [\"project x\", 'q']  # mine", 'tags: ["project x", \'q\', new, "a, b"]  # mine'),
        ("tags: []", 'tags: [new, "a, b"]'),
        ("tags: [ a ,b ]", 'tags: [ a ,b, new, "a, b" ]'),
        ("tags: [a,\n  b]  # two lines", 'tags: [a,\n  b, new, "a, b"]  # two lines'),
    ],
)
def test_a_flow_list_grows_in_place(before: str, after: str) -> None:
    old = fm.parse(before + "\n")["tags"]
    out = set_keys(f"---\n{before}\nz: 1\n---\n", {"tags": [*old, "new", "a, b"]})
    assert out == f"---\n{after}\nz: 1\n---\n"


def test_sources_of_a_reinforced_memory_grow_in_place() -> None:
    text = "---\nsources:\n  - buffer/2026-03-01.md  # first seen\nreinforced: 1\n---\n"
    out = set_keys(text, {"sources": ["buffer/2026-03-01.md", "buffer/2026-03-02.md"]})
    assert out == (
        "---\nsources:\n  - buffer/2026-03-01.md  # first seen\n  - buffer/2026-03-02.md\n"
        "reinforced: 1\n---\n"
    )


def test_a_list_that_changed_otherwise_is_rewritten_keeping_comment_lines() -> None:
    text = (
        '---\ntags: # topics\n  - "project x"   # the big one\n  # old ones:\n  - travel\n'
        "x: 1\n---\n"
    )
    out = set_keys(text, {"tags": ["travel"]})
    assert out == "---\ntags: [travel] # topics\n  # old ones:\nx: 1\n---\n"
    assert fm.parse(fm.split(out).fm_text) == {"tags": ["travel"], "x": "1"}


def test_a_block_text_holding_a_hash_line_is_no_comment() -> None:
    text = "---\nnotes: |\n  # heading\n  text\nx: 1\n---\n"
    assert set_keys(text, {"notes": "short"}) == "---\nnotes: short\nx: 1\n---\n"


def test_a_list_of_maps_is_rewritten() -> None:
    text = "---\nitems:\n  - a: 1\n  - b: 2\nx: 1\n---\n"
    out = set_keys(text, {"items": ["a", "b"]})
    assert fm.parse(fm.split(out).fm_text) == {"items": ["a", "b"], "x": "1"}


# A human's block list: items plain, double- or single-quoted, each maybe with a comment,
# comment lines between them, any indent and dash spacing.
list_item = st.one_of(
    st.sampled_from(["travel", "project x", "0123", "yes", "日本", "a-b", "x#y"]),
    double_quoted,
    single_quoted,
)


@st.composite
def hand_block_lists(draw: Any) -> tuple[str, list[str], list[str]]:
    """(frontmatter text, the lines of the list's items, the dash they use)."""
    indent = draw(st.sampled_from(["", "  ", "    "]))
    dash = indent + draw(st.sampled_from(["- ", "-  ", "-   "]))
    lines: list[str] = []
    for n, item in enumerate(draw(st.lists(list_item, min_size=1, max_size=5))):
        if n and draw(st.integers(0, 3)) == 0:
            lines.append(draw(st.sampled_from(["", indent, "#"])) + "#" + draw(line_text))
        comment = draw(st.one_of(st.just(""), line_text.map(lambda s: "  #" + s)))
        lines.append(dash + item + comment)
    before = draw(st.sampled_from(["", "title: Trip\n", "# mine\nid: x\n"]))
    after = draw(st.sampled_from(["", "scope: global\n", "\n# about it\nz: 1\n"]))
    head = draw(st.sampled_from(["tags:", "tags: # topics", "tags :"]))
    text = before + head + "\n" + "".join(line + "\n" for line in lines) + after
    return text, lines, [dash]


@PROPERTY
@given(
    hand_block_lists(),
    st.lists(st.text(LINE_CHARS, max_size=12), min_size=1, max_size=3),
    st.sampled_from(["\n", "\r\n"]),
)
def test_adding_tags_to_a_hand_written_block_list_keeps_every_byte(
    case: tuple[str, list[str], list[str]], added: list[str], newline: str
) -> None:
    fm_text, item_lines, (dash,) = case
    try:
        old = fm.parse(fm_text)["tags"]
    except FrontmatterError:
        reject()
    text = "---" + newline + fm_text.replace("\n", newline) + "---" + newline + "body\n"
    out = set_keys(text, {"tags": [*old, *added]})
    assert fm.parse(fm.split(out).fm_text)["tags"] == old + _written(added)
    before, after = text.split(newline), out.split(newline)
    head = next(i for i, line in enumerate(before) if line.startswith("tags"))
    last = head + 1 + len(item_lines)
    assert before[last - 1] == item_lines[-1]
    new_lines = [dash + fm.emit_scalar(tag) for tag in added]
    assert after == before[:last] + new_lines + before[last:]
