"""No secret lands in the vault, whatever door it comes through (docs/security.md).

Each secret of `hostile.SECRETS` (the provider tokens the detector knew, and the forms issue
15 found it missed) is sent through every field of every door: the text, the title, the
tags, the scope, the session id (which becomes a file name), the speaker and channel of a
log entry, the fields of an imported record, a reply given to `extract`, a buffer entry
written by hand and consolidated. It is refused or redacted: never found afterwards in a
file of the vault, in a file's name, or in `.kenomem/` (the index holds what the files
hold), and never echoed in full in a message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given

from tests.adversarial.hostile import (
    DOORS,
    SECRETS,
    Secret,
    clean_exit,
    fresh_vault,
    secret_found,
    text_with_secret,
)
from tests.conftest import Cli

Door = Callable[[Cli, Path, Path, Secret], tuple[int, str, str]]
DAY = (datetime.now(UTC) - timedelta(days=2)).date().isoformat()


def run(cli: Cli, vault: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    cut = args.index("--") if "--" in args else len(args)
    done = cli(*args[:cut], "--vault", str(vault), *args[cut:], input=input)
    clean_exit(done.code, done.out, done.err, args)
    return done.code, done.out, done.err


def importing(records: list[dict[str, object]], *extra: str) -> Door:
    def door(cli: Cli, vault: Path, tmp: Path, secret: Secret) -> tuple[int, str, str]:
        text = json.dumps(records).replace("SECRET", json.dumps(secret.text)[1:-1])
        source = tmp / "import.json"
        source.write_text(text, encoding="utf-8")
        filled = [a.replace("SECRET", secret.text) for a in extra]
        return run(cli, vault, "import", "--json", *filled, str(source))

    return door


def command(*args: str, stdin: str | None = None) -> Door:
    def door(cli: Cli, vault: Path, tmp: Path, secret: Secret) -> tuple[int, str, str]:
        filled = [a.replace("SECRET", secret.text) for a in args]
        given = stdin.replace("SECRET", secret.text) if stdin is not None else None
        return run(cli, vault, *filled, input=given)

    return door


TURN = {"role": "user", "content": "the ferry leaves at nine", "timestamp": f"{DAY}T10:00:00Z"}
MEMORY = {"type": "semantic", "body": "the ferry leaves at nine", "title": "Ferry"}

# Doors for any text (it may hold spaces and line breaks).
TEXT_DOORS: dict[str, Door] = {
    "remember text": command("remember", "--", "ferry note: SECRET"),
    "remember stdin": command("remember", "-", stdin="ferry note:\nSECRET\n"),
    "remember title": command("remember", "--title=SECRET", "--", "ferry note"),
    "log text": command("log", "--", "said: SECRET"),
    "working set text": command("working", "set", "--session=s1", "-", stdin="Task: SECRET"),
    "extract memory": command("extract", stdin="Sure.\n<memory>the key is SECRET</memory>\n"),
    "extract working": command(
        "extract", "--session=s1", stdin="<working-memory>Task: SECRET</working-memory>"
    ),
    "extract logged reply": command(
        "extract", "--log", "--session=s1", "--user-message=SECRET", stdin="ok"
    ),
    "import turn text": importing([{**TURN, "content": "my key SECRET"}]),
    "import turn into the buffer": importing([{**TURN, "content": "key SECRET"}], "--as", "buffer"),
    "import memory body": importing([{**MEMORY, "body": "key: SECRET"}]),
    "import memory title": importing([{**MEMORY, "title": "SECRET"}]),
}
# Doors for a label: one token (a session id, a scope, a tag, a speaker, an id).
LABEL_DOORS: dict[str, Door] = {
    "remember tag": command("remember", "--tag=SECRET", "--", "ferry note"),
    "remember scope": command("remember", "--scope=SECRET", "--", "ferry note"),
    "remember session": command(
        "remember", "--type=working", "--session=SECRET", "--", "ferry note"
    ),
    "log session": command("log", "--session=SECRET", "--", "said hello"),
    "log who": command("log", "--who=SECRET", "--", "said hello"),
    "log channel": command("log", "--channel=SECRET", "--", "said hello"),
    "working set session": command("working", "set", "--session=SECRET", "-", stdin="Task: x"),
    "extract session": command("extract", "--session=SECRET", "--log", stdin="ok"),
    "import --session": importing([TURN], "--session=SECRET"),
    "import --tag": importing([TURN], "--tag=SECRET"),
    "import turn session": importing([{**TURN, "session": "SECRET"}]),
    "import turn channel": importing([{**TURN, "channel": "SECRET"}]),
    "import turn id": importing([{**TURN, "id": "SECRET"}]),
    "import turn speaker": importing([{**TURN, "role": "SECRET"}]),
    "import buffer heading": importing([{**TURN, "session": "SECRET"}], "--as", "buffer"),
    "import buffer speaker": importing([{**TURN, "role": "SECRET"}], "--as", "buffer"),
    "import memory id": importing([{**MEMORY, "id": "SECRET"}]),
    "import memory scope": importing([{**MEMORY, "scope": "SECRET"}]),
    "import memory tag": importing([{**MEMORY, "tags": ["SECRET"]}]),
}
CASES = [
    pytest.param(door, secret, id=f"{name}-{secret.kind}")
    for doors, pick in ((TEXT_DOORS, SECRETS), (LABEL_DOORS, [s for s in SECRETS if s.label]))
    for name, door in doors.items()
    for secret in pick
]


@pytest.mark.parametrize(("door", "secret"), CASES)
def test_a_secret_is_refused_or_redacted_at_every_door(
    cli: Cli, tmp_path: Path, door: Door, secret: Secret
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    _code, out, err = door(cli, vault, tmp_path, secret)
    assert secret_found(vault, [secret.needle]) == []
    assert secret.needle not in err, "a message quotes the secret"
    if not out.lstrip().startswith("{"):
        return
    assert secret.needle not in out, "the report quotes the secret"


PLAIN = Secret("plain", "Plainvalue7", "Plainvalue7", True)


@pytest.mark.parametrize(
    "door", [*TEXT_DOORS.values(), *LABEL_DOORS.values()], ids=[*TEXT_DOORS, *LABEL_DOORS]
)
def test_each_door_stores_a_plain_value(cli: Cli, tmp_path: Path, door: Door) -> None:
    """The doors above are real: a harmless value in the same place is stored."""
    vault = fresh_vault(tmp_path / "vaults")
    code, _out, err = door(cli, vault, tmp_path, PLAIN)
    assert code == 0, err
    assert secret_found(vault, [PLAIN.needle]) != []


@DOORS
@given(case=text_with_secret())
def test_a_secret_anywhere_in_a_text_is_never_stored(
    cli: Cli, tmp_path: Path, case: tuple[str, Secret]
) -> None:
    text, secret = case
    vault = fresh_vault(tmp_path / "vaults")
    for args, stdin in (
        (("remember", "-"), text),
        (("log", "--", text), None),
        (("working", "set", "--session=s1", "-"), text),
    ):
        run(cli, vault, *args, input=stdin)
    assert secret_found(vault, [secret.needle]) == []


# -- what a person wrote by hand -----------------------------------------------------------------


def hand_written_day(vault: Path, secret: Secret) -> Path:
    day = vault / "buffer" / f"{DAY}.md"
    day.write_text(
        f"---\ndate: {DAY}\nconsolidated: null\n---\n\n"
        "## 09:00:00 Adrian @s1\nImportant: I live in Lisbon now, remember this.\n\n"
        f"## 09:05:00 Adrian @s1\nRemember this: the deploy key is {secret.text}\n\n"
        "## 09:10:00 Adrian @s1\nThe deploy failed with a timeout error, then we fixed it.\n",
        encoding="utf-8",
    )
    return day


def memory_files(vault: Path) -> list[Path]:
    folders = ("semantic", "episodic", "procedural", "working", "archive")
    return [p for folder in folders for p in (vault / folder).rglob("*.md")]


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_consolidation_never_copies_a_secret_written_by_hand(
    cli: Cli, tmp_path: Path, secret: Secret
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    hand_written_day(vault, secret)
    code, _out, err = run(cli, vault, "consolidate", "--json")
    assert code == 0, err
    assert memory_files(vault), "the day made no memory: the test proves nothing"
    leaked = [p for p in memory_files(vault) if secret.needle in p.read_text(encoding="utf-8")]
    assert leaked == []
    assert secret.needle not in err


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_doctor_reports_a_secret_in_a_hand_written_file(
    cli: Cli, tmp_path: Path, secret: Secret
) -> None:
    vault = fresh_vault(tmp_path / "vaults")
    note = vault / "semantic" / "deploy.md"
    note.write_text(f"# Deploy\n\nThe deploy key is {secret.text}\n", encoding="utf-8")
    day = hand_written_day(vault, secret)
    before = (note.read_bytes(), day.read_bytes())
    done = cli("doctor", "--json", "--vault", str(vault))
    clean_exit(done.code, done.out, done.err, "doctor")
    findings = json.loads(done.out)["findings"]
    about = {f["path"] for f in findings if "secret" in (f["kind"] + f["message"]).lower()}
    assert {"semantic/deploy.md", f"buffer/{DAY}.md"} <= about, findings
    assert secret.needle not in done.out + done.err, "doctor quotes the secret"
    assert (note.read_bytes(), day.read_bytes()) == before  # reported, never rewritten
