"""Whom the command server's socket trusts: the command line hands its terminal and
environment only to a socket, in a folder, and to a server that are the caller's own; it
never sends the variables a call does not read (API keys); `.kenomem/` is the user's
alone whatever the umask; and a watcher does not serve from a folder others control."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.cli.served import client as forkclient
from kenomem.errors import UnsafePath
from kenomem.files.paths import private_dir
from tests.cli.helpers import DEADLINE, SERVED_NOTE, Watch, kenomem
from tests.conftest import TEMPLATE
from tests.helpers import accept

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the command server runs on Linux"
)

NOT_USED = "the watcher's command server is not used"
OTHER_UID = 12345  # a user the tests pretend is someone else
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a file to another user takes root",
)


class FakeServer:
    """A listener at `path` that records every connection and request it gets, and
    declines each call (the caller then runs it itself)."""

    def __init__(self, path: str) -> None:
        self.connections = 0
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            self.listener.bind(path)
        finally:
            os.umask(old)
        self.listener.listen(8)
        self.listener.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(DEADLINE)
                try:
                    self.requests.append(_read_request(conn))
                    conn.sendall(forkclient.DECLINED + bytes(8))
                except OSError:
                    pass

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(DEADLINE)
        self.listener.close()

    def environ(self) -> dict[str, str]:
        assert len(self.requests) == 1
        _identity, _args, _cwd, environ, _umask, _encodings = marshal.loads(self.requests[0])
        assert isinstance(environ, dict)
        return environ


def _read_request(conn: socket.socket) -> bytes:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    for fd in fds:
        os.close(fd)
    size = int.from_bytes(data[:8], "little")
    body = data[8:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            break
        body += chunk
    return body


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A folder of the user's own outside the vault, with a short path."""
    base = Path(tempfile.mkdtemp(prefix="km", dir="/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def state_folder(vault: Path) -> Path:
    folder = vault / ".kenomem"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def recall(vault: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    done = kenomem("recall", "alpaca", "--vault", str(vault), "--json", "-v", **extra)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]  # it ran, here
    return done


# -- the client checks the socket, its folder and its server before it sends anything -----


def test_a_socket_of_the_users_own_is_used(short_vault: Path) -> None:
    # The fake server below is reached when all is well: the tests that follow, where it
    # gets nothing, could fail.
    server = FakeServer(forkclient.socket_path(str(state_folder(short_vault).parent)))
    try:
        recall(short_vault)
    finally:
        server.stop()
    assert server.connections == 1 and len(server.requests) == 1


def _open_folder(vault: Path, _elsewhere: Path) -> tuple[FakeServer, str]:
    os.chmod(state_folder(vault), 0o775)  # as made under umask 002 in a team folder
    server = FakeServer(forkclient.socket_path(str(vault)))
    return server, ".kenomem is writable by other users (mode 775)"


def _open_socket(vault: Path, _elsewhere: Path) -> tuple[FakeServer, str]:
    path = forkclient.socket_path(str(state_folder(vault).parent))
    server = FakeServer(path)
    os.chmod(path, 0o666)
    return server, "serve.sock is usable by other users (mode 666)"


def _linked_socket(vault: Path, elsewhere: Path) -> tuple[FakeServer, str]:
    server = FakeServer(str(elsewhere / "real.sock"))
    os.symlink(elsewhere / "real.sock", forkclient.socket_path(str(state_folder(vault).parent)))
    return server, "serve.sock is not a socket"


def _linked_folder(vault: Path, elsewhere: Path) -> tuple[FakeServer, str]:
    os.chmod(elsewhere, 0o700)
    server = FakeServer(str(elsewhere / forkclient.SOCKET_NAME))
    (vault / ".kenomem").symlink_to(elsewhere)
    return server, ".kenomem is not a folder"


def _foreign_socket(vault: Path, _elsewhere: Path) -> tuple[FakeServer, str]:
    path = forkclient.socket_path(str(state_folder(vault).parent))
    server = FakeServer(path)
    os.chown(path, OTHER_UID, -1)
    return server, f"serve.sock belongs to another user (uid {OTHER_UID})"


def _foreign_folder(vault: Path, _elsewhere: Path) -> tuple[FakeServer, str]:
    folder = state_folder(vault)
    server = FakeServer(forkclient.socket_path(str(vault)))
    os.chown(folder, OTHER_UID, -1)  # mode 0700, but another user's
    return server, f".kenomem belongs to another user (uid {OTHER_UID})"


@pytest.mark.parametrize(
    "make",
    [
        _open_folder,
        _open_socket,
        _linked_socket,
        pytest.param(_foreign_socket, marks=as_root),
    ],
)
def test_a_socket_others_control_is_never_used(
    short_vault: Path, elsewhere: Path, make: Callable[[Path, Path], tuple[FakeServer, str]]
) -> None:
    server, why = make(short_vault, elsewhere)
    try:
        done = recall(short_vault, AWS_SECRET_ACCESS_KEY="not-for-them")
    finally:
        server.stop()
    assert (server.connections, server.requests) == (0, [])
    assert SERVED_NOTE not in done.stderr
    assert NOT_USED in done.stderr and why in done.stderr
    quiet = kenomem("recall", "alpaca", "--vault", str(short_vault), "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""  # said with --verbose only


def test_a_state_folder_that_is_a_link_is_never_used(short_vault: Path, elsewhere: Path) -> None:
    # Neither its socket (the client checks the folder first) nor anything else in it: the
    # command refuses the vault, with what to do (`paths.require_vault`).
    server, why = _linked_folder(short_vault, elsewhere)
    try:
        done = kenomem("recall", "alpaca", "--vault", str(short_vault), "-v")
    finally:
        server.stop()
    assert (server.connections, server.requests) == (0, [])
    assert NOT_USED in done.stderr and why in done.stderr
    assert done.returncode == 1 and "not a folder of the vault's own" in done.stderr


@as_root
def test_a_state_folder_of_another_user_is_never_used(short_vault: Path, elsewhere: Path) -> None:
    # Another user could plant what kenomem loads there: the client leaves its socket
    # alone, and the command refuses the vault, with what to do (`paths.state_dir`).
    server, why = _foreign_folder(short_vault, elsewhere)
    try:
        done = kenomem("recall", "alpaca", "--vault", str(short_vault), "-v")
    finally:
        server.stop()
    assert (server.connections, server.requests) == (0, [])
    assert NOT_USED in done.stderr and why in done.stderr
    assert done.returncode == 1 and "belongs to another user" in done.stderr
    assert "chown" in done.stderr  # the fix is named


LISTEN_AS_ANOTHER_USER = textwrap.dedent(
    """
    import os, socket, sys
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.umask(0o077)
    listener.bind(sys.argv[1])  # the socket file is the caller's ...
    os.setuid(int(sys.argv[2]))  # ... the process listening on it is not
    listener.listen(1)
    print("ready", flush=True)
    listener.settimeout(float(sys.argv[3]))
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        print("no connection")
        sys.exit()
    conn.settimeout(float(sys.argv[3]))
    got = b""
    try:
        while chunk := conn.recv(65536):
            got += chunk
    except OSError:
        pass
    print(f"received {len(got)} bytes")
    """
)


@as_root
def test_a_server_running_as_another_user_gets_nothing(short_vault: Path) -> None:
    path = forkclient.socket_path(str(state_folder(short_vault).parent))
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTEN_AS_ANOTHER_USER, path, str(OTHER_UID), str(DEADLINE)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert listener.stdout is not None
        assert listener.stdout.readline().strip() == "ready"
        done = recall(short_vault, AWS_SECRET_ACCESS_KEY="not-for-them")
        said, _ = listener.communicate(timeout=2 * DEADLINE)
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait()
    assert said.strip() == "received 0 bytes"  # it connected, checked, and sent nothing
    assert f"its server runs as another user (uid {OTHER_UID})" in done.stderr
    assert SERVED_NOTE not in done.stderr


def test_the_peer_is_the_user_itself_on_a_socket_pair() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert forkclient.peer_uid(a) == os.geteuid()


# -- only the variables a served call reads are sent ---------------------------------------


def test_the_client_sends_only_the_listed_variables(short_vault: Path) -> None:
    server = FakeServer(forkclient.socket_path(str(state_folder(short_vault).parent)))
    try:
        recall(
            short_vault,
            AWS_SECRET_ACCESS_KEY="not-for-them",
            SOME_API_KEY="nor-this",
            TERM="xterm-256color",
            TZ="Europe/Paris",
            LC_TIME="C",
            KENOMEM_VAULT=str(short_vault),
        )
    finally:
        server.stop()
    sent = server.environ()
    assert "AWS_SECRET_ACCESS_KEY" not in sent and "SOME_API_KEY" not in sent
    assert "PATH" not in sent
    assert set(sent) <= forkclient.SERVED_ENV | {k for k in sent if k.startswith("LC_")}
    assert sent["TERM"] == "xterm-256color" and sent["TZ"] == "Europe/Paris"
    assert sent["LC_TIME"] == "C" and sent["KENOMEM_VAULT"] == str(short_vault)
    assert sent["NO_COLOR"] == "1" and sent["HOME"] == os.environ["HOME"]


names = st.text(st.characters(codec="ascii", exclude_characters="=\0"), min_size=1)


@given(st.dictionaries(names, st.text(), max_size=20))
def test_the_served_environment_is_the_listed_part(environ: dict[str, str]) -> None:
    environ = {**environ, "AWS_SECRET_ACCESS_KEY": "x", "TERM": "dumb", "LC_ALL": "C"}
    served = forkclient.served_environ(environ)
    assert {"TERM", "LC_ALL"} <= set(served) and "AWS_SECRET_ACCESS_KEY" not in served
    for name, value in environ.items():
        listed = name in forkclient.SERVED_ENV or name.startswith("LC_")
        assert (served.get(name) == value) if listed else (name not in served)


ADOPT = textwrap.dedent(
    """
    import json, os, socket, sys
    from kenomem.cli.argspec import fast_parse
    from kenomem.cli.served import call as forkcall, client as forkclient
    vault, out = sys.argv[1], os.dup(1)
    mine, theirs = socket.socketpair(socket.AF_UNIX)
    null = os.open(os.devnull, os.O_RDWR)
    environ = {
        "AWS_SECRET_ACCESS_KEY": "not-for-them", "PATH": "/usr/bin", "TERM": "dumb",
        "KENOMEM_VAULT": vault, "LC_ALL": "C",
    }
    call = forkclient.request(["list"], "/", environ, 0o022, (("utf-8", "strict"),) * 3)
    rights = forkclient.fd_rights([null] * 3)
    mine.sendmsg([call], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
    request, fds = forkcall._receive(theirs)
    taken = forkcall._accept_call(request, fds, os.path.realpath(vault), fast_parse)
    os.write(out, json.dumps([taken is not None, dict(os.environ)]).encode())
    """
)


def test_a_fork_runs_with_the_listed_variables_only(short_vault: Path) -> None:
    # The server's side, whatever a caller sends: the fork takes on the listed variables
    # and drops the rest (its environment as the command then reads it).
    done = subprocess.run(
        [sys.executable, "-c", ADOPT, str(short_vault)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    taken, environ = json.loads(done.stdout)
    assert taken
    assert environ == {"TERM": "dumb", "KENOMEM_VAULT": str(short_vault), "LC_ALL": "C"}


FAKE_LLM = textwrap.dedent(
    """\
    #!/bin/sh
    cat > /dev/null
    echo "$SOME_API_KEY" > "$(dirname "$0")/key-seen"
    echo '["llama"]'
    """
)


def test_a_call_that_may_run_the_llm_command_runs_locally(
    short_vault: Path, elsewhere: Path, tmp_path: Path
) -> None:
    # The LLM command needs the caller's own environment (its keys), which is never
    # sent: such a call is declined and runs where that environment is.
    script = elsewhere / "llm"
    script.write_text(FAKE_LLM)
    script.chmod(0o755)
    config = short_vault / "kenomem.toml"
    text = config.read_text().replace("# llm_expand = false", "llm_expand = true")
    config.write_text(text.replace('# expand_command = ""', f'expand_command = "{script}"'))
    accept(short_vault)
    watch = Watch(short_vault, tmp_path / "watch.log")
    try:
        done = recall(short_vault, SOME_API_KEY="the-callers-key")
        listed = kenomem("list", "--vault", str(short_vault), "-v")
    finally:
        watch.stop()
    assert SERVED_NOTE not in done.stderr
    assert (elsewhere / "key-seen").read_text().strip() == "the-callers-key"
    assert SERVED_NOTE in listed.stderr  # a call that runs no LLM command is served


# -- .kenomem is the user's alone ------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("umask", [0o002, 0o000])
def test_the_state_folder_is_made_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    vault = tmp_path / "v"
    shutil.copytree(TEMPLATE, vault)
    env = {**os.environ, forkclient.ENV_OFF: "1"}
    for args in (["remember", "Alpacas hum."], ["recall", "alpaca"]):
        subprocess.run(
            [sys.executable, "-m", "kenomem", *args, "--vault", str(vault)],
            env=env,
            umask=umask,
            capture_output=True,
            timeout=60,
            check=True,
        )
        assert _mode(vault / ".kenomem") == 0o700, args
        shutil.rmtree(vault / ".kenomem")


def test_private_dir_makes_tightens_and_never_follows(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "made")
    assert _mode(made) == 0o700
    opened = tmp_path / "opened"
    opened.mkdir()
    opened.chmod(0o775)
    (opened / "lock").write_text("")
    assert _mode(private_dir(opened)) == 0o700 and (opened / "lock").exists()
    target = tmp_path / "target"
    target.mkdir()
    target.chmod(0o755)
    (tmp_path / "linked").symlink_to(target)
    with pytest.raises(UnsafePath, match="not a folder of the vault's own"):
        private_dir(tmp_path / "linked")
    assert _mode(target) == 0o755  # what a symlink points to is not ours to change
    with pytest.raises(FileNotFoundError):
        private_dir(tmp_path / "gone" / ".kenomem")  # a vanished vault is not recreated
    assert not (tmp_path / "gone").exists()


@as_root
def test_another_users_state_folder_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / ".kenomem"
    folder.mkdir()
    folder.chmod(0o775)
    os.chown(folder, OTHER_UID, -1)
    with pytest.raises(UnsafePath, match="belongs to another user"):
        private_dir(folder)
    assert _mode(folder) == 0o775


def test_an_open_state_folder_is_closed_by_the_next_write(short_vault: Path) -> None:
    folder = state_folder(short_vault)
    os.chmod(folder, 0o775)
    done = kenomem("remember", "Alpacas hum at dusk", "--vault", str(short_vault), local=True)
    assert done.returncode == 0, done.stderr
    assert _mode(folder) == 0o700
    found = kenomem("recall", "hum", "--vault", str(short_vault), "--json", local=True)
    assert "Alpacas hum" in found.stdout


# -- the watcher serves only from a folder of its own --------------------------------------


def test_the_watcher_closes_an_open_folder_before_serving(
    short_vault: Path, tmp_path: Path
) -> None:
    folder = state_folder(short_vault)
    os.chmod(folder, 0o777)
    watch = Watch(short_vault, tmp_path / "watch.log")
    try:
        assert _mode(folder) == 0o700
        assert _mode(folder / forkclient.SOCKET_NAME) & 0o077 == 0
        assert SERVED_NOTE in recall(short_vault).stderr
    finally:
        watch.stop()


@as_root
def test_the_watcher_does_not_serve_from_another_users_folder(short_vault: Path) -> None:
    folder = state_folder(short_vault)
    os.chown(folder, OTHER_UID, -1)
    done = kenomem("watch", "--vault", str(short_vault), "--verbose")  # refused at once
    assert done.returncode == 1 and f"{folder} belongs to another user" in done.stderr
    assert not (folder / forkclient.SOCKET_NAME).exists()
