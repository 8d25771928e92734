"""kenomem.files.memory: a markdown file read as a memory, and a memory written as a file."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.errors import FrontmatterError, UsageError
from kenomem.files import fm, fmedit
from kenomem.files.memory import (
    EPOCH,
    Memory,
    check_type,
    derived_id,
    from_text,
    new_id,
    render,
    title_from_body,
    title_from_path,
    title_from_text,
    to_frontmatter,
    type_from_path,
)

MTIME = datetime(2026, 3, 1, 8, 0, 0, 250000, tzinfo=UTC).timestamp()
FILE_TIME = datetime(2026, 3, 1, 8, 0, 0, tzinfo=UTC)
NOW = datetime(2026, 2, 14, 10, 30, tzinfo=UTC)


def read(relpath: str, text: str, **kwargs: object) -> Memory:
    return from_text(relpath, text, mtime=MTIME, fallback_id="note_fallback", **kwargs)


# -- hand-made files --------------------------------------------------------------------


def test_no_frontmatter_type_from_folder_title_from_heading() -> None:
    text = "Some intro.\n\n# Deploy checklist\n\nRun the tests.\n"
    mem = read("procedural/deploy.md", text)
    assert mem.type == "procedural"
    assert mem.title == "Deploy checklist"
    assert mem.body == text
    assert mem.id == "note_fallback"
    assert not mem.has_id
    assert not mem.has_frontmatter
    assert mem.source == "file"
    assert mem.status == "active"
    assert mem.importance == 5
    assert mem.tags == ()
    assert mem.scope == "global"
    assert mem.created == FILE_TIME
    assert mem.last_accessed is None
    assert mem.accessed == FILE_TIME
    assert mem.access_count == 0
    assert mem.reinforced == 0
    assert not mem.pinned
    assert mem.extra == {}


def test_no_frontmatter_title_from_file_name() -> None:
    mem = read("semantic/my-first_note.md", "Just text, no heading.\n")
    assert mem.title == "my first note"
    assert mem.type == "semantic"


def test_heading_forms() -> None:
    assert title_from_body("### Third level ###\n") == "Third level"
    assert title_from_body("#Not a heading\n") == ""
    assert title_from_body("text\n## Second\n# First later\n") == "Second"
    assert title_from_body("") == ""


def test_title_from_path_forms() -> None:
    assert title_from_path("semantic/a-b_c.md") == "a b c"
    assert title_from_path("x.md") == "x"
    assert title_from_path("semantic/---.md") == "---"


def test_bom_is_not_part_of_the_body() -> None:
    mem = read("semantic/x.md", "\ufeff# Title\nText\n")
    assert mem.title == "Title"
    assert mem.body == "# Title\nText\n"


def test_bom_file_keeps_its_title_after_kenomem_adds_frontmatter() -> None:
    # Recall touching a hand-made file gives it a frontmatter; its heading stays its title.
    text = "\ufeff# Title\nText\n"
    touched = fmedit.set_keys(text, {"last_accessed": NOW, "access_count": 1})
    mem = read("semantic/x-y.md", touched)
    assert mem.title == "Title"
    assert mem.body == "# Title\nText\n"
    assert mem.access_count == 1


def test_partial_frontmatter() -> None:
    text = "---\ntitle: Coffee order\ntags: coffee,  preference , coffee\n---\nFlat white.\n"
    mem = read("semantic/coffee.md", text)
    assert mem.title == "Coffee order"
    assert mem.tags == ("coffee", "preference")
    assert mem.body == "Flat white.\n"
    assert mem.has_frontmatter
    assert not mem.has_id
    assert mem.id == "note_fallback"
    assert mem.created == FILE_TIME


def test_full_frontmatter() -> None:
    text = (
        "---\n"
        "id: mem_20260214_103000_7f3a\n"
        "type: semantic\n"
        "title: Prefers direct communication\n"
        "tags: [preference, communication]\n"
        "scope: global\n"
        "created: 2026-02-14T10:30:00Z\n"
        "last_accessed: 2026-02-15T08:00:00Z\n"
        "access_count: 3\n"
        "reinforced: 2\n"
        "importance: 6\n"
        "pinned: false\n"
        "source: cli\n"
        "status: active\n"
        "supersedes: null\n"
        "color: blue # unknown key\n"
        "---\n"
        "\n"
        "Prefers direct communication without pleasantries.\n"
    )
    mem = read("semantic/prefers.md", text)
    assert mem.id == "mem_20260214_103000_7f3a"
    assert mem.has_id
    assert mem.title == "Prefers direct communication"
    assert mem.tags == ("preference", "communication")
    assert mem.created == datetime(2026, 2, 14, 10, 30, tzinfo=UTC)
    assert mem.last_accessed == datetime(2026, 2, 15, 8, 0, tzinfo=UTC)
    assert mem.accessed == mem.last_accessed
    assert mem.access_count == 3
    assert mem.reinforced == 2
    assert mem.importance == 6
    assert mem.pinned is False
    assert mem.source == "cli"
    assert mem.supersedes is None
    assert mem.extra == {"color": "blue"}


def test_id_kept_as_typed() -> None:
    mem = read("semantic/x.md", "---\nid: 0123\n---\n")
    assert mem.id == "0123"
    assert mem.has_id
    assert mem.source == "cli"


def test_title_from_heading_when_frontmatter_has_none() -> None:
    mem = read("semantic/x.md", "---\nimportance: 7\n---\n\n# From heading\n")
    assert mem.title == "From heading"
    assert mem.importance == 7


@pytest.mark.parametrize(
    ("relpath", "mem_type", "status"),
    [
        ("semantic/a.md", "semantic", "active"),
        ("episodic/2026-02/a.md", "episodic", "active"),
        ("procedural/sub/dir/a.md", "procedural", "active"),
        ("working/session-1.md", "working", "active"),
        ("archive/semantic/a.md", "semantic", "archived"),
        ("archive/episodic/2026-01/a.md", "episodic", "archived"),
        ("archive/a.md", "semantic", "archived"),
        ("a.md", "semantic", "active"),
    ],
)
def test_type_and_status_from_folder(relpath: str, mem_type: str, status: str) -> None:
    mem = read(relpath, "# T\n")
    assert mem.type == mem_type
    assert mem.status == status
    assert mem.archived == (status == "archived")


def test_declared_type_used_outside_type_folders() -> None:
    assert read("notes/a.md", "---\ntype: episodic\n---\n").type == "episodic"
    assert read("notes/a.md", "---\ntype: nonsense\n---\n").type == "semantic"


def test_archive_folder_keeps_superseded_status() -> None:
    mem = read("archive/semantic/a.md", "---\nstatus: superseded\nsuperseded_by: mem_b\n---\n")
    assert mem.status == "superseded"
    assert mem.superseded_by == "mem_b"
    assert mem.archived


def test_unknown_status_is_active() -> None:
    assert read("semantic/a.md", "---\nstatus: maybe\n---\n").status == "active"
    assert read("semantic/a.md", "---\nstatus: proposed\n---\n").status == "proposed"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", 1),
        ("10", 10),
        ("0", 1),
        ("-3", 1),
        ("11", 10),
        ("999", 10),
        ("high", 5),
        ("", 5),
        ("[1, 2]", 5),
        ("null", 5),
        (" 7 ", 7),
    ],
)
def test_importance_clamped_or_defaulted(value: str, expected: int) -> None:
    mem = read("semantic/a.md", f"---\nimportance: {value}\n---\n")
    assert mem.importance == expected


def test_importance_default_comes_from_settings() -> None:
    mem = read("semantic/a.md", "---\nimportance: high\n---\n", default_importance=3)
    assert mem.importance == 3
    assert read("semantic/a.md", "# T\n", default_importance=8).importance == 8


def test_counts_never_negative() -> None:
    mem = read("semantic/a.md", "---\naccess_count: -4\nreinforced: lots\n---\n")
    assert mem.access_count == 0
    assert mem.reinforced == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[a, b]", ("a", "b")),
        ("a, b", ("a", "b")),
        ("'#a, #b , a'", ("a", "b")),
        ("\n  - x\n  - '#y'\n  - x", ("x", "y")),
        ("[a, [nested], {k: v}, null, '']", ("a",)),
        ("single", ("single",)),
        ("", ()),
        ("[]", ()),
        ("0123", ("0123",)),
    ],
)
def test_tags_list_or_comma_string(value: str, expected: tuple[str, ...]) -> None:
    mem = read("semantic/a.md", f"---\ntags: {value}\n---\n")
    assert mem.tags == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("True", True),
        ("yes", True),
        ("on", True),
        ("1", True),
        ("false", False),
        ("no", False),
        ("", False),
        ("maybe", False),
    ],
)
def test_pinned(value: str, expected: bool) -> None:
    assert read("semantic/a.md", f"---\npinned: {value}\n---\n").pinned is expected


def test_times_read_from_human_forms() -> None:
    text = (
        "---\ncreated: 2026-02-14\nlast_accessed: not a date\nwhen: 2026-02-14T12:00+02:00\n---\n"
    )
    mem = read("episodic/2026-02/a.md", text)
    assert mem.created == datetime(2026, 2, 14, tzinfo=UTC)
    assert mem.last_accessed is None
    assert mem.when == datetime(2026, 2, 14, 10, 0, tzinfo=UTC)


def test_keys_read_into_fields_are_not_extra_the_other_type_keys_are() -> None:
    text = "---\nsession: s1\nupdated: 2026-02-14T10:30:00Z\n---\n"
    working = read("working/s1.md", text)
    assert working.session == "s1"
    assert working.extra == {"updated": "2026-02-14T10:30:00Z"}
    episodic = read(
        "episodic/a.md", "---\nwhen: 2026-02-14\nchannel: telegram\nparticipants: [Ann]\n---\n"
    )
    assert episodic.when == datetime(2026, 2, 14, tzinfo=UTC)
    assert episodic.extra == {"channel": "telegram", "participants": ["Ann"]}
    pattern = read("procedural/p.md", "---\ntrigger: a + b\nlearned_from: [2026-02-14]\n---\n")
    assert pattern.extra == {"trigger": "a + b", "learned_from": ["2026-02-14"]}


def test_blank_strings_are_defaults() -> None:
    mem = read("semantic/a.md", "---\nid: ''\ntitle: '  '\nscope:\nsupersedes: ''\n---\n# H\n")
    assert mem.id == "note_fallback"
    assert mem.title == "H"
    assert mem.scope == "global"
    assert mem.supersedes is None


def test_broken_yaml_raises_with_file_line() -> None:
    with pytest.raises(FrontmatterError) as info:
        read("semantic/a.md", "---\ntitle: x\ntags: [a\nscope: g\n---\n")
    assert info.value.path == "semantic/a.md"
    assert info.value.line == 4


def test_unclosed_frontmatter_raises() -> None:
    with pytest.raises(FrontmatterError):
        read("semantic/a.md", "---\ntitle: x\n")


# -- writing and reading back -----------------------------------------------------------


def _memory(**fields: object) -> Memory:
    base: dict[str, object] = {
        "id": "mem_20260214_103000_7f3a",
        "type": "semantic",
        "title": "Prefers direct communication",
        "body": "Prefers direct communication without pleasantries.\n",
        "path": "semantic/prefers-direct-communication.md",
        "created": NOW,
        "last_accessed": NOW,
        "source": "cli",
    }
    base.update(fields)
    return Memory(**base)  # type: ignore[arg-type]


def test_render_matches_the_spec_layout() -> None:
    mem = _memory(tags=("preference", "communication"), importance=6)
    assert render(mem) == (
        "---\n"
        "id: mem_20260214_103000_7f3a\n"
        "type: semantic\n"
        "title: Prefers direct communication\n"
        "tags: [preference, communication]\n"
        "scope: global\n"
        "created: 2026-02-14T10:30:00Z\n"
        "last_accessed: 2026-02-14T10:30:00Z\n"
        "access_count: 0\n"
        "reinforced: 0\n"
        "importance: 6\n"
        "pinned: false\n"
        "source: cli\n"
        "status: active\n"
        "supersedes: null\n"
        "---\n"
        "\n"
        "Prefers direct communication without pleasantries.\n"
    )


def test_to_frontmatter_type_specific_keys() -> None:
    episodic = to_frontmatter(_memory(type="episodic", when=None))
    assert episodic["when"] == NOW
    working = to_frontmatter(_memory(type="working", session="s1", extra={"updated": NOW}))
    assert working["session"] == "s1"
    assert working["updated"] == NOW
    assert "when" not in working
    linked = to_frontmatter(_memory(superseded_by="mem_x", status="superseded"))
    assert linked["superseded_by"] == "mem_x"
    assert list(to_frontmatter(_memory()))[:3] == ["id", "type", "title"]


def test_render_adds_final_newline() -> None:
    assert render(_memory(body="no newline")).endswith("\n\nno newline\n")


def _same_fields(read_back: Memory, mem: Memory) -> None:
    for name in Memory._fields:
        if name in ("body", "path"):
            continue
        assert getattr(read_back, name) == getattr(mem, name), name


stripped_text = st.text(min_size=1, max_size=40).map(str.strip).filter(bool)
tag = (
    st.text(min_size=1, max_size=12)
    .map(lambda s: s.strip().lstrip("#").strip())
    .filter(lambda s: s != "" and s == s.strip().lstrip("#").strip())
)
seconds = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.replace(microsecond=0, tzinfo=UTC)
)
extra_key = st.from_regex(r"x_[a-z0-9_]{1,8}", fullmatch=True)


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    mem_type = draw(st.sampled_from(["semantic", "episodic", "procedural", "working"]))
    created = draw(seconds)
    return Memory(
        id=draw(st.one_of(st.just("mem_20260214_103000_7f3a"), stripped_text)),
        type=mem_type,
        title=draw(stripped_text),
        body=draw(st.text(max_size=200)),
        path=f"{mem_type}/x.md",
        tags=tuple(draw(st.lists(tag, max_size=4, unique=True))),
        scope=draw(stripped_text),
        created=created,
        last_accessed=draw(seconds),
        access_count=draw(st.integers(0, 10**6)),
        reinforced=draw(st.integers(0, 1000)),
        importance=draw(st.integers(1, 10)),
        pinned=draw(st.booleans()),
        source=draw(stripped_text),
        status=draw(st.sampled_from(["active", "proposed", "superseded", "archived"])),
        supersedes=draw(st.one_of(st.none(), stripped_text)),
        superseded_by=draw(st.one_of(st.none(), stripped_text)),
        session=draw(stripped_text) if mem_type == "working" else None,
        when=draw(seconds) if mem_type == "episodic" else None,
        extra=draw(st.dictionaries(extra_key, st.text(max_size=20), max_size=3)),
    )


@settings(max_examples=150, deadline=None)
@given(memories())
def test_render_then_read_gives_the_same_memory(mem: Memory) -> None:
    text = render(mem)
    back = from_text(mem.path, text, mtime=0, fallback_id="unused")
    _same_fields(back, mem)
    # The blank line after the frontmatter separates it from the body.
    body = mem.body if mem.body.endswith("\n") else mem.body + "\n"
    assert back.body == "\n" + body
    assert back.path == mem.path
    assert back.has_frontmatter and back.has_id


@settings(max_examples=100, deadline=None)
@given(memories(), st.text(max_size=30))
def test_frontmatter_round_trip_through_parse(mem: Memory, body: str) -> None:
    values = to_frontmatter(mem)
    parts = fm.split(fm.emit(values) + body)
    parsed = fm.parse(parts.fm_text)
    assert list(parsed) == list(values)
    assert parsed["title"] == mem.title
    assert parsed["tags"] == list(mem.tags)
    assert parsed["created"] == fm.format_time(mem.created)


# -- ids and titles ---------------------------------------------------------------------


def test_new_id_format() -> None:
    mem_id = new_id(NOW)
    assert re.fullmatch(r"mem_20260214_103000_[0-9a-f]{4}", mem_id)


def test_derived_id_is_stable_and_distinct() -> None:
    first = derived_id("semantic/coffee.md")
    assert first == derived_id("semantic/coffee.md")
    assert re.fullmatch(r"note_[0-9a-f]{10}", first)
    assert first != derived_id("semantic/tea.md")
    assert first != derived_id("archive/semantic/coffee.md")


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1), st.text(min_size=1))
def test_derived_id_depends_only_on_the_path(a: str, b: str) -> None:
    assert derived_id(a) == derived_id(a)
    if a != b:
        assert derived_id(a) != derived_id(b)


@pytest.mark.parametrize(
    ("relpath", "expected"),
    [
        ("semantic/a.md", ("semantic", False)),
        ("episodic/2026-02/a.md", ("episodic", False)),
        ("archive/procedural/a.md", ("procedural", True)),
        ("archive/a.md", (None, True)),
        ("semantic.md", (None, False)),
        ("buffer/2026-02-14.md", (None, False)),
        ("notes/semantic/a.md", (None, False)),
        ("archive/archive/semantic/a.md", (None, True)),
    ],
)
def test_type_from_path(relpath: str, expected: tuple[str | None, bool]) -> None:
    assert type_from_path(relpath) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Prefers tea. Drinks it at 4pm.", "Prefers tea"),
        ("Is it done? Yes.", "Is it done?"),
        ("  first line\nsecond line", "first line"),
        ("v1.2 is out", "v1.2 is out"),
        ("", ""),
        ("   \n  ", ""),
        ("Ends with a period.", "Ends with a period"),
    ],
)
def test_title_from_text(text: str, expected: str) -> None:
    assert title_from_text(text) == expected


def test_title_from_text_cuts_long_lines_at_a_word() -> None:
    text = "The quick brown fox jumps over the lazy dog, and then keeps running far away"
    title = title_from_text(text, max_len=32)
    assert title == "The quick brown fox jumps over…"
    one_word = "x" * 100
    assert title_from_text(one_word, max_len=10) == "x" * 10 + "…"
    assert title_from_text("alpha beta, gamma", max_len=12) == "alpha beta…"
    assert title_from_text("0 .", max_len=5) == "0"  # no space left before a dropped dot


@settings(max_examples=150, deadline=None)
@given(st.text(), st.integers(5, 80))
def test_title_from_text_is_one_short_line(text: str, max_len: int) -> None:
    title = title_from_text(text, max_len=max_len)
    assert len(title) <= max_len + 1
    assert "\n" not in title
    assert title == title.strip() or title.endswith("…")


def test_memory_defaults() -> None:
    mem = Memory(id="i", type="semantic", title="t", body="b", path="semantic/t.md")
    assert mem.created == EPOCH
    assert mem.accessed == EPOCH
    assert not mem.archived
    assert mem._replace(status="superseded").archived


def test_check_type_gives_back_a_type_and_refuses_anything_else() -> None:
    for name in ("semantic", "episodic", "procedural", "working"):
        assert check_type(name) == name
    for bad in ("bogus", "", "Semantic", "archive"):
        with pytest.raises(UsageError) as refused:
            check_type(bad)
        assert refused.value.message == (
            f"unknown type {bad!r} (one of: semantic, episodic, procedural, working)"
        )
        assert refused.value.exit_code == 2
