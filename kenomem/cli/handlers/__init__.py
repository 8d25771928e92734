"""What each command does once its options are parsed: the parameters, converted
(`cli/kit.py`), become the request its operation takes, by name; the handler calls
one method of the Python API with it and hands the result to the renderer
(`cli/render/`). `run` is the one place errors are caught.

Neither Typer nor rich is imported here: the Typer app (`cli/commands/`) and the fast
parser (`cli/argspec.py`) both end in `run` with the same parameters.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kenomem.cli.output import Output
from kenomem.errors import KenomemError, storage_error


class Operation:
    """A command: its handler, a function of `cli/handlers/<family>.py`; the request type
    its parameters become, by name, declared beside the core function that takes it;
    `run` given as well, to a handler that runs commands.

    A command without a request takes no options: it names what it acts on (`show ID`,
    `working set --session S TEXT`), or it is the command line's own (`tour`). `import`
    forwards its options by name to `Vault.import_file`, which makes the `ImportRequest`
    with the text it reads from the file.

    Both are named "module:name" and imported when the command runs, so that a command
    loads only the code it runs (the architecture test counts these names as imports).
    A plain class: a NamedTuple's class costs a cold start a tenth of a millisecond."""

    __slots__ = ("handler", "request", "runs_commands")

    def __init__(self, handler: str, request: str = "", runs_commands: bool = False) -> None:
        self.handler = handler
        self.request = request
        self.runs_commands = runs_commands


OPERATIONS: dict[str, Operation] = {
    "init": Operation("kenomem.cli.handlers.memory:init"),
    "remember": Operation(
        "kenomem.cli.handlers.memory:remember", "kenomem.capture.remember:RememberRequest"
    ),
    "recall": Operation(
        "kenomem.cli.handlers.memory:recall", "kenomem.recall.search:RecallRequest"
    ),
    "show": Operation("kenomem.cli.handlers.memory:show"),
    "list": Operation("kenomem.cli.handlers.memory:list_", "kenomem.vault.views:ListRequest"),
    "forget": Operation(
        "kenomem.cli.handlers.memory:forget", "kenomem.forget.archive:ForgetRequest"
    ),
    "edit": Operation("kenomem.cli.handlers.memory:edit"),
    "reindex": Operation("kenomem.cli.handlers.memory:reindex"),
    "stats": Operation("kenomem.cli.handlers.memory:stats"),
    "mcp": Operation("kenomem.cli.handlers.memory:mcp"),
    "serve": Operation("kenomem.cli.handlers.serve:serve", "kenomem.serve.plan:ServeRequest"),
    "token create": Operation("kenomem.cli.handlers.serve:token_create"),
    "token list": Operation("kenomem.cli.handlers.serve:token_list"),
    "token revoke": Operation("kenomem.cli.handlers.serve:token_revoke"),
    "context": Operation(
        "kenomem.cli.handlers.agents:context", "kenomem.agents.context:ContextRequest"
    ),
    "working show": Operation("kenomem.cli.handlers.agents:working_show"),
    "working set": Operation("kenomem.cli.handlers.agents:working_set"),
    "working clear": Operation("kenomem.cli.handlers.agents:working_clear"),
    "patterns": Operation(
        "kenomem.cli.handlers.agents:patterns", "kenomem.agents.procedural:PatternsRequest"
    ),
    "import": Operation("kenomem.cli.handlers.agents:import_"),
    # What an agent runs on its events: never fails it (exit code 0, one line on stderr).
    "hook": Operation("kenomem.cli.handlers.hooks:hook"),
    # kenomem's hooks and MCP server in an agent's settings, and out again.
    "install": Operation("kenomem.cli.handlers.install:install"),
    "uninstall": Operation("kenomem.cli.handlers.install:uninstall"),
    # Each step of the tour is a command, run by the `run` it is given.
    "tour": Operation("kenomem.cli.handlers.intro:tour", runs_commands=True),
    "log": Operation("kenomem.cli.handlers.upkeep:log", "kenomem.capture.log:LogRequest"),
    "extract": Operation(
        "kenomem.cli.handlers.upkeep:extract", "kenomem.capture.extract:ExtractRequest"
    ),
    "consolidate": Operation(
        "kenomem.cli.handlers.upkeep:consolidate", "kenomem.sleep.consolidate:ConsolidateRequest"
    ),
    "approve": Operation("kenomem.cli.handlers.upkeep:approve"),
    "reject": Operation("kenomem.cli.handlers.upkeep:reject"),
    "prune": Operation("kenomem.cli.handlers.upkeep:prune", "kenomem.forget.prune:PruneRequest"),
    "restore": Operation("kenomem.cli.handlers.upkeep:restore"),
    "reset": Operation("kenomem.cli.handlers.upkeep:reset", "kenomem.forget.reset:ResetRequest"),
    "doctor": Operation("kenomem.cli.handlers.upkeep:doctor", "kenomem.vault.doctor:DoctorRequest"),
    "trust": Operation("kenomem.cli.handlers.upkeep:trust"),
    "sync": Operation("kenomem.cli.handlers.share:sync", "kenomem.share.sync:SyncRequest"),
    "model show": Operation("kenomem.cli.handlers.upkeep:model_show"),
    "model pull": Operation("kenomem.cli.handlers.upkeep:model_pull"),
    # The watcher's command server runs commands: it is handed `run`.
    "watch": Operation(
        "kenomem.cli.handlers.upkeep:watch",
        "kenomem.watch.watcher:WatchRequest",
        runs_commands=True,
    ),
}


def run(command: str, params: dict[str, Any]) -> int:
    """Run one command; return its exit code (a handler may return one: `doctor`). The only
    place errors are caught."""
    params = dict(params)
    debug = bool(params.pop("debug", False))
    out = Output(
        json_mode=bool(params.pop("json", False)),
        quiet=bool(params.pop("quiet", False)),
        verbose=bool(params.pop("verbose", False)),
    )
    started = time.perf_counter()
    try:
        code = _call(OPERATIONS[command], _converted(command, params), out)
        sys.stdout.flush()
        out.detail(f"{command}: done in {(time.perf_counter() - started) * 1000:.0f} ms")
    except KenomemError as exc:
        if debug:
            raise
        out.error(exc.message, exc.hint)
        return exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except Exception as exc:
        if debug:
            raise
        refused = storage_error(exc)  # a full disk, a read-only folder: not a bug
        if refused is not None:
            out.error(refused.message, refused.hint)
            return refused.exit_code
        out.error(
            f"unexpected {type(exc).__name__}: {exc}",
            hint="run again with --debug for the traceback, and report it",
        )
        return 1
    return code or 0


def _converted(command: str, params: dict[str, Any]) -> dict[str, Any]:
    from kenomem.cli.argspec import load_spec
    from kenomem.cli.kit import converted

    spec = load_spec().get(command)
    if spec is None:
        raise KenomemError(
            f"kenomem cannot read the options of {command}: its argspec.json is missing",
            hint="reinstall kenomem",
        )
    return converted(spec, params)


def _call(operation: Operation, params: dict[str, Any], out: Output) -> int | None:
    """The handler, given the request built from the parameters named as its fields,
    and the rest of the parameters as they are."""
    if operation.request:
        kind = load(operation.request)
        fields = {field: params.pop(field) for field in kind._fields if field in params}
        params["request"] = kind(**fields)
    if operation.runs_commands:
        params["run"] = run
    return load(operation.handler)(out, **params)


def load(name: str) -> Any:
    """The object `name` ("module:attribute") names, its module imported if need be."""
    module, _, attribute = name.partition(":")
    return getattr(__import__(module, fromlist=[attribute]), attribute)


def _silence_stdout() -> None:
    # The reader went away (`kenomem list | head`): drop what is left quietly.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def version() -> str:
    from kenomem import __version__

    return f"kenomem {__version__}"
