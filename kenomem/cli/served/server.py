"""The watcher's command server: a process with the read-only commands already imported,
forking a child for each call the command line hands it (`client.py`); what the child
does with the call is `call.py`.

`kenomem watch` forks it at its start, while it is still one thread (forking a process
with threads can leave a lock held forever in the child), and hands it what it serves
(`Commands`: the function that runs a parsed command, the parser, the modules to import
first), so that nothing here imports the command line above it. It imports those
modules, then waits on `.kenomem/serve.sock`. Each connection gets its own fork, which
takes the caller's working folder, environment, umask and standard streams, runs the
command through the same function as a local call, and sends back the exit code. A fork
starts from the server's state, never from an earlier call's: no index, no settings and
no vault state are kept warm, only imported code, so a served call reads the vault
exactly as a process of its own would.

It never serves other code than a process of the caller's would run: once its imports
are done it takes the fingerprint of the files they came from (`fingerprint.py`), and
each fork checks it before it takes a call. When a file changed (kenomem upgraded or
reinstalled, a development checkout edited), the fork declines, the caller runs the
command itself, and the server ends; the watcher says so and runs on without it.

Only callers of the same user are served (the socket is the user's alone, in a
`.kenomem/` that is the user's alone, and the peer's credentials are checked too); only
on Linux (SO_PEERCRED). A folder someone else owns or may write to is not served from.
The server ends when the watcher does: it waits on a pipe whose other end only the
watcher holds.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kenomem.cli.served import call as forkcall
from kenomem.cli.served import client as proto
from kenomem.cli.served import fingerprint
from kenomem.errors import UnsafePath
from kenomem.files.paths import private_dir

Log = Callable[[str, str], None]


class Commands(NamedTuple):
    """What the server serves, from the command line that starts it."""

    run: forkcall.Run  # a parsed command -> its exit code, as for a local call
    parse: forkcall.Parse  # arguments -> (command, parameters), None for what it cannot read
    preload: tuple[str, ...]  # the modules a served call needs, imported before any call
    files: tuple[str, ...] = ()  # files besides modules that the calls read as code
    # Loads what the calls share (a model, a store), at the start and before each call.
    warm: Callable[[], None] | None = None


STOP_SECONDS = 2.0
READY_SECONDS = 10.0  # the watcher waits this long at most for the server's imports
CHANGED = 3  # the server's exit code when the code it runs changed on disk


class Server:
    """The watcher's handle on its fork server."""

    __slots__ = ("inode", "path", "pid", "pipe", "reported")

    def __init__(self, pid: int, pipe: int, path: str, inode: int) -> None:
        self.pid = pid
        self.pipe = pipe  # the write end: closing it tells the server to stop
        self.path = path
        self.inode = inode
        self.reported = False


def start(root: Path, log: Log, commands: Commands) -> Server | None:
    """Fork the server of `commands` for `root`, or say why not and return None (commands
    then run on their own, as without a watcher)."""
    if not sys.platform.startswith("linux"):
        return None
    path = proto.socket_path(str(root))
    if len(os.fsencode(path)) > proto.MAX_SOCKET_PATH:
        log("detail", f"not serving commands: the socket path is too long ({path})")
        return None
    if _threads() != 1:
        log("detail", "not serving commands: this process already runs threads")
        return None
    try:
        folder = str(private_dir(Path(os.path.dirname(path))))
    except OSError as exc:
        log("warn", f"cannot serve commands on {path}: {exc}")
        return None
    except UnsafePath as exc:  # `.kenomem` changed since the vault was opened
        hint = f" ({exc.hint})" if exc.hint else ""
        log("warn", f"not serving commands: {exc.message}{hint}")
        return None
    problem = proto.folder_problem(folder)
    if problem:  # callers would not use the socket: no server, and say why
        log("warn", f"not serving commands: {problem}")
        return None
    if _answering(path):
        log("warn", f"another watcher serves commands on {path}; this one does not")
        return None
    try:
        listener = _listen(path)
    except OSError as exc:
        log("warn", f"cannot serve commands on {path}: {exc}")
        return None
    inode = os.stat(path).st_ino
    read_end, write_end = os.pipe()
    ready_read, ready_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the server
        code = 0
        try:
            os.close(write_end)
            os.close(ready_read)
            code = _serve(listener, read_end, ready_write, root, path, inode, commands)
        finally:
            os._exit(code)
    os.close(read_end)
    os.close(ready_write)
    listener.close()
    # Wait for its imports, so that once the watcher beats, calls are served at once.
    ready, _, _ = select.select([ready_read], [], [], READY_SECONDS)
    os.close(ready_read)
    if not ready:
        log("warn", f"the command server is slow to start (process {pid})")
    log("detail", f"serving read-only commands on {path} (process {pid})")
    return Server(pid, write_end, path, inode)


def check(server: Server | None, log: Log) -> None:
    """Report, once, a server that ended while the watcher runs on."""
    if server is None or server.reported:
        return
    try:
        pid, status = os.waitpid(server.pid, os.WNOHANG)
    except ChildProcessError:
        pid, status = server.pid, 0
    if pid:
        server.reported = True
        _remove(server.path, server.inode)
        if os.waitstatus_to_exitcode(status) == CHANGED:
            log(
                "warn",
                "kenomem changed on disk since this watcher started: its command server "
                "stopped and commands run on their own; restart the watcher to serve them",
            )
        else:
            log("warn", f"the command server stopped (status {status}); commands run on their own")


def stop(server: Server | None) -> None:
    if server is None:
        return
    os.close(server.pipe)
    deadline = time.monotonic() + STOP_SECONDS
    try:
        while os.waitpid(server.pid, os.WNOHANG)[0] == 0:
            if time.monotonic() > deadline:
                os.kill(server.pid, signal.SIGKILL)
                os.waitpid(server.pid, 0)
                break
            time.sleep(0.01)
    except ChildProcessError:
        pass  # already reaped by check()
    _remove(server.path, server.inode)


# -- the server process -------------------------------------------------------------------


def _serve(
    listener: socket.socket,
    stop_pipe: int,
    ready: int,
    root: Path,
    path: str,
    inode: int,
    commands: Commands,
) -> int:
    """Serve until the watcher ends (0) or a fork finds the code changed (`CHANGED`)."""
    os.setsid()  # a Ctrl-C at the watcher's terminal is the watcher's to handle
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the system
    _stdin_from_devnull()
    # numpy's BLAS starts a pool of threads in each process that uses it, a fork included:
    # for the small products of a served call (a query against the vectors) one thread
    # is faster than starting a pool again in every fork. Read when numpy is imported.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    loaded = preload(commands)
    gc.freeze()  # the forks then do not copy the imported objects' pages to collect them
    os.write(ready, b"1")
    os.close(ready)
    home = os.path.realpath(root)
    changed_read, changed_write = os.pipe()  # a fork that finds the code changed says so
    os.set_blocking(changed_write, False)  # once is enough: a full pipe has said it
    try:
        while True:
            try:
                readable, _, _ = select.select([listener.fileno(), stop_pipe, changed_read], [], [])
            except InterruptedError:
                continue
            if stop_pipe in readable:
                return 0
            if changed_read in readable:
                return CHANGED
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            if not _same_user(conn):
                conn.close()
                continue
            _warm(commands)
            try:
                pid = os.fork()
            except OSError:
                conn.close()
                continue
            if pid == 0:
                listener.close()
                os.close(stop_pipe)
                os.close(changed_read)
                forkcall.handle(  # never returns
                    conn,
                    home,
                    run=commands.run,
                    parse=commands.parse,
                    loaded=loaded,
                    changed=changed_write,
                )
            conn.close()
    finally:
        _remove(path, inode)


def preload(commands: Commands) -> tuple[fingerprint.Entry, ...]:
    """Import what the served calls need, and return the fingerprint of the code loaded."""
    import importlib

    for name in commands.preload:
        try:
            importlib.import_module(name)
        except Exception:  # an engine not installed is only not preloaded
            pass
    commands.parse(["list"])  # whatever the parser reads on its first use, read now
    _warm(commands)
    return fingerprint.take(fingerprint.loaded(commands.files))


def _warm(commands: Commands) -> None:
    if commands.warm is not None:
        try:
            commands.warm()
        except Exception:  # the calls meet the same problem, and report it
            pass


# -- small helpers -------------------------------------------------------------------------


def _listen(path: str) -> socket.socket:
    try:
        os.unlink(path)  # a stale socket of a watcher that died
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)  # the socket is the user's alone
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    listener.setblocking(False)
    return listener


def _answering(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.geteuid()


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: do not fork


def _stdin_from_devnull() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    for fd in (1, 2):  # keep the watcher's log streams, but make sure the numbers are taken
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(devnull, fd)
    if devnull > 2:
        os.close(devnull)


def _remove(path: str, inode: int) -> None:
    """Remove the socket, unless another watcher has put its own there since."""
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except OSError:
        pass
