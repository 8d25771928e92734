"""One call, in a fork of the command server (`server.py`): take on the caller's folder,
environment (only the variables of `client.SERVED_ENV`), umask and standard streams, run
the command through the function the server was given (the same as a local call's), and
send the exit code back; or decline, having changed nothing the caller sees, so that the
caller runs the command itself.

A call is declined, too, when the files the server's code came from changed since it
loaded them (`fingerprint.py`): the caller's own process would run other code.

A call that may run the vault's LLM command (recall's query expansion, in `recall`,
`context` and `hook`) is declined: the command needs the caller's own environment (its
API keys, PATH, configuration), which is never sent, and in the caller's process it gets
it as it always did."""

from __future__ import annotations

import marshal
import os
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from kenomem.cli.served import client as proto
from kenomem.cli.served import fingerprint

Run = Callable[[str, dict[str, Any]], int]
Parse = Callable[[list[str]], tuple[str, dict[str, Any]] | None]

REQUEST_SECONDS = 5.0  # a caller that connects and says nothing is dropped
MAX_REQUEST = 16 << 20
WAKE_SECONDS = 0.1  # how often an interrupt is sent again until the command has seen it


def handle(
    conn: socket.socket,
    home: str,
    *,
    run: Run,
    parse: Parse,
    loaded: tuple[fingerprint.Entry, ...],
    changed: int,
) -> None:
    """Take the call on `conn` and `run` it, or decline it; in a fork of the server, never
    returns. `loaded` is the fingerprint of the server's code; a byte written to `changed`
    tells the server it no longer holds."""
    taken = False
    caller: _Caller | None = None
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocesses wait for their own
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.settimeout(REQUEST_SECONDS)
        request, fds = _receive(conn)
        if fingerprint.changed(loaded) is not None:
            try:
                os.write(changed, b"!")
            except OSError:  # full: the server has been told already
                pass
            _reply(conn, proto.DECLINED, proto.CHANGED)
            return
        call = _accept_call(request, fds, home, parse)
        if call is None:
            _reply(conn, proto.DECLINED, 0)
            return
        command, params = call
        _reply(conn, proto.TAKEN, os.getpid())
        taken = True
        conn.settimeout(None)
        from kenomem.cli.output import Output

        Output(quiet=params.get("quiet", False), verbose=params.get("verbose", False)).detail(
            f"{command}: run by the watcher's command server (process {os.getppid()})"
        )
        caller = _Caller(conn)
        try:
            code = run(command, params)
        finally:
            caller.over()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # whatever happens, the caller gets an answer
        if taken:  # --debug, or a fault of the server's own: the traceback, as at home
            try:
                traceback.print_exc()
            except (OSError, ValueError):
                pass
        else:
            try:
                _reply(conn, proto.DECLINED, 0)
            except OSError:
                pass
    finally:
        if taken:
            # A caller gone waits for no output, and flushing it could block for good on
            # a pipe nobody reads any more: it is dropped.
            if caller is None or not caller.gone:
                _flush(sys.stdout, sys.stderr)
            try:
                _reply(conn, proto.DONE, code)
            except OSError:
                pass
        os._exit(0)


def _flush(*streams: Any) -> None:
    for stream in streams:
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


class _Caller:
    """The caller's side of a taken call, watched while the command runs: it stops the
    command as Ctrl-C would if the caller says so or goes away.

    The caller sends INTERRUPT on its own Ctrl-C (a signal it sent would need this
    process's pid as the caller sees it, which another pid namespace would change); its
    end closing counts too (a caller killed on a timeout). A thread waits for either and
    sends SIGINT to the main thread itself: a process-wide signal may land on another
    thread and leave the main one blocked, writing to a full pipe. It sends it again
    until the main thread has raised KeyboardInterrupt: one that lands just before a
    blocking write starts is seen only once that write returns, which a pipe nobody
    reads never lets happen."""

    def __init__(self, conn: socket.socket) -> None:
        import threading

        self.gone = False  # the caller's end closed: nobody waits for the output
        self._conn = conn
        self._over = threading.Event()
        self._raised = threading.Event()
        self._main = threading.main_thread().ident
        signal.signal(signal.SIGINT, self._interrupt)
        threading.Thread(target=self._listen, name="caller", daemon=True).start()

    def _interrupt(self, signum: int, frame: object) -> None:
        if self._raised.is_set() or self._over.is_set():
            return  # one Ctrl-C, one KeyboardInterrupt: the repeats are only to wake it
        self._raised.set()
        raise KeyboardInterrupt

    def _listen(self) -> None:
        try:
            self.gone = not self._conn.recv(1)  # INTERRUPT, or nothing: the end closed
        except OSError:
            self.gone = True
        while not self._over.is_set() and not self._raised.is_set() and self._main is not None:
            signal.pthread_kill(self._main, signal.SIGINT)
            self._over.wait(WAKE_SECONDS)

    def over(self) -> None:
        """The command is over: from now on, nothing interrupts it."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # one sent just now is dropped
        self._over.set()


def _accept_call(
    request: bytes, fds: list[int], home: str, parse: Parse
) -> tuple[str, dict[str, Any]] | None:
    """The caller's command, once this process has taken on the caller's working folder,
    environment, umask and streams; None (with nothing changed that the caller sees) when
    the call is not ours to run."""
    try:
        identity, args, cwd, env, umask, encodings = marshal.loads(request)
    except (EOFError, ValueError, TypeError):
        return None
    if identity != proto.identity() or len(fds) != 3:
        return None
    from kenomem.files.paths import resolve_vault

    parsed = parse(list(args))
    if parsed is None or parsed[0] not in proto.SERVED:
        return None
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(proto.served_environ(env))
    time.tzset()
    if os.path.realpath(resolve_vault(parsed[1].get("vault"))) != home:
        return None
    if _may_run_llm(parsed[0], home):
        return None
    os.umask(umask)
    _adopt_streams(fds, encodings)
    sys.argv = ["kenomem", *args]
    return parsed


def _may_run_llm(command: str, home: str) -> bool:
    """Whether `command` on the vault at `home` may run its LLM command (a broken
    kenomem.toml raises: the call is declined, and the caller reports it)."""
    if command not in ("recall", "context", "hook"):
        return False
    from pathlib import Path

    from kenomem.config import load_settings
    from kenomem.recall.search import expansion_command

    return bool(expansion_command(load_settings(Path(home))))


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < 8:
        raise ConnectionError("short request")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_REQUEST:
        raise ConnectionError("request too large")
    body = bytearray(data[8:])
    while len(body) < size:
        chunk = conn.recv(min(1 << 16, size - len(body)))
        if not chunk:
            raise ConnectionError("short request")
        body += chunk
    return bytes(body), fds


def _adopt_streams(fds: list[int], encodings: Any) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    (in_enc, in_err), (out_enc, out_err), (err_enc, err_err) = encodings
    # The caller's encodings and buffering: line by line on a terminal, as Python does.
    sys.stdin = _stream(0, "r", in_enc, in_err, -1)
    sys.stdout = _stream(1, "w", out_enc, out_err, 1 if os.isatty(1) else -1)
    sys.stderr = _stream(2, "w", err_enc, err_err, 1)


def _stream(fd: int, mode: str, encoding: str, errors: str, buffering: int) -> Any:
    # Standard streams live as long as the process: no context manager to close them.
    return open(fd, mode, buffering, encoding, errors, closefd=False)


def _reply(conn: socket.socket, kind: bytes, number: int) -> None:
    conn.sendall(kind + number.to_bytes(8, "little", signed=True))
