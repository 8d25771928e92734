"""The command line, end to end through the console script's `main` (SPEC 4).

Every data command's `--json` prints exactly one strict JSON document on stdout; messages
and warnings go to stderr; user errors exit 1 with a one-line message and no traceback;
usage errors exit 2.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import kenomem
from kenomem.errors import MemoryNotFound, VaultNotFound
from kenomem.files.paths import MEMORY_DIRS
from tests.conftest import Cli, CliResult, write

COMMANDS = ("init", "remember", "recall", "show", "list", "forget", "edit", "reindex", "stats")
RECALL_KEYS = {
    "id",
    "type",
    "title",
    "path",
    "score",
    "recency",
    "importance",
    "relevance",
    "tags",
    "created",
    "last_accessed",
    "snippet",
}
DB_FACT = "The production database is PostgreSQL 15"
DEPLOY_FACT = "Deploys to production go out on Tuesdays after the standup"


def one_json(result: CliResult) -> Any:
    """The one JSON document on stdout: strict JSON (no NaN), nothing before or after it."""
    assert result.code == 0, result.err
    assert result.out.strip(), f"nothing on stdout; stderr: {result.err}"

    def reject(constant: str) -> None:
        raise AssertionError(f"stdout is not strict JSON: it holds {constant}")

    try:
        return json.loads(result.out, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise AssertionError(
            f"stdout is not exactly one JSON document ({exc}):\n{result.out}"
        ) from None


def memory_files(vault_dir: Path) -> dict[str, bytes]:
    """Every memory file in the vault, by vault-relative path, with its bytes."""
    found = {}
    for folder in MEMORY_DIRS:
        for path in sorted((vault_dir / folder).rglob("*.md")):
            found[path.relative_to(vault_dir).as_posix()] = path.read_bytes()
    return found


def remember(cli: Cli, text: str, *options: str) -> dict[str, Any]:
    return one_json(cli("remember", text, *options, "--json"))


def assert_user_error(result: CliResult, code: int = 1) -> None:
    assert result.code == code, (result.out, result.err)
    assert "Traceback" not in result.err
    assert result.out == ""
    errors = [line for line in result.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.err


# -- init ---------------------------------------------------------------------------------


def test_init_creates_a_vault_and_reports_it_as_json(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    doc = one_json(cli("init", str(target), "--json"))
    assert doc["path"] == str(target)
    assert "foundation.md" in doc["created"]
    assert doc["kept"] == []
    assert (target / "foundation.md").is_file()
    for folder in ("semantic", "episodic", "procedural", "working", "buffer", "archive"):
        assert (target / folder).is_dir()


def test_init_never_overwrites_an_existing_file(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    assert cli("init", str(target)).code == 0
    (target / "foundation.md").write_text("my own values\n", encoding="utf-8")
    doc = one_json(cli("init", str(target), "--json"))
    assert "foundation.md" in doc["kept"]
    assert "foundation.md" not in doc["created"]
    assert (target / "foundation.md").read_text(encoding="utf-8") == "my own values\n"


def test_init_without_a_path_uses_the_environment(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "from-env"
    monkeypatch.setenv("KENOMEM_VAULT", str(target))
    result = cli("init")
    assert result.code == 0, result.err
    assert str(target) in result.out
    assert (target / "foundation.md").is_file()


# -- remember -----------------------------------------------------------------------------


def test_remember_json_contract(cli: Cli, vault_dir: Path) -> None:
    result = cli("remember", DB_FACT, "--json")
    doc = one_json(result)
    assert {"id", "path", "type", "action"} <= set(doc)
    assert doc["action"] == "created"
    assert doc["type"] == "semantic"
    text = (vault_dir / doc["path"]).read_text(encoding="utf-8")
    assert f"id: {doc['id']}" in text
    assert DB_FACT in text
    assert "error" not in result.err


def test_remember_without_json_prints_text_for_people(cli: Cli) -> None:
    result = cli("remember", DB_FACT)
    assert result.code == 0, result.err
    assert result.out.startswith("remembered mem_")
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.out)


def test_remembering_the_same_fact_again_reinforces_it(cli: Cli, vault_dir: Path) -> None:
    first = remember(cli, DB_FACT)
    second = remember(cli, DB_FACT)
    assert second["action"] == "reinforced"
    assert second["id"] == first["id"]
    assert list(memory_files(vault_dir)) == [first["path"]]
    assert "reinforced: 1" in (vault_dir / first["path"]).read_text(encoding="utf-8")


def test_remember_supersedes_keeps_the_old_memory_linked(cli: Cli, vault_dir: Path) -> None:
    old = remember(cli, DB_FACT)
    new = remember(cli, "The production database is PostgreSQL 16", "--supersedes", old["id"])
    assert new["action"] == "superseded"
    assert new["id"] != old["id"]
    old_text = (vault_dir / old["path"]).read_text(encoding="utf-8")
    assert "status: superseded" in old_text
    assert f"superseded_by: {new['id']}" in old_text
    assert f"supersedes: {old['id']}" in (vault_dir / new["path"]).read_text(encoding="utf-8")


def test_remember_dash_reads_stdin(cli: Cli, vault_dir: Path) -> None:
    doc = one_json(cli("remember", "-", "--json", input="Kiwis are ripe when soft\n"))
    assert doc["action"] == "created"
    assert "Kiwis are ripe when soft" in (vault_dir / doc["path"]).read_text(encoding="utf-8")


def test_remember_options_reach_the_memory(cli: Cli) -> None:
    made = remember(
        cli,
        "Met Ana at the Lisbon meetup about search engines",
        "-t",
        "episodic",
        "--tag",
        "people",
        "--tag=events",
        "--importance",
        "8",
        "--title",
        "Lisbon meetup",
        "--pin",
        "--scope",
        "chat:42",
    )
    assert made["type"] == "episodic"
    shown = one_json(cli("show", made["id"], "--json"))
    assert shown["type"] == "episodic"
    assert shown["title"] == "Lisbon meetup"
    assert shown["tags"] == ["people", "events"]
    assert shown["importance"] == 8
    assert shown["pinned"] is True
    assert shown["scope"] == "chat:42"


def test_remember_refuses_a_secret_and_writes_nothing(cli: Cli, vault_dir: Path) -> None:
    before = memory_files(vault_dir)
    token = "ghp_" + "a1B2c3D4e5" * 4
    result = cli("remember", f"the deploy token is {token}", "--json")
    assert_user_error(result)
    assert "secret" in result.err
    assert token not in result.err
    assert memory_files(vault_dir) == before


def test_remember_an_empty_text_is_a_user_error(cli: Cli, vault_dir: Path) -> None:
    assert_user_error(cli("remember", "   "))
    assert memory_files(vault_dir) == {}


# -- recall -------------------------------------------------------------------------------


def test_recall_json_contract(cli: Cli, vault_dir: Path) -> None:
    db = remember(cli, DB_FACT, "--tag", "infra")
    remember(cli, DEPLOY_FACT)
    doc = one_json(cli("recall", "database", "--json"))
    assert doc["query"] == "database"
    assert doc["results"], "the database fact was not found"
    for item in doc["results"]:
        assert set(item) >= RECALL_KEYS, RECALL_KEYS - set(item)
        for term in ("score", "recency", "importance", "relevance"):
            assert isinstance(item[term], int | float)
        for term in ("recency", "importance", "relevance"):
            assert 0 <= item[term] <= 1
        assert isinstance(item["tags"], list)
        datetime.fromisoformat(item["created"])
        datetime.fromisoformat(item["last_accessed"])
        assert (vault_dir / item["path"]).is_file()
    top = doc["results"][0]
    assert top["id"] == db["id"]
    assert top["path"] == db["path"]
    assert top["tags"] == ["infra"]
    assert "PostgreSQL" in top["snippet"]


def test_recall_joins_the_words_of_the_query(cli: Cli) -> None:
    remember(cli, DB_FACT)
    doc = one_json(cli("recall", "production", "database", "--json"))
    assert doc["query"] == "production database"


def test_recall_without_a_match_keeps_stdout_pure_json(cli: Cli) -> None:
    remember(cli, DB_FACT)
    result = cli("recall", "zebra", "--json")
    assert one_json(result)["results"] == []
    assert "no memory matches" in result.err


def test_recall_filters_and_limit(cli: Cli) -> None:
    remember(cli, DB_FACT, "-t", "semantic", "--tag", "infra")
    remember(cli, "Yesterday the production outage was fixed by a restart", "-t", "episodic")
    both = one_json(cli("recall", "production", "--json"))
    assert {r["type"] for r in both["results"]} == {"semantic", "episodic"}
    only = one_json(cli("recall", "production", "-t", "episodic", "--json"))
    assert [r["type"] for r in only["results"]] == ["episodic"]
    tagged = one_json(cli("recall", "production", "--tag", "infra", "--json"))
    assert [r["type"] for r in tagged["results"]] == ["semantic"]
    limited = one_json(cli("recall", "production", "-n", "1", "--json"))
    assert len(limited["results"]) == 1


def test_recall_touches_unless_no_touch(cli: Cli, vault_dir: Path) -> None:
    made = remember(cli, DB_FACT)
    path = vault_dir / made["path"]
    before = path.read_bytes()
    assert one_json(cli("recall", "database", "--no-touch", "--json"))["results"]
    assert path.read_bytes() == before
    assert one_json(cli("show", made["id"], "--json"))["access_count"] == 0
    assert one_json(cli("recall", "database", "--json"))["results"]
    assert one_json(cli("show", made["id"], "--json"))["access_count"] == 1


def test_recall_explain_shows_the_three_terms(cli: Cli) -> None:
    remember(cli, DB_FACT)
    result = cli("recall", "database", "--explain")
    assert result.code == 0, result.err
    for term in ("recency", "importance", "relevance"):
        assert term in result.out


def test_an_unreadable_file_is_a_warning_on_stderr_only(cli: Cli, vault_dir: Path) -> None:
    remember(cli, DB_FACT)
    write(vault_dir, "semantic/broken.md", "---\ntitle: [broken\n---\nthe database broke\n")
    result = cli("recall", "database", "--json")
    doc = one_json(result)
    assert doc["results"]
    assert "warning: skipped semantic/broken.md" in result.err
    assert "line" in result.err


# -- show, list ---------------------------------------------------------------------------


def test_show_by_unique_prefix(cli: Cli) -> None:
    made = remember(cli, DB_FACT)
    doc = one_json(cli("show", made["id"][:-2], "--json"))
    assert doc["id"] == made["id"]
    assert doc["title"] == DB_FACT
    assert DB_FACT in doc["body"]
    plain = cli("show", made["id"])
    assert plain.code == 0
    assert DB_FACT in plain.out


def test_show_unknown_id_is_a_user_error(cli: Cli) -> None:
    remember(cli, DB_FACT)
    result = cli("show", "mem_19990101_000000_dead", "--json")
    assert_user_error(result)
    assert "no memory matches" in result.err


def test_show_ambiguous_prefix_is_a_user_error(cli: Cli) -> None:
    a = remember(cli, DB_FACT)
    b = remember(cli, DEPLOY_FACT)
    common = ""
    for x, y in zip(a["id"], b["id"], strict=True):
        if x != y:
            break
        common += x
    assert common.startswith("mem_")
    result = cli("show", common)
    assert_user_error(result)
    assert "2 memories" in result.err


def test_list_json(cli: Cli) -> None:
    db = remember(cli, DB_FACT, "-t", "semantic")
    deploy = remember(cli, DEPLOY_FACT, "-t", "procedural")
    doc = one_json(cli("list", "--json"))
    assert doc["total"] == 2
    assert {m["id"] for m in doc["memories"]} == {db["id"], deploy["id"]}
    only = one_json(cli("list", "--type", "procedural", "--json"))
    assert [m["id"] for m in only["memories"]] == [deploy["id"]]
    limited = one_json(cli("list", "-n", "1", "--json"))
    assert len(limited["memories"]) == 1
    assert limited["total"] == 2


def test_list_shows_the_date_its_filter_uses(cli: Cli) -> None:
    """An episode's `when`, not the day it was written down: what --since filters on."""
    episode = remember(
        cli, "We shipped version one of the tracker", "-t", "episodic", "--when", "2020-01-15"
    )
    fact = remember(cli, DB_FACT, "-t", "semantic")
    table = cli("list", "--since", "2020-01-10", "--until", "2020-01-20").out
    header, row = table.splitlines()[:2]
    assert header.split()[:3] == ["id", "type", "when"]
    assert row.startswith(episode["id"]) and "2020-01-15T00:00:00Z" in row, table
    assert fact["id"] not in table
    doc = one_json(cli("list", "--json"))
    dates = {m["id"]: (m["when"], m["created"]) for m in doc["memories"]}
    assert dates[episode["id"]][0] == "2020-01-15T00:00:00Z"
    assert dates[episode["id"]][1] != "2020-01-15T00:00:00Z"
    assert dates[fact["id"]][0] is None  # filtered on `created`, shown as such
    assert dates[fact["id"]][1] in cli("list").out


def test_list_empty_keeps_stdout_pure_json(cli: Cli) -> None:
    result = cli("list", "--json")
    assert one_json(result) == {"memories": [], "total": 0}
    assert "no memories match" in result.err


# -- forget -------------------------------------------------------------------------------


def test_forget_archives(cli: Cli, vault_dir: Path) -> None:
    made = remember(cli, DB_FACT)
    doc = one_json(cli("forget", made["id"], "--json"))
    assert doc["action"] == "archived"
    assert doc["path"].startswith("archive/")
    assert not (vault_dir / made["path"]).exists()
    assert "status: archived" in (vault_dir / doc["path"]).read_text(encoding="utf-8")
    assert one_json(cli("recall", "database", "--json"))["results"] == []
    archived = one_json(cli("recall", "database", "--archive", "--json"))
    assert [r["id"] for r in archived["results"]] == [made["id"]]


def test_a_recall_that_finds_nothing_names_the_archived_matches(cli: Cli, vault_dir: Path) -> None:
    made = remember(cli, DB_FACT)
    archived = one_json(cli("forget", made["id"], "--json"))["path"]
    before = (vault_dir / archived).read_bytes()
    result = cli("recall", "production", "database", "--json")
    assert one_json(result)["results"] == []  # stdout stays the one document
    assert "no memory matches 'production database'" in result.err
    assert "1 archived memory matches: kenomem recall 'production database' --archive" in (
        result.err
    )
    assert (vault_dir / archived).read_bytes() == before  # looked at, not touched
    assert "archived" not in cli("recall", "zebra").err  # nothing archived matches either
    found = one_json(cli("recall", "production", "database", "--archive", "--json"))
    assert [r["id"] for r in found["results"]] == [made["id"]]


def test_forget_delete_without_yes_and_without_a_terminal_refuses(
    cli: Cli, vault_dir: Path
) -> None:
    made = remember(cli, DB_FACT)
    result = cli("forget", made["id"], "--delete", input="y\n")
    assert_user_error(result)
    assert "--yes" in result.err
    assert (vault_dir / made["path"]).is_file()


def test_forget_delete_with_yes_deletes(cli: Cli, vault_dir: Path) -> None:
    made = remember(cli, DB_FACT)
    doc = one_json(cli("forget", made["id"], "--delete", "--yes", "--json"))
    assert doc["action"] == "deleted"
    assert not (vault_dir / made["path"]).exists()
    assert memory_files(vault_dir) == {}
    assert cli("show", made["id"]).code == 1


# -- edit ---------------------------------------------------------------------------------


def _editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str) -> None:
    script = tmp_path / "editor.py"
    script.write_text(code, encoding="utf-8")
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")


def test_edit_reindexes_what_the_editor_saved(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = remember(cli, DB_FACT)
    _editor(
        monkeypatch,
        tmp_path,
        "import sys\n"
        "with open(sys.argv[1], 'a') as f:\n"
        "    f.write('Replicas run in Frankfurt.\\n')\n",
    )
    doc = one_json(cli("edit", made["id"], "--json"))
    assert doc == {"id": made["id"], "path": made["path"], "changed": True}
    found = one_json(cli("recall", "Frankfurt", "--json"))
    assert [r["id"] for r in found["results"]] == [made["id"]]


def test_edit_unchanged(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = remember(cli, DB_FACT)
    _editor(monkeypatch, tmp_path, "pass\n")
    assert one_json(cli("edit", made["id"], "--json"))["changed"] is False


def test_edit_with_a_failing_editor_is_a_user_error(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = remember(cli, DB_FACT)
    _editor(monkeypatch, tmp_path, "raise SystemExit(3)\n")
    result = cli("edit", made["id"])
    assert_user_error(result)
    assert "3" in result.err
    monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
    result = cli("edit", made["id"])
    assert_user_error(result)
    assert "editor not found" in result.err


# -- reindex, stats -----------------------------------------------------------------------


def test_reindex_rebuilds_from_the_files(cli: Cli, vault_dir: Path) -> None:
    remember(cli, DB_FACT)
    remember(cli, DEPLOY_FACT)
    doc = one_json(cli("reindex", "--json"))
    assert doc["indexed"] == 2
    assert doc["files"] == 2
    assert one_json(cli("recall", "Tuesdays", "--json"))["results"]


def test_stats_json(cli: Cli, vault_dir: Path) -> None:
    remember(cli, DB_FACT, "-t", "semantic", "--pin")
    remember(cli, DEPLOY_FACT, "-t", "procedural")
    doc = one_json(cli("stats", "--json"))
    assert doc["memories"] == 2
    assert doc["pinned"] == 1
    assert doc["by_type"]["semantic"] == 1
    assert doc["by_type"]["procedural"] == 1
    assert doc["by_status"]["active"] == 2
    assert doc["unreadable"] == {}
    plain = cli("stats")
    assert plain.code == 0
    assert "memories" in plain.out


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("remember", "a fact", "--json"),
        ("recall", "fact", "--json"),
        ("show", "mem_1"),
        ("list", "--json"),
        ("forget", "mem_1"),
        ("edit", "mem_1"),
        ("reindex",),
        ("stats", "--json"),
    ],
)
def test_a_missing_vault_is_a_one_line_error_with_a_hint(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("KENOMEM_VAULT", str(missing))
    result = cli(*argv)
    assert_user_error(result)
    assert result.err.startswith(f"error: no vault at {missing}\n")
    assert "hint: " in result.err
    assert "kenomem init" in result.err
    assert not missing.exists()


BAD_VALUES = [
    (("remember", "a fact", "--importance", "11"), 2),
    (("remember", "a fact", "-i", "0"), 2),
    (("recall", "fact", "--limit", "0"), 2),
    (("recall", "fact", "-n", "many"), 2),
    (("recall", "fact", "--type", "bogus"), 2),
    (("recall", "fact", "--since", "notadate"), 2),
    (("recall", "fact", "--until", "notadate"), 2),
    (("recall", "fact", "--w-recency", "-1"), 2),
    # A weight must be a finite number: NaN or infinity would put NaN/Infinity,
    # which are not JSON, into the --json output.
    (("recall", "fact", "--w-recency", "nan"), 2),
    (("recall", "fact", "--w-importance", "inf"), 2),
    (("recall", "fact", "--w-relevance", "1e400"), 2),
    (("list", "--type", "bogus"), 2),
    (("list", "--limit", "0"), 2),
    (("list", "--sort", "bogus"), 2),
    (("list", "--status", "bogus"), 2),
    (("list", "--since", "notadate"), 2),
    (("recall", "fact", "--no-such-option"), 2),
    (("remember",), 2),
    (("recall",), 2),
    (("frobnicate",), 2),
]


@pytest.mark.parametrize(("argv", "code"), BAD_VALUES, ids=[" ".join(a) for a, _ in BAD_VALUES])
def test_a_bad_option_value_is_a_usage_error_without_traceback(
    cli: Cli, vault_dir: Path, argv: tuple[str, ...], code: int
) -> None:
    result = cli(*argv)
    assert result.code == code, result.err
    assert "Traceback" not in result.err
    assert result.out == ""
    assert result.err.strip()
    assert memory_files(vault_dir) == {}


@pytest.mark.parametrize("command", ["remember", "recall", "list"])
def test_an_unknown_type_is_the_same_usage_error_for_every_command(
    cli: Cli, vault_dir: Path, command: str
) -> None:
    """An unknown --type is a bad option value: exit 2 whichever command gets it."""
    argv = {"remember": ("remember", "a fact"), "recall": ("recall", "fact"), "list": ("list",)}
    result = cli(*argv[command], "--type", "bogus")
    assert result.code == 2, result.err
    assert "unknown type 'bogus'" in result.err
    assert "Traceback" not in result.err
    assert memory_files(vault_dir) == {}


def test_debug_shows_the_traceback(cli: Cli) -> None:
    remember(cli, DB_FACT)
    assert cli("show", "mem_19990101_000000_dead").code == 1
    with pytest.raises(MemoryNotFound):
        cli("show", "mem_19990101_000000_dead", "--debug")


def test_debug_shows_the_traceback_of_a_missing_vault(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KENOMEM_VAULT", str(tmp_path / "nowhere"))
    with pytest.raises(VaultNotFound):
        cli("recall", "fact", "--debug")


# -- help and version ---------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_app_help(cli: Cli, flag: str) -> None:
    result = cli(flag)
    assert result.code == 0, result.err
    for command in COMMANDS:
        assert command in result.out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(cli: Cli, command: str) -> None:
    result = cli(command, "--help")
    assert result.code == 0, result.err
    assert "Example" in result.out
    assert f"kenomem {command}" in result.out


@pytest.mark.slow  # the help of every command, rendered
def test_help_names_values_as_a_command_line_does(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Usage: kenomem remember [OPTIONS] TEXT`, `--limit INTEGER`, a flag without a
    value: not Typer's own `{text}`, `<int>`, `<bool>`, `<list[str]>`."""
    from typer.main import get_command

    from kenomem.cli.app import app
    from kenomem.cli.introspect import commands

    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    for path, _ in [("", None), *commands(get_command(app)), ("token", None)]:
        out = cli(*path.split(), "--help").out
        assert not re.search(r"<(str|bool|int|float|list)\b", out), (path, out)
        usage = next(line for line in out.splitlines() if "Usage:" in line)
        assert "{" not in usage, usage

    def option(out: str, name: str) -> str:
        return next(line for line in out.splitlines() if f" {name} " in line)

    remember = cli("remember", "--help").out
    assert "Usage: kenomem remember [OPTIONS] TEXT" in remember
    assert re.search(r"\btext\s+TEXT\s+What to remember", remember)
    assert re.search(r"--importance\s+-i\s+INTEGER \[1<=x<=10\]\s+1 \(trivial\)", remember)
    assert re.search(r"--tag\s+TEXT\s+A tag", remember)
    for flag, said in (("--pin", "Never let"), ("--json", "Print one"), ("--help", "Show")):
        assert re.search(rf"{flag}\s+(-\w\s+)?{said}", option(remember, flag)), flag
    assert "Usage: kenomem recall [OPTIONS] QUERY..." in cli("recall", "--help").out
    assert "Usage: kenomem init [OPTIONS] [PATH]" in cli("init", "--help").out
    assert re.search(r"--w-recency\s+FLOAT", cli("recall", "--help").out)


def test_version(cli: Cli) -> None:
    result = cli("--version")
    assert result.code == 0
    assert result.out.strip() == f"kenomem {kenomem.__version__}"
    assert kenomem.__version__ in result.out
