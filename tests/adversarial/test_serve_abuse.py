"""`kenomem serve` under abuse (docs/security.md, "`kenomem serve` and its tokens"): a real
server on 127.0.0.1 and real sockets that open connections and never finish them.

- a slowloris of hundreds of sockets, more than the server may keep under the limit of
  open files it is given: `/health` keeps answering throughout, every half-sent request is
  closed after its deadline, the server keeps serving a token's holder, and its log stays
  a few lines long (it used to stop accepting at the limit, `/health` timing out, and log
  each failed accept with its traceback: a million lines in seconds);
- each kind of half-sent request (nothing sent, headers cut, headers dripped, a body cut
  with a token, a body cut without one) is closed by its deadline, or at once when the
  answer is a refusal;
- a token file that others may change is not trusted, at start or while it serves.

Bounded: a few hundred sockets, 127.0.0.1 only, each test some 10 seconds.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from kenomem.serve.plan import BODY_SECONDS, HEADERS_SECONDS, RESERVED_FDS
from kenomem.serve.tokens import tokens_dir
from tests.conftest import REPO
from tests.serve.served import INIT, Server, running, session
from tests.serve.test_http import post, recall, token

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NOFILE, Linux"),
]

# The server may open this many files: it keeps `OPEN_FILES - RESERVED_FDS` connections,
# and the slowloris below opens more than twice as many.
OPEN_FILES = 400
SLOW_SOCKETS = 2 * (OPEN_FILES - RESERVED_FDS) + 250
CUT_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@pytest.fixture(autouse=True)
def _config_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def connect(server: Server) -> socket.socket:
    port = int(server.base.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed `sock` (read what it sent until the end, or a reset)."""
    sock.setblocking(False)
    try:
        while sock.recv(65536):
            pass
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset
    return True


def wait_closed(socks: list[socket.socket], seconds: float) -> list[socket.socket]:
    """The sockets still open after `seconds` (fewer as soon as they close)."""
    deadline = time.monotonic() + seconds
    left = list(socks)
    while left and time.monotonic() < deadline:
        left = [s for s in left if not closed_by_server(s)]
        time.sleep(0.2)
    return left


@contextmanager
def closing(socks: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def health(server: Server) -> int:
    return httpx2.get(f"{server.base}/health", timeout=10).status_code


def test_health_answers_through_a_slowloris_and_the_log_stays_small(vault_dir: Path) -> None:
    writer = token(vault_dir, "laptop", "write")
    with running(vault_dir, open_files=OPEN_FILES) as server, closing([]) as slow:
        answers: list[int | str] = []
        stop = threading.Event()

        def probe() -> None:
            while not stop.is_set():
                try:
                    answers.append(health(server))
                except httpx2.TransportError as exc:  # a timeout, a refused connection
                    answers.append(type(exc).__name__)
                time.sleep(0.1)

        prober = threading.Thread(target=probe)
        prober.start()
        try:
            for n in range(SLOW_SOCKETS):
                sock = connect(server)
                sock.sendall(CUT_HEADERS[: 10 + n % 50])  # never the blank line
                slow.append(sock)
            time.sleep(2)  # probed while they hang, too
        finally:
            stop.set()
            prober.join(60)
        assert len(answers) >= 3 and set(answers) == {200}, answers
        assert health(server) == 200
        # Every half-sent request is closed: the newer ones by their deadline.
        assert wait_closed(slow, HEADERS_SECONDS * 3 + 5) == []
        found = session(server.url, writer, recall("anything"))
        assert found["results"] == []
    log = server.log()
    lines = log.splitlines()
    assert len(lines) < 40, log[-3000:]
    assert "closed a connection from 127.0.0.1" in log
    assert "more in the last" in log and "(not logged one by one)" in log
    assert "Traceback" not in log and "out of system resource" not in log


def test_each_half_sent_request_is_closed_by_its_deadline(vault_dir: Path) -> None:
    writer = token(vault_dir, "laptop", "write")
    body_start = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n"
    )
    with running(vault_dir) as server, closing([]) as every:

        def opened(first: bytes, count: int) -> list[socket.socket]:
            socks = [connect(server) for _ in range(count)]
            for sock in socks:
                if first:
                    sock.sendall(first)
            every.extend(socks)
            return socks

        silent = opened(b"", 20)
        cut = opened(CUT_HEADERS, 20)
        dripped = opened(b"P", 5)
        with_token = opened(
            body_start + f"Authorization: Bearer {writer}\r\n\r\n".encode() + b'{"jsonrpc"', 5
        )
        without_token = opened(body_start + b"\r\n" + b'{"jsonrpc"', 10)
        started = time.monotonic()
        # Refused before its body was read: answered and closed at once.
        assert wait_closed(without_token, 10) == []
        dripping = threading.Event()

        def drip() -> None:  # a byte of the request line every half second
            for byte in b"OST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200:
                if dripping.wait(0.5):
                    return
                for sock in dripped:
                    try:
                        sock.send(bytes([byte]))
                    except OSError:
                        pass

        dripper = threading.Thread(target=drip)
        dripper.start()
        try:
            assert wait_closed([*silent, *cut, *dripped], HEADERS_SECONDS * 3 + 5) == []
            assert health(server) == 200
            assert wait_closed(with_token, BODY_SECONDS * 3 + 5) == []
        finally:
            dripping.set()
            dripper.join(10)
        assert time.monotonic() - started < BODY_SECONDS * 3 + HEADERS_SECONDS * 3 + 15
        assert post(server.url, INIT, writer).status_code == 200  # still serving
    log = server.log()
    for phase in ("headers", "body"):  # a line of its own, or counted in a summary line
        assert f"request's {phase} not whole in" in log or f"{phase} too slow (" in log
    assert writer.split("_", 2)[2] not in log


def test_a_token_file_others_may_change_is_not_trusted_by_the_server(vault_dir: Path) -> None:
    writer = token(vault_dir, "laptop", "write")
    path = tokens_dir(vault_dir) / "tokens.json"
    path.chmod(0o666)
    command = [sys.executable, "-m", "kenomem", "serve", "--vault", str(vault_dir)]
    refused = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert str(path) in refused.stderr and "chmod 600" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    path.chmod(0o600)
    with running(vault_dir) as server:
        assert post(server.url, INIT, writer).status_code == 200
        os.chmod(path.parent, 0o777)  # opened to others while it serves
        response = post(server.url, INIT, writer)
        assert response.status_code == 503, response.text
        assert str(path.parent) not in response.text  # the client is told to ask the log
        os.chmod(path.parent, 0o700)
        assert post(server.url, INIT, writer).status_code == 200
        assert health(server) == 200
    log = server.log()
    assert f"{path.parent} can be changed by group or others" in log and "chmod 700" in log
