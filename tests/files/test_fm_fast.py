"""The fast reader of simple frontmatter gives what PyYAML gives, or steps aside."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.files import fm


def _yaml(text: str) -> Any:
    try:
        data = yaml.load(text, Loader=fm._string_loader())
    except yaml.YAMLError:
        return "error"
    return {} if data is None else data  # as fm.parse gives an empty block


def _same_or_declined(text: str) -> None:
    fast = fm._fast_parse(text)
    if fast is not None:
        assert fast == _yaml(text), text


@pytest.mark.parametrize(
    "text",
    [
        "id: mem_1\ntitle: Prefers tea\ntags: [a, b-c]\ncreated: 2026-02-14T10:30:00Z\n",
        "importance: 6\npinned: false\nsupersedes: null\nempty:\nnone: ~\n",
        'title: "Name: Dee"\nother: \'single\'\nlist: [x, "y z", null]\n',
        "a: [ a , b ]\nb: []\nc: yes\nd: 1.5e3\ne: ü ö\n",
        "a: b\r\nc: d\r\n",
    ],
)
def test_simple_blocks_are_read_fast_and_alike(text: str) -> None:
    assert fm._fast_parse(text) is not None
    assert fm.parse(text) == _yaml(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: b # comment\n",
        "a: C#\n",
        "a: - x\n",
        "a: x:\n",
        'a: "q\\"q"\n',
        "  a: b\n",
        "a: {x: 1}\n",
        "a: |\n  x\n",
        "tags:\n  - a\n",
        "a: it's\n",
        "a: x\u2028b\n",
        "a:\tb\n",
        "1: x\n",
    ],
)
def test_anything_else_goes_to_yaml(text: str) -> None:
    assert fm._fast_parse(text) is None


_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
_TRICKY = st.sampled_from(
    [*":#-[]{},'\"\\ \t!&*|>%@`?~", "null", "~", ": ", " #", "\u2028", "\x85", "\r"]
)
_VALUE = st.lists(st.one_of(_CHARS, _TRICKY), max_size=12).map("".join)
_KEY = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_KEY, _VALUE), max_size=6))
def test_raw_lines_read_alike(pairs: list[tuple[str, str]]) -> None:
    _same_or_declined("".join(f"{k}: {v}\n" for k, v in pairs))


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        _KEY,
        st.one_of(
            st.none(),
            st.text(_CHARS, max_size=20),
            st.lists(st.text(_CHARS, max_size=8), max_size=4),
        ),
        max_size=8,
    )
)
def test_what_kenomem_writes_reads_back_alike(values: dict[str, Any]) -> None:
    text = fm.emit(values)
    body = text.split("---\n")[1] if text.startswith("---\n") else text
    _same_or_declined(body)
    assert fm.parse(body) == _yaml(body)


def test_lines_read_before_give_fresh_values() -> None:
    """A line seen in an earlier file is not parsed again, but its list is a new one."""
    first = fm._fast_parse("tags: [a, b]\ntitle: one\n")
    second = fm._fast_parse("tags: [a, b]\ntitle: two\n")
    assert first is not None and second is not None
    first["tags"].append("c")
    assert second == {"tags": ["a", "b"], "title": "two"}
    assert fm._fast_parse("tags: [a, b]\n  indented: x\n") is None  # one line still declines
