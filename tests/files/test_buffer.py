"""The short-term buffer: day files, `log`, and what the sleep cycle reads back from them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, date, datetime, time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files import buffer
from kenomem.files.buffer import Entry
from kenomem.vault.core import CoreVault
from tests.conftest import Cli

DAY = date(2026, 3, 1)
PATH = "buffer/2026-03-01.md"
HEADING = re.compile(r"^## \d\d:\d\d(?::\d\d)? ")
KENOMEM = Path(sys.executable).with_name("kenomem")


def at(hour: int, minute: int, second: int = 0, day: int = 1) -> datetime:
    return datetime(2026, 3, day, hour, minute, second, tzinfo=UTC)


def day_file(text: str) -> str:
    return f"---\ndate: {DAY.isoformat()}\nconsolidated: null\n---\n{text}"


def frontmatter(path: Path) -> dict[str, object]:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


# -- format and parse -------------------------------------------------------------------------

# Characters of one line: anything but the characters Python reads as line breaks.
_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_line_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n" + _BREAKS)
_plain_line = st.text(_line_chars, max_size=40)
_clock = st.times().map(lambda t: t.strftime("%H:%M" if t.second % 2 else "%H:%M:%S"))
# Lines that read like an entry's heading, escaped or not, with or without a tail.
_heading_line = st.builds(lambda clock, rest: f"## {clock} {rest}", _clock, _plain_line)
# ... and lines that already start with backslashes before such a heading.
_escaped_line = st.builds(
    lambda slashes, clock, rest: f"{slashes}## {clock}{rest}",
    st.sampled_from(["\\", "\\\\"]),
    _clock,
    _plain_line,
)


def _texts(*lines: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return (
        st.lists(st.one_of(_plain_line, *lines), min_size=1, max_size=6)
        .map("\n".join)
        .filter(lambda t: t.strip() != "")
    )


_text = _texts(_heading_line)

_word = st.text(st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=8)
_who = st.one_of(st.just(""), st.lists(_word, min_size=1, max_size=3).map(" ".join)).filter(
    lambda w: w != "-"
)
_label = st.one_of(
    st.just(""),
    st.text(st.characters(whitelist_categories=("L", "N", "P", "S")), min_size=1, max_size=16),
)


@st.composite
def _entries(draw: st.DrawFn, text: st.SearchStrategy[str] = _text) -> list[Entry]:
    moments = sorted(draw(st.lists(st.times(), min_size=1, max_size=4)))
    return [
        Entry(
            datetime.combine(DAY, moment.replace(microsecond=0), tzinfo=UTC),
            draw(_who),
            draw(_label),
            draw(_label),
            draw(text),
        )
        for moment in moments
    ]


def _round_trip(entries: list[Entry]) -> str:
    text = day_file("".join(buffer.format_entry(e) for e in entries))
    day = buffer.parse_day(PATH, text)
    assert day.date == DAY
    assert day.consolidated is None
    assert [(e.at, e.who, e.session, e.channel, e.text) for e in day.entries] == [
        (e.at, e.who, e.session, e.channel, e.text.strip("\n")) for e in entries
    ]
    assert [e.position for e in day.entries] == list(range(len(entries)))
    return text


@settings(max_examples=150, deadline=None)
@given(_entries())
def test_format_and_parse_round_trip(entries: list[Entry]) -> None:
    text = _round_trip(entries)
    # Each entry is exactly one heading: lines of the text that look like one are escaped.
    body = text.split("---\n", 2)[2]
    assert sum(1 for line in body.splitlines() if HEADING.match(line)) == len(entries)


@settings(max_examples=100, deadline=None)
@given(_entries(_texts(_heading_line, _escaped_line)))
def test_round_trip_of_lines_that_already_look_escaped(entries: list[Entry]) -> None:
    _round_trip(entries)


def test_heading_lines_in_the_text_are_escaped() -> None:
    text = "first line\n## 14:30 Adrian @chat #x\nlast line"
    formatted = buffer.format_entry(Entry(at(9, 0), "Bob", "s1", "", text))
    assert formatted.splitlines()[1] == "## 09:00:00 Bob @s1"
    assert "\\## 14:30 Adrian @chat #x" in formatted.splitlines()
    (entry,) = buffer.parse_day(PATH, day_file(formatted)).entries
    assert entry.text == text


def test_a_line_that_already_starts_with_an_escaped_heading_comes_back_unchanged() -> None:
    # Escaping must be reversible: a line that starts with a backslash and a heading is
    # itself escaped, or it comes back without its backslash.
    text = "how headings are escaped:\n\\## 12:00 like this"
    formatted = buffer.format_entry(Entry(at(9, 0), "Bob", "", "", text))
    (entry,) = buffer.parse_day(PATH, day_file(formatted)).entries
    assert entry.text == text


def test_who_session_and_channel_are_in_the_heading() -> None:
    formatted = buffer.format_entry(Entry(at(14, 30, 5), "Adrian", "telegram-123", "tg", "hi"))
    assert formatted == "\n## 14:30:05 Adrian @telegram-123 #tg\nhi\n"
    anonymous = buffer.format_entry(Entry(at(14, 30, 5), "", "", "", "hi"))
    (entry,) = buffer.parse_day(PATH, day_file(anonymous)).entries
    assert (entry.who, entry.session, entry.channel) == ("", "", "")


def test_a_session_with_a_space_comes_back_as_it_was_logged(vault: CoreVault) -> None:
    log_entry(vault, LogRequest("hello", who="Adrian", session="chat 1", at=at(9, 0)))
    (entry,) = buffer.read_day(vault.root, PATH).entries
    assert entry.session == "chat 1"


def test_a_hand_written_heading_without_seconds_is_read() -> None:
    (entry,) = buffer.parse_day(PATH, day_file("\n## 14:30 Adrian\nhi there\n")).entries
    assert entry.at == at(14, 30)
    assert (entry.who, entry.text) == ("Adrian", "hi there")


# -- the day file -----------------------------------------------------------------------------


def test_the_first_entry_creates_the_day_file_with_its_frontmatter(
    vault_dir: Path, vault: CoreVault
) -> None:
    result = log_entry(vault, LogRequest("Decided to ship on Friday", who="Adrian", at=at(14, 30)))
    assert result.path == PATH
    path = vault_dir / PATH
    assert frontmatter(path) == {"date": DAY, "consolidated": None}
    assert path.read_text(encoding="utf-8") == (
        "---\ndate: 2026-03-01\nconsolidated: null\n---\n"
        "\n## 14:30:00 Adrian\nDecided to ship on Friday\n"
    )
    day = buffer.read_day(vault.root, PATH)
    assert (day.date, day.consolidated, len(day.entries)) == (DAY, None, 1)
    assert buffer.days(vault.root) == [PATH]


def test_at_puts_the_entry_in_the_day_of_its_utc_time(vault: CoreVault) -> None:
    from datetime import timedelta, timezone

    evening_in_new_york = datetime(2026, 2, 13, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    result = log_entry(vault, LogRequest("late entry", at=evening_in_new_york))
    assert result.path == "buffer/2026-02-14.md"
    (entry,) = buffer.read_day(vault.root, result.path).entries
    assert entry.at == datetime(2026, 2, 14, 4, 30, tzinfo=UTC)


def test_appending_never_rewrites_earlier_entries(vault_dir: Path, vault: CoreVault) -> None:
    log_entry(vault, LogRequest("first", who="Adrian", at=at(9, 0)))
    log_entry(vault, LogRequest("second\n## 10:00 looks like a heading", who="Bob", at=at(9, 5)))
    before = (vault_dir / PATH).read_bytes()
    inode = (vault_dir / PATH).stat().st_ino
    log_entry(vault, LogRequest("third", who="Adrian", session="s1", channel="cli", at=at(9, 10)))
    after = (vault_dir / PATH).read_bytes()
    assert after.startswith(before)
    assert after[len(before) :] == b"\n## 09:10:00 Adrian @s1 #cli\nthird\n"
    assert (vault_dir / PATH).stat().st_ino == inode  # appended in place, not replaced
    texts = [e.text for e in buffer.read_day(vault.root, PATH).entries]
    assert texts == ["first", "second\n## 10:00 looks like a heading", "third"]


def test_days_lists_only_buffer_days_oldest_first(vault_dir: Path, vault: CoreVault) -> None:
    log_entry(vault, LogRequest("b", at=at(9, 0, day=3)))
    log_entry(vault, LogRequest("a", at=at(9, 0, day=1)))
    (vault_dir / "buffer" / "notes.md").write_text("not a day\n", encoding="utf-8")
    assert buffer.days(vault.root) == ["buffer/2026-03-01.md", "buffer/2026-03-03.md"]


def test_marking_a_day_consolidated_changes_only_that_key(
    vault_dir: Path, vault: CoreVault
) -> None:
    log_entry(vault, LogRequest("first", who="Adrian", at=at(9, 0)))
    log_entry(vault, LogRequest("second\n\\## 09:00 escaped", who="Bob", at=at(9, 5)))
    before = (vault_dir / PATH).read_text(encoding="utf-8")
    when = datetime(2026, 3, 2, 4, 0, 7, tzinfo=UTC)
    buffer.mark_consolidated(vault.root, PATH, when, 2)
    after = (vault_dir / PATH).read_text(encoding="utf-8")
    assert after == before.replace(
        "consolidated: null", "consolidated: 2026-03-02T04:00:07Z\nconsolidated_entries: 2", 1
    )
    day = buffer.read_day(vault.root, PATH)
    assert (day.consolidated, day.done, day.pending) == (when, 2, [])
    assert buffer.read_day(vault.root, PATH).entries == buffer.parse_day(PATH, before).entries


def test_an_entry_logged_after_consolidation_keeps_the_mark(
    vault_dir: Path, vault: CoreVault
) -> None:
    log_entry(vault, LogRequest("first", at=at(9, 0)))
    buffer.mark_consolidated(vault.root, PATH, at(23, 0), 1)
    log_entry(vault, LogRequest("late", at=at(8, 30)))  # logged after, whatever its time
    day = buffer.read_day(vault.root, PATH)
    assert day.consolidated == at(23, 0)
    assert [e.text for e in day.entries] == ["first", "late"]
    assert [e.text for e in day.pending] == ["late"]


def test_a_day_marked_without_a_count_is_done_up_to_its_mark(
    vault_dir: Path, vault: CoreVault
) -> None:
    """Older vaults marked a day with its time alone: the entries logged after it (a day
    consolidated early) are still to be done."""
    log_entry(vault, LogRequest("first", at=at(9, 0)))
    log_entry(vault, LogRequest("second", at=at(10, 0)))
    text = (vault_dir / PATH).read_text(encoding="utf-8")
    marked = text.replace("consolidated: null", "consolidated: 2026-03-01T09:30:00Z", 1)
    (vault_dir / PATH).write_text(marked, encoding="utf-8")
    day = buffer.read_day(vault.root, PATH)
    assert [e.text for e in day.pending] == ["second"]
    broken = marked.replace("09:30:00Z", "09:30:00Z\nconsolidated_entries: many", 1)
    assert buffer.parse_day(PATH, broken).done == 1


# -- concurrent loggers -----------------------------------------------------------------------


def _kenomem() -> list[str]:
    return [str(KENOMEM)] if KENOMEM.exists() else [sys.executable, "-m", "kenomem"]


def test_concurrent_loggers_never_lose_an_entry(vault_dir: Path) -> None:
    env = {**os.environ, "KENOMEM_VAULT": str(vault_dir), "NO_COLOR": "1"}
    loggers, each = 6, 4
    processes = [
        subprocess.Popen(
            [
                "sh",
                "-c",
                f"for i in $(seq 0 {each - 1}); do "
                f'"$@" log "logger {n} entry $i" --who w{n} --session s{n} '
                f"--at 2026-03-01T10:0{n}:0$i || exit 1; done",
                "sh",
                *_kenomem(),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(loggers)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    vault = CoreVault.open(vault_dir)
    entries = buffer.read_day(vault.root, PATH).entries
    texts = sorted(e.text for e in entries)
    assert texts == sorted(f"logger {n} entry {i}" for n in range(loggers) for i in range(each))
    for entry in entries:
        n = entry.text.split()[1]
        assert (entry.who, entry.session) == (f"w{n}", f"s{n}")
    head = (vault_dir / PATH).read_text(encoding="utf-8")
    assert head.count("\n---\n") == 1 and head.startswith("---\ndate: 2026-03-01\n")


# -- the command ------------------------------------------------------------------------------


def test_cli_log_with_at_and_json(cli: Cli, vault_dir: Path) -> None:
    result = cli(
        "log",
        "Decided to ship on Friday",
        "--who",
        "Adrian",
        "--session",
        "chat-42",
        "--channel",
        "telegram",
        "--at",
        "2026-02-13T14:30",
        "--json",
    )
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc == {
        "path": "buffer/2026-02-13.md",
        "at": "2026-02-13T14:30:00Z",
        "who": "Adrian",
        "session": "chat-42",
        "channel": "telegram",
    }
    text = (vault_dir / "buffer/2026-02-13.md").read_text(encoding="utf-8")
    assert "\n## 14:30:00 Adrian @chat-42 #telegram\nDecided to ship on Friday\n" in text


@pytest.mark.parametrize(
    ("moment", "path", "heading"),
    [
        ("2026-02-13T23:30-05:00", "buffer/2026-02-14.md", "## 04:30:00 -"),
        ("2026-02-14T00:30+02:00", "buffer/2026-02-13.md", "## 22:30:00 -"),
        ("2026-02-13", "buffer/2026-02-13.md", "## 00:00:00 -"),
    ],
)
def test_cli_log_at_imports_into_the_day_of_its_utc_time(
    cli: Cli, vault_dir: Path, moment: str, path: str, heading: str
) -> None:
    result = cli("log", "imported from an old chat", "--at", moment, "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["path"] == path
    lines = (vault_dir / path).read_text(encoding="utf-8").splitlines()
    assert lines[lines.index(heading) + 1] == "imported from an old chat"


def test_cli_log_without_at_goes_to_today(cli: Cli, vault_dir: Path) -> None:
    before = datetime.now(UTC).date()
    result = cli("log", "something happened", "--json")
    after = datetime.now(UTC).date()
    assert result.code == 0, result.err
    path = json.loads(result.out)["path"]
    assert path in {f"buffer/{before.isoformat()}.md", f"buffer/{after.isoformat()}.md"}
    assert (vault_dir / path).is_file()


def test_cli_log_reads_stdin(cli: Cli, vault_dir: Path) -> None:
    text = "line one\n## 11:00 Mallory @x\nline three\n"
    result = cli("log", "-", "--who", "Adrian", "--at", "2026-03-01T09:00", input=text)
    assert result.code == 0, result.err
    assert "buffer/2026-03-01.md" in result.out
    vault = CoreVault.open(vault_dir)
    (entry,) = buffer.read_day(vault.root, PATH).entries
    assert entry.text == text.strip("\n")
    assert entry.who == "Adrian"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("",), None),
        (("   \n  ",), None),
        (("-",), ""),
        (("-",), "\n\n"),
    ],
)
def test_cli_log_refuses_empty_text(
    cli: Cli, vault_dir: Path, args: tuple[str, ...], stdin: str | None
) -> None:
    result = cli("log", *args, "--at", "2026-03-01T09:00", input=stdin)
    assert result.code == 1
    assert result.out == ""
    assert "empty" in result.err
    assert "Traceback" not in result.err
    assert not (vault_dir / PATH).exists()


@pytest.mark.parametrize("moment", ["not-a-time", "2026-13-45", "yesterday at noon"])
def test_cli_log_refuses_a_bad_at(cli: Cli, vault_dir: Path, moment: str) -> None:
    result = cli("log", "something", "--at", moment)
    assert result.code in (1, 2)
    assert result.out == ""
    assert moment in result.err
    assert "Traceback" not in result.err
    assert list((vault_dir / "buffer").glob("*.md")) == []


def test_cli_log_refuses_a_session_on_two_lines(cli: Cli, vault_dir: Path) -> None:
    result = cli("log", "something", "--session", "a\nb", "--at", "2026-03-01T09:00")
    assert result.code == 1
    assert "session" in result.err
    assert not (vault_dir / PATH).exists()


def test_cli_log_keeps_secrets_out_of_the_buffer(cli: Cli, vault_dir: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = cli("log", f"the deploy token is {token}", "--at", "2026-03-01T09:00")
    # Refused (exit 1, nothing written) or redacted (written without the token).
    assert result.code in (0, 1)
    path = vault_dir / PATH
    assert not path.exists() or token not in path.read_text(encoding="utf-8")
    assert "token" in result.err.lower()


def test_day_path_names_the_file_by_date() -> None:
    assert buffer.day_path(date(2026, 2, 3)) == "buffer/2026-02-03.md"
    assert buffer.date_of("buffer/2026-02-03.md") == date(2026, 2, 3)


def test_a_buffer_day_with_a_broken_header_is_an_error() -> None:
    from kenomem.errors import FrontmatterError

    with pytest.raises(FrontmatterError):
        buffer.parse_day("buffer/notes.md", "---\ndate: someday\n---\n\n## 09:00 A\nx\n")


def test_time_of_a_logged_entry_is_kept_to_the_second(vault: CoreVault) -> None:
    log_entry(vault, LogRequest("x", at=datetime.combine(DAY, time(7, 8, 9, 999), tzinfo=UTC)))
    (entry,) = buffer.read_day(vault.root, PATH).entries
    assert entry.at == at(7, 8, 9)
