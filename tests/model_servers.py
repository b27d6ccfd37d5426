"""Local model servers for the tests, on 127.0.0.1, backed by real packaged models:

- ``EmbeddingServer``: an OpenAI-compatible ``POST /v1/embeddings`` serving a packaged
  embedder's vectors (``minilm`` by default);
- ``RerankServer``: ``POST /v1/rerank`` (Cohere / Jina / vLLM shape) and ``POST /rerank``
  (Text Embeddings Inference shape), scoring a passage by the packaged encoder's cosine
  similarity to the query.

Fault modes, for fault injection only: ``garbage`` (200 with a body that is not the API's),
``500`` (every request), ``flaky`` (the first request of each kind fails with 503).
``requests`` keeps what each request sent; ``max_in_flight`` the most requests served at once.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from ragsift.models.embedders import load_embedder


class _ModelServer:
    def __init__(self, model: str = "minilm", mode: str = "ok") -> None:
        self.model = load_embedder(model)
        self.mode = mode
        self.requests: list[tuple[str, dict]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._failed: set[str] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests.append((self.path, body))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, payload = server.answer(self.path, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def answer(self, path: str, body: dict) -> tuple[int, object]:
        if self.mode == "garbage":
            return 200, b"<html>not an answer</html>"
        if self.mode == "500":
            return 500, {"error": {"message": "injected failure"}}
        if self.mode == "flaky" and path not in self._failed:
            self._failed.add(path)
            return 503, {"error": {"message": "injected: try again"}}
        return self.serve(path, body)

    def serve(self, path: str, body: dict) -> tuple[int, object]:  # pragma: no cover - each server has its own
        raise NotImplementedError

    def __enter__(self):
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class EmbeddingServer(_ModelServer):
    def serve(self, path: str, body: dict) -> tuple[int, object]:
        if path != "/v1/embeddings":
            return 404, {"error": {"message": f"no route {path}"}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vecs = self.model.embed_passages(texts)
        return 200, {"object": "list", "model": body.get("model"),
                     "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)],
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}


class RerankServer(_ModelServer):
    def scores(self, query: str, texts: list[str]) -> list[float]:
        q = self.model.embed_queries([query])[0]
        return [float(x) for x in self.model.embed_passages(texts) @ q]

    def serve(self, path: str, body: dict) -> tuple[int, object]:
        if path == "/v1/rerank":  # Cohere, Jina, vLLM
            s = self.scores(body["query"], body["documents"])
            order = np.argsort(-np.asarray(s), kind="stable")[: body.get("top_n") or len(s)]
            return 200, {"results": [{"index": int(i), "relevance_score": s[i]} for i in order]}
        if path == "/rerank":  # Text Embeddings Inference
            s = self.scores(body["query"], body["texts"])
            return 200, [{"index": i, "score": v} for i, v in sorted(enumerate(s), key=lambda kv: -kv[1])]
        return 404, {"error": {"message": f"no route {path}"}}
