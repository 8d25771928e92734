"""The command line's side of the watcher's command server (`server.py`).

A `kenomem watch` keeps a process with kenomem, its engines and rich already imported.
A read-only command hands it its arguments, working folder, the environment variables
it reads (`SERVED_ENV`: never API keys) and its three standard streams (the descriptors
themselves, so terminal detection, colours and broken pipes behave exactly as at home);
a fork of that process runs the command and sends back the exit code. The call then
costs a bare interpreter, this module and the command's own work: the ~30 ms of imports
that dominate a cold `recall` are paid once, by the watcher. Anything unexpected (no
watcher, another vault, an old server, a server whose code changed on disk since it
loaded it, a refusal) returns None and the command runs here as usual.

Whoever answers on the socket gets the caller's terminal, so it is used only if it and
its folder are the caller's own and closed to others (`socket_problem`), and only if the
process listening on it runs as the caller (its credentials, checked once connected and
before anything is sent: a socket swapped in after the checks is caught there).

Imports only built-in modules: `socket` and `signal` import `enum` (~3 ms), more than
this whole exchange costs.
"""

from __future__ import annotations

import marshal
import os
import stat  # already imported by os: free
import sys

from kenomem.cli.flags import GLOBAL_FLAGS

TYPE_CHECKING = False  # not typing's: importing typing costs a few ms
if TYPE_CHECKING:
    import _socket
    from collections.abc import Mapping
    from typing import TextIO

SOCKET_NAME = "serve.sock"
PROTOCOL = 1
ENV_OFF = "KENOMEM_NO_SERVE"  # set (to anything but "" or "0") to always run locally
# The commands a fork may run: they read the vault (recall's touches are the only writes,
# and those are safe to repeat), or, for `hook`, which an agent runs on every prompt, log
# under the vault lock what a transcript adds (each line once, whoever runs it); they
# never prompt, and never start an editor.
SERVED = frozenset({"recall", "context", "show", "list", "hook"})
ANSWER_SECONDS = 2.0  # how long to wait for the server to take the call before going local
MAX_SOCKET_PATH = 107  # sockaddr_un's sun_path, less its terminating NUL
# The caller's environment variables a served call reads, and the only ones sent: the
# vault's, the home folder (`~` in --vault), the terminal's and rich's, the time zone,
# the locale (LC_*) and the agents' folders (`hook`). API keys and the rest stay with the
# caller; a call that may run the configured LLM command, which needs them, is not served
# (`call.py`).
SERVED_ENV = frozenset(
    {
        "KENOMEM_VAULT",
        "HOME",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "TTY_COMPATIBLE",
        "TTY_INTERACTIVE",
        "COLUMNS",
        "LINES",
        "TZ",
        "TZDIR",
        "LANG",
        "LANGUAGE",
        # Where the agents keep their transcripts, which `hook` reads.
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    }
)
SERVED_ENV_PREFIX = "LC_"
# kenomem's variables that are not settings (config.OTHER_VARIABLES, which this module
# cannot import). Any other KENOMEM_ variable sets a setting, or is reported as not one:
# such a call runs here, where the settings are read from the caller's environment.
NOT_SETTINGS = frozenset(
    {"KENOMEM_VAULT", "KENOMEM_NO_SERVE", "KENOMEM_TEST_ENGINE", "KENOMEM_LOCOMO"}
)

# Replies are fixed-size: a kind byte and a signed 64-bit number.
REPLY_SIZE = 9
WAKE_SECONDS = 0.25  # how often a caller waiting for the fork looks for its own Ctrl-C
TAKEN = b"T"  # number: the pid of the fork running the command
DONE = b"D"  # number: the exit code
DECLINED = b"N"  # number: 0, or CHANGED; run it yourself
CHANGED = 1  # the server's code changed on disk since it loaded it
INTERRUPT = b"I"  # from the caller, once the call is taken: stop as on Ctrl-C


def identity() -> tuple[int, tuple[int, int], str]:
    """What client and server must share: this protocol, Python's marshal format, and
    kenomem's version (a server left running across an upgrade declines every call)."""
    from kenomem import __version__

    return (PROTOCOL, (sys.version_info[0], sys.version_info[1]), __version__)


def enabled(environ: Mapping[str, str]) -> bool:
    return sys.platform.startswith("linux") and environ.get(ENV_OFF, "") in ("", "0")


def socket_path(vault: str) -> str:
    return os.path.join(vault, ".kenomem", SOCKET_NAME)


def served_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """What of `environ` a served call gets: the variables of `SERVED_ENV`, no others."""
    return {
        name: value
        for name, value in environ.items()
        if name in SERVED_ENV or name.startswith(SERVED_ENV_PREFIX)
    }


def settings_in(environ: Mapping[str, str]) -> str:
    """The first `KENOMEM_` variable of `environ` that may set a setting ("" if none)."""
    for name in sorted(environ):
        if name.startswith("KENOMEM_") and name not in NOT_SETTINGS:
            return name
    return ""


def socket_problem(path: str) -> str:
    """Why the socket at `path` must not be used ("" when it may): it must be a socket
    (not a symlink to one), the caller's, usable by nobody else, in a folder that passes
    `folder_problem`. OSError when there is nothing at `path` to check."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        return f"{path} is not a socket"
    return _not_own(path, st, 0o077, "usable") or folder_problem(os.path.dirname(path))


def folder_problem(folder: str) -> str:
    """Why the socket's folder (`.kenomem/`) cannot be trusted ("" when it can): it must
    be a folder (not a symlink to one), the caller's, and writable by nobody else, who
    could otherwise put their own socket in it."""
    try:
        st = os.lstat(folder)
    except OSError as exc:
        return f"{folder} cannot be checked ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    return _not_own(folder, st, 0o022, "writable")


def _not_own(path: str, st: os.stat_result, others: int, what: str) -> str:
    if st.st_uid != os.geteuid():
        return f"{path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & others:
        return f"{path} is {what} by other users (mode {st.st_mode & 0o7777:o})"
    return ""


def peer_uid(sock: _socket.socket) -> int:
    """The user the process listening at the other end of `sock` ran as (SO_PEERCRED:
    the struct ucred of pid, uid and gid, 32 bits each)."""
    import _socket

    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder)


def guess_vault(args: list[str], environ: Mapping[str, str], cwd: str | None = None) -> str:
    """The vault a call names, found as `paths.resolve_vault` finds it (`vaultfind`: the
    flag, the variable, the folder `cwd` or one above it, the default), its `--vault`
    read without the argument parser. A wrong guess costs nothing: the server checks it
    with the real parser, from the caller's folder."""
    from kenomem.files.vaultfind import choose

    flag = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--vault" and i + 1 < len(args):
            flag = args[i + 1]
        elif arg.startswith("--vault="):
            flag = arg[len("--vault=") :]
    return os.path.abspath(choose(flag, environ, cwd)[0])


def command_of(args: list[str]) -> str | None:
    for arg in args:
        if arg not in GLOBAL_FLAGS:
            return arg
    return None


def answer(args: list[str]) -> int | None:
    """The exit code of `args` run by the vault's watcher, or None to run it here."""
    if command_of(args) not in SERVED or not enabled(os.environ):
        return None
    path = socket_path(guess_vault(args, os.environ))
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    try:
        problem = socket_problem(path)
    except OSError:
        return None  # without a watcher, a call pays for this stat and no more
    if problem:
        _not_served(args, problem)
        return None
    setting = settings_in(os.environ)
    if setting:
        _not_served(args, f"{setting} is set (settings from the environment are read here)")
        return None
    streams = (sys.stdin, sys.stdout, sys.stderr)
    if any(s is None for s in streams):
        return None
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(ANSWER_SECONDS)
        try:
            sock.connect(path)
            uid = peer_uid(sock)
            if uid != os.geteuid():
                _not_served(args, f"its server runs as another user (uid {uid})")
                return None
            _send_request(sock, args, streams)
            kind, number = _reply(sock)
        except OSError:  # no server, a stale socket, a timeout, a closed stream
            return None
        if kind != TAKEN:
            if kind == DECLINED and number == CHANGED:
                _not_served(args, "kenomem changed since the watcher started")
            return None
        return _wait_for_exit(sock)
    finally:
        sock.close()


def _send_request(
    sock: _socket.socket, args: list[str], streams: tuple[TextIO, TextIO, TextIO]
) -> None:
    import _socket

    mask = os.umask(0)
    os.umask(mask)
    encodings = tuple((s.encoding, s.errors) for s in streams)
    message = request(args, os.getcwd(), served_environ(os.environ), mask, encodings)
    rights = fd_rights([s.fileno() for s in streams])
    sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])


def request(
    args: list[str],
    cwd: str,
    environ: dict[str, str],
    umask: int,
    encodings: tuple[tuple[str, str | None], ...],
    caller: tuple[int, tuple[int, int], str] | None = None,
) -> bytes:
    """A call as the server reads it: its length, then the marshalled call."""
    body = marshal.dumps((caller or identity(), list(args), cwd, environ, umask, encodings))
    return len(body).to_bytes(8, "little") + body


def fd_rights(fds: list[int]) -> bytes:
    """The descriptors as SCM_RIGHTS ancillary data carries them."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def _not_served(args: list[str], why: str) -> None:
    """Say, with --verbose (and without --quiet), why the watcher's server is not used."""
    verbose = False
    for arg in args:
        if arg == "--":
            break
        if arg in ("--quiet", "-q"):
            return
        verbose = verbose or arg in ("--verbose", "-v")
    if verbose:
        # Not through output.py: its imports are what this module exists to avoid.
        print(
            f"{command_of(args)}: the watcher's command server is not used: {why}", file=sys.stderr
        )


def _reply(sock: _socket.socket) -> tuple[bytes, int]:
    data = b""
    while len(data) < REPLY_SIZE:
        chunk = sock.recv(REPLY_SIZE - len(data))
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        data += chunk
    return data[:1], int.from_bytes(data[1:], "little", signed=True)


def _wait_for_exit(sock: _socket.socket) -> int:
    """Wait for the fork's exit code; a Ctrl-C here is passed on to it, as if it ran here.

    The wait wakes every `WAKE_SECONDS`: a signal that lands between Python's last look
    for one and the start of a blocking `recv` is seen only when that call returns, and
    a fork writing to a pipe nobody reads would never let it return."""
    sock.settimeout(WAKE_SECONDS)
    data = b""
    while True:
        try:
            chunk = sock.recv(REPLY_SIZE - len(data))
        except KeyboardInterrupt:
            try:
                sock.sendall(INTERRUPT)  # it stops the way a local run would, with exit 130
            except OSError:
                pass
            continue
        except TimeoutError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            # Not through output.py: its imports are what this module exists to avoid.
            print("error: the watcher's process ended before the command did", file=sys.stderr)
            return 1
        data += chunk
        if len(data) == REPLY_SIZE:
            kind, number = data[:1], int.from_bytes(data[1:], "little", signed=True)
            if kind == DONE:
                return number
            data = b""
