"""A hostile OpenAI-compatible embeddings server on 127.0.0.1, written on raw sockets so
that every byte of its answers is the test's to choose: redirects (to a second listener
that records whatever reaches it), answers sent a byte at a time, connections reset in
the middle of a body, lies about the length, garbage, HTTP 500."""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from typing import Any

# What the server does with each request.
HOW = (
    "ok",  # a good answer: a vector of `dim` numbers for each text
    "chunked",  # the same, in chunks (Transfer-Encoding: chunked)
    "redirect",  # `status` (302) with a Location to `location`
    "drip",  # a good answer, all of it (status line too) one byte every `every` seconds
    "drip-body",  # its status line and headers at once, its body one byte at a time
    "stall",  # nothing at all, the connection held open (until `release`)
    "reset",  # half of a good body, then a reset (RST)
    "short",  # a Content-Length 1,000 bytes over the body sent, then a close
    "huge",  # a Content-Length of a terabyte, a few bytes, then a close
    "garbage",  # bytes that are not HTTP, then a close
    "continue",  # "100 Continue", again and again, a line every `every` seconds
    "500",  # HTTP 500
    "body",  # 200 with `body` as it is (JSON of the wrong shape, not JSON...)
    "tls-drip",  # the start of a TLS record, then one byte every `every` seconds
)


def embeddings(texts: list[Any], dim: int) -> bytes:
    """A good answer to `texts`: one vector each, as OpenAI's /v1/embeddings gives."""
    data = [
        {"object": "embedding", "index": n, "embedding": [0.5 + n / 100] * dim}
        for n in range(len(texts))
    ]
    return json.dumps({"object": "list", "data": data}).encode()


def answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Connection: close", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _Listener:
    """A TCP listener on 127.0.0.1 that hands each connection to `serve` in a thread."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls  # the server's side of TLS, for an https:// URL
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.stopped = threading.Event()
        self.released = threading.Event()
        self.connections = 0
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> Any:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.released.set()
        self.sock.close()
        for thread in self._threads:
            thread.join(10)

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._serve_closing, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve_closing(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn.settimeout(10)
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.serve(conn)
        except OSError:
            pass  # the client went away: what a client that gives up does
        finally:
            conn.close()

    def serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def release(self) -> None:
        """End the stalled answers: their connections are closed."""
        self.released.set()

    def wait(self, seconds: float) -> None:
        """Sleep `seconds`, or less if the server is being stopped."""
        self.stopped.wait(seconds)


def read_request(conn: socket.socket) -> dict[str, Any]:
    """The request on `conn`: its request line, headers (lower-case names) and body."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            break
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        got = conn.recv(65536)
        if not got:
            break
        body += got
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    return {"line": lines[0], "headers": headers, "body": parsed}


class Recorder(_Listener):
    """A listener that records every connection and request that reaches it, and serves
    good embeddings, so that a client sent here by a redirect would be answered."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.dim = dim
        self.requests: list[dict[str, Any]] = []

    def serve(self, conn: socket.socket) -> None:
        request = read_request(conn)
        self.requests.append(request)
        texts = (request["body"] or {}).get("input") or ["x"]
        conn.sendall(answer("200 OK", embeddings(texts, self.dim)))


class Hostile(_Listener):
    """The embeddings server that does `how` (one of `HOW`) with every request but the
    first `good_first`, and records each request it reads."""

    def __init__(
        self,
        how: str,
        *,
        dim: int = 8,
        every: float = 1.0,
        status: int = 302,
        location: str = "",
        body: bytes = b"",
        good_first: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        assert how in HOW, how
        super().__init__(tls)
        self.how = how
        self.dim = dim
        self.every = every
        self.status = status
        self.location = location
        self.body = body
        self.good_first = good_first  # requests answered well before it misbehaves
        self.requests: list[dict[str, Any]] = []

    def serve(self, conn: socket.socket) -> None:
        if self.how == "tls-drip":  # a TLS client speaks first; it gets a record never whole
            conn.recv(65536)
            self._drip(conn, b"\x16\x03\x03\x40\x00" + b"\x02" * 16384)
            return
        request = self.read(conn)
        texts = (request["body"] or {}).get("input") or ["x"]
        good = embeddings(texts, self.dim)
        how = "ok" if len(self.requests) <= self.good_first else self.how
        if how == "ok":
            conn.sendall(answer("200 OK", good))
        elif how == "chunked":
            chunks = b"".join(
                b"%x\r\n%s\r\n" % (len(good[i : i + 100]), good[i : i + 100])
                for i in range(0, len(good), 100)
            )
            head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            conn.sendall(head + chunks + b"0\r\n\r\n")
        elif how == "redirect":
            conn.sendall(answer(f"{self.status} Moved", b"", f"Location: {self.location}"))
        elif how == "drip":
            self._drip(conn, answer("200 OK", good))
        elif how == "drip-body":
            whole = answer("200 OK", good)
            split = whole.index(b"\r\n\r\n") + 4
            conn.sendall(whole[:split])
            self._drip(conn, whole[split:])
        elif how == "stall":
            self.released.wait(120)
        elif how == "reset":
            whole = answer("200 OK", good)
            conn.sendall(whole[: len(whole) - len(good) // 2])
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif how == "short":
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(good) + 1000}\r\n\r\n"
            conn.sendall(head.encode() + good)
        elif how == "huge":
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n{"data": [')
        elif how == "garbage":
            conn.sendall(b"\x00\xff\xfe SSH-2.0-not-http\r\n\x1b[31m\r\n\r\n" * 3)
        elif how == "continue":
            while not self.stopped.is_set():
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wait(self.every)
        elif how == "500":
            conn.sendall(answer("500 Internal Server Error", b'{"error": "boom"}'))
        elif how == "body":
            conn.sendall(answer("200 OK", self.body, "Content-Type: application/json"))

    def read(self, conn: socket.socket) -> dict[str, Any]:
        request = read_request(conn)
        self.requests.append(request)
        return request

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        for n in range(len(data)):
            if self.stopped.is_set():
                return
            conn.sendall(data[n : n + 1])
            self.wait(self.every)
