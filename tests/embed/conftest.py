from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.embed.helpers import e5_server


@pytest.fixture(scope="session")
def e5_url() -> Iterator[str]:
    """One real embeddings server for the session's tests."""
    pytest.importorskip("numpy")
    with e5_server() as url:
        yield url
