"""A person's first minutes: `kenomem` alone, `kenomem tour`, errors that suggest the fix,
--quiet and --verbose, progress bars kept out of pipes and JSON, and the version."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

import kenomem
from kenomem.cli.demo import MARKER
from kenomem.cli.output import Output
from kenomem.vault.suggest import closest
from tests.conftest import Cli, write

DB_FACT = "The production database is PostgreSQL 15"


def remembered_id(cli: Cli, text: str) -> str:
    result = cli("remember", text, "--json")
    assert result.code == 0, result.err
    mem_id: str = json.loads(result.out)["id"]
    return mem_id


# -- kenomem alone ------------------------------------------------------------------------


def test_kenomem_alone_without_a_vault_says_how_to_begin(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("KENOMEM_VAULT", str(missing))
    result = cli()
    assert result.code == 0, result.err
    assert f"No vault yet at {missing}" in result.out
    assert "kenomem tour" in result.out
    assert "kenomem init" in result.out
    assert "Usage:" not in result.out  # not the whole help
    assert not missing.exists()


def test_kenomem_alone_with_a_vault_shows_where_it_stands(cli: Cli, vault_dir: Path) -> None:
    remembered_id(cli, DB_FACT)
    result = cli()
    assert result.code == 0, result.err
    assert str(vault_dir) in result.out
    assert "1 memory: 1 semantic" in result.out
    assert "No vault yet" not in result.out


def test_help_is_still_the_whole_help(cli: Cli) -> None:
    result = cli("--help")
    assert result.code == 0
    assert "tour" in result.out
    assert "--quiet" in result.out
    assert "--verbose" in result.out


# -- the tour -----------------------------------------------------------------------------


def test_the_tour_makes_a_demo_vault_and_runs_each_step(cli: Cli, tmp_path: Path) -> None:
    from kenomem.cli.handlers.intro import STEPS

    demo = tmp_path / "tour"
    result = cli("tour", str(demo))
    assert result.code == 0, result.err
    for _, argv in STEPS:
        assert f"$ kenomem {argv[0]}" in result.out
    assert f"{len(STEPS)}/{len(STEPS)}" in result.out
    assert "--explain" in result.out and "recency" in result.out  # recall --explain ran
    assert "reinforced" in result.out  # the second remember found the first
    assert "# Foundation" in result.out  # the context block
    assert (demo / MARKER).is_file()
    for folder, at_least in (("semantic", 7), ("episodic", 2), ("procedural", 3)):
        assert len(list((demo / folder).rglob("*.md"))) >= at_least, folder
    assert (demo / "working" / "tour.md").is_file()
    assert list((demo / "buffer").glob("*.md"))


def test_a_second_tour_uses_the_demo_vault_it_made(cli: Cli, tmp_path: Path) -> None:
    demo = tmp_path / "tour"
    assert cli("tour", str(demo)).code == 0
    files = sorted(p for p in demo.rglob("*.md") if ".kenomem" not in p.parts)
    again = cli("tour", str(demo), "--no-pause")
    assert again.code == 0, again.err
    assert "made earlier" in again.out
    assert sorted(p for p in demo.rglob("*.md") if ".kenomem" not in p.parts) == files


def test_the_tour_never_mixes_with_a_folder_that_holds_something(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    write(folder, "notes.md", "my own notes\n")
    result = cli("tour", str(folder))
    assert result.code == 1
    assert "not empty" in result.err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]


# -- errors that suggest the fix ----------------------------------------------------------


def test_an_unknown_id_suggests_the_closest_ids(cli: Cli) -> None:
    mem_id = remembered_id(cli, DB_FACT)
    # The id's last part with its final character mistyped ("x" is never in an id), as
    # someone might copy it: it can be the start of no id, whatever the random part holds.
    typo = mem_id[-4:-1] + "x"
    result = cli("show", typo)
    assert result.code == 1
    assert f"error: no memory matches '{typo}'; did you mean {mem_id}" in result.err


def test_an_unknown_id_suggests_memories_by_their_title(cli: Cli) -> None:
    mem_id = remembered_id(cli, DB_FACT)
    remembered_id(cli, "Deploys go out on Tuesdays")
    result = cli("forget", "postgres")
    assert result.code == 1
    assert f"did you mean {mem_id} (the-production-database" in result.err
    assert "deploys" not in result.err


def test_closest_finds_nothing_for_nonsense() -> None:
    ids = {"mem_20260101_090000_a1b2": "semantic/the-deploy-day.md"}
    assert closest("zzzzzz", ids) == []
    assert closest("a1b", ids) == ["mem_20260101_090000_a1b2 (the-deploy-day)"]
    assert closest("deploy", ids) == ["mem_20260101_090000_a1b2 (the-deploy-day)"]


# -- --quiet and --verbose ----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [("recall", "nothing", "--quiet"), ("--quiet", "recall", "nothing"), ("-q", "recall", "x")],
)
def test_quiet_leaves_only_the_data(cli: Cli, vault_dir: Path, argv: tuple[str, ...]) -> None:
    write(vault_dir, "semantic/broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    loud = cli("recall", "nothing")
    assert "no memory matches" in loud.err and "warning: skipped" in loud.err
    quiet = cli(*argv)
    assert quiet.code == 0
    assert quiet.err == ""


def test_quiet_still_reports_errors(cli: Cli) -> None:
    result = cli("-q", "show", "zzzz")
    assert result.code == 1
    assert result.err.startswith("error: no memory matches 'zzzz'")


def test_verbose_tells_the_vault_the_engine_and_what_was_rescanned(
    cli: Cli, vault_dir: Path, engine_name: str
) -> None:
    remembered_id(cli, DB_FACT)
    write(vault_dir, "semantic/by-hand.md", "# Written by hand\n\nabout the database\n")
    result = cli("--verbose", "recall", "database", "--json")
    assert json.loads(result.out)["results"]  # stdout stays one JSON document
    assert f"vault {vault_dir} (index engine: {engine_name})" in result.err
    assert "rescanned: 1 added" in result.err
    assert "semantic/by-hand.md" in result.err
    assert "recall: done in " in result.err
    calm = cli("recall", "database", "-v")
    assert "no file changed since the last command" in calm.err
    assert "done in" not in cli("recall", "database").err


# -- progress bars ------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("options", "drawn"),
    [({}, True), ({"json_mode": True}, False), ({"quiet": True}, False)],
)
def test_a_progress_bar_only_on_a_terminal_and_never_with_json_or_quiet(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, bool], drawn: bool
) -> None:
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    with Output(**options).progress("indexing", 10) as tick:
        for done in range(1, 11):
            tick(done)
    assert bool(stderr.getvalue()) == drawn


def test_no_progress_bar_in_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with Output().progress("indexing", 10) as tick:
        tick(5)
    assert stderr.getvalue() == ""


# -- the version ----------------------------------------------------------------------------


def test_the_version_is_the_installed_package_version(cli: Cli) -> None:
    from importlib.metadata import version

    assert version("kenomem") == kenomem.__version__
    assert cli("--version").out.strip() == f"kenomem {version('kenomem')}"


def test_the_version_has_one_source() -> None:
    import tomllib

    from tests.conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "kenomem/__init__.py"
