"""The `openai` provider: any server that speaks OpenAI's `POST /v1/embeddings` (Ollama,
LM Studio, llama.cpp's server, vLLM, text-embeddings-inference, OpenAI itself).

The server is a stranger: its answers are data, checked before any vector is kept (its
count, its indexes, one dimension for all, finite numbers, a bounded size), and it
decides nothing about the request. The standard library's `http.client` speaks HTTP over
a socket opened and read here, so that:

- **one deadline bounds the whole request**, from looking up the host to the answer's
  last byte: every wait on the socket is given what is left of it, so a server that
  sends one byte a second cannot stretch it (a timeout per read would restart at each);
- **only base_url's host is ever contacted**: a redirect is an error naming where it
  pointed, never followed, and no proxy is used, so the key goes nowhere else;
- **a server that failed is not asked again for a while** (`RETRY_AFTER`): the same
  error is raised at once, so a command pays for a dead or slow server once, not once per
  batch or per step, and a long-lived process (the watcher, `serve`) tries again later.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import math
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import EmbeddingsUnavailable, fingerprint_of, unit_rows
from kenomem.errors import ConfigError

if TYPE_CHECKING:
    import ssl

    from kenomem.embed.provider import Vectors

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"  # Ollama's
MAX_ANSWER = 256 * 1024 * 1024  # bytes of one answer read at the most
READ_SIZE = 64 * 1024  # bytes asked of the socket at a time
# After a request fails, the server is not asked again for this long (seconds).
RETRY_AFTER = 60.0
# What of a server's own words (a reason phrase, a Location) an error repeats.
SHOWN = 200


# `timeout_seconds` is the time for a query, or a batch of up to this many texts; a
# larger batch (those of `reindex`) gets as much more in proportion.
TEXTS_PER_TIMEOUT = 4


def request_timeout(seconds: float, texts: int) -> float:
    """How long one request of `texts` texts may take, all of it."""
    return seconds * max(1.0, texts / TEXTS_PER_TIMEOUT)


class OpenAIEmbedder:
    # A server answers while this process does other work: `Meaning.ask_ahead`.
    remote = True

    def __init__(self, settings: EmbeddingsSettings) -> None:
        if not settings.model:
            raise ConfigError(
                "embeddings.model must name the server's model for the openai provider",
                hint='e.g. model = "nomic-embed-text" for Ollama',
            )
        self.settings = settings
        self.url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/") + "/embeddings"
        self.target = _Target.of(self.url)
        self.fingerprint = fingerprint_of(settings, settings.model, self.url)
        self.dimension = 0
        # (until when, the error): the server failed; it is not asked again before then.
        self._failed: tuple[float, str] | None = None

    def documents(self, texts: Sequence[str]) -> Vectors:
        prefix = self.settings.document_prefix
        return self._embed([prefix + t for t in texts], "passage")

    def query(self, text: str) -> Vectors:
        return self._embed([self.settings.query_prefix + text], "query")[0]

    def _embed(self, texts: list[str], kind: str) -> Vectors:
        import numpy as np

        size = max(1, self.settings.batch_size)
        parts = [self._batch(texts[i : i + size], kind) for i in range(0, len(texts), size)]
        rows = np.concatenate(parts) if parts else np.zeros((0, self.dimension), np.float32)
        return unit_rows(rows)

    def _batch(self, texts: list[str], kind: str) -> Vectors:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "input": texts,
            "encoding_format": "float",
        }
        if self.settings.input_type:
            body["input_type"] = kind
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key_name = self.settings.api_key_env
        if key_name:
            key = os.environ.get(key_name, "")
            if not key:
                raise EmbeddingsUnavailable(
                    f"the embeddings server's key is not set: the variable {key_name} is empty"
                )
            if not key.isprintable():
                raise EmbeddingsUnavailable(
                    f"the embeddings server's key, in the variable {key_name}, holds a line "
                    "break or another control character"
                )
            headers["Authorization"] = f"Bearer {key}"
        failed = self._failed
        if failed is not None and time.monotonic() < failed[0]:
            raise EmbeddingsUnavailable(failed[1])
        seconds = request_timeout(self.settings.timeout_seconds, len(texts))
        try:
            raw = _post(self.target, json.dumps(body).encode(), headers, seconds)
            return self._read(raw, len(texts))
        except EmbeddingsUnavailable as exc:
            self._failed = (time.monotonic() + RETRY_AFTER, str(exc))
            raise

    def _read(self, raw: bytes | bytearray, count: int) -> Vectors:
        import numpy as np

        bad = f"the embeddings server at {self.url} gave an answer that is not embeddings"
        try:
            doc = json.loads(raw)
            data = doc["data"]
            if not isinstance(data, list) or len(data) != count:
                raise ValueError("count")
            rows: list[Any] = [None] * count
            for n, item in enumerate(data):
                index = item.get("index", n)
                if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
                    raise ValueError("index")
                rows[index] = _vector(item["embedding"])
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise EmbeddingsUnavailable(bad) from None
        dims = {len(row) for row in rows}
        if len(dims) != 1 or 0 in dims:
            raise EmbeddingsUnavailable(f"{bad} (vectors of different lengths)")
        (dim,) = dims
        if self.dimension and dim != self.dimension:
            raise EmbeddingsUnavailable(
                f"the embeddings server at {self.url} changed its vectors' length "
                f"from {self.dimension} to {dim}"
            )
        vectors = np.asarray(rows, dtype=np.float32)
        if not np.isfinite(vectors).all():
            raise EmbeddingsUnavailable(f"{bad} (numbers that are not finite)")
        self.dimension = dim
        return vectors


def _vector(value: Any) -> list[float]:
    if isinstance(value, str):  # encoding_format "base64", which some servers always use
        import numpy as np

        return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").tolist()
    if not isinstance(value, list):
        raise TypeError("embedding")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise ValueError("number")
        out.append(float(x))
    return out


# -- one request, under one deadline ---------------------------------------------------


class _Target:
    """Where requests go: base_url's scheme, host, port and path, and nowhere else."""

    def __init__(self, url: str, tls: bool, host: str, port: int, path: str) -> None:
        self.url = url
        self.tls = tls
        self.host = host
        self.port = port
        self.path = path
        self._context: ssl.SSLContext | None = None

    @classmethod
    def of(cls, url: str) -> _Target:
        bad = f"embeddings.base_url must be an http(s) URL, not {url!r}"
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError:
            raise ConfigError(bad) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(bad)
        if any(ch <= " " or ch == "\x7f" for ch in url):  # http.client refuses them too
            raise ConfigError(f"{bad}: it holds spaces or control characters")
        tls = parts.scheme == "https"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        return cls(url, tls, parts.hostname, port or (443 if tls else 80), path)

    def context(self) -> ssl.SSLContext:
        """The TLS settings (the system's certificates, host names checked), made on first
        use: an `http://` server never pays for importing `ssl`."""
        if self._context is None:
            import ssl

            self._context = ssl.create_default_context()
        return self._context


class _Deadline:
    """The moment a request must be done by."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """The seconds left; `TimeoutError` when none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left


def _post(target: _Target, body: bytes, headers: dict[str, str], seconds: float) -> bytearray:
    """The body of the answer to one POST of `body` to `target`, all of it within
    `seconds`; `EmbeddingsUnavailable` for anything but a whole 200 answer."""
    where = f"the embeddings server at {target.url}"
    deadline = _Deadline(seconds)
    try:
        sock = _connect(target, deadline)
    except TimeoutError:
        raise EmbeddingsUnavailable(
            f"{where} cannot be reached: no answer within {seconds:g} s"
        ) from None
    except OSError as exc:
        raise EmbeddingsUnavailable(f"{where} cannot be reached: {_reason(exc)}") from None
    answer = None
    try:
        kind = _HTTPSConnection if target.tls else http.client.HTTPConnection
        connection = kind(target.host, target.port)
        connection.sock = _Socket(sock, deadline)  # type: ignore[assignment]
        connection.request("POST", target.path, body, {**headers, "Connection": "close"})
        answer = connection.getresponse()
        _refuse_status(answer, where)
        announced = answer.length  # None: chunked, or until the server closes
        if announced is not None and announced > MAX_ANSWER:
            raise EmbeddingsUnavailable(
                f"{where} announced an answer of {announced:,} bytes, over the "
                f"{MAX_ANSWER:,} read at the most"
            )
        raw = bytearray()
        while chunk := answer.read1(READ_SIZE):
            raw += chunk
            if len(raw) > MAX_ANSWER:
                raise EmbeddingsUnavailable(f"{where} answered too much")
        if announced is not None and len(raw) < announced:
            raise EmbeddingsUnavailable(
                f"{where} cut its answer short: {len(raw):,} of the {announced:,} bytes "
                "it announced"
            )
        return raw
    except TimeoutError:
        said = "gave no answer" if answer is None else "did not finish its answer"
        raise EmbeddingsUnavailable(f"{where} {said} within {seconds:g} s") from None
    except OSError as exc:  # a reset, a close before the status line, TLS
        said = "before answering" if answer is None else "in the middle of its answer"
        raise EmbeddingsUnavailable(
            f"{where} broke the connection {said}: {_reason(exc)}"
        ) from None
    except http.client.IncompleteRead:
        raise EmbeddingsUnavailable(f"{where} cut its answer short") from None
    except (http.client.HTTPException, ValueError) as exc:
        raise EmbeddingsUnavailable(
            f"{where} gave an answer that is not HTTP ({type(exc).__name__})"
        ) from None
    finally:
        sock.close()


def _refuse_status(answer: http.client.HTTPResponse, where: str) -> None:
    """Nothing but 200 is an answer. A redirect is never followed: the request, and the
    key with it, goes to base_url's host only."""
    if answer.status == 200:
        return
    said = f"{where} answered HTTP {answer.status} ({_shown(answer.reason)})"
    if 300 <= answer.status < 400:
        location = answer.getheader("Location")
        to = f"to {_shown(location)}" if location else "without a Location"
        raise EmbeddingsUnavailable(f"{said}, a redirect {to}: redirects are not followed")
    raise EmbeddingsUnavailable(said)


def _shown(text: str) -> str:
    """A server's own words, as an error repeats them: bounded."""
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _connect(target: _Target, deadline: _Deadline) -> socket.socket:
    """A socket connected to `target` (and through TLS for https), within the deadline."""
    error: OSError | None = None
    for family, kind, proto, _, address in _addresses(target.host, target.port, deadline):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(deadline.left())
            sock.connect(address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if target.tls:
                sock = target.context().wrap_socket(
                    sock, server_hostname=target.host, do_handshake_on_connect=False
                )
                sock.settimeout(deadline.left())
                sock.do_handshake()  # its timeout bounds the whole handshake
            return sock
        except TimeoutError:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError(f"no address for {target.host}")


def _addresses(host: str, port: int, deadline: _Deadline) -> list[Any]:
    """The addresses of `host`: at once for a numeric one; for a name, looked up in a
    thread waited for only until the deadline (the system's resolver has no timeout to
    give)."""
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass
    found: list[Any] = []

    def look_up() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            found.append(exc)

    thread = threading.Thread(target=look_up, name="kenomem-resolve", daemon=True)
    thread.start()
    thread.join(deadline.left())
    if not found:
        raise TimeoutError
    if isinstance(found[0], OSError):
        raise found[0]
    addresses: list[Any] = found[0]
    return addresses


class _HTTPSConnection(http.client.HTTPConnection):
    """HTTP's framing for a socket `_connect` has put through TLS already (the standard
    library's own class would make a TLS context of its own, unused)."""

    default_port = http.client.HTTPS_PORT


class _Socket:
    """A connected socket as `http.client` uses it (`sendall`, `makefile`), each wait on
    it given what is left of the deadline. `_post` closes the socket itself."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self.sock = sock
        self.deadline = deadline

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self.sock.settimeout(self.deadline.left())
            sent = self.sock.send(view[:READ_SIZE])
            view = view[sent:]

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self.sock, self.deadline), READ_SIZE)

    def close(self) -> None:
        pass


class _Reader(io.RawIOBase):
    """The socket's bytes, each read given what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self.sock = sock
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.sock.settimeout(self.deadline.left())
        return self.sock.recv_into(buffer)
