"""What `kenomem serve` decides before it listens: where, with which headers allowed,
whether tokens are needed; and which calls a read token may make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.errors import InvalidInput
from kenomem.serve.plan import ServeRequest, check_tls, denied_tools, is_loopback, plan
from tests.conftest import Cli

READ = frozenset({"recall", "context", "working_show", "patterns"})


def call(name: object, id: int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}}


def test_loopback_needs_no_token_and_allows_only_local_names() -> None:
    served = plan(ServeRequest(), tokens_exist=False)
    assert not served.tokens_required
    assert "127.0.0.1:*" in served.allowed_hosts and "localhost" in served.allowed_hosts
    assert not any("example" in h for h in served.allowed_hosts)
    assert served.url == "http://127.0.0.1:8765/mcp"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_another_address_without_tokens_is_refused(host: str) -> None:
    with pytest.raises(InvalidInput, match="without tokens"):
        plan(ServeRequest(host=host), tokens_exist=False)
    served = plan(ServeRequest(host=host), tokens_exist=True)
    assert served.tokens_required


def test_tokens_are_required_on_loopback_once_they_exist() -> None:
    assert plan(ServeRequest(), tokens_exist=True).tokens_required


def test_allowed_hosts_and_origins() -> None:
    served = plan(
        ServeRequest(
            host="10.0.0.5",
            allow_host=("memory.example.com", "proxy:8443"),
            allow_origin=("https://app.example.com/",),
        ),
        tokens_exist=True,
    )
    for host in ("10.0.0.5", "10.0.0.5:*", "memory.example.com", "memory.example.com:*"):
        assert host in served.allowed_hosts
    assert "proxy:8443" in served.allowed_hosts and "proxy:8443:*" not in served.allowed_hosts
    assert "https://app.example.com" in served.allowed_origins
    with pytest.raises(InvalidInput, match="--allow-origin"):
        plan(ServeRequest(allow_origin=("app.example.com",)), tokens_exist=False)
    with pytest.raises(InvalidInput, match="--allow-host"):
        plan(ServeRequest(allow_host=("a b",)), tokens_exist=False)


def test_tls_takes_both_files() -> None:
    with pytest.raises(InvalidInput, match="go together"):
        plan(ServeRequest(tls_cert="cert.pem"), tokens_exist=False)
    served = plan(ServeRequest(tls_cert="c", tls_key="k"), tokens_exist=False)
    assert served.tls == ("c", "k") and served.url.startswith("https://")


def test_tls_files_missing_or_wrong_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read --tls-cert"):
        check_tls((str(tmp_path / "none.pem"), str(tmp_path / "key.pem")))
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    with pytest.raises(InvalidInput, match="cannot use --tls-cert"):
        check_tls((str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")))


def test_is_loopback() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "localhost.evil.com"))


def test_a_read_token_may_call_only_read_only_tools() -> None:
    assert denied_tools(json.dumps(call("recall")).encode(), READ) == []
    assert denied_tools(json.dumps(call("remember")).encode(), READ) == ["remember"]
    batch = [call("recall", 1), call("forget", 2), {"method": "tools/list"}]
    assert denied_tools(json.dumps(batch).encode(), READ) == ["forget"]
    assert denied_tools(json.dumps(call(None)).encode(), READ) == ["None"]
    assert denied_tools(b'{"method": "tools/call", "params": []}', READ) == ["None"]
    assert denied_tools(json.dumps({"method": "resources/read"}).encode(), READ) == []
    # Two names in one object: whichever a parser keeps, the call is refused.
    for body in (
        b'{"method": "tools/call", "params": {"name": "recall", "name": "remember"}}',
        b'{"method": "tools/call", "method": "tools/list", "params": {"name": "forget"}}',
    ):
        assert denied_tools(body, READ) == ["(a repeated key)"]
    # Nested past what the parser reads: refused, not an error of the gate's own (a 500).
    deep = b'{"method": "tools/call", "params": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    assert denied_tools(deep, READ) == ["(a body nested too deeply)"]


@given(st.binary(max_size=300))
def test_denied_tools_takes_any_body(body: bytes) -> None:
    assert isinstance(denied_tools(body, READ), list)


@given(
    st.recursive(
        st.none() | st.text(max_size=8) | st.integers(),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
        max_leaves=12,
    )
)
def test_denied_tools_takes_any_json(doc: object) -> None:
    assert isinstance(denied_tools(json.dumps(doc).encode(), READ), list)


def test_serve_refuses_another_address_without_tokens(cli: Cli) -> None:
    result = cli("serve", "--host", "0.0.0.0")
    assert result.code == 1
    assert "refusing to listen on 0.0.0.0 without tokens" in result.err
    assert "kenomem token create" in result.err


def test_serve_refuses_missing_tls_files(cli: Cli, tmp_path: Path) -> None:
    result = cli("serve", "--tls-cert", str(tmp_path / "c.pem"), "--tls-key", str(tmp_path / "k"))
    assert result.code == 1 and "cannot read --tls-cert" in result.err
