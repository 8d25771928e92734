"""A real `kenomem serve` on 127.0.0.1, driven by the MCP SDK's client over streamable
HTTP and by plain HTTP requests for the status codes."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from kenomem import __version__
from kenomem.serve.http import SCOPE_REFUSED, scope_refusal
from kenomem.serve.tokens import Caller
from tests.conftest import REPO
from tests.serve.served import HEADERS, INIT, rpc, running, session, with_session

pytestmark = pytest.mark.slow

WORDS = (
    "amber basil cedar delta ember fjord garnet harbor indigo juniper kelp lotus maple nectar "
    "onyx pepper quartz raven sage thistle umber violet willow xenon yarrow zephyr"
).split()


def token(vault: Path, name: str, scope: str) -> str:
    create = ["token", "create", name, "--scope", scope, "--json", "--vault", str(vault)]
    done = subprocess.run(
        [sys.executable, "-m", "kenomem", *create],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(json.loads(done.stdout)["token"])


def remember(text: str) -> Any:
    async def use(s: ClientSession) -> Any:
        result = await s.call_tool("remember", {"text": text})
        assert not result.is_error, result.content
        return result.structured_content

    return use


def recall(query: str) -> Any:
    async def use(s: ClientSession) -> Any:
        result = await s.call_tool("recall", {"query": query})
        assert not result.is_error, result.content
        return result.structured_content

    return use


def post(url: str, body: Any, token: str | None = None, **headers: str) -> httpx2.Response:
    sent = {**HEADERS, **headers}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=json.dumps(body), headers=sent, timeout=30)


def fact() -> str:
    """A text unlike any other, so that none reinforces another."""
    return " ".join(secrets.choice(WORDS) + secrets.token_hex(3) for _ in range(6))


def source_of(vault: Path, path: str) -> str:
    found = re.search(r"^source: (.+)$", (vault / path).read_text("utf-8"), re.MULTILINE)
    assert found
    return found[1].strip('"')


def test_without_tokens_it_serves_this_machine_with_health(vault_dir: Path) -> None:
    with running(vault_dir) as server:
        health = httpx2.get(f"{server.base}/health", timeout=10)
        assert health.status_code == 200
        assert health.json() == {"status": "ok", "name": "kenomem", "version": __version__}
        stored = session(server.url, None, remember("The staging database is on port 5433"))
        found = session(server.url, None, recall("staging database port"))
        assert stored["id"] in [r["id"] for r in found["results"]]

        async def tools(s: ClientSession) -> set[str]:
            return {t.name for t in (await s.list_tools()).tools}

        assert {"remember", "recall", "context", "forget", "log", "extract"} <= session(
            server.url, None, tools
        )
        assert source_of(vault_dir, stored["path"]) == "mcp"
        assert "no tokens: this machine only" in server.log()

        # A bad argument is a tool error that names it and what it must be, in words the
        # model can act on (no validator's links).
        async def bad_arguments(s: ClientSession) -> list[str]:
            texts = []
            for name, arguments in (
                ("recall", {"query": "q" * 2_001}),  # queries are bounded
                ("remember", {"text": "x", "importance": 11}),
            ):
                result = await s.call_tool(name, arguments)
                assert result.is_error, name
                block = result.content[0]
                assert isinstance(block, TextContent)
                texts.append(block.text)
            return texts

        long_query, importance = session(server.url, None, bad_arguments)
        assert "argument query must have at most 2,000 characters (got 2,001)" in long_query
        assert "argument importance must be at most 10 (got 11)" in importance
        for text in (long_query, importance):
            assert "pydantic" not in text and "http" not in text, text
        # A token made while it runs closes it from the next request on.
        token(vault_dir, "late", "read")
        assert post(server.url, INIT).status_code == 401
        with pytest.raises(MCPError):
            session(server.url, None, recall("staging"))


def test_each_token_case(vault_dir: Path) -> None:
    writer = token(vault_dir, "laptop", "write")
    reader = token(vault_dir, "phone", "read")
    doomed = token(vault_dir, "old", "write")
    with running(vault_dir) as server:
        # No token, a malformed one, an unknown one: 401, also on 127.0.0.1.
        for bad in (None, "nonsense", writer[:-4] + "AAAA"):
            response = post(server.url, INIT, bad)
            assert response.status_code == 401, bad
            assert response.headers["www-authenticate"].startswith("Bearer")
        with pytest.raises(MCPError):
            session(server.url, None, recall("anything"))
        # A write token writes, and what it writes says who wrote it.
        stored = session(server.url, writer, remember("The release train leaves on Thursdays"))
        assert source_of(vault_dir, stored["path"]) == "mcp:laptop"
        # A read token reads, and may not write: 403.
        found = session(server.url, reader, recall("release train"))
        assert stored["id"] in [r["id"] for r in found["results"]]
        for tool, args in (
            ("remember", {"text": "x"}),
            ("log", {"text": "x"}),
            ("forget", {"id": stored["id"]}),
            ("extract", {"reply": "x"}),
            ("working_set", {"session": "s", "text": "x"}),
            ("working_clear", {"session": "s"}),
        ):
            response = post(
                server.url, rpc("tools/call", {"name": tool, "arguments": args}), reader
            )
            assert response.status_code == 403, tool
            refusal = response.json()  # the JSON-RPC error of the call
            assert refusal["id"] == 1 and refusal["jsonrpc"] == "2.0"
            assert refusal["error"]["data"] == {
                "error": "insufficient_scope",
                "scope": "read",
                "tools": [tool],
            }
            assert f"not {tool}" in refusal["error"]["message"]
        # The SDK's client shows the refusal's message: the scope, and the fix.
        with pytest.raises(MCPError) as refused:
            session(server.url, reader, remember("A read token cannot write this"))
        assert refused.value.code == SCOPE_REFUSED
        shown = str(refused.value)
        assert "the token 'phone' has the scope read" in shown and "not remember" in shown
        assert "kenomem token create NAME --scope write" in shown
        assert not list(vault_dir.rglob("*read-token-cannot*"))
        # A revoked token: 401 from the next request on, while the server runs.
        session(server.url, doomed, recall("release"))
        revoke = subprocess.run(
            [sys.executable, "-m", "kenomem", "token", "revoke", "old", "--vault", str(vault_dir)],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert revoke.returncode == 0, revoke.stderr
        assert post(server.url, INIT, doomed).status_code == 401
        with pytest.raises(MCPError):
            session(server.url, doomed, recall("release"))
        # The writer still works; the failures are logged, the tokens never.
        session(server.url, writer, recall("release"))
    log = server.log()  # with the summary of the refusals not logged one by one
    assert log.count("refused POST /mcp from 127.0.0.1") >= 10
    assert "read-only" in log and "unknown or revoked token" in log and "no token" in log
    for secret in (writer, reader, doomed):
        assert secret.split("_", 2)[2] not in log


def test_bad_host_bad_origin_and_oversized_bodies_are_refused(vault_dir: Path) -> None:
    writer = token(vault_dir, "laptop", "write")
    with running(vault_dir) as server:
        assert post(server.url, INIT, writer, Host="evil.example.com").status_code == 421
        assert post(server.url, INIT, writer, Origin="https://evil.example.com").status_code == 403
        assert (
            httpx2.get(f"{server.base}/health", headers={"Host": "evil.example.com"}).status_code
            == 421
        )
        # A page on another origin cannot even learn whether a token is right.
        assert post(server.url, INIT, None, Origin="http://evil.example.com").status_code == 403
        assert post(server.url, INIT, writer, Origin="http://localhost:3000").status_code == 200
        big = rpc("tools/call", {"name": "remember", "arguments": {"text": "x" * 1_100_000}})
        assert post(server.url, big, writer).status_code == 413
        # The body's length not announced ahead: counted as it arrives.
        chunks = (b"x" * 65536 for _ in range(20))
        response = httpx2.post(
            server.url,
            content=chunks,
            headers={**HEADERS, "Authorization": f"Bearer {writer}"},
            timeout=30,
        )
        assert response.status_code == 413
        assert post(server.url, INIT, writer).status_code == 200  # still serving
        forged = f"{server.base}/mcp%0A2026-01-01 kenomem.serve INFO: forged"
        assert httpx2.get(forged, headers={"Host": "evil.example.com"}).status_code == 421
        log = server.log()
    # One line per refusal: the path's line break is shown, not written.
    assert "\n2026-01-01 kenomem" not in log and "/mcp\\n2026-01-01 kenomem" in log
    assert "Invalid Host header" in log and "Invalid Origin header" in log
    assert "request body too large" in log


def test_eight_concurrent_writers_lose_nothing(vault_dir: Path) -> None:
    """Two tokens, four clients each, all at once: every memory written once, each
    recording the token of the client that wrote it."""
    tokens = {name: token(vault_dir, name, "write") for name in ("crew-a", "crew-b")}
    per_client = 10
    with running(vault_dir) as server:
        written: list[tuple[str, dict[str, Any]]] = []

        async def client(name: str) -> None:
            async def use(s: ClientSession) -> None:
                for _ in range(per_client):
                    result = await s.call_tool("remember", {"text": fact()})
                    assert not result.is_error, result.content
                    written.append((name, result.structured_content or {}))

            await with_session(server.url, tokens[name], use)

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(client, ("crew-a", "crew-b")[n % 2])

        anyio.run(main)
    assert len(written) == 8 * per_client
    assert {w["action"] for _, w in written} == {"created"}
    ids = {w["id"] for _, w in written}
    assert len(ids) == 8 * per_client
    on_disk = [
        m[1]
        for path in (vault_dir / "semantic").rglob("*.md")
        if (m := re.search(r"^id: (\S+)$", path.read_text("utf-8"), re.MULTILINE))
    ]
    assert ids <= set(on_disk) and len(on_disk) == len(set(on_disk))
    for name, w in written:
        assert source_of(vault_dir, w["path"]) == f"mcp:{name}"


def test_tls(vault_dir: Path, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with running(vault_dir, "--tls-cert", str(cert), "--tls-key", str(key), scheme="https") as s:
        health = httpx2.get(f"{s.base}/health", verify=False, timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert s.base.startswith("https://")


def self_signed(folder: Path) -> tuple[Path, Path]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_refusals_before_listening_exit_1_with_the_reason(vault_dir: Path) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "kenomem", "serve", "--vault", str(vault_dir), *args]
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)

    alone = serve("--host", "0.0.0.0")
    assert alone.returncode == 1
    assert "refusing to listen on 0.0.0.0 without tokens" in alone.stderr
    assert "Traceback" not in alone.stderr
    with running(vault_dir) as server:
        port = server.base.rsplit(":", 1)[1]
        taken = serve("--port", port)
        assert taken.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in taken.stderr
        assert "Traceback" not in taken.stderr


def test_the_scope_refusal_is_the_calls_json_rpc_error() -> None:
    """Its id is the call's (null for a batch or a body that cannot be read, which the
    SDK's client takes as its own request's), its message names the token, its scope,
    the tools and the fix."""
    reader = Caller("phone", "read")
    single = json.dumps(rpc("tools/call", {"name": "remember"}, id=7)).encode()
    batch = json.dumps([rpc("tools/call", {"name": "log"}, id=8)]).encode()
    deep = b'{"id": 9, "params": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    for body, denied, id in (
        (single, ["remember"], 7),
        (batch, ["log"], None),
        (deep, ["(a body nested too deeply)"], None),
    ):
        response = scope_refusal(body, reader, denied)
        assert response.status_code == 403
        doc = json.loads(bytes(response.body))
        assert (doc["jsonrpc"], doc["id"], doc["error"]["code"]) == ("2.0", id, SCOPE_REFUSED)
        assert doc["error"]["data"]["scope"] == "read"
        message = doc["error"]["message"]
        assert "'phone' has the scope read" in message and f"not {denied[0]}" in message
        assert "kenomem token create NAME --scope write" in message
