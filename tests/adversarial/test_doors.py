"""Hostile input at the command line's doors: options, stdin, `log`, `working set`, `import`.

The same properties at every door (docs/security.md): a clean exit (0, 1 or 2 with one
error line, never a traceback or an "unexpected" error); a refused input writes nothing
(the vault's files are as they were); an input holding NUL or another control character is
refused; an accepted input reads back as it was given; nothing outside the vault changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kenomem.files.buffer import parse_day
from tests.adversarial.hostile import (
    DOORS,
    clean_exit,
    clean_label,
    clean_text,
    fresh_vault,
    hostile_label,
    hostile_text,
    refused_control,
    strings_in,
    tree,
)
from tests.conftest import Cli

texts = st.one_of(clean_text(), hostile_text())
labels = st.one_of(clean_label(), hostile_label())


def norm(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def same_text(given: str, stored: str) -> bool:
    """Equal once line endings are made one and the outer white space is dropped."""
    return norm(given) == norm(stored)


class Door:
    """A fresh vault for one example, and what lies around it (which must not change)."""

    def __init__(self, base: Path, cli: Cli) -> None:
        self.base = base
        self.vault = fresh_vault(base / "vaults")
        self.cli = cli
        self.around = self._around()
        self.before = tree(self.vault)

    def _around(self) -> dict[str, Any]:
        return {
            k: v for k, v in tree(self.base, derived=True).items() if not k.startswith("vaults")
        }

    def run(self, *args: str, input: str | None = None, more: tuple[str, ...] = ()) -> Any:
        cut = args.index("--") if "--" in args else len(args)
        vault = ("--vault", str(self.vault), *more)
        done = self.cli(*args[:cut], *vault, *args[cut:], input=input)
        clean_exit(done.code, done.out, done.err, args)
        return done.code, done.out, done.err

    def json(self, *args: str) -> dict[str, Any]:
        code, out, err = self.run(*args, more=("--json",))
        assert code == 0, err
        doc: dict[str, Any] = json.loads(out)
        return doc

    def unchanged(self) -> None:
        assert tree(self.vault) == self.before
        self.untouched_around()

    def untouched_around(self) -> None:
        assert self._around() == self.around


def door(tmp_path: Path, cli: Cli) -> Door:
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "canary.md").write_text("---\ntitle: canary\n---\n\ncanary\n")
    return Door(tmp_path, cli)


def options(flag: str, values: list[str]) -> list[str]:
    # `--flag=value`: a value starting with a dash is a value, not an option.
    return [f"{flag}={value}" for value in values]


@DOORS
@given(
    text=texts, tags=st.lists(labels, max_size=3), scope=st.none() | labels, title=st.none() | texts
)
@example(text="a \x00 b", tags=[], scope=None, title=None)  # issue 15: a NUL was stored
@example(text="plain", tags=["ok"], scope="chat\x1b[31m", title=None)
def test_remember_refuses_or_keeps_what_it_was_given(
    tmp_path: Path,
    cli: Cli,
    text: str,
    tags: list[str],
    scope: str | None,
    title: str | None,
) -> None:
    d = door(tmp_path, cli)
    args = ["remember", "--json", "--type", "semantic", *options("--tag", tags)]
    args += options("--scope", [scope] if scope is not None else [])
    args += options("--title", [title] if title is not None else [])
    code, out, _err = d.run(*args, "--", text)
    fields = [text, *tags, scope or "", title or ""]
    if any(refused_control(f) for f in fields):
        assert code != 0, f"a control character was accepted: {fields!r}"
    if code != 0:
        d.unchanged()
        return
    made = json.loads(out)
    shown = d.json("show", made["id"])
    assert same_text(text, shown["body"])
    if title is not None:
        assert same_text(title, shown["title"])
    kept = (t.strip().lstrip("#").strip() for t in tags)  # "#tag" is the tag "tag"
    assert shown["tags"] == list(dict.fromkeys(t for t in kept if t))
    given_scope = (scope if scope is not None else "global").strip()  # outer spaces go
    assert shown["scope"] == given_scope or not given_scope, (scope, shown["scope"])
    assert (d.vault / made["path"]).resolve().is_relative_to(d.vault.resolve())
    d.untouched_around()


@DOORS
@given(text=texts)
@example(text="a \x00 b")
def test_remember_from_stdin_refuses_or_keeps_the_text(tmp_path: Path, cli: Cli, text: str) -> None:
    d = door(tmp_path, cli)
    code, out, _err = d.run("remember", "--json", "--type", "semantic", "-", input=text)
    if refused_control(text):
        assert code != 0, f"a control character was accepted from stdin: {text!r}"
    if code != 0:
        d.unchanged()
        return
    shown = d.json("show", json.loads(out)["id"])
    assert same_text(text, shown["body"])
    d.untouched_around()


@DOORS
@given(text=texts, who=st.none() | labels, session=st.none() | labels, channel=st.none() | labels)
@example(text="a \x00 b", who=None, session=None, channel=None)
@example(text="plain", who="Eve\x1b]0;x\x07", session=None, channel=None)
def test_log_refuses_or_keeps_the_entry(
    tmp_path: Path,
    cli: Cli,
    text: str,
    who: str | None,
    session: str | None,
    channel: str | None,
) -> None:
    d = door(tmp_path, cli)
    given_fields = {"who": who, "session": session, "channel": channel}
    args = [
        a
        for key, value in given_fields.items()
        for a in options(f"--{key}", [value] if value is not None else [])
    ]
    code, out, _err = d.run("log", "--json", *args, "--", text)
    if any(refused_control(f) for f in [text, *(v for v in given_fields.values() if v)]):
        assert code != 0, f"a control character was accepted: {[text, given_fields]!r}"
    if code != 0:
        d.unchanged()
        return
    logged = json.loads(out)
    day = parse_day(logged["path"], (d.vault / logged["path"]).read_text(encoding="utf-8"))
    (entry,) = day.entries
    # Line separators a buffer day reads as line breaks: see the test below.
    assert same_text(breaks(text), entry.text)
    assert entry.session == (session or "")
    assert entry.channel == (channel or "")
    if who is not None:  # a heading's speaker loses outer spaces and a " @" or " #"
        spoken = who.replace(" @", " ").replace(" #", " ").strip()
        assert entry.who == spoken or (spoken == "-" and entry.who == ""), (who, entry.who)
    d.untouched_around()


def breaks(text: str) -> str:
    return "\n".join(text.splitlines())


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_a_logged_line_separator_comes_back_as_it_was(
    tmp_path: Path, cli: Cli, separator: str
) -> None:
    d = door(tmp_path, cli)
    text = f"first half{separator}second half"
    code, out, _err = d.run("log", "--json", "--", text)
    if code != 0:  # refused: nothing altered
        d.unchanged()
        return
    path = json.loads(out)["path"]
    (entry,) = parse_day(path, (d.vault / path).read_text(encoding="utf-8")).entries
    assert entry.text == text


@DOORS
@given(session=labels, text=texts)
@example(session="s1", text="a \x00 b")
def test_working_set_refuses_or_keeps_the_scratchpad(
    tmp_path: Path, cli: Cli, session: str, text: str
) -> None:
    d = door(tmp_path, cli)
    code, out, _err = d.run("working", "set", "--json", f"--session={session}", "-", input=text)
    if refused_control(session) or refused_control(text):
        assert code != 0, f"a control character was accepted: {[session, text]!r}"
    if code != 0:
        d.unchanged()
        return
    path = json.loads(out)["path"]
    assert path.startswith("working/") and "/" not in path.removeprefix("working/")
    assert (d.vault / path).resolve().parent == (d.vault / "working").resolve()
    shown = d.json("working", "show", f"--session={session}")
    assert shown["found"] and shown["session"] == session.strip()  # outer spaces go
    assert same_text(text, shown["text"])
    d.untouched_around()


# -- import -----------------------------------------------------------------------------------


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """One record of an import file: a memory (as `show --json` prints it) or a turn."""
    text = draw(texts)
    if draw(st.booleans()):
        record: dict[str, Any] = {"type": "semantic", "body": text}
        for key in ("title", "scope", "id"):
            if draw(st.booleans()):
                record[key] = draw(labels if key != "title" else texts)
        if draw(st.booleans()):
            record["tags"] = draw(st.lists(labels, max_size=3))
        return record
    turn: dict[str, Any] = {"role": draw(labels), "content": text}
    turn["timestamp"] = draw(st.sampled_from(["2026-02-13T14:30:00Z", 1770993000, "soon", None]))
    for key in ("session", "channel", "id", "title"):
        if draw(st.booleans()):
            turn[key] = draw(labels if key != "title" else texts)
    return turn


@DOORS
@given(batch=st.lists(records(), min_size=1, max_size=4), as_buffer=st.booleans())
@example(batch=[{"role": "user", "content": "a \x00 b", "timestamp": None}], as_buffer=False)
@example(batch=[{"type": "semantic", "body": "a \x1b[2J b"}], as_buffer=True)
def test_import_refuses_or_keeps_each_record(
    tmp_path: Path, cli: Cli, batch: list[dict[str, Any]], as_buffer: bool
) -> None:
    source = tmp_path / "records.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in batch), encoding="utf-8")
    d = door(tmp_path, cli)
    extra = ["--as", "buffer"] if as_buffer else []
    code, out, _err = d.run("import", "--json", *extra, str(source))
    if code != 0:
        d.unchanged()
        return
    report = json.loads(out)
    items = report["items"]
    assert len(items) == len(batch)
    for record, item in zip(batch, items, strict=True):
        if any(refused_control(f) for f in strings_in(record)):
            assert item["action"] != "created", f"a control character was imported: {record!r}"
        if item["action"] != "created" or not item["id"]:
            continue
        shown = d.json("show", item["id"])
        if "body" in record:
            assert same_text(record["body"], shown["body"]), (record, shown)
        else:  # a turn: "speaker: text"
            assert norm(shown["body"]).endswith(norm(record["content"])), (record, shown)
        assert (d.vault / shown["path"]).resolve().is_relative_to(d.vault.resolve())
    # With --as buffer, turns become entries of their day; memories stay memories.
    made = [(r, i) for r, i in zip(batch, items, strict=True) if i["action"] == "created"]
    entries_made = sum(1 for r, _ in made if as_buffer and "body" not in r)
    memory_files = [
        p for folder in ("semantic", "episodic") for p in (d.vault / folder).rglob("*.md")
    ]
    days = list((d.vault / "buffer").glob("*.md"))
    entries = sum(len(parse_day(p.name, p.read_text(encoding="utf-8")).entries) for p in days)
    assert (len(memory_files), entries) == (len(made) - entries_made, entries_made)
    d.untouched_around()


def test_a_day_logged_at_a_given_time_stays_in_the_vault(tmp_path: Path, cli: Cli) -> None:
    """`--at` picks the buffer file's name: a time can only name a day, never a path."""
    d = door(tmp_path, cli)
    for at in ("../../outside/x", "2026-02-13T14:30/../../x", "9999-99-99", "\x00", "1e99"):
        code, _out, _err = d.run("log", "--json", f"--at={at}", "--", "text")
        assert code != 0, at
    d.unchanged()
    d.json("log", "--at=2026-02-13T14:30", "--", "text")
    assert [p.name for p in (d.vault / "buffer").iterdir() if p.suffix == ".md"] == [
        "2026-02-13.md"
    ]
