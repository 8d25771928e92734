"""The openai provider against an embeddings server that is a stranger (`stranger.py`):
it may redirect, drip, reset, lie about lengths or answer garbage. Each is one
`EmbeddingsUnavailable` that says what happened, within one deadline for the whole
request, and nothing ever reaches a host but base_url's."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from kenomem.config import EmbeddingsSettings  # noqa: E402
from kenomem.embed import http  # noqa: E402
from kenomem.embed.http import OpenAIEmbedder  # noqa: E402
from kenomem.embed.provider import EmbeddingsUnavailable  # noqa: E402
from tests.embed.stranger import Hostile, Recorder  # noqa: E402

KEY = "sk-test-stranger-0123456789"


def embedder(url: str, **extra: object) -> OpenAIEmbedder:
    settings = EmbeddingsSettings(provider="openai", base_url=url, model="m", **extra)  # type: ignore[arg-type]
    return OpenAIEmbedder(settings)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STRANGER_TEST_KEY", KEY)
    return "STRANGER_TEST_KEY"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_an_error_naming_it_and_nothing_reaches_its_target(
    status: int, key: str
) -> None:
    with Recorder() as elsewhere:
        target = f"{elsewhere.url}/embeddings?from=stranger"
        with Hostile("redirect", status=status, location=target) as server:
            e = embedder(server.url, api_key_env=key)
            with pytest.raises(EmbeddingsUnavailable) as caught:
                e.documents(["The staging server is called kiwi."])
    said = str(caught.value)
    assert f"HTTP {status}" in said and target in said and "not followed" in said
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert elsewhere.connections == 0 and not elsewhere.requests


def test_no_proxy_of_the_environment_is_used(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Recorder() as proxy, Hostile("ok") as server:
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert embedder(server.url, api_key_env=key).query("x").shape == (8,)
    assert proxy.connections == 0 and len(server.requests) == 1


def test_https_is_spoken_with_the_certificate_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate with")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    make = ("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=x")
    subprocess.run(
        ["openssl", *make, "-keyout", key, "-out", cert, "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with Hostile("ok", tls=context) as server:
        url = server.url.replace("http:", "https:")
        with pytest.raises(EmbeddingsUnavailable, match=r"cannot be reached: .*certificate"):
            embedder(url).query("x")  # signed by nobody this machine trusts
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        assert embedder(url).query("x").shape == (8,)
    assert server.requests[-1]["line"] == "POST /v1/embeddings HTTP/1.1"
    assert server.requests[-1]["headers"]["host"] == f"127.0.0.1:{server.port}"


@pytest.mark.parametrize("how", ["ok", "chunked"])
def test_a_good_answer_is_read_whole(how: str) -> None:
    with Hostile(how, dim=5) as server:
        vectors = embedder(server.url).documents([f"text {n}" for n in range(9)])
    assert vectors.shape == (9, 5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    ("how", "url"),
    [
        ("drip", "http"),  # the status line and headers too, a byte at a time
        ("drip-body", "http"),
        ("continue", "http"),  # "100 Continue" lines forever
        ("stall", "http"),
        ("tls-drip", "https"),  # a TLS handshake that never completes
    ],
)
def test_one_deadline_bounds_the_whole_request(how: str, url: str) -> None:
    with Hostile(how, every=0.25) as server:
        e = embedder(server.url.replace("http:", f"{url}:"), timeout_seconds=1.0)
        started = time.monotonic()
        with pytest.raises(EmbeddingsUnavailable, match=r"within 1 s"):
            e.query("where is staging")
        took = time.monotonic() - started
    assert took < 1.0 * 3 + 5, took


def test_a_batch_has_the_deadline_of_its_size() -> None:
    # Its 5 texts have 1.25 times a query's time; a query's own is 0.5 s.
    with Hostile("stall") as server:
        e = embedder(server.url, timeout_seconds=0.5)
        with pytest.raises(EmbeddingsUnavailable, match=r"within 0\.625 s"):
            e.documents(["a", "b", "c", "d", "e"])


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("reset", "broke the connection|cut its answer short"),
        ("short", r"cut its answer short: \d[\d,]* of the [\d,]+ bytes it announced"),
        ("huge", "announced an answer of 1,000,000,000,000 bytes"),
        ("garbage", "not HTTP"),
        ("500", r"answered HTTP 500 \(Internal Server Error\)"),
    ],
)
def test_a_broken_answer_is_one_clear_error(how: str, said: str) -> None:
    with Hostile(how) as server, pytest.raises(EmbeddingsUnavailable, match=said):
        embedder(server.url).documents(["a", "b"])


@pytest.mark.parametrize(
    "body",
    [
        b"<html>hello</html>",
        b'{"data": 5}',
        b'{"data": [{"embedding": "%%%"}, {"embedding": [1]}]}',
        b'{"data": [{"embedding": [1, "x"]}, {"embedding": [1, 2]}]}',
        b'{"data": [{"index": 7, "embedding": [1]}, {"embedding": [1]}]}',
        b'{"data": [{"embedding": [1e999]}, {"embedding": [1]}]}',
        b'{"data": [{"embedding": [1]}, {"embedding": [1, 2]}]}',
        b"[" * 100_000,  # nested past the JSON reader's recursion limit
        b"\xff\xfe\x00",
    ],
)
def test_an_answer_of_the_wrong_shape_is_one_clear_error(body: bytes) -> None:
    with (
        Hostile("body", body=body) as server,
        pytest.raises(EmbeddingsUnavailable, match="not embeddings"),
    ):
        embedder(server.url).documents(["a", "b"])


def test_a_failed_server_is_not_asked_again_for_a_while() -> None:
    with Hostile("500") as server:
        e = embedder(server.url)
        with pytest.raises(EmbeddingsUnavailable, match="HTTP 500") as first:
            e.query("x")
        with pytest.raises(EmbeddingsUnavailable) as again:
            e.documents(["y", "z"])
    assert str(again.value) == str(first.value)  # one warning, however often it is asked
    assert len(server.requests) == 1


def test_it_is_asked_again_once_the_pause_is_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "RETRY_AFTER", 0.0)
    with Hostile("500") as server:
        e = embedder(server.url)
        for _ in range(2):
            with pytest.raises(EmbeddingsUnavailable, match="HTTP 500"):
                e.query("x")
    assert len(server.requests) == 2


def test_a_key_that_would_split_a_header_is_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRANGER_TEST_KEY", "sk-1\r\nX-Evil: 1")
    with Hostile("ok") as server, pytest.raises(EmbeddingsUnavailable, match="line break"):
        embedder(server.url, api_key_env="STRANGER_TEST_KEY").query("x")
    assert server.connections == 0
