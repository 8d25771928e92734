"""What `kenomem serve` decides before it listens, as pure functions of its options and
of whether the vault has tokens: the address, TLS, the Host and Origin headers allowed,
whether every request needs a token (`plan`); how many connections it keeps open at once
for a given limit of open files (`connection_bound`); which tools a JSON-RPC body calls
that a read token may not (`denied_tools`); and `check_tls`, the one that reads files. No
SDK here: `token` and a refused `serve` start without it.
"""

from __future__ import annotations

import ipaddress
import json
import re
import ssl
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import InvalidInput

MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
DEFAULT_PORT = 8765
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

# A request's headers must arrive whole within HEADERS_SECONDS of its first byte (or of
# the connection), and its body within BODY_SECONDS of its headers: a client that opens
# connections and drips them (slowloris) holds each for that long at most.
HEADERS_SECONDS = 5.0
BODY_SECONDS = 10.0
# Connections accepted in one go before any is looked at (asyncio's accept loop): each
# holds a file descriptor meanwhile, and so does each one it makes close.
ACCEPT_BURST = 64
# At most this many connections open at once, and fewer under a lower limit of open files:
# beyond `connection_bound`, a new connection closes the oldest one still sending its
# request, or is closed itself.
MAX_CONNECTIONS = 1000
# File descriptors left to everything but the connections: an accept burst and the
# connections it closes (their descriptors are freed a moment later), the vault's index
# and files, the standard streams.
RESERVED_FDS = 2 * ACCEPT_BURST + 128


class ServeRequest(NamedTuple):
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    tls_cert: str | None = None
    tls_key: str | None = None
    allow_host: tuple[str, ...] = ()
    allow_origin: tuple[str, ...] = ()


class ServePlan(NamedTuple):
    host: str
    port: int
    tls: tuple[str, str] | None
    allowed_hosts: list[str]
    allowed_origins: list[str]
    tokens_required: bool

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{_bracketed(self.host)}:{self.port}{MCP_PATH}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def plan(request: ServeRequest, tokens_exist: bool) -> ServePlan:
    """What to serve and how, or a `KenomemError` saying why not."""
    host = request.host.strip()
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        raise InvalidInput(f"invalid --host {request.host!r}: an address or a host name")
    if not 0 < request.port < 65536:
        raise InvalidInput(f"invalid --port {request.port}: 1-65535")
    if not is_loopback(host) and not tokens_exist:
        raise InvalidInput(
            f"refusing to listen on {host} without tokens: anyone who can reach it could "
            "read and write the vault",
            hint="make one first: kenomem token create NAME --scope write (or serve on "
            "127.0.0.1 behind a reverse proxy)",
        )
    if bool(request.tls_cert) != bool(request.tls_key):
        raise InvalidInput("--tls-cert and --tls-key go together: give both, or neither")
    tls = (request.tls_cert, request.tls_key) if request.tls_cert and request.tls_key else None
    hosts = [*LOOPBACK_HOSTS]
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        hosts.append(_bracketed(host))
    for extra in request.allow_host:
        name = extra.strip()
        if not name or any(c.isspace() or c in "/?#@*" for c in name):
            raise InvalidInput(
                f"invalid --allow-host {extra!r}: a host name, with or without :port"
            )
        hosts.append(name)
    allowed_hosts: list[str] = []
    for name in hosts:
        has_port = re.fullmatch(r"(\[[^\]]*\]|[^:\[\]]+):[0-9]+", name) is not None
        allowed_hosts.extend([name] if has_port else [name, f"{name}:*"])
    origins = [f"{scheme}://{name}" for scheme in ("http", "https") for name in LOOPBACK_HOSTS]
    allowed_origins = [*origins, *(f"{o}:*" for o in origins)]
    for extra in request.allow_origin:
        origin = extra.strip().rstrip("/")
        if not origin.startswith(("http://", "https://")) or any(c.isspace() for c in origin):
            raise InvalidInput(f"invalid --allow-origin {extra!r}: like https://app.example.com")
        allowed_origins.append(origin)
    return ServePlan(
        host=host,
        port=request.port,
        tls=tls,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        tokens_required=tokens_exist or not is_loopback(host),
    )


def connection_bound(open_files: int) -> int:
    """How many connections to keep open at once under a limit of `open_files` file
    descriptors (the process's soft `RLIMIT_NOFILE`; negative: unlimited), so that
    accepting a connection never fails for want of one."""
    room = MAX_CONNECTIONS if open_files < 0 else open_files - RESERVED_FDS
    return max(8, min(MAX_CONNECTIONS, room))


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def denied_tools(body: bytes, read_tools: frozenset[str]) -> list[str]:
    """The tools a JSON-RPC message (or batch) calls that are not in `read_tools`.

    A body whose objects repeat a key is denied whole: this check and the SDK's parser
    must not be able to read two different tool names from it."""
    try:
        doc = json.loads(body, object_pairs_hook=_unique_keys)
    except _RepeatedKey:
        return ["(a repeated key)"]
    except RecursionError:  # nested deeper than this parser goes: no call is let through
        return ["(a body nested too deeply)"]
    except ValueError:
        return []  # the SDK answers a parse error
    messages = doc if isinstance(doc, list) else [doc]
    denied = []
    for message in messages:
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str) or name not in read_tools:
            denied.append(str(name)[:64])
    return denied


class _RepeatedKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _RepeatedKey
    return found


def check_tls(tls: tuple[str, str]) -> None:
    """A clear error for a certificate or key that is missing, unreadable or wrong."""
    for path, what in zip(tls, ("--tls-cert", "--tls-key"), strict=True):
        try:
            Path(path).read_bytes()
        except OSError as exc:
            raise InvalidInput(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(tls[0], tls[1])
    except (ssl.SSLError, ValueError) as exc:
        raise InvalidInput(
            f"cannot use --tls-cert {tls[0]} with --tls-key {tls[1]}: {exc}",
            hint="a PEM certificate (chain) and its unencrypted PEM private key",
        ) from exc
