"""`kenomem serve`: the tools of `kenomem mcp` over the MCP SDK's streamable HTTP
transport, at `/mcp`, with `/health` beside it; served by uvicorn.

In front of the SDK's app stands `Gate`, which, for every request:

1. checks the Host and Origin headers (DNS rebinding: a web page the user visits must
   not reach a server on their machine): a bad Host is refused with 421, a bad Origin
   with 403, by the SDK's own check;
2. when the vault has tokens (or the server listens beyond this machine), asks for one
   (`Authorization: Bearer ...`): none, an unknown or a revoked token: 401;
3. reads the body, at most `MAX_BODY` bytes (more: 413);
4. refuses with 403 a read token's call of a tool that is not marked read-only, the body
   a JSON-RPC error (`scope_refusal`) that names the scope and the fix, which an MCP
   client shows as the call's error;
5. hands the request on, with the caller's name set for the call: what a token's holder
   writes says `source: mcp:NAME`.

A refusal sent before the body is read closes the connection (`Connection: close`), so
that the rest of a body is never waited for. A token is checked in two halves
(`TokenBook.known`, then `prove`): one accepted before is known at once, and the scrypt
of any other runs one at a time (`HASHING_AT_ONCE`), so that clients with bad tokens
cost at most one core and never hold up a client whose token is known.

Refusals are logged on stderr with the client's address and the reason, never a token,
at a bounded rate (`guard.Tally`). Below the gate, each connection has deadlines and the
number of connections a bound (`guard.py`). The decisions (`serve/plan.py`) are pure
functions of the options and of whether tokens exist; the effects here (`serve`) open
the vault, the socket and the server.
"""

from __future__ import annotations

import contextvars
import json
import logging
import socket
import time
from typing import Any

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenomem import __version__
from kenomem.errors import ConfigError, KenomemError
from kenomem.serve.guard import Tally
from kenomem.serve.plan import (
    ACCEPT_BURST,
    HEALTH_PATH,
    MCP_PATH,
    ServePlan,
    denied_tools,
)
from kenomem.serve.tokens import Caller, Proof, TokenBook

logger = logging.getLogger("kenomem.serve")

# A request body larger than this is refused (413): the largest tool argument, a memory's
# text, is far smaller (`files.memory.MAX_TEXT`); the SDK's own limit is 4 MiB.
MAX_BODY = 1024 * 1024

# Connections the kernel keeps waiting to be accepted: no file descriptor of ours until
# they are (asyncio then accepts at most `ACCEPT_BURST` in one go).
LISTEN_QUEUE = 1024

# Tokens not known yet are hashed (scrypt: some 50 ms of one core, 16 MiB) this many at a
# time; the requests that bring them wait their turn, those with a known token do not.
HASHING_AT_ONCE = 1

# What the SDK's Host and Origin check answers, as counted in the log's summaries.
HEADER_REFUSALS = {"Invalid Host header": "bad host", "Invalid Origin header": "bad origin"}

# The source of the call being served: "mcp", or "mcp:NAME" for a token's holder. Set by
# `Gate` in the request's task; the SDK carries it to the worker thread of the tool.
SOURCE: contextvars.ContextVar[str] = contextvars.ContextVar("kenomem_source", default="mcp")


class Gate:
    """The ASGI app in front of the SDK's: see the module's docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        book: TokenBook,
        security: TransportSecuritySettings,
        tokens_required: bool,
        read_tools: frozenset[str],
        tally: Tally | None = None,
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.book = book
        self.headers = TransportSecurityMiddleware(security)
        self.locked = tokens_required
        self.read_tools = read_tools
        self.tally = tally or Tally(logger.warning)
        self.max_body = max_body
        self.hashing = anyio.CapacityLimiter(HASHING_AT_ONCE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = await self.headers.validate_request(request, is_post=False)
        if refused is not None:
            why = bytes(refused.body).decode("utf-8", "replace")
            self._log(request, HEADER_REFUSALS.get(why, why[:40]), why)
            await _closing(refused)(scope, receive, send)
            return
        path = scope["path"]
        if path == HEALTH_PATH:
            await self._health(request)(scope, receive, send)
            return
        if path != MCP_PATH:
            await _closing(Response("not found", status_code=404))(scope, receive, send)
            return
        caller: Caller | None = None
        try:
            if self.locked or await anyio.to_thread.run_sync(self.book.any):
                self.locked = True  # once tokens exist, revoking the last one opens nothing
                caller, why = await self._caller(request)
                if caller is None:
                    self._log(request, why.partition(" (")[0], why)
                    await _closing(_unauthorized(why))(scope, receive, send)
                    return
        except ConfigError as exc:  # the token file cannot be trusted, or read
            self.locked = True
            self._log(request, "token file unusable", f"{exc.message} ({exc.hint})")
            why = "the server cannot use its token file: its log says why"
            await _closing(_refusal(503, "temporarily_unavailable", why))(scope, receive, send)
            return
        try:
            body = await _read_body(receive, self.max_body)
        except _Gone:
            return  # the client went, or was closed for being too slow: nobody to answer
        if body is None:
            self._log(request, "body too large", "request body too large")
            response = Response("request body too large", status_code=413)
            await _closing(response)(scope, receive, send)
            return
        if caller is not None and caller.scope == "read" and scope["method"] == "POST":
            denied = denied_tools(body, self.read_tools)
            if denied:
                why = f"token {caller.name!r} is read-only; {', '.join(denied)} writes"
                self._log(request, "read-only token", why)
                await scope_refusal(body, caller, denied)(scope, receive, send)
                return
        if caller is not None:
            scope = {**scope, "user": _user(caller)}  # the SDK ties sessions to their token
        SOURCE.set(f"mcp:{caller.name}" if caller else "mcp")
        await self.app(scope, _replay(body, receive), send)

    async def _caller(self, request: Request) -> tuple[Caller | None, str]:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if not header:
            return None, "no token (Authorization: Bearer TOKEN)"
        if scheme.lower() != "bearer" or not token.strip():
            return None, "not a bearer token"
        now = time.monotonic()
        found = await anyio.to_thread.run_sync(self.book.known, token.strip(), now)
        if isinstance(found, Proof):
            found = await anyio.to_thread.run_sync(
                self.book.prove, found, now, limiter=self.hashing
            )
        return found, "" if found else "unknown or revoked token"

    def _health(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return Response("method not allowed", status_code=405, headers={"Allow": "GET"})
        return JSONResponse({"status": "ok", "name": "kenomem", "version": __version__})

    def _log(self, request: Request, kind: str, why: str) -> None:
        """Log a refusal (at `tally`'s rate: past it, counted by `kind`)."""
        if not self.tally.allow(kind):
            return
        client = request.client.host if request.client else "?"
        # The path is the client's: one line, its control characters escaped.
        path = str(request.scope["path"])[:200].encode("unicode_escape").decode("ascii")
        logger.warning("refused %s %s from %s: %s", request.method, path, client, why)


def _user(caller: Caller) -> AuthenticatedUser:
    return AuthenticatedUser(
        AccessToken(token="-", client_id=f"kenomem:{caller.name}", scopes=[caller.scope])
    )


def _unauthorized(why: str) -> Response:
    response = _refusal(401, "invalid_token", why)
    response.headers["WWW-Authenticate"] = 'Bearer realm="kenomem"'
    return response


def _refusal(status: int, error: str, why: str) -> Response:
    return JSONResponse({"error": error, "error_description": why}, status_code=status)


# The JSON-RPC error code of a call the token's scope does not allow: one of the codes
# JSON-RPC leaves to the server (-32000 to -32099).
SCOPE_REFUSED = -32003


def scope_refusal(body: bytes, caller: Caller, denied: list[str]) -> Response:
    """403 for a read token's call of tools that write (`denied`), its body the JSON-RPC
    error of that call: an MCP client reads a non-2xx answer as JSON-RPC when it is one
    (the message is what it shows) and as a bare "error response" otherwise."""
    message = (
        f"refused: the token {caller.name!r} has the scope read, which may call only the "
        f"tools marked read-only, not {', '.join(denied)}. To write, connect with a token "
        "of the scope write (the vault's owner makes one: kenomem token create NAME "
        "--scope write)."
    )
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        doc = None
    # A single request's id (a batch, or no id: null, which the client reads as its own).
    request_id = doc.get("id") if isinstance(doc, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    error = {
        "code": SCOPE_REFUSED,
        "message": message,
        "data": {"error": "insufficient_scope", "scope": caller.scope, "tools": denied},
    }
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=403)


def _closing(response: Response) -> Response:
    """`response`, closing the connection after it: sent before the request's body was
    read, it must not leave the connection waiting for the rest of one."""
    response.headers["Connection"] = "close"
    return response


class _Gone(Exception):
    """The connection closed before the request's body was whole."""


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None once it passes `limit` bytes (`_Gone` if the
    connection closes first)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def listen(host: str, port: int) -> socket.socket:
    try:
        family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        return socket.create_server((host.strip("[]"), port), family=family, backlog=LISTEN_QUEUE)
    except OSError as exc:
        raise KenomemError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="another program may use that port: choose another with --port",
        ) from exc


def build_app(vault: Any, served: ServePlan, book: TokenBook, tally: Tally | None = None) -> Gate:
    """The gated ASGI app over an open `Vault`."""
    import anyio

    from kenomem.mcp_server import build_server

    server = build_server(vault, source=SOURCE.get)
    tools = anyio.run(server.list_tools)
    read_tools = frozenset(
        t.name for t in tools if t.annotations is not None and t.annotations.read_only_hint
    )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=served.allowed_hosts,
        allowed_origins=served.allowed_origins,
    )
    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=security,
        max_request_body_size=MAX_BODY,
        host=served.host,
    )
    return Gate(
        inner,
        book=book,
        security=security,
        tokens_required=served.tokens_required,
        read_tools=read_tools,
        tally=tally,
    )


def serve(vault_path: str | None, served: ServePlan, book: TokenBook) -> None:
    """Open the vault, then serve as `served` says until interrupted (`kenomem.serve.run`
    has checked the request before this module's imports)."""
    import resource

    import uvicorn

    from kenomem.mcp_server import open_served
    from kenomem.serve.guard import QuietLogs, Watch, watched
    from kenomem.serve.plan import connection_bound

    vault = open_served(vault_path)
    sock = listen(served.host, served.port)
    logger.setLevel(logging.INFO)
    tally = Tally(logger.warning, schedule=_later)
    app = build_app(vault, served, book, tally)
    bound = connection_bound(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    logger.info(
        "kenomem %s serving %s at %s (%s; at most %d connections)",
        __version__,
        vault.root,
        served.url,
        "a token is required" if served.tokens_required else "no tokens: this machine only",
        bound,
    )
    quiet = QuietLogs(tally)
    for name in ("uvicorn.error", "asyncio"):
        logging.getLogger(name).addFilter(quiet)
    # The gate logs each refusal of the SDK's Host and Origin check itself, at its rate.
    logging.getLogger("mcp.server.transport_security").setLevel(logging.ERROR)
    config = uvicorn.Config(
        app,
        http=watched(Watch(bound, tally, logger.warning)),
        ws="none",
        backlog=ACCEPT_BURST,
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        ssl_certfile=served.tls[0] if served.tls else None,
        ssl_keyfile=served.tls[1] if served.tls else None,
    )

    class Server(uvicorn.Server):
        """uvicorn's server, its listening queue made longer once it listens (asyncio
        takes uvicorn's `backlog` both as that queue's length and as the most connections
        accepted in one go, and only the second costs file descriptors), and the last
        refusals summed up when it stops (uvicorn then ends the process by the signal
        that stopped it)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            for listening in sockets or []:
                listening.listen(LISTEN_QUEUE)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets=sockets)
            tally.roll(now=True)

    try:
        Server(config).run(sockets=[sock])
    finally:
        sock.close()


def _later(delay: float, call: Any) -> None:
    """`call` in `delay` seconds, on the running event loop (none: left to the next)."""
    import asyncio

    try:
        asyncio.get_running_loop().call_later(max(0.0, delay), call)
    except RuntimeError:
        pass
