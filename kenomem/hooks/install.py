"""`kenomem install` and `kenomem uninstall`: kenomem's hooks and MCP server written into an
agent's own settings, merged with what is there, and taken out again exactly.

- Claude Code: the hooks (`kenomem hook claude-code EVENT` on SessionStart,
  UserPromptSubmit, Stop, PreCompact and SessionEnd) in `settings.json` of its folder
  (`$CLAUDE_CONFIG_DIR`, else `~/.claude`) for `--user`, or in the project's
  `.claude/settings.local.json` for `--project`, with the MCP server (`kenomem mcp`) in the
  project's `.mcp.json`; for `--user` the `claude mcp add` line that adds the server is
  given instead (Claude Code keeps user servers in a file of its own state).
- Codex: its `notify` program (`kenomem hook codex notify`, run at the end of each turn)
  and the MCP server (`[mcp_servers.kenomem]`) in `config.toml` of its folder
  (`$CODEX_HOME`, else `~/.codex`), or of the project's `.codex/` for `--project`.

The project is the nearest folder at or above the working folder holding `.git`, else the
working folder (`ingest.transcripts.project_root`, the projects of `kenomem hook`).

What changes is decided by pure functions of the files' bytes (`plan`); `apply` carries it
out: a backup beside each file before it changes, then the new bytes by temporary file
and rename (`files.atomic`), each file only if it is still as it was read.

kenomem's own entries are known by their command: a hook whose command runs `kenomem hook
AGENT`, an MCP server named `kenomem` that runs `kenomem mcp`, and in a TOML file the
blocks between kenomem's marker comments. Everything else in a file is the user's: kept,
and never rewritten in a JSON file but for its layout (the file's indentation and line
endings are kept); in a TOML file not a byte of it changes.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shlex
import stat
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from kenomem.errors import InvalidInput, KenomemError, UsageError

CLAUDE_CODE = "claude-code"
CODEX = "codex"
AGENTS = (CLAUDE_CODE, CODEX)
USER = "user"
PROJECT = "project"
INSTALL = "install"
UNINSTALL = "uninstall"

# Claude Code's events kenomem hooks, and how long Claude Code lets each hook run
# (seconds) before it stops waiting: a start and a prompt are answered at once or not at
# all; a capture may read a long transcript.
CLAUDE_EVENTS = {
    "SessionStart": 10,
    "UserPromptSubmit": 5,
    "Stop": 30,
    "PreCompact": 30,
    "SessionEnd": 30,
}
SERVER = "kenomem"  # the MCP server's name, in `.mcp.json` and `config.toml`

# A TOML block kenomem writes lies between these lines; uninstall removes each such block
# whole, and nothing else.
BEGIN = "# >>> kenomem: written by `kenomem install codex`; `kenomem uninstall codex` removes it"
BEGIN_PREFIX = "# >>> kenomem"
END = "# <<< kenomem"

MAX_BYTES = 4 << 20  # a settings file larger than this is not read


class InstallError(KenomemError):
    """A settings file kenomem will not change as asked (broken, not an object, a link to
    nothing, another user's, changed meanwhile); it is left as it was."""


class FileChange(NamedTuple):
    path: Path  # the file as the agent names it
    real: Path  # where its bytes are: the file a link of the user's points to, else `path`
    what: str  # "hooks", "mcp server", "notify and mcp server"
    before: bytes | None  # None: there is no file
    after: bytes | None  # None: the file is removed
    stat: tuple[int, int] | None  # (size, mtime_ns) as read


class Plan(NamedTuple):
    agent: str
    action: str  # install | uninstall
    scope: str  # user | project
    executable: str  # the kenomem the hooks run ("" for uninstall)
    changes: list[FileChange]  # the files whose bytes change
    unchanged: list[Path]  # the files looked at that stay as they are
    notes: list[str]  # what the user does by hand (`claude mcp add ...`), or should know


class Applied(NamedTuple):
    created: list[Path]
    changed: list[Path]
    removed: list[Path]
    backups: dict[Path, Path]  # each file changed or removed: the copy made of it first


# -- where each agent keeps its settings ----------------------------------------------------


class Target(NamedTuple):
    path: Path
    kind: str  # "hooks" (JSON), "mcp-json" (.mcp.json), "codex-toml" (config.toml)


def targets(
    agent: str, scope: str, environ: Mapping[str, str], home: Path, cwd: Path
) -> list[Target]:
    """The files `kenomem install AGENT --SCOPE` writes (and `uninstall` looks in)."""
    if agent == CLAUDE_CODE:
        if scope == USER:
            folder = _env_folder(environ, "CLAUDE_CONFIG_DIR", home / ".claude", cwd)
            return [Target(folder / "settings.json", "hooks")]
        root = project_folder(cwd)
        return [
            Target(root / ".claude" / "settings.local.json", "hooks"),
            Target(root / ".mcp.json", "mcp-json"),
        ]
    if scope == USER:
        folder = _env_folder(environ, "CODEX_HOME", home / ".codex", cwd)
    else:
        folder = project_folder(cwd) / ".codex"
    return [Target(folder / "config.toml", "codex-toml")]


def _env_folder(environ: Mapping[str, str], name: str, default: Path, cwd: Path) -> Path:
    value = environ.get(name, "")
    return cwd / Path(value).expanduser() if value else default


def project_folder(cwd: Path) -> Path:
    """The project's folder: the nearest at or above `cwd` holding `.git`, else `cwd`."""
    from kenomem.ingest.transcripts import project_root

    return Path(project_root(str(cwd)))


def check_request(agent: str, user: bool, project: bool) -> str:
    """The scope asked for (`--user` when neither is given); a UsageError for an unknown
    agent or both scopes at once."""
    if agent not in AGENTS:
        raise UsageError(
            f"kenomem installs into {' and '.join(AGENTS)}, not {agent!r}",
            hint="kenomem install claude-code  (or: kenomem install codex)",
        )
    if user and project:
        raise UsageError("--user and --project do not go together: choose one")
    return PROJECT if project else USER


# -- the commands written -------------------------------------------------------------------


def hook_argv(executable: str, agent: str, event: str, vault: str | None) -> list[str]:
    argv = [executable, "hook", agent, event]
    return [*argv, "--vault", vault] if vault else argv


def hook_command(executable: str, agent: str, event: str, vault: str | None) -> str:
    """The shell command Claude Code runs for `event` (it runs hooks through a shell)."""
    return shlex.join(hook_argv(executable, agent, event, vault))


def mcp_argv(executable: str, vault: str | None) -> list[str]:
    return [executable, "mcp", "--vault", vault] if vault else [executable, "mcp"]


def add_line(executable: str, vault: str | None) -> str:
    """The command that adds the MCP server to Claude Code for every project."""
    return shlex.join(
        ["claude", "mcp", "add", "--scope", "user", SERVER, "--", *mcp_argv(executable, vault)]
    )


def kenomem_args(argv: list[str]) -> list[str]:
    """The arguments `argv` gives kenomem when it runs kenomem (`/x/kenomem hook ...`,
    `python -m kenomem hook ...`), else []."""
    if not argv:
        return []
    if os.path.basename(argv[0]) == "kenomem":
        return argv[1:]
    if os.path.basename(argv[0]).startswith("python") and argv[1:3] == ["-m", "kenomem"]:
        return argv[3:]
    return []


def _command_args(command: object) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return kenomem_args(shlex.split(command))
    except ValueError:  # unbalanced quotes: not a command kenomem wrote
        return []


def is_our_hook(handler: object, agent: str) -> bool:
    """Whether a hook handler of a settings file is one kenomem wrote for `agent`."""
    return (
        isinstance(handler, dict)
        and handler.get("type") == "command"
        and _command_args(handler.get("command"))[:2] == ["hook", agent]
    )


def is_our_server(server: object) -> bool:
    """Whether an MCP server entry runs `kenomem mcp`."""
    if not isinstance(server, dict):
        return False
    command, args = server.get("command"), server.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    if not all(isinstance(a, str) for a in args):
        return False
    return kenomem_args([command, *args])[:1] == ["mcp"]


# -- JSON files -----------------------------------------------------------------------------


class _Repeated(ValueError):
    pass


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise _Repeated(key)
        doc[key] = value
    return doc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes, path: Path) -> dict[str, Any]:
    """The object a settings file holds ({} for an empty file); InstallError for anything
    that is not one JSON object, plainly written: comments, trailing commas, a key given
    twice (a reader keeps one of them, kenomem would silently drop the other), NaN."""
    fix = (
        "fix the file by hand (JSON has no comments or trailing commas) or move it away, "
        "and run again"
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text: left as it is", hint=fix) from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except _Repeated as exc:
        raise InstallError(
            f"{path} gives the key {str(exc)!r} twice in one object: left as it is", hint=fix
        ) from None
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}): "
            "left as it is",
            hint=fix,
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InstallError(
            f"{path} is not valid JSON ({reason}): left as it is", hint=fix
        ) from None
    if not isinstance(doc, dict):
        raise InstallError(
            f"{path} holds a JSON {type(doc).__name__}, not an object: left as it is", hint=fix
        )
    return doc


def render_json(doc: dict[str, Any], like: bytes | None) -> bytes:
    """`doc` as a file, laid out as `like` (the file it replaces) is: its indentation and
    line endings; two spaces and LF for a new file."""
    old = (like or b"").decode("utf-8", "replace")
    indent: int | str = 2
    for line in old.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            indent = lead if "\t" in lead else len(lead)
            break
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    if "\r\n" in old:
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def _object(doc: dict[str, Any], key: str, path: Path) -> dict[str, Any] | None:
    value = doc.get(key)
    if value is not None and not isinstance(value, dict):
        raise InstallError(
            f"{path}: {key!r} is a {type(value).__name__}, not an object: left as it is",
            hint=f"fix {key!r} in the file by hand, and run again",
        )
    return value


def _groups(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = hooks.get(event, [])
    shaped = isinstance(groups, list) and all(
        isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups
    )
    if not shaped:
        raise InstallError(
            f"{path}: hooks.{event} is not a list of groups, each with a list of hooks: "
            "left as it is",
            hint=f"fix hooks.{event} in the file by hand (see Claude Code's hooks "
            "documentation), and run again",
        )
    return groups


def _without_ours(groups: list[Any], agent: str) -> list[Any]:
    """`groups` without kenomem's hooks for `agent`; a group left empty by that goes."""
    kept = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        others = [h for h in handlers if not is_our_hook(h, agent)]
        if len(others) == len(handlers):
            kept.append(group)
        elif others:
            kept.append({**group, "hooks": others})
    return kept


def with_hooks(
    doc: dict[str, Any], agent: str, wanted: Mapping[str, dict[str, Any]], path: Path
) -> dict[str, Any]:
    """`doc` with kenomem's hook handler `wanted[event]` for each event. An event that
    already has exactly one hook of kenomem's with the same command keeps it as it is
    (its timeout may have been changed by hand); otherwise kenomem's hooks of the event
    are replaced by one group holding the new one, at the end."""
    doc = copy.deepcopy(doc)
    hooks = _object(doc, "hooks", path)
    if hooks is None:
        hooks = doc["hooks"] = {}
    for event, handler in wanted.items():
        groups = _groups(hooks, event, path)
        ours = [h for g in groups for h in g.get("hooks", []) if is_our_hook(h, agent)]
        if len(ours) == 1 and ours[0].get("command") == handler["command"]:
            continue
        hooks[event] = [*_without_ours(groups, agent), {"hooks": [handler]}]
    return doc


def without_hooks(doc: dict[str, Any], agent: str, path: Path) -> dict[str, Any]:
    """`doc` without kenomem's hooks for `agent`, under any event. A group, an event's
    list or `hooks` itself that only kenomem's hooks filled goes too; one that was empty
    before stays."""
    hooks = _object(doc, "hooks", path)
    if not hooks:
        return doc
    doc = copy.deepcopy(doc)
    hooks = doc["hooks"]
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list) or not groups:
            continue  # not a shape kenomem writes: not kenomem's
        kept = _without_ours(groups, agent)
        if kept == groups:
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del doc["hooks"]
    return doc


def with_server(doc: dict[str, Any], server: dict[str, Any], path: Path) -> dict[str, Any]:
    """`doc` (a `.mcp.json`) with kenomem's MCP server. A server named `kenomem` that does
    not run kenomem is someone else's: refused, never replaced."""
    servers = _object(doc, "mcpServers", path)
    current = (servers or {}).get(SERVER)
    if current is not None and not is_our_server(current):
        raise InstallError(
            f"{path} already has an MCP server named {SERVER!r} that does not run kenomem: "
            "left as it is",
            hint="rename or remove that server in the file, and run again",
        )
    if current == server:
        return doc
    doc = copy.deepcopy(doc)
    doc.setdefault("mcpServers", {})[SERVER] = server
    return doc


def without_server(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = _object(doc, "mcpServers", path)
    if not servers or not is_our_server(servers.get(SERVER)):
        return doc
    doc = copy.deepcopy(doc)
    del doc["mcpServers"][SERVER]
    if not doc["mcpServers"]:
        del doc["mcpServers"]
    return doc


# -- Codex's config.toml --------------------------------------------------------------------


def toml_string(value: str) -> str:
    """`value` as a TOML basic string (JSON's escapes are TOML's, but for DEL)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_array(values: list[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def notify_block(executable: str, vault: str | None) -> str:
    """The root key that makes Codex run `kenomem hook codex notify JSON` after each turn."""
    return f"{BEGIN}\nnotify = {toml_array(hook_argv(executable, CODEX, 'notify', vault))}\n{END}\n"


def server_block(executable: str, vault: str | None) -> str:
    argv = mcp_argv(executable, vault)
    return (
        f"{BEGIN}\n[mcp_servers.{SERVER}]\ncommand = {toml_string(argv[0])}\n"
        f"args = {toml_array(argv[1:])}\n{END}\n"
    )


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(
            f"{path} is not valid TOML ({exc}): left as it is",
            hint="fix the file by hand or move it away, and run again",
        ) from None


def blocks(text: str, path: Path) -> list[tuple[int, int]]:
    """Where kenomem's blocks lie in `text`: (start, end) character offsets, each from
    the start of its first marker line to the end of its last."""
    spans = []
    start = None
    offset = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n").strip()
        if bare.startswith(BEGIN_PREFIX):
            if start is not None:
                break  # a block opened twice: refused below
            start = offset
        elif bare == END and start is not None:
            spans.append((start, offset + len(line)))
            start = None
        offset += len(line)
    if start is not None:
        raise InstallError(
            f"{path} has a line {BEGIN_PREFIX!r} that no {END!r} line closes: left as it is",
            hint="remove kenomem's lines from the file by hand, and run again",
        )
    return spans


def without_blocks(text: str, path: Path) -> str:
    spans = blocks(text, path)
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return text


def with_codex(text: str, executable: str, vault: str | None, path: Path) -> tuple[str, list[str]]:
    """`text` (Codex's config.toml) with kenomem's blocks: `notify` at the top (a root key
    must come before any table) and the MCP server at the end; and the notes for the user.

    A `notify` that is not kenomem's stays: Codex runs one program only, so kenomem's
    capture is then left out, and said. A `[mcp_servers.kenomem]` that kenomem did not
    write is refused."""
    parse_toml(text, path)
    spans = blocks(text, path)
    bare = without_blocks(text, path)
    theirs = parse_toml(bare, path)
    servers = theirs.get("mcp_servers")
    if isinstance(servers, dict) and SERVER in servers:
        raise InstallError(
            f"{path} already has an MCP server [mcp_servers.{SERVER}] that kenomem did not "
            "write: left as it is",
            hint="rename or remove that table in the file, and run again",
        )
    notes = []
    wanted = []
    if "notify" in theirs:
        notes.append(
            f"{path} already names a notify program, and Codex runs only one: kenomem does "
            "not capture Codex's turns as they happen; `kenomem import ~/.codex/sessions` "
            "reads them from its transcripts"
        )
    else:
        wanted.append(notify_block(executable, vault))
    wanted.append(server_block(executable, vault))
    newline = "\r\n" if "\r\n" in text else "\n"
    if [text[s:e].replace("\r\n", "\n") for s, e in spans] == wanted:
        return text, notes  # kenomem's blocks as they would be written: nothing to do
    wanted = [b.replace("\n", newline) for b in wanted]
    head = wanted[0] if len(wanted) == 2 else ""
    tail = "" if not bare or bare.endswith("\n") else newline
    new = head + bare + tail + wanted[-1]
    parsed = parse_toml_after(new, path)
    argv = mcp_argv(executable, vault)
    server = parsed.get("mcp_servers", {}).get(SERVER)
    notify = hook_argv(executable, CODEX, "notify", vault) if head else theirs["notify"]
    if server != {"command": argv[0], "args": argv[1:]} or parsed.get("notify") != notify:
        raise InstallError(
            f"kenomem's lines do not read back from {path} as written: left as it is",
            hint=f"add notify and [mcp_servers.{SERVER}] to the file by hand",
        )
    return new, notes


def parse_toml_after(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(
            f"kenomem's lines would not fit in {path} as it is written ({exc}): left as it is",
            hint=f"add notify and [mcp_servers.{SERVER}] to the file by hand",
        ) from None


# -- the plan -------------------------------------------------------------------------------


class Found(NamedTuple):
    """A settings file as read: where its bytes are, the bytes (None: no file), and the
    (size, mtime_ns) they were read at."""

    real: Path
    data: bytes | None
    stat: tuple[int, int] | None


def read_target(path: Path) -> Found:
    """Read a settings file. A link is followed (a dotfiles manager links them): the file
    at its end is read, and written in place; a link to nothing, a file that is not a
    regular file, another user's or too large is refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Found(path, None, None)
    real = path
    if stat.S_ISLNK(st.st_mode):
        real = Path(os.path.realpath(path))
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            raise InstallError(
                f"{path} is a link to {real}, which does not exist: left as it is",
                hint="create the file the link points to, or remove the link, and run again",
            ) from None
    if not stat.S_ISREG(st.st_mode):
        raise InstallError(
            f"{real} is not a regular file: left as it is", hint="move it away, and run again"
        )
    if st.st_uid != os.geteuid():
        raise InstallError(
            f"{real} belongs to another user: left as it is",
            hint="kenomem changes only your own settings files",
        )
    if st.st_size > MAX_BYTES:
        raise InstallError(
            f"{real} is over {MAX_BYTES >> 20} MiB: not read, left as it is",
            hint="a settings file this large is not one kenomem expects; check it by hand",
        )
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        opened = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return Found(real, b"".join(chunks), (opened.st_size, opened.st_mtime_ns))


class Request(NamedTuple):
    agent: str
    action: str  # install | uninstall
    scope: str  # user | project
    executable: str  # the kenomem the hooks and the server run
    vault: str | None  # the vault they name (None: the one found where they run)


def plan(request: Request, files: Mapping[Path, Found], found_targets: list[Target]) -> Plan:
    """What `request` changes in the files as read (`files`, by path): pure."""
    changes: list[FileChange] = []
    unchanged: list[Path] = []
    notes: list[str] = []
    for target in found_targets:
        found = files[target.path]
        after, what, more = _new_bytes(request, target, found)
        notes += more
        if after is None and found.data is not None and found.real != target.path:
            # Emptied, but the user's link to it stays: it is left empty, not removed.
            after = b"" if target.kind == "codex-toml" else b"{}\n"
        if after == found.data:
            unchanged.append(target.path)
        else:
            changes.append(FileChange(target.path, found.real, what, found.data, after, found.stat))
    if request.action == INSTALL and request.agent == CLAUDE_CODE and request.scope == USER:
        notes.append(
            "add the MCP server for every project with: "
            + add_line(request.executable, request.vault)
        )
    if request.action == UNINSTALL and request.agent == CLAUDE_CODE and request.scope == USER:
        notes.append(
            f"if you added the MCP server with `claude mcp add`, remove it with: "
            f"claude mcp remove --scope user {SERVER}"
        )
    if request.action == INSTALL and request.scope == PROJECT:
        notes.append(
            "these files name this machine's kenomem"
            + (" and vault" if request.vault else "")
            + ": keep them out of a repository others clone"
        )
        if request.agent == CODEX:
            notes.append("Codex reads a project's .codex/config.toml once you trust the project")
        else:
            notes.append("Claude Code asks once whether to use the MCP server of .mcp.json")
    if request.action == INSTALL and request.agent == CODEX:
        notes.append("Codex's earlier sessions are read with: kenomem import ~/.codex/sessions")
    return Plan(
        request.agent,
        request.action,
        request.scope,
        request.executable,
        changes,
        unchanged,
        notes,
    )


def _new_bytes(
    request: Request, target: Target, found: Found
) -> tuple[bytes | None, str, list[str]]:
    install = request.action == INSTALL
    path = target.path
    if target.kind == "codex-toml":
        text = _text(found.data, path)
        if install:
            new, notes = with_codex(text, request.executable, request.vault, path)
        else:
            parse_toml(text, path)
            new, notes = without_blocks(text, path), []
        return _file_bytes(found.data, new.encode("utf-8")), "notify and mcp server", notes
    doc = parse_json(found.data or b"", path)
    if target.kind == "hooks":
        if install:
            wanted = {
                event: {
                    "type": "command",
                    "command": hook_command(
                        request.executable, request.agent, event, request.vault
                    ),
                    "timeout": timeout,
                }
                for event, timeout in CLAUDE_EVENTS.items()
            }
            new_doc = with_hooks(doc, request.agent, wanted, path)
        else:
            new_doc = without_hooks(doc, request.agent, path)
        what = "hooks"
    else:
        argv = mcp_argv(request.executable, request.vault)
        server = {"command": argv[0], "args": argv[1:]}
        new_doc = with_server(doc, server, path) if install else without_server(doc, path)
        what = "mcp server"
    if new_doc == doc:
        return found.data, what, []
    if not new_doc and not install:
        return None, what, []  # only kenomem's entries were left: the file goes
    return render_json(new_doc, found.data), what, []


def _text(data: bytes | None, path: Path) -> str:
    try:
        return (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text: left as it is") from None


def _file_bytes(before: bytes | None, after: bytes) -> bytes | None:
    """The file's new bytes: None (no file) for an empty one that was not there, or that
    kenomem emptied."""
    if after.strip():
        return after
    return None if before is None or before.strip() else before


def diff(plan: Plan) -> str:
    """The plan as a unified diff, each file named as the agent names it. A line that
    looks like it holds a secret (an API key in an `env` block) is shown with the secret
    taken out."""
    from kenomem.files.secrets import redact

    out = []
    for change in plan.changes:
        before = (change.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = (change.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(
            [redact(line) for line in before],
            [redact(line) for line in after],
            fromfile=str(change.path) if change.before is not None else "/dev/null",
            tofile=str(change.path) if change.after is not None else "/dev/null",
        )
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


# -- carrying it out ------------------------------------------------------------------------


def apply(plan: Plan, now: datetime | None = None) -> Applied:
    """Write the plan: for each file changed, a backup of it beside it first, then its new
    bytes, atomically, only if it is still as it was read; a file left with nothing but
    kenomem's entries is removed (without a backup: it holds nothing of the user's)."""
    from kenomem.files import atomic

    moment = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    created: list[Path] = []
    changed: list[Path] = []
    removed: list[Path] = []
    backups: dict[Path, Path] = {}
    for change in plan.changes:
        if change.before is not None and change.after is not None:
            # A file removed held only kenomem's entries: nothing of the user's to keep.
            _check_unchanged(change)
            backups[change.path] = backup(change.real, change.before, moment)
        if change.after is None:
            _check_unchanged(change)
            os.unlink(change.real)
            removed.append(change.path)
        elif change.before is None:
            try:
                atomic.create_bytes(change.real, change.after)
            except FileExistsError:
                raise _changed_meanwhile(change.path) from None
            created.append(change.path)
        else:
            try:
                atomic.write_bytes(change.real, change.after, expect_stat=change.stat)
            except atomic.DirtyFile:
                raise _changed_meanwhile(change.path) from None
            changed.append(change.path)
    return Applied(created, changed, removed, backups)


def _check_unchanged(change: FileChange) -> None:
    try:
        st = os.lstat(change.real)
    except FileNotFoundError:
        raise _changed_meanwhile(change.path) from None
    if (st.st_size, st.st_mtime_ns) != change.stat:
        raise _changed_meanwhile(change.path)


def _changed_meanwhile(path: Path) -> InstallError:
    return InstallError(
        f"{path} changed while kenomem was reading it: left as it is",
        hint="run the command again",
    )


def backup(real: Path, data: bytes, moment: str) -> Path:
    """A copy of `data` beside `real`, as private as the file is, never over another
    file: `settings.json.kenomem-backup-20261127T231500Z` (`-2`, `-3`... in the same
    second)."""
    mode = os.lstat(real).st_mode & 0o777
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for n in range(1, 100):
        name = f"{real.name}.kenomem-backup-{moment}" + (f"-{n}" if n > 1 else "")
        path = real.parent / name
        try:
            fd = os.open(path, flags, mode)
        except FileExistsError:
            continue
        try:
            os.fchmod(fd, mode)  # as the file is, whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
        os.close(fd)
        return path
    raise InstallError(f"too many backups of {real} in one second", hint="run the command again")


# -- the whole command ----------------------------------------------------------------------


def run(
    request: Request,
    *,
    dry_run: bool = False,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    cwd: Path | None = None,
) -> tuple[Plan, Applied | None]:
    """`kenomem install|uninstall AGENT`: the plan, and what was written (None with
    `dry_run`)."""
    environ = os.environ if environ is None else environ
    home = home if home is not None else Path(os.path.expanduser("~"))
    cwd = cwd if cwd is not None else Path(os.getcwd())
    where = targets(request.agent, request.scope, environ, home, cwd)
    files = {t.path: read_target(t.path) for t in where}
    made = plan(request, files, where)
    if dry_run or not made.changes:
        return made, None
    return made, apply(made)


def executable(argv0: str, which: str | None) -> str:
    """The kenomem the hooks run: the script running now when it is kenomem's (its path
    as called, so a link a package manager keeps stable stays the path), else `kenomem`
    found on PATH."""
    if os.path.basename(argv0) == "kenomem" and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    if which:
        return os.path.abspath(which)
    raise InvalidInput(
        "kenomem cannot tell where its own command is (it is not run as `kenomem`, and "
        "there is no `kenomem` on PATH)",
        hint="run the install as `kenomem install ...`, from where kenomem is installed",
    )
