"""One declaration per operation: a command's parameters map by name onto the request its
operation takes (or the keywords of the API method it calls), so that a new option is a
field of the request and a parameter of the Typer command, and nothing else.
"""

from __future__ import annotations

import inspect
from datetime import datetime
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from kenomem.api import Vault
from kenomem.cli import handlers, introspect
from kenomem.cli.app import app
from kenomem.cli.argspec import load_spec
from kenomem.cli.flags import FLAGS
from kenomem.cli.handlers import OPERATIONS, load
from kenomem.cli.kit import converted, moment
from kenomem.recall.search import RecallRequest
from tests.conftest import Cli

# The API method a handler passes its `**options` on to, by name.
FORWARDED_TO = {
    "log": Vault.log,
    "extract": Vault.extract,
    "consolidate": Vault.consolidate,
    "prune": Vault.prune,
    "doctor": Vault.doctor,
    "patterns": Vault.patterns,
}
IMPORT_FIELDS = "kenomem.ingest.build:ImportRequest"  # import_file's **fields


def keywords(function: Any) -> set[str]:
    return {
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


def takes_options(function: Any) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())


def accepted(command: str) -> set[str]:
    """What the parameters of `command` may be named, once converted: the fields of its
    request, the handler's own keywords, and what the handler passes on to the API."""
    operation = OPERATIONS[command]
    handler = load(operation.handler)
    names = keywords(handler) - {"request", "run"}
    if operation.request:
        names |= set(load(operation.request)._fields)
    if takes_options(handler):
        if command == "import":
            names |= set(load(IMPORT_FIELDS)._fields) - {"text", "name"}
        else:
            names |= keywords(FORWARDED_TO[command]) - {"self"}
    return names


def test_every_command_has_an_operation_and_every_handler_exists() -> None:
    assert set(OPERATIONS) == set(load_spec())
    for command, operation in OPERATIONS.items():
        assert callable(load(operation.handler)), command
        if operation.request:
            assert hasattr(load(operation.request), "_fields"), command


@pytest.mark.parametrize("command", sorted(OPERATIONS))
def test_each_parameter_is_a_flag_a_field_or_the_handler_s_own(command: str) -> None:
    names = accepted(command)
    for p in load_spec()[command]:
        name = p["name"]
        if name in FLAGS:
            continue  # --vault, --json, --debug, -q, -v: the command line's own
        target = name.removeprefix("no_") if p["flag"] and name.startswith("no_") else name
        assert target in names, f"{command}: --{name} names nothing the operation takes"


@pytest.mark.parametrize("command", sorted(c for c, op in OPERATIONS.items() if op.request))
def test_each_field_a_request_cannot_do_without_is_a_parameter(command: str) -> None:
    kind = load(OPERATIONS[command].request)
    required = set(kind._fields) - set(kind._field_defaults)
    assert required <= {p["name"] for p in load_spec()[command]}, command


def test_handlers_do_not_spell_out_the_fields_of_their_request() -> None:
    """A handler that takes a request gets it built; its own keywords are few (the vault,
    presentation), so a new field never touches it."""
    for command, operation in OPERATIONS.items():
        if not operation.request:
            continue
        fields = set(load(operation.request)._fields)
        own = keywords(load(operation.handler)) - {"request", "vault", "explain"}
        assert not own & fields, (command, own & fields)


def test_the_declarations_conversions_are_recorded_for_the_fast_parser() -> None:
    group = get_command(app)
    for path, command in introspect.commands(group):
        declared = introspect.conversions(command)
        recorded = {p["name"]: p["convert"] for p in load_spec()[path] if p["convert"]}
        assert declared == recorded, path


def test_conversions_are_the_same_for_every_command(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = [
        {"name": "query", "convert": ["words"]},
        {"name": "since", "convert": ["moment"]},
        {"name": "until", "convert": ["end_of_day"]},
        {"name": "text", "convert": ["stdin"]},
    ]
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    done = converted(
        spec,
        {
            "query": ["deploy", "day"],
            "since": "2026-02-01",
            "until": "2026-02-14",
            "text": "-",
            "types": ["semantic", "episodic"],
            "tags": [],
            "limit": None,
            "no_touch": True,
            "no_pause": False,
            "archive": False,
        },
    )
    assert done == {
        "query": "deploy day",
        "since": moment("2026-02-01"),
        "until": moment("2026-02-14", end_of_day=True),
        "text": "from stdin",
        "types": ("semantic", "episodic"),
        "touch": False,
        "archive": False,
    }
    assert done["until"] > done["since"]


# Every option of recall, as each parser reads it: the API receives them as one request.
RECALL = [
    "recall",
    "deploy",
    "day",
    "--limit",
    "3",
    "-t",
    "semantic",
    "--tag",
    "a",
    "--scope",
    "global",
    "--since",
    "2026-01-01",
    "--until",
    "2026-02-01",
    "--archive",
    "--no-touch",
    "--explain",
    "--w-recency",
    "0.2",
    "--w-importance",
    "0.3",
    "--w-relevance",
    "0.4",
    "--now",
    "2026-02-02T10:00",
]


def expected_recall() -> RecallRequest:
    return RecallRequest(
        "deploy day",
        limit=3,
        types=("semantic",),
        tags=("a",),
        scopes=("global",),
        since=moment("2026-01-01"),
        until=moment("2026-02-01", end_of_day=True),
        archive=True,
        touch=False,
        w_recency=0.2,
        w_importance=0.3,
        w_relevance=0.4,
        now=moment("2026-02-02T10:00"),
    )


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[RecallRequest]:
    seen: list[RecallRequest] = []
    real = Vault.recall

    def spy(self: Vault, request: Any, /, **fields: Any) -> Any:
        seen.append(request)
        return real(self, request, **fields)

    monkeypatch.setattr(Vault, "recall", spy)
    return seen


def test_the_fast_parser_builds_the_request_by_name(cli: Cli, requests: list[Any]) -> None:
    assert cli(*RECALL).code == 0
    assert requests == [expected_recall()]


def test_the_typer_app_builds_the_same_request(
    cli: Cli, requests: list[Any], monkeypatch: pytest.MonkeyPatch, vault_dir: Any
) -> None:
    monkeypatch.setenv("KENOMEM_VAULT", str(vault_dir))
    result = CliRunner().invoke(app, RECALL)
    assert result.exit_code == 0, result.output
    assert requests == [expected_recall()]


def test_an_option_left_out_leaves_the_request_s_default(cli: Cli, requests: list[Any]) -> None:
    assert cli("recall", "deploy").code == 0
    # touch None: the settings decide. (Nothing matched: a second recall looks for
    # archived matches, to say so.)
    assert requests[0] == RecallRequest("deploy")


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "deploy", "--since", "the day after"],
        ["recall", "deploy", "--now", ""],
        ["list", "--until", "soon"],
        ["log", "a note", "--at", ""],  # every time option alike, empty or not
        ["consolidate", "--date", "someday"],
    ],
)
def test_a_time_that_cannot_be_read_is_a_usage_error(cli: Cli, argv: list[str]) -> None:
    result = cli(*argv)
    assert result.code == 2 and "cannot read the time" in result.err, result


def test_a_new_field_and_a_parameter_of_its_name_are_all_it_takes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A request with a field the command line has never seen, and a command with a
    parameter of that name: `run` builds the request by name, converted the usual way."""
    from typing import NamedTuple

    class ProbeRequest(NamedTuple):
        query: str
        since: datetime | None = None
        colour: str = "blue"  # the new option

    got: list[ProbeRequest] = []

    def probe(out: Any, *, request: ProbeRequest, vault: str | None = None) -> None:
        got.append(request)

    import types

    module = types.ModuleType("kenomem_probe")
    module.ProbeRequest = ProbeRequest  # type: ignore[attr-defined]
    module.probe = probe  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "kenomem_probe", module)
    monkeypatch.setitem(
        OPERATIONS, "probe", handlers.Operation("kenomem_probe:probe", "kenomem_probe:ProbeRequest")
    )
    table = dict(load_spec())
    table["probe"] = [
        {"name": "query", "convert": ["words"]},
        {"name": "since", "convert": ["moment"]},
        {"name": "colour", "convert": []},
    ]
    monkeypatch.setattr("kenomem.cli.argspec._SPEC", table)
    params = {"query": ["a", "b"], "since": "2026-02-01", "colour": "red", "vault": None}
    assert handlers.run("probe", params) == 0
    assert got == [ProbeRequest("a b", since=moment("2026-02-01"), colour="red")]
