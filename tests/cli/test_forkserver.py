"""The watcher's command server, end to end: a real `kenomem watch`, real `kenomem`
processes handing it their calls, and the same answers (output, messages, exit codes)
as a call that runs on its own."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kenomem.cli.served import client as forkclient
from tests import helpers
from tests.cli.helpers import (
    DEADLINE,
    SERVED_NOTE,
    Watch,
    console_script,
    env,
    kenomem,
    note,
    wait_for,
)
from tests.conftest import TEMPLATE, write
from tests.helpers import terminal_env

pytestmark = [
    pytest.mark.slow,  # a real watcher and its command server
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="the command server runs on Linux"
    ),
]

NOW = ["--now", "2026-11-20T12:00:00"]


@pytest.fixture
def watched(short_vault: Path, tmp_path: Path) -> Iterator[Watch]:
    watch = Watch(short_vault, tmp_path / "watch.log")
    yield watch
    watch.stop()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for every purpose here.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


# -- served calls answer exactly as local ones --------------------------------------------


@pytest.mark.both_engines
def test_a_served_recall_answers_as_a_local_one(watched: Watch) -> None:
    vault = str(watched.vault)
    args = ["recall", "alpaca", "--vault", vault, "--json", "--no-touch", *NOW]
    served = kenomem(*args, "--verbose")
    local = kenomem(*args, "--verbose", local=True)
    assert served.returncode == local.returncode == 0
    assert SERVED_NOTE in served.stderr
    assert SERVED_NOTE not in local.stderr
    assert served.stdout == local.stdout
    found = [r["path"] for r in json.loads(served.stdout)["results"]]
    assert found == ["semantic/alpaca.md", "semantic/llama.md"]
    quiet = kenomem(*args)
    assert quiet.stdout == served.stdout and quiet.stderr == ""


def test_plain_text_and_other_commands_are_served_alike(watched: Watch) -> None:
    vault = str(watched.vault)
    for args in (
        ["recall", "llama", "--no-touch", *NOW],
        ["list", "--type", "semantic"],
        ["show", "mem_l1"],
        ["context", "--json"],
    ):
        served = kenomem(*args, "--vault", vault, "-v")
        local = kenomem(*args, "--vault", vault, "-v", local=True)
        assert SERVED_NOTE in served.stderr, args
        assert (served.returncode, served.stdout) == (local.returncode, local.stdout), args


def on_a_terminal(*args: str, local: bool = False) -> tuple[bytes, str]:
    """What `kenomem args` writes to a terminal (a pseudo-terminal), colours on, and its
    stderr."""
    extra = {forkclient.ENV_OFF: "1"} if local else {}
    environ = terminal_env(env(**extra), COLUMNS="100")
    code, out, err = helpers.on_a_terminal([console_script(), *args], environ, stderr_apart=True)
    assert code == 0, err
    return out, err


def test_a_terminal_gets_the_same_colours(watched: Watch) -> None:
    args = ("list", "--vault", str(watched.vault), "-v")
    (served, how), (local, _) = on_a_terminal(*args), on_a_terminal(*args, local=True)
    assert SERVED_NOTE in how
    assert b"\x1b[" in served  # rich, because the caller's own terminal was handed over
    assert served == local


def test_errors_and_exit_codes_come_back(watched: Watch) -> None:
    served = kenomem("show", "mem_nothing", "--vault", str(watched.vault))
    local = kenomem("show", "mem_nothing", "--vault", str(watched.vault), local=True)
    assert served.returncode == local.returncode != 0
    assert served.stderr == local.stderr
    assert "error: no memory matches 'mem_nothing'" in served.stderr


def test_debug_shows_the_traceback_as_a_local_run_does(watched: Watch) -> None:
    args = ("show", "mem_nothing", "--vault", str(watched.vault), "--debug")
    served = kenomem(*args)
    local = kenomem(*args, local=True)
    assert served.returncode == local.returncode == 1
    assert "Traceback (most recent call last)" in served.stderr
    assert served.stderr.splitlines()[-1] == local.stderr.splitlines()[-1]
    assert "NotFound" in served.stderr.splitlines()[-1]


def test_the_callers_folder_and_environment_are_used(watched: Watch) -> None:
    relative = kenomem("recall", "alpaca", "--vault", ".", "--json", "-v", cwd=watched.vault)
    assert SERVED_NOTE in relative.stderr
    assert json.loads(relative.stdout)["results"]
    by_env = kenomem("recall", "alpaca", "--json", "-v", KENOMEM_VAULT=str(watched.vault))
    assert SERVED_NOTE in by_env.stderr
    assert by_env.stdout == relative.stdout or json.loads(by_env.stdout)["results"]


def test_a_served_recall_strengthens_what_it_finds(watched: Watch) -> None:
    path = watched.vault / "semantic/alpaca.md"
    before = path.read_text()
    served = kenomem("recall", "alpaca", "--vault", str(watched.vault), "-v")
    assert SERVED_NOTE in served.stderr
    after = path.read_text()
    assert "access_count: 1" in after and "access_count" not in before
    assert after.endswith("The alpaca sleeps in the barn.\n")


# -- what is not served runs on its own ---------------------------------------------------


def test_unserved_calls_run_locally(watched: Watch, tmp_path: Path) -> None:
    vault = str(watched.vault)
    remember = kenomem("remember", "Vicuñas are wild", "--vault", vault, "-v")
    assert remember.returncode == 0 and SERVED_NOTE not in remember.stderr
    helped = kenomem("recall", "--help")
    assert helped.returncode == 0 and "Usage" in helped.stdout
    switched_off = kenomem("recall", "alpaca", "--vault", vault, "-v", local=True)
    assert switched_off.returncode == 0 and SERVED_NOTE not in switched_off.stderr
    other = tmp_path / "other"
    shutil.copytree(TEMPLATE, other)
    elsewhere = kenomem("recall", "alpaca", "--vault", str(other), "-v")
    assert elsewhere.returncode == 0 and SERVED_NOTE not in elsewhere.stderr


def test_a_call_with_settings_from_the_environment_runs_locally(watched: Watch) -> None:
    # The fork reads only the variables listed in SERVED_ENV: served, the limit was lost.
    vault = str(watched.vault)
    assert (
        len(json.loads(kenomem("recall", "alpaca", "--vault", vault, "--json").stdout)["results"])
        == 2
    )
    limited = kenomem(
        "recall", "alpaca", "--vault", vault, "--json", "-v", KENOMEM_RECALL_LIMIT="1"
    )
    assert limited.returncode == 0, limited.stderr
    assert SERVED_NOTE not in limited.stderr
    assert "KENOMEM_RECALL_LIMIT is set" in limited.stderr
    assert len(json.loads(limited.stdout)["results"]) == 1


def declined(vault: Path, request: bytes) -> bool:
    """Whether the server turns down `request`, sent as the client sends it."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(forkclient.socket_path(str(vault)))
        sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fds())])
        return sock.recv(9)[:1] == forkclient.DECLINED
    finally:
        sock.close()


def test_a_call_naming_another_vault_is_declined(watched: Watch, tmp_path: Path) -> None:
    # A guess found the watched vault's socket, but the real parse names another vault.
    other = tmp_path / "other"
    shutil.copytree(TEMPLATE, other)
    assert declined(watched.vault, _request(["recall", "alpaca", "--vault", str(other)]))
    assert declined(watched.vault, _request(["remember", "x", "--vault", str(watched.vault)]))
    assert declined(watched.vault, _request(["recall", "--bogus", "--vault", str(watched.vault)]))


def test_another_protocol_python_or_version_is_declined(watched: Watch) -> None:
    args = ["recall", "alpaca", "--vault", str(watched.vault)]
    protocol, python, version = forkclient.identity()
    assert declined(watched.vault, _request(args, (protocol + 1, python, version)))
    assert declined(watched.vault, _request(args, (protocol, (2, 7), version)))
    assert declined(watched.vault, _request(args, (protocol, python, "0.0.1")))
    assert not declined(watched.vault, _request(args))
    assert declined(watched.vault, b"\x05\0\0\0\0\0\0\0junk!")


def _request(args: list[str], identity: tuple[int, tuple[int, int], str] | None = None) -> bytes:
    return forkclient.request(args, os.getcwd(), env(), 0o022, (("utf-8", "strict"),) * 3, identity)


def _fds() -> bytes:
    null = os.open(os.devnull, os.O_RDWR)
    return forkclient.fd_rights([null] * 3)


def interrupted_show(watch: Watch, how: Callable[[socket.socket], None]) -> tuple[int, str]:
    """`show` of a large memory, its output left unread so that the fork waits to write
    it, then `how` (the caller's Ctrl-C, or the caller gone): the fork's exit code (-1 if
    none came back) and its stderr."""
    import threading

    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(forkclient.socket_path(str(watch.vault)))
    fds = forkclient.fd_rights([null, out_write, err_write])
    request = _request(["show", "mem_big", "--vault", str(watch.vault)])
    sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    for fd in (null, out_write, err_write):
        os.close(fd)
    assert sock.recv(9)[:1] == forkclient.TAKEN
    assert os.read(out_read, 100)  # it writes, and the pipe fills: it waits
    time.sleep(0.2)
    how(sock)
    # Its output is read only once it has said it stopped: read at once, it could finish
    # writing before the interrupt arrives.
    said = _read_until(err_read, b"error: interrupted")
    drained = threading.Thread(target=_read_all, args=(out_read,))
    drained.start()
    reply = b""
    try:
        sock.settimeout(DEADLINE)
        reply = sock.recv(9)
    except OSError:
        pass
    drained.join(DEADLINE)
    sock.close()
    said += _read_all(err_read)
    code = int.from_bytes(reply[1:], "little", signed=True) if reply[:1] == forkclient.DONE else -1
    return code, said.decode()


def _read_until(fd: int, wanted: bytes, within: float = DEADLINE) -> bytes:
    """What `fd` gives until `wanted` is in it, or for `within` seconds."""
    import select

    got = b""
    deadline = time.monotonic() + within
    while wanted not in got and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            got += chunk
    return got


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


@pytest.fixture
def big_memory(short_vault: Path) -> Path:
    write(short_vault, "semantic/big.md", note("Big", "walrus " * 300_000, "mem_big"))
    return short_vault


def test_a_callers_ctrl_c_stops_the_fork(big_memory: Path, tmp_path: Path) -> None:
    watch = Watch(big_memory, tmp_path / "watch.log")
    try:
        code, errors = interrupted_show(watch, lambda sock: sock.sendall(forkclient.INTERRUPT))
    finally:
        watch.stop()
    assert code == 130
    assert "error: interrupted" in errors


def test_a_caller_gone_stops_the_fork(big_memory: Path, tmp_path: Path) -> None:
    watch = Watch(big_memory, tmp_path / "watch.log")
    try:
        code, errors = interrupted_show(watch, lambda sock: sock.shutdown(socket.SHUT_WR))
    finally:
        watch.stop()
    assert code == 130  # it stopped rather than writing 2 MB nobody would read
    assert "error: interrupted" in errors


def test_a_fork_whose_caller_is_gone_ends_without_its_output_read(
    big_memory: Path, tmp_path: Path
) -> None:

    watch = Watch(big_memory, tmp_path / "watch.log")
    out_read, out_write = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(forkclient.socket_path(str(big_memory)))
        fds = forkclient.fd_rights([null, out_write, null])
        request = _request(["show", "mem_big", "--vault", str(big_memory)])
        sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        reply = sock.recv(9)
        assert reply[:1] == forkclient.TAKEN
        fork = int.from_bytes(reply[1:], "little", signed=True)
        assert os.read(out_read, 100)  # it writes, and the pipe fills: it waits
        sock.close()  # the caller is gone; its output pipe stays open, unread
        wait_for(lambda: not alive(fork), "the fork to end")
    finally:
        watch.stop()
        for fd in (out_read, out_write, null):
            os.close(fd)


def _as_from_a_shell() -> None:
    """A Ctrl-C's disposition as a shell gives it: default, and not blocked, whatever
    the test's own process has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def test_ctrl_c_on_a_served_call_ends_it_as_at_home(big_memory: Path, tmp_path: Path) -> None:
    watch = Watch(big_memory, tmp_path / "watch.log")
    try:
        proc = subprocess.Popen(
            [console_script(), "show", "mem_big", "--vault", str(big_memory), "-v"],
            env=env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_as_from_a_shell,
        )
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(100)  # the fork writes; the pipe fills; it waits
        time.sleep(0.2)
        # Ctrl-C, again until it is answered, as a person would press it: the test is
        # that a Ctrl-C stops the served call, not how soon a busy machine runs it.
        said = b""
        deadline = time.monotonic() + DEADLINE
        while b"error: interrupted" not in said and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGINT)
            said += _read_until(proc.stderr.fileno(), b"error: interrupted", 0.5)
        _, errors = proc.communicate(timeout=DEADLINE)
        errors = said + errors
    finally:
        watch.stop()
    assert proc.returncode == 130, errors.decode(errors="replace")[-2000:]
    assert b"error: interrupted" in errors
    assert b"run by the watcher's command server" in errors  # served, not run here


def test_no_serve_starts_no_server(short_vault: Path, tmp_path: Path) -> None:
    watch = Watch(short_vault, tmp_path / "watch.log", "--no-serve")
    try:
        assert not (short_vault / ".kenomem" / forkclient.SOCKET_NAME).exists()
        served = kenomem("recall", "alpaca", "--vault", str(short_vault), "-v")
        assert served.returncode == 0 and SERVED_NOTE not in served.stderr
    finally:
        watch.stop()


# -- the server's life follows the watcher's ----------------------------------------------


def test_the_server_ends_with_the_watcher(watched: Watch) -> None:
    pid = watched.server_pid()
    sock = watched.vault / ".kenomem" / forkclient.SOCKET_NAME
    assert alive(pid) and sock.exists()
    watched.stop()
    assert watched.process.returncode == 0, watched.text()
    wait_for(lambda: not alive(pid), "the server to end")
    assert not sock.exists()


def test_a_killed_watcher_takes_its_server_along(watched: Watch) -> None:
    pid = watched.server_pid()
    sock = watched.vault / ".kenomem" / forkclient.SOCKET_NAME
    watched.process.kill()
    watched.process.wait(DEADLINE)
    wait_for(lambda: not alive(pid), "the server to end")
    assert not sock.exists()
    after = kenomem("recall", "alpaca", "--vault", str(watched.vault), "-v", "--json")
    assert after.returncode == 0 and SERVED_NOTE not in after.stderr
    assert json.loads(after.stdout)["results"]


def test_a_stale_socket_is_no_obstacle(short_vault: Path, tmp_path: Path) -> None:
    path = forkclient.socket_path(str(short_vault))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens
    alone = kenomem("recall", "alpaca", "--vault", str(short_vault), "-v", "--json")
    assert alone.returncode == 0 and SERVED_NOTE not in alone.stderr
    watch = Watch(short_vault, tmp_path / "watch.log")  # and a new watcher takes it over
    try:
        served = kenomem("recall", "alpaca", "--vault", str(short_vault), "-v", "--json")
        assert SERVED_NOTE in served.stderr
    finally:
        watch.stop()


def test_a_second_watcher_leaves_the_first_ones_server(watched: Watch, tmp_path: Path) -> None:
    pid = watched.server_pid()
    log = tmp_path / "second.log"
    with open(log, "w") as sink:
        second = subprocess.Popen(
            [console_script(), "watch", "--vault", str(watched.vault), "--verbose"],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env(),
        )
    try:
        wait_for(lambda: "another watcher serves commands" in log.read_text(), "the warning")
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(DEADLINE)
    assert alive(pid)
    served = kenomem("recall", "alpaca", "--vault", str(watched.vault), "-v")
    assert SERVED_NOTE in served.stderr


# -- the client's guesses, without a server ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "environ", "expected"),
    [
        (["recall", "x", "--vault", "/v/a"], {}, "/v/a"),
        (["recall", "x", "--vault=/v/b"], {"KENOMEM_VAULT": "/v/e"}, "/v/b"),
        (["recall", "x"], {"KENOMEM_VAULT": "/v/e"}, "/v/e"),
        (["recall", "--", "--vault", "/v/a"], {"KENOMEM_VAULT": "/v/e"}, "/v/e"),
        (["recall", "x", "--vault", "/v/a/../c"], {}, "/v/c"),
    ],
)
def test_the_vault_guess(args: list[str], environ: dict[str, str], expected: str) -> None:
    assert forkclient.guess_vault(args, environ) == expected


def test_the_default_vault_guess_is_in_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert forkclient.guess_vault(["recall", "x"], {}) == "/home/someone/kenomem"


def test_which_calls_are_offered() -> None:
    assert forkclient.command_of(["-q", "--verbose", "recall", "x"]) == "recall"
    assert forkclient.command_of(["-q"]) is None
    assert forkclient.answer(["remember", "x"]) is None
    assert forkclient.enabled({}) is sys.platform.startswith("linux")
    assert not forkclient.enabled({forkclient.ENV_OFF: "1"})
    assert forkclient.enabled({forkclient.ENV_OFF: "0"}) is sys.platform.startswith("linux")


def test_the_client_imports_no_library_modules() -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; before = set(sys.modules); import kenomem.cli.served.client as c; "
            "c.guess_vault(['recall', 'x'], {}); print(sorted(set(sys.modules) - before))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(probe.stdout.replace("'", '"')))
    # Their __init__ is a docstring.
    packages = {"kenomem", "kenomem.cli", "kenomem.cli.served", "kenomem.files"}
    # flags.py imports nothing; vaultfind.py, which finds the vault, `os` and `stat`.
    own = {"kenomem.cli.served.client", "kenomem.cli.flags", "kenomem.files.vaultfind"}
    assert loaded <= {*packages, *own, "__future__"}, loaded


def test_the_client_knows_the_global_flags_the_parser_knows() -> None:
    from kenomem.cli.argspec import GLOBAL_FLAGS

    assert GLOBAL_FLAGS is forkclient.GLOBAL_FLAGS  # both read cli/flags.py
