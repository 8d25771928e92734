"""The fast argument path parses exactly what the Typer app would, or declines.

`kenomem/argspec.json` is generated from the Typer app; `fast_parse` must give the same
(command, parameters) as Typer for every call it accepts, and return None (so that Typer
answers) for everything else.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import kenomem.cli.handlers
from kenomem.cli import argspec, introspect
from kenomem.cli.app import app
from kenomem.cli.flags import GLOBAL_FLAGS

Call = tuple[str, dict[str, Any]]


class Recorder:
    """Stands in for `handlers.run`: records what the Typer app passed to it."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def __call__(self, command: str, params: dict[str, Any]) -> int:
        self.calls.append((command, dict(params)))
        return 0


@pytest.fixture
def typer_parse(monkeypatch: pytest.MonkeyPatch) -> Any:
    """argv -> (command, params) as the Typer app hands them to `handlers.run`, or None."""
    recorder = Recorder()
    monkeypatch.setattr(kenomem.cli.handlers, "run", recorder)
    runner = CliRunner()

    def parse(argv: list[str]) -> Call | None:
        recorder.calls.clear()
        result = runner.invoke(app, argv)
        if result.exit_code != 0:
            assert not recorder.calls
            return None
        assert len(recorder.calls) <= 1
        return recorder.calls[0] if recorder.calls else None

    return parse


def typed(call: Call | None) -> Any:
    """A call with each value's type next to it, so that 5 and 5.0 differ."""
    if call is None:
        return None
    command, params = call
    return command, {k: (type(v).__name__, v) for k, v in params.items()}


def test_the_table_matches_the_typer_app() -> None:
    expected = introspect.render_spec(introspect.generate())
    actual = argspec.SPEC_FILE.read_text(encoding="utf-8")
    assert actual == expected, (
        "kenomem/cli/argspec.json is out of date with the Typer app (kenomem/cli/commands/): "
        "regenerate it with `python scripts/gen_argspec.py`"
    )


def test_every_command_is_in_the_table_and_has_a_handler() -> None:
    from typer.main import get_command

    typer_commands = set()
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)  # a sub-app: "working show"...
        typer_commands.update([f"{name} {sub}" for sub in subs] if subs else [name])
    assert set(argspec.load_spec()) == typer_commands
    assert set(kenomem.cli.handlers.OPERATIONS) == typer_commands


VALID: list[list[str]] = [
    # init
    ["init"],
    ["init", "/tmp/some vault"],
    ["init", "--json", "p"],
    ["init", "p", "--debug"],
    # remember
    ["remember", "a fact"],
    ["remember", "-"],
    ["remember", "a fact", "--type", "semantic"],
    ["remember", "a fact", "--type=episodic"],
    ["remember", "a fact", "-t", "procedural"],
    ["remember", "--tag", "a", "a fact", "--tag", "b", "--tag=c"],
    ["remember", "a fact", "--importance", "7"],
    ["remember", "a fact", "--importance=10"],
    ["remember", "a fact", "-i", "1"],
    ["remember", "a fact", "-i", "3", "-i", "4"],
    ["remember", "a fact", "--when", "2026-02-10"],
    ["remember", "a fact", "--when=yesterday"],
    ["remember", "a fact", "--trigger", "n8n + 401"],
    ["remember", "a fact", "--scope", "chat:42", "--session=s1", "--title", "A title"],
    ["remember", "a fact", "--title="],
    ["remember", "a fact", "--pin", "--supersedes", "mem_2026"],
    ["remember", "a fact", "--no-supersede"],
    ["remember", "a fact", "--vault", "/v", "--json", "--debug"],
    ["remember", "a fact", "--vault=/v"],
    ["remember", "--", "-starts with a dash"],
    ["remember", "--json", "--", "--json"],
    ["remember", "-t", "semantic", "--", "-t"],
    ["remember", "a fact", "--tag", "-dash"],
    ["remember", ""],
    # recall
    ["recall", "deploy"],
    ["recall", "deploy", "day", "monday"],
    ["recall", "deploy", "--limit", "5"],
    ["recall", "what", "happened", "last", "week", "--now", "2023-05-08T14:00"],
    ["recall", "deploy", "--limit=5"],
    ["recall", "deploy", "-n", "5"],
    ["recall", "deploy", "-n", "3", "--limit", "4"],
    ["recall", "deploy", "-n", "+5"],
    ["recall", "deploy", "-t", "semantic"],
    ["recall", "deploy", "-t", "semantic", "--type", "episodic", "--type=working"],
    ["recall", "deploy", "--tag", "a", "--tag", "b", "--scope", "global", "--scope=chat:1"],
    ["recall", "deploy", "--since", "7d", "--until=2026-02-14"],
    ["recall", "deploy", "--archive", "--no-touch", "--no-semantic", "--explain"],
    ["recall", "deploy", "--w-recency", "0", "--w-importance=0.5", "--w-relevance", "2"],
    ["recall", "deploy", "--w-recency", "1"],
    ["recall", "deploy", "--w-relevance", "1e3"],
    ["recall", "deploy", "--w-use", "0.1"],
    ["recall", "--json", "deploy", "--vault", "/v", "day"],
    ["recall", "--", "-x", "--json"],
    ["recall", "deploy", "--", "--", "-n"],
    ["recall", "-"],
    ["recall", "deploy", "--debug"],
    # show, edit
    ["show", "mem_2026"],
    ["show", "mem_2026", "--json", "--vault", "/v", "--debug"],
    ["show", "--", "-odd"],
    ["edit", "mem_2026"],
    ["edit", "--debug", "mem_2026", "--vault=/v"],
    ["edit", "mem_2026", "--json"],
    # list
    ["list"],
    ["list", "--json"],
    ["list", "-t", "semantic", "--type", "episodic"],
    ["list", "--tag", "a", "--scope", "global", "--status", "active", "--status=proposed"],
    ["list", "--archive", "--since", "yesterday", "--until", "today"],
    ["list", "--sort", "title", "--asc"],
    ["list", "--sort=importance", "-n", "3"],
    ["list", "--limit", "1"],
    ["list", "--vault", "/v", "--debug"],
    ["list", "--"],
    # forget
    ["forget", "mem_2026"],
    ["forget", "mem_2026", "--delete"],
    ["forget", "mem_2026", "--delete", "--yes"],
    ["forget", "-y", "--delete", "mem_2026", "--json"],
    ["forget", "mem_2026", "--vault", "/v", "--debug"],
    # reindex, stats
    ["reindex"],
    ["reindex", "--json", "--vault", "/v", "--debug"],
    ["stats"],
    ["stats", "--json", "--vault=/v", "--debug"],
    ["doctor"],
    ["doctor", "--fix", "--json", "--vault", "/v", "--debug"],
    ["trust"],
    ["trust", "--dry-run", "--json", "--vault", "/v", "--debug"],
    ["trust", "--revoke"],
    ["sync"],
    ["sync", "--dry-run", "--json", "--vault", "/v", "--debug"],
    ["sync", "--setup", "-q"],
    ["init", "/v", "--git"],
    ["watch"],
    ["watch", "--polling", "-v", "--json", "--vault=/v", "--debug"],
    ["watch", "--verbose"],
    ["watch", "--no-serve"],
    ["watch", "--serve", "--polling"],
    ["mcp"],
    ["mcp", "--vault", "/v", "--debug"],
    ["serve"],
    ["serve", "--host", "0.0.0.0", "--port", "9000", "--vault", "/v", "--debug"],
    ["serve", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--allow-host", "a.example.com"],
    ["serve", "--allow-host", "a", "--allow-host", "b:443", "--allow-origin", "https://a"],
    ["token", "create", "laptop"],
    ["token", "create", "laptop", "--scope", "write", "--json", "--vault", "/v"],
    ["token", "list", "--json", "--vault=/v", "--debug"],
    ["token", "revoke", "laptop", "--vault", "/v", "--json", "--debug"],
    ["token", "create", "ci", "--debug"],
    ["log", "Decided to ship on Friday"],
    [
        "log",
        "-",
        "--who",
        "Adrian",
        "--session",
        "chat-42",
        "--channel",
        "cli",
        "--at",
        "2026-02-13T14:30",
        "--json",
        "--vault=/v",
        "--debug",
    ],
    ["extract"],
    ["extract", "--no-supersede"],
    [
        "extract",
        "--session",
        "s1",
        "--log",
        "--who",
        "bot",
        "--user-message",
        "hi",
        "--json",
        "--vault",
        "/v",
        "--debug",
    ],
    ["consolidate"],
    [
        "consolidate",
        "--include-today",
        "--date",
        "2026-02-13",
        "--dry-run",
        "--llm",
        "llm -m x",
        "--json",
        "--vault=/v",
        "--debug",
    ],
    ["approve", "mem_1"],
    ["approve", "mem_1", "--json", "--vault", "/v", "--debug"],
    ["reject", "mem_1", "--json", "--vault", "/v", "--debug"],
    # prune
    ["prune"],
    ["prune", "--dry-run", "--json"],
    ["prune", "--delete", "-y", "--superseded", "--vault", "/v", "--debug"],
    ["prune", "--delete", "--yes", "--dry-run"],
    ["prune", "--dry-run", "--now", "2027-05-08"],
    # restore
    ["restore", "mem_1"],
    ["restore", "mem_1", "--json", "--vault=/v", "--debug"],
    # reset
    ["reset", "--memory"],
    ["reset", "--all", "--yes", "--json"],
    ["reset", "--undo", "-y", "--vault", "/v", "--debug"],
    # working memory (a sub-app), patterns
    ["working", "show", "--session", "s1"],
    ["working", "show", "--session=s1", "--json", "--vault", "/v", "--debug"],
    ["working", "set", "--session", "s1"],
    ["working", "set", "Task: ship it", "--session", "s1"],
    ["working", "set", "--session", "s1", "-", "--json", "--vault=/v", "--debug"],
    ["working", "set", "--session", "s1", "--", "- a step"],
    ["working", "clear", "--session", "s1", "--json", "--vault", "/v", "--debug"],
    ["patterns"],
    ["patterns", "docker", "port", "in", "use"],
    ["patterns", "the port is in use", "--no-touch", "--json", "--vault", "/v", "--debug"],
    ["patterns", "-"],
    ["context"],
    ["context", "deploy", "the", "api", "--session", "s1", "--budget", "1500"],
    ["context", "deploy", "--tag", "agent-a", "--tag", "ops", "--now", "2023-05-08T14:00"],
    [
        "context",
        "--no-touch",
        "--no-semantic",
        "--json",
        "--vault",
        "/v",
        "--debug",
        "--budget=300",
    ],
    # import
    ["import", "chat.jsonl"],
    ["import", "-"],
    ["import", "chat.json", "--as", "buffer", "--session", "chat-42", "--dry-run"],
    ["import", "mems.jsonl", "--type", "semantic", "--tag", "a", "--tag=b", "--as=episodic"],
    ["import", "-t", "procedural", "mems.json", "--json", "--vault", "/v", "--debug"],
    ["import", "--", "-odd.json"],
    # install, uninstall
    ["install", "claude-code"],
    ["install", "claude-code", "--project", "--dry-run", "--json", "--vault", "/v"],
    ["install", "codex", "--user", "--debug"],
    ["uninstall", "claude-code", "--project", "--dry-run", "--json", "--debug"],
    ["uninstall", "codex", "--user"],
    # hook
    ["hook", "claude-code"],
    ["hook", "claude-code", "Stop", "--vault", "/v", "--debug"],
    ["hook", "codex", "notify", '{"type": "agent-turn-complete"}'],
    # the embeddings model (a sub-app)
    ["model", "show"],
    ["model", "show", "--json", "--vault", "/v", "--debug"],
    ["model", "pull"],
    ["model", "pull", "--json", "--vault=/v", "--debug"],
    # tour
    ["tour"],
    ["tour", "/tmp/a tour"],
    ["tour", "--no-pause", "--debug"],
    ["tour", "t", "--no-pause"],
]


def _with_flags() -> list[list[str]]:
    """Every command once with --quiet and once with -v (and its required parameters)."""
    calls = []
    for command, params in sorted(argspec.load_spec().items()):
        needed: list[str] = []
        for p in params:
            if p["required"]:
                needed += ["x"] if p["kind"] == "argument" else [p["opts"][0], "x"]
        calls += [[*command.split(), *needed, "--quiet"], [*command.split(), *needed, "-v"]]
    return calls


VALID += _with_flags()
VALID += [
    # the options of the app itself, before the command
    ["--quiet", "recall", "deploy"],
    ["-q", "remember", "a fact", "--json"],
    ["--verbose", "list"],
    ["-v", "-q", "working", "show", "--session", "s1"],
    ["-q", "stats", "--quiet"],
    ["-v", "reindex", "-q"],
    ["--verbose", "--verbose", "doctor", "--fix"],
]


@pytest.mark.parametrize("argv", VALID, ids=" ".join)
def test_fast_parse_agrees_with_typer(typer_parse: Any, argv: list[str]) -> None:
    from_typer = typer_parse(argv)
    assert from_typer is not None, f"Typer rejected {argv}"
    fast = argspec.fast_parse(argv)
    assert fast is not None, f"the fast path declined a plain call: {argv}"
    assert typed(fast) == typed(from_typer)


def test_the_valid_calls_cover_every_option_of_every_command() -> None:
    seen: dict[str, set[str]] = {}
    table = argspec.load_spec()
    for call in VALID:
        argv = call[argspec._globals_end(call) :]
        words = 1 if argv[0] in table else 2  # a sub-app's command is two words
        options = argv[words : argv.index("--")] if "--" in argv else argv[words:]
        seen.setdefault(" ".join(argv[:words]), set()).update(
            token.partition("=")[0] for token in options if token.startswith("-")
        )
    missing = [
        (command, p["name"])
        for command, params in argspec.load_spec().items()
        for p in params
        if p["kind"] == "option" and not seen.get(command, set()) & set(p["opts"])
    ]
    assert not missing, missing


def test_the_global_flags_are_those_of_the_typer_app() -> None:
    from typer.main import get_command

    declared = {
        opt: param.name
        for param in get_command(app).params
        if param.name in ("quiet", "verbose")
        for opt in param.opts
    }
    assert declared == GLOBAL_FLAGS


DECLINED: list[list[str]] = [
    [],
    ["--quiet"],
    ["-v"],
    ["-q", "--help"],
    ["--verbose", "recall", "--help"],
    ["-q", "frobnicate"],
    ["--help"],
    ["-h"],
    ["--version", "--help"],
    ["recall", "--help"],
    ["recall", "deploy", "-h"],
    ["remember", "a fact", "--help"],
    ["frobnicate"],
    ["recall", "deploy", "--no-such-option"],
    ["recall", "deploy", "--lim", "5"],
    ["remember"],
    ["recall"],
    ["recall", "--json"],
    ["show"],
    ["forget", "--yes"],
    ["recall", "deploy", "--limit", "five"],
    ["recall", "deploy", "-n", "1.5"],
    ["recall", "deploy", "--limit", "0"],
    ["recall", "deploy", "--limit="],
    ["recall", "deploy", "--limit"],
    ["list", "--limit", "0"],
    ["remember", "a fact", "--importance", "11"],
    ["remember", "a fact", "--importance", "0"],
    ["remember", "a fact", "-i", "-1"],
    ["recall", "deploy", "--w-recency", "-0.5"],
    ["recall", "deploy", "--w-recency", "heavy"],
    ["forget", "mem_2026", "-yy"],
    ["recall", "deploy", "-tn", "semantic", "3"],
    ["recall", "deploy", "-n5"],
    ["recall", "deploy", "--json=true"],
    ["remember", "one", "two"],
    ["stats", "extra"],
    ["remember", "a fact", "--", "more"],
    ["working"],
    ["working", "--help"],
    ["working", "show"],
    ["working", "show", "--help"],
    ["working show", "--session", "s1"],
    ["working", "--session", "s1", "show"],
    ["working", "frobnicate", "--session", "s1"],
    ["working", "set", "one", "two", "--session", "s1"],
    ["model"],
    ["model", "pull", "extra"],
]


@pytest.mark.parametrize("argv", DECLINED, ids=lambda a: " ".join(a) or "(empty)")
def test_fast_parse_declines_what_it_cannot_parse_for_sure(argv: list[str]) -> None:
    assert argspec.fast_parse(argv) is None


REJECTED_BY_TYPER: list[list[str]] = [
    ["remember", "a fact", "--importance", "11"],
    ["recall", "deploy", "--limit", "0"],
    ["recall", "deploy", "-n", "five"],
    ["recall", "deploy", "--w-recency", "-1"],
    ["remember", "a fact", "-yn"],
    # NaN passes a `min=0` check by comparison (nan < 0 is false); Typer refuses it.
    ["recall", "deploy", "--w-recency", "nan"],
    ["recall", "deploy", "--w-importance", "NaN"],
    # Python's int() reads any Unicode decimal digit; Typer reads ASCII digits only.
    ["recall", "deploy", "--limit", "\u0665"],  # ARABIC-INDIC DIGIT FIVE
    ["remember", "a fact", "--importance", "\uff17"],  # FULLWIDTH DIGIT SEVEN
]


@pytest.mark.parametrize("argv", REJECTED_BY_TYPER, ids=" ".join)
def test_fast_parse_never_accepts_what_typer_rejects(typer_parse: Any, argv: list[str]) -> None:
    assert typer_parse(argv) is None, f"Typer accepted {argv}"
    assert argspec.fast_parse(argv) is None


# Random command lines built from each command's own options, with awkward values and a
# little junk: whenever the fast path accepts one, Typer must accept it with the very same
# parameters.
VALUES = {
    "int": ["1", "5", "10", "+3", " 7", "0", "11", "-1", "1.5", "x", ""],
    "float": ["0", "0.5", "2", "1e2", "+1", "-1", "1_0", "x", ""],
    "str": ["x", "deploy day", "-", "-dash", "", "7d", "semantic", "2026-02-14", "--json"],
}
POSITIONAL = ["deploy", "-", "", "two words", "mem_2026"]
JUNK = ["--", "-h", "-n5", "-yn", "--json=1", "--nope", "=", "-x"]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(argspec.load_spec())))
    params = argspec.load_spec()[command]
    pieces: list[list[str]] = []
    for _ in range(draw(st.integers(0, 5))):
        p = draw(st.sampled_from(params))
        if p["kind"] == "argument":
            pieces.append([draw(st.sampled_from(POSITIONAL))])
            continue
        opt = draw(st.sampled_from(p["opts"] + p["secondary"]))
        if p["flag"]:
            pieces.append([opt])
            continue
        value = draw(st.sampled_from(VALUES[p["type"]]))
        inline = opt.startswith("--") and draw(st.booleans())
        pieces.append([f"{opt}={value}"] if inline else [opt, value])
    if draw(st.integers(0, 4)) == 0:
        pieces.insert(draw(st.integers(0, len(pieces))), [draw(st.sampled_from(JUNK))])
    if draw(st.booleans()):
        pieces.insert(0, [draw(st.sampled_from(POSITIONAL))])
    return [*command.split(), *(token for piece in pieces for token in piece)]


@pytest.mark.slow
@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(argv=command_lines())
def test_whatever_the_fast_path_accepts_typer_accepts_the_same(
    typer_parse: Any, argv: list[str]
) -> None:
    fast = argspec.fast_parse(argv)
    if fast is None:
        return
    assert typed(typer_parse(argv)) == typed(fast)
