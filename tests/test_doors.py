"""Every way into the vault refuses what cannot be kept safely (issue 15): a control
character (a NUL byte makes the file binary, and every later command skips it) or a
likely secret, in any field it stores, labels included. Nothing is written when it
refuses. The doors: `remember`, `working set`, `log`, `extract`, `import` (turns and
memories, JSON and JSONL, `--as buffer`), and the Python API the MCP server calls
(the server itself: tests/test_mcp.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenomem.api import Vault
from kenomem.errors import InvalidInput, SecretDetected
from kenomem.files.textcheck import check_fields, check_text
from tests.conftest import Cli, CliResult

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_KEY = "AKIA" + "Q7XJ2M4K9P3W8R5T"


def snapshot(vault_dir: Path) -> dict[str, bytes]:
    """Every file of the vault but the derived ones under `.kenomem/`."""
    return {
        p.relative_to(vault_dir).as_posix(): p.read_bytes()
        for p in vault_dir.rglob("*")
        if p.is_file() and ".kenomem" not in p.relative_to(vault_dir).parts
    }


def refused(result: CliResult, *words: str) -> None:
    assert result.code == 1, (result.out, result.err)
    for word in words:
        assert word in result.err, result.err


# -- the check itself ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("a \x00 b", "a NUL byte (\\x00) at position 3"),
        ("red \x1b[31malert", "an escape character (\\x1b) at position 5"),
        ("line one\nline \x07two", "a control character (\\x07) at line 2, column 6"),
        ("old mac\rline", "a carriage return that does not end a line (\\r)"),
        ("del \x7f", "a DEL character (\\x7f)"),
        ("c1 \x9b31m", "a control character (\\x9b)"),
        ("half \ud83d pair", "an unpaired surrogate (\\ud83d)"),
    ],
)
def test_a_control_character_is_named_with_where_it_is(value: str, named: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_text(value, "text")
    assert caught.value.message.startswith("the text holds ")
    assert named in caught.value.message
    assert "cannot be stored" in caught.value.message
    assert caught.value.hint
    assert "\x00" not in caught.value.message and "\x1b" not in caught.value.message


@pytest.mark.parametrize(
    "value", ["plain", "tabs\tand\nlines", "windows\r\nlines\r\n", "émoji 🚀 ok", "", "\u2028"]
)
def test_text_and_its_white_space_pass(value: str) -> None:
    assert check_text(value, "text") == value


def test_check_fields_names_the_field_and_checks_controls_before_secrets() -> None:
    check_fields({"text": "fine", "tag": ["a", "b"], "scope": None})
    with pytest.raises(InvalidInput, match="the channel holds a NUL byte"):
        check_fields({"text": f"key {TOKEN}", "channel": "tele\x00gram"})
    with pytest.raises(SecretDetected, match="the tag looks like it holds a secret"):
        check_fields({"text": "fine", "tag": ["ok", AWS_KEY]})


# -- each hole, through the command line ---------------------------------------------------


def test_a_nul_byte_on_stdin_is_refused_not_stored_and_lost(cli: Cli, vault_dir: Path) -> None:
    # `printf 'a \x00 b' | kenomem working set --session s1` wrote a file every later
    # command skipped as binary: the memory was lost.
    before = snapshot(vault_dir)
    for args in (
        ("working", "set", "--session", "s1"),
        ("remember", "-"),
        ("remember", "--type", "working", "--session", "s1", "-"),
        ("log", "-"),
    ):
        refused(cli(*args, input="a \x00 b"), "NUL byte", "position 3")
        assert snapshot(vault_dir) == before, args
    assert cli("working", "show", "--session", "s1", "--json").code == 0
    assert cli("doctor", "--json").code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "A fact", "--title", "bell\x07"),
        ("remember", "A fact", "--tag", "esc\x1b[2J"),
        ("remember", "A fact", "--scope", "chat\x00"),
        ("remember", "red \x1b[31malert", "--type", "semantic"),
        ("log", "said it", "--who", "Ann\x1b[8m"),
        ("log", "said it", "--channel", "tele\x7fgram"),
        ("working", "set", "--session", "s\x001", "Task: x"),
    ],
    ids=["title", "tag", "scope", "text", "who", "channel", "session"],
)
def test_control_characters_in_any_option_are_refused(
    cli: Cli, vault_dir: Path, args: tuple[str, ...]
) -> None:
    before = snapshot(vault_dir)
    refused(cli(*args), "cannot be stored")
    assert snapshot(vault_dir) == before


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "A fact", "--scope", AWS_KEY),
        ("remember", "A fact", "--session", TOKEN),
        ("remember", "Task: deploy", "--type", "working", "--session", TOKEN),
        ("working", "set", "--session", TOKEN, "Task: deploy"),
        ("log", "said it", "--session", TOKEN),
        ("log", "said it", "--channel", AWS_KEY),
        ("log", "said it", "--who", AWS_KEY),
        ("remember", "the db is Postgres://admin:pw@db.internal/app"),
        ("remember", "DB_PASSWORD=hunter2 on staging"),
        ("log", "use Authorization: Bearer abcDEF123456ghiJKL789 for it"),
        ("remember", "card 4111.1111.1111.1111 for the hotel"),
    ],
    ids=[
        "remember-scope",
        "remember-session",
        "working-session",
        "working-set-session",
        "log-session",
        "log-channel",
        "log-who",
        "url-upper-case",
        "env-password",
        "bearer",
        "card-dots",
    ],
)
def test_secrets_in_labels_and_new_forms_are_refused(
    cli: Cli, vault_dir: Path, args: tuple[str, ...]
) -> None:
    # A session id becomes a file name (working/<session>.md): a token there is in git.
    before = snapshot(vault_dir)
    result = cli(*args)
    refused(result, "secret")
    assert TOKEN not in result.err and AWS_KEY not in result.err
    assert snapshot(vault_dir) == before


def test_the_refusal_names_the_field_and_the_kind(cli: Cli) -> None:
    result = cli("remember", "A fact", "--scope", AWS_KEY)
    assert "the scope looks like it holds a secret (AWS access key: AKIA…)" in result.err
    result = cli("log", "said it", "--session", TOKEN)
    assert "the session id looks like it holds a secret (GitHub token: ghp_…)" in result.err
    assert "nothing was logged" in result.err


def test_extract_stores_and_logs_nothing_of_a_bad_block(cli: Cli, vault_dir: Path) -> None:
    before = snapshot(vault_dir)
    reply = (
        "<memory>The vault key is \x00 binary</memory>\n"
        '<memory tags="ok, x\x1b[1m">Tags with an escape</memory>\n'
        f'<memory title="{AWS_KEY}">A title with a key</memory>\n'
        "Done \x1b[31m here."
    )
    result = cli("extract", "--session", "s1", "--log", input=reply)
    assert result.code == 0, result.err
    assert result.err.count("not stored") == 3
    assert "not logged" in result.err
    assert snapshot(vault_dir) == before


# -- import: every field of every record ------------------------------------------------------


def import_records(cli: Cli, records: list[Any], *args: str) -> dict[str, Any]:
    text = "".join(json.dumps(r) + "\n" for r in records)
    result = cli("import", "-", "--json", *args, input=text)
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads(result.out)
    return doc


TURN = {"role": "user", "content": "We moved the offsite to Lisbon", "id": "m1"}
MEMORY = {"type": "semantic", "body": "The offsite is in Lisbon", "title": "Offsite"}


@pytest.mark.parametrize(
    ("record", "args"),
    [
        ({**TURN, "content": "a \x00 b"}, ()),
        ({**TURN, "role": "us\x1ber"}, ()),
        ({**TURN, "session": "chat\x00"}, ()),
        ({**TURN, "channel": "tele\x07"}, ()),
        ({**TURN, "id": "m\x001"}, ()),
        ({**TURN, "title": "Lis\x1bbon"}, ()),
        ({**TURN, "content": "a \x00 b"}, ("--as", "buffer")),
        ({**TURN, "role": "us\x1ber"}, ("--as", "buffer")),
        ({**MEMORY, "body": "a \x00 b"}, ()),
        ({**MEMORY, "title": "Off\x1bsite"}, ()),
        ({**MEMORY, "scope": "chat\x00"}, ()),
        ({**MEMORY, "session": "s\x001"}, ()),
        ({**MEMORY, "extra": {"mood": "calm\x00"}}, ()),
    ],
)
def test_import_refuses_control_characters_in_any_field(
    cli: Cli, vault_dir: Path, record: dict[str, Any], args: tuple[str, ...]
) -> None:
    before = snapshot(vault_dir)
    doc = import_records(cli, [record], *args)
    (item,) = doc["items"]
    assert (doc["created"], item["action"]) == (0, "invalid")
    assert "cannot be stored" in item["reason"]
    assert snapshot(vault_dir) == before


@pytest.mark.parametrize(
    ("record", "args", "field"),
    [
        ({**TURN, "session": TOKEN}, (), "session"),
        ({**TURN, "channel": AWS_KEY}, (), "channel"),
        ({**TURN, "id": TOKEN}, (), "source_id"),
        ({**TURN, "role": AWS_KEY}, (), "speaker"),
        ({**TURN, "speaker": AWS_KEY}, ("--as", "buffer"), "speaker"),
        ({**TURN, "session": TOKEN}, ("--as", "buffer"), "session"),
        ({**TURN, "channel": AWS_KEY}, ("--as", "buffer"), "channel"),
        ({**MEMORY, "id": TOKEN}, (), "id"),
        ({**MEMORY, "scope": AWS_KEY}, (), "scope"),
        ({**MEMORY, "session": TOKEN}, (), "session"),
        ({**MEMORY, "supersedes": AWS_KEY}, (), "supersedes"),
        ({**MEMORY, "extra": {"note": f"key {AWS_KEY}"}}, (), "note"),
        ({**MEMORY, "body": "DB_PASSWORD=hunter2"}, (), "text"),
    ],
)
def test_import_skips_secrets_in_any_field(
    cli: Cli, vault_dir: Path, record: dict[str, Any], args: tuple[str, ...], field: str
) -> None:
    before = snapshot(vault_dir)
    doc = import_records(cli, [record], *args)
    (item,) = doc["items"]
    assert (doc["created"], item["action"]) == (0, "skipped")
    assert f"the {field} looks like it holds a secret" in item["reason"]
    assert TOKEN not in item["reason"] and AWS_KEY not in item["reason"]
    assert snapshot(vault_dir) == before


def test_import_options_are_checked_too(cli: Cli, vault_dir: Path) -> None:
    before = snapshot(vault_dir)
    text = json.dumps(TURN) + "\n"
    refused(cli("import", "-", "--session", TOKEN, input=text), "secret")
    refused(cli("import", "-", "--tag", AWS_KEY, input=text), "secret")
    refused(cli("import", "-", "--session", "s\x1b1", input=text), "cannot be stored")
    assert snapshot(vault_dir) == before


def test_a_bad_record_leaves_the_others_imported(cli: Cli, vault_dir: Path) -> None:
    doc = import_records(cli, [{**TURN, "content": "a \x00 b"}, {**TURN, "id": "m2"}])
    assert (doc["created"], doc["invalid"]) == (1, 1)
    assert [i["action"] for i in doc["items"]] == ["invalid", "created"]


# -- Hypothesis: any bad text, at any door, in any field ----------------------------------------

CONTROLS = [chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\x7f", "\x85", "\x9b"]
CLEAN = st.characters(blacklist_categories=("Cc", "Cs"))
LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.:", max_size=10)
SECRETS = [
    TOKEN,
    AWS_KEY,
    "Zq3Tk9XbW7pL2mVn/R8yHc4Ds+Jf6Ga1Eo5Ui0Pl",
    "Postgres://admin:pw@db/app",
    "redis://:hunter22@cache",
    "DB_PASSWORD=hunter2",
    "4111.1111.1111.1111",
    "sk-ant-api03-" + "aB3dE5fG7h" * 3,
]


def _with_control(around: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Text with a control character somewhere (a lone CR: not followed by a line feed)."""
    control = st.sampled_from([*CONTROLS, "\r"])
    return st.tuples(around, control, around).map(
        lambda t: t[0] + t[1] + (t[2].lstrip("\n") if t[1] == "\r" else t[2])
    )


def _with_secret(around: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(around, st.sampled_from(SECRETS), around).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}".strip()
    )


TEXT_AROUND = st.text(CLEAN, max_size=40)
BAD_TEXT = st.one_of(_with_control(TEXT_AROUND), _with_secret(TEXT_AROUND))
BAD_LABEL = st.one_of(_with_control(LABEL), _with_secret(LABEL))

Door = Callable[[Cli, str], CliResult]

# (door, whether its field is a label): each puts the bad value in one field.
CLI_DOORS: dict[str, tuple[Door, bool]] = {
    "remember text": (lambda cli, v: cli("remember", "-", input=v), False),
    "remember title": (lambda cli, v: cli("remember", "A fact", "--title", v), False),
    "remember tag": (lambda cli, v: cli("remember", "A fact", "--tag", v), True),
    "remember scope": (lambda cli, v: cli("remember", "A fact", "--scope", v), True),
    "remember session": (lambda cli, v: cli("remember", "A fact", "--session", v), True),
    "working text": (lambda cli, v: cli("working", "set", "--session", "s1", input=v), False),
    "working session": (lambda cli, v: cli("working", "set", "--session", v, "Task: x"), True),
    "log text": (lambda cli, v: cli("log", "-", input=v), False),
    "log who": (lambda cli, v: cli("log", "said", "--who", v), True),
    "log session": (lambda cli, v: cli("log", "said", "--session", v), True),
    "log channel": (lambda cli, v: cli("log", "said", "--channel", v), True),
}


@pytest.mark.parametrize("door", sorted(CLI_DOORS))
def test_any_bad_value_at_any_command_line_door_is_refused(
    cli: Cli, vault_dir: Path, door: str
) -> None:
    run, label = CLI_DOORS[door]
    cli("remember", "A first memory, so the vault is not empty")
    before = snapshot(vault_dir)

    @settings(
        max_examples=20,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(BAD_LABEL if label else BAD_TEXT)
    def check(value: str) -> None:
        result = run(cli, value)
        assert result.code == 1, (value, result.err)
        assert snapshot(vault_dir) == before

    check()


# The fields of a record that are written: a buffer entry keeps no id, title or tags, and
# a memory's `id` only when it is a plain key (one with a secret: tested above).
IMPORT_FIELDS = [
    *[("turn", f, ()) for f in ("content", "role", "session", "channel", "id", "title", "tags")],
    *[("turn", f, ("--as", "buffer")) for f in ("content", "role", "session", "channel")],
    *[("memory", f, ()) for f in ("body", "title", "scope", "session", "tags")],
]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(IMPORT_FIELDS), BAD_LABEL, st.booleans())
def test_any_bad_value_in_any_imported_field_is_refused(
    cli: Cli, vault_dir: Path, where: tuple[str, str, tuple[str, ...]], value: str, as_json: bool
) -> None:
    kind, field, args = where
    record: dict[str, Any] = dict(TURN if kind == "turn" else MEMORY)
    record[field] = [value] if field == "tags" else value
    before = snapshot(vault_dir)
    text = json.dumps([record]) if as_json else json.dumps(record) + "\n"
    result = cli("import", "-", "--json", *args, input=text)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["created"] == 0, (record, doc["items"])
    assert doc["items"][0]["action"] in ("invalid", "skipped")
    assert snapshot(vault_dir) == before


API_DOORS: dict[str, Callable[[Vault, str], object]] = {
    "remember": lambda v, s: v.remember(s),
    "remember tags": lambda v, s: v.remember("A fact", tags=[s]),
    "remember session": lambda v, s: v.remember("A fact", session=s),
    "set_working": lambda v, s: v.set_working("s1", s),
    "log": lambda v, s: v.log(s),
    "log channel": lambda v, s: v.log("said", channel=s),
}


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(sorted(API_DOORS)), BAD_LABEL | BAD_TEXT)
def test_any_bad_value_at_any_api_door_is_refused(vault_dir: Path, door: str, value: str) -> None:
    # The MCP server's tools call these methods, as the command line does.
    vault = Vault(vault_dir, source="mcp")
    before = snapshot(vault_dir)
    with pytest.raises((InvalidInput, SecretDetected)):
        API_DOORS[door](vault, value)
    assert snapshot(vault_dir) == before


# -- an unknown type: one check, one message, at every door that takes a type -------------

TYPE_DOORS: dict[str, Callable[[Cli], CliResult]] = {
    "remember": lambda cli: cli("remember", "A fact", "--type", "bogus"),
    "recall": lambda cli: cli("recall", "fact", "--type", "bogus"),
    "list": lambda cli: cli("list", "--type", "bogus"),
    "import": lambda cli: cli("import", "-", "--type", "bogus", input=json.dumps(TURN) + "\n"),
}


@pytest.mark.parametrize("door", sorted(TYPE_DOORS))
def test_an_unknown_type_is_refused_alike_at_every_door(
    cli: Cli, vault_dir: Path, door: str
) -> None:
    from kenomem.errors import UsageError
    from kenomem.files.memory import check_type

    with pytest.raises(UsageError) as one:
        check_type("bogus")
    before = snapshot(vault_dir)
    result = TYPE_DOORS[door](cli)
    assert result.code == 2, (result.out, result.err)
    assert one.value.message in result.err
    assert snapshot(vault_dir) == before
