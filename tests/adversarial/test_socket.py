"""The watcher's command socket is trusted only when it is the caller's own
(docs/security.md): a socket, or a `.kenomem/` folder, that another user owns or may write
to is never connected to; a trusted one is sent only what the call needs, never the
environment's secrets; `.kenomem/` is made 0700 whatever the umask.

A fake server, made by the test at `.kenomem/serve.sock`, records what a `kenomem recall`
hands it. (You are likely root here: `chown` plays the other user.)
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.hostile import clean_exit
from tests.conftest import TEMPLATE

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the command server runs on Linux"
)
OTHER_UID = 65534  # nobody
SECRET_ENV = {
    "AWS_SECRET_ACCESS_KEY": "Zx9/4kQ2bT7mN1pR8sV3wY6cF0hJ5gL2dA+eK7uW",
    "GITHUB_TOKEN": "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "OPENAI_API_KEY": "sk-proj-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L",
}


class FakeServer:
    """Listens on the vault's socket path; keeps what each caller sent, then hangs up."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.received = b""
        self.fds = 0
        self.calls = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.calls += 1
            conn.settimeout(2)
            try:
                while True:
                    data, ancillary, _flags, _addr = conn.recvmsg(1 << 16, socket.CMSG_SPACE(64))
                    for level, kind, payload in ancillary:
                        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                            fds = [
                                int.from_bytes(payload[i : i + 4], sys.byteorder)
                                for i in range(0, len(payload), 4)
                            ]
                            self.fds += len(fds)
                            for fd in fds:
                                os.close(fd)
                    if not data:
                        break
                    self.received += data
            except OSError:
                pass
            finally:
                conn.close()  # the caller then runs the command itself

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def vault() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="kms", dir="/tmp"))  # a socket path must be short
    target = base / "v"
    shutil.copytree(TEMPLATE, target)
    (target / "semantic" / "fox.md").write_text("# Fox\n\nthe quick brown fox\n")
    yield target
    shutil.rmtree(base, ignore_errors=True)


def recall(vault: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KENOMEM_NO_SERVE"}
    env.update(SECRET_ENV, KENOMEM_VAULT=str(vault), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", "recall", "--no-touch", "fox"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    clean_exit(done.returncode, done.stdout, done.stderr, "recall")
    return done


def serve_fake(vault: Path, *, folder_mode: int = 0o700, sock_mode: int = 0o600) -> FakeServer:
    state = vault / ".kenomem"
    state.mkdir(exist_ok=True)
    server = FakeServer(state / "serve.sock")
    os.chmod(state / "serve.sock", sock_mode)
    os.chmod(state, folder_mode)
    return server


def ran_locally(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert "fox" in done.stdout.lower()


@pytest.mark.slow
def test_a_trusted_socket_is_sent_no_secret_of_the_environment(vault: Path) -> None:
    recall(vault)  # the index is built, the folder made as kenomem makes it
    server = serve_fake(vault)
    try:
        done = recall(vault)
    finally:
        server.close()
    ran_locally(done)
    if not server.received:
        pytest.skip("the client did not call this socket (it may want a live watcher too)")
    for name, value in SECRET_ENV.items():
        assert value.encode() not in server.received, f"${name} was handed to the socket"


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another user needs root")
@pytest.mark.parametrize("who", ["socket", "folder"])
def test_a_socket_another_user_owns_is_never_used(vault: Path, who: str) -> None:
    recall(vault)
    server = serve_fake(vault, folder_mode=0o755 if who == "folder" else 0o700)
    owned = vault / ".kenomem" / ("serve.sock" if who == "socket" else "")
    os.chown(owned, OTHER_UID, OTHER_UID)
    try:
        done = recall(vault)
    finally:
        server.close()
    if who == "socket":
        ran_locally(done)
    # A .kenomem/ of another user's may be refused outright: either way, nothing sent.
    assert (server.calls, server.received, server.fds) == (0, b"", 0)


@pytest.mark.parametrize(
    ("folder_mode", "sock_mode"),
    [(0o777, 0o600), (0o775, 0o600), (0o700, 0o666)],
    ids=["folder 777", "folder 775", "socket 666"],
)
def test_a_socket_others_may_reach_is_never_used(
    vault: Path, folder_mode: int, sock_mode: int
) -> None:
    recall(vault)
    server = serve_fake(vault, folder_mode=folder_mode, sock_mode=sock_mode)
    try:
        done = recall(vault)
    finally:
        server.close()
    ran_locally(done)
    assert (server.received, server.fds) == (b"", 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another user needs root")
def test_a_socket_link_to_another_users_socket_is_never_used(vault: Path, tmp_path: Path) -> None:
    recall(vault)
    elsewhere = Path(tempfile.mkdtemp(prefix="kmo", dir="/tmp"))
    try:
        server = FakeServer(elsewhere / "s")
        os.chown(elsewhere / "s", OTHER_UID, OTHER_UID)
        state = vault / ".kenomem"
        os.chmod(state, 0o700)
        (state / "serve.sock").symlink_to(elsewhere / "s")
        try:
            done = recall(vault)
        finally:
            server.close()
        ran_locally(done)
        assert (server.received, server.fds) == (b"", 0)
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


@pytest.mark.parametrize("umask", [0o002, 0o000])
def test_the_state_folder_is_the_users_alone_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "v"
    shutil.copytree(TEMPLATE, target)
    env = {**os.environ, "KENOMEM_VAULT": str(target), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", "remember", "the quick brown fox"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.umask(umask),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    mode = stat.S_IMODE((target / ".kenomem").stat().st_mode)
    assert mode & 0o077 == 0, f".kenomem/ was made {mode:o} under umask {umask:03o}"


def test_a_state_folder_others_may_write_is_made_the_users_again(vault: Path) -> None:
    recall(vault)
    os.chmod(vault / ".kenomem", 0o777)
    recall(vault)
    mode = stat.S_IMODE((vault / ".kenomem").stat().st_mode)
    assert mode & 0o022 == 0, f".kenomem/ left {mode:o}"
