"""FaultInjectingLLMServer: a stub OpenAI-compatible chat endpoint, for fault injection only.

It is not a language model. It answers ``/v1/chat/completions`` in one of these modes:

- ``ok``: a fixed answer (``answer``), and for judge calls (``logprobs``) a yes/no
  distribution that says yes when the passage contains ``yes_if``;
- ``hang``: reads the request and never answers (until the client goes away or the server stops);
- ``500``: HTTP 500;
- ``garbage``: HTTP 200 with a body that is not JSON;
- ``empty``: a well-formed completion whose message is empty;
- ``close``: closes the connection without answering.

``requests`` counts the requests received; ``disconnects`` counts hung requests whose client
closed the connection (the client gave up, as it should).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FaultInjectingLLMServer:
    def __init__(self, mode: str = "ok", answer: str = "stub answer", yes_if: str = "") -> None:
        self.mode = mode
        self.answer = answer
        self.yes_if = yes_if
        self.requests = 0
        self.disconnects = 0
        self.bodies: list[dict] = []
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests += 1
                server.bodies.append(body)
                mode = server.mode
                if mode == "hang":
                    self.connection.settimeout(0.05)
                    while not server._stop.is_set():
                        try:
                            if self.connection.recv(1) == b"":  # the client closed the connection
                                server.disconnects += 1
                                return
                        except TimeoutError:
                            continue
                        except OSError:
                            server.disconnects += 1
                            return
                    return
                if mode == "close":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if mode == "500":
                    return self._send(500, json.dumps({"error": {"message": "injected failure"}}).encode())
                if mode == "garbage":
                    return self._send(200, b"<html>this is not json", "text/html")
                content = "" if mode == "empty" else server.answer
                choice: dict = {"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content}}
                if body.get("logprobs") and mode == "ok":
                    prompt = body["messages"][-1]["content"]
                    yes = server.yes_if and server.yes_if in prompt
                    lp_yes, lp_no = (-0.05, -3.0) if yes else (-3.0, -0.05)
                    choice["message"]["content"] = "yes" if yes else "no"
                    choice["logprobs"] = {"content": [{
                        "token": "yes" if yes else "no", "logprob": max(lp_yes, lp_no), "bytes": None,
                        "top_logprobs": [{"token": "yes", "logprob": lp_yes, "bytes": None},
                                         {"token": "no", "logprob": lp_no, "bytes": None},
                                         {"token": "maybe", "logprob": -6.0, "bytes": None}]}]}
                self._send(200, json.dumps({
                    "id": "stub", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "stub"), "choices": [choice],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode())

            def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultInjectingLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
